// The knowledge page's document upload: sent with XHR so the owner sees the upload's progress
// (upload.onprogress), then «reading the text» while the server imports it; the server's answer
// (a summary, or what is wrong with the file) is shown in place and nothing typed is lost.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("upload-form");
    if (!form || !window.FormData) { return; }
    var bar = document.getElementById("upload-progress");
    var status = document.getElementById("upload-status");
    function say(text, isError) {
      status.textContent = text;
      status.className = "upload-status" + (isError ? " error" : "");
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var xhr = new XMLHttpRequest();
      var button = form.querySelector("button[type=submit]");
      xhr.open("POST", form.action);
      xhr.setRequestHeader("Accept", "application/json");
      bar.hidden = false;
      bar.value = 0;
      button.disabled = true;
      xhr.upload.onprogress = function (e) {
        if (!e.lengthComputable) { return; }
        var percent = Math.round(100 * e.loaded / e.total);
        bar.value = percent;
        say(form.getAttribute("data-uploading") + ": " + percent + "%", false);
      };
      xhr.upload.onload = function () {
        bar.removeAttribute("value");  // indeterminate while the server reads the file
        say(form.getAttribute("data-importing"), false);
      };
      xhr.onload = function () {
        button.disabled = false;
        var data = null;
        try { data = JSON.parse(xhr.responseText); } catch (err) { data = null; }
        if (xhr.status === 413 || !data) {
          bar.hidden = true;
          say(data && data.message ? data.message : form.getAttribute("data-failed"), true);
          return;
        }
        bar.value = 100;
        if (!data.ok) { bar.hidden = true; say(data.message, true); return; }
        say(data.message, false);
        setTimeout(function () { window.location.hash = "documents"; window.location.reload(); }, 1200);
      };
      xhr.onerror = function () {
        button.disabled = false;
        bar.hidden = true;
        say(form.getAttribute("data-failed"), true);
      };
      xhr.send(new FormData(form));
    });
  });
})();
