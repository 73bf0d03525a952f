// The experiments page: the arms' chart (vendored Chart.js) and the variant's fields for the chosen kind.
(function () {
  "use strict";
  const data = document.getElementById("arms-data");
  if (data && window.Chart) {
    const arms = JSON.parse(data.textContent);
    const percent = new Intl.NumberFormat(document.documentElement.lang, { maximumFractionDigits: 1 });
    new Chart(document.getElementById("chart-arms"), {
      type: "bar",
      data: {
        labels: arms.labels,
        datasets: [
          { label: arms.names[0], data: arms.a, backgroundColor: "#9aa5b1" },
          { label: arms.names[1], data: arms.b, backgroundColor: "#1a56db" },
        ],
      },
      options: { animation: false, maintainAspectRatio: false, locale: document.documentElement.lang,
        scales: { y: { beginAtZero: true, max: 100, ticks: { callback: (v) => percent.format(v) + " %" } } } },
    });
  }
  // Variant B's sliders show their level as they move, as on the voice page.
  document.querySelectorAll(".variant-slider").forEach((box) => {
    const input = box.querySelector("input[type=range]");
    const level = box.querySelector(".level");
    if (input && level) input.addEventListener("input", () => { level.textContent = input.value; });
  });
  const kind = document.getElementById("kind");
  if (kind) {
    const show = () => document.querySelectorAll(".variant-part").forEach((part) => {
      part.hidden = part.dataset.kind !== kind.value;
    });
    kind.addEventListener("change", show);
    show();
  }
})();
