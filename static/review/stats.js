// Charts of the «Итоги и точность» page (feedback/admin.py), drawn with the vendored Chart.js; every text
// (week labels, legends) comes translated in the page's data.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("stats-data").textContent);
  const colours = { answered: "#2f7d32", handed_off: "#1a5fb4", lead: "#8e44ad", abandoned: "#c0504d", operator_closed: "#e39d21" };
  const canvas = (id) => document.getElementById(id);
  Chart.defaults.locale = document.documentElement.lang;  // numbers in the page's language: «1,5» in Russian
  if (canvas("chart-accuracy")) {
    new Chart(canvas("chart-accuracy"), {
      type: "line",
      data: { labels: data.weeks, datasets: [{ label: data.legend.accuracy, data: data.accuracy.map((a) => a === null ? null : Math.round(a * 100)), borderColor: "#2f7d32", backgroundColor: "#2f7d32", spanGaps: true, tension: 0.2 }] },
      options: { animation: false, scales: { y: { min: 0, max: 100, ticks: { callback: (v) => v + "%" } } } },
    });
  }
  if (canvas("chart-gaps")) {
    new Chart(canvas("chart-gaps"), {
      type: "bar",
      data: { labels: data.weeks, datasets: [{ label: data.legend.gaps, data: data.gaps, backgroundColor: "#c0504d" }] },
      options: { animation: false, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
    });
  }
  if (canvas("chart-outcomes")) {
    new Chart(canvas("chart-outcomes"), {
      type: "bar",
      data: { labels: data.weeks, datasets: data.outcomes.map((o) => ({ label: o.label, data: o.counts, backgroundColor: colours[o.kind] })) },
      options: { animation: false, scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } },
    });
  }
})();
