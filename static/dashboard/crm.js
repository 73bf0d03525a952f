// The CRM page (owner/dashboard/templates/dashboard/crm.html): only the fields of the CRM picked are
// shown. Without JavaScript every field stays visible and the server reads the ones it needs.
(function () {
  "use strict";
  var form = document.getElementById("crm-form");
  if (!form) return;
  function update() {
    var picked = form.querySelector("input[name='crm-kind']:checked");
    var kind = picked ? picked.value : "";
    form.querySelectorAll(".crm-fields").forEach(function (set) {
      set.hidden = set.getAttribute("data-kind") !== kind;
    });
  }
  form.addEventListener("change", function (event) {
    if (event.target && event.target.name === "crm-kind") update();
  });
  update();
})();
