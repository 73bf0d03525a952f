// The voice page (tuning/templates/tuning/voice.html): a slider's level and meaning follow it, the
// «условия» counter counts, dictionary rows are added and removed. The page works without it.
(function () {
  "use strict";
  const texts = JSON.parse(document.getElementById("voice-texts").textContent);
  document.querySelectorAll(".slider").forEach((box) => {
    const input = box.querySelector("input[type=range]");
    const meanings = JSON.parse(box.dataset.meanings || "[]");
    const show = () => {
      box.querySelector(".level").textContent = input.value;
      box.querySelector(".meaning").textContent = meanings[Number(input.value) - 1] || "";
    };
    input.addEventListener("input", show);
  });
  const conditions = document.getElementById("conditions");
  const counter = document.getElementById("conditions-count");
  const count = () => {
    const max = Number(conditions.dataset.maxChars), maxLines = Number(conditions.dataset.maxLines);
    const n = conditions.value.trim().length;
    const lines = conditions.value.split("\n").filter((line) => line.trim()).length;
    counter.textContent = texts.count.replace("%(n)s", n).replace("%(max)s", max)
      .replace("%(lines)s", lines).replace("%(maxlines)s", maxLines);
    counter.classList.toggle("over", n > max || lines > maxLines);
  };
  conditions.addEventListener("input", count);
  count();
  const body = document.querySelector("#dictionary tbody");
  document.getElementById("add-row").addEventListener("click", () => {
    const row = document.getElementById("row-template").content.firstElementChild.cloneNode(true);
    body.appendChild(row);
    row.querySelector("input").focus();
  });
  body.addEventListener("click", (event) => {
    const button = event.target.closest(".remove-row");
    if (!button) return;
    const row = button.closest("tr");
    if (body.rows.length > 1) row.remove();
    else row.querySelectorAll("input").forEach((input) => { input.value = ""; });
  });
})();
