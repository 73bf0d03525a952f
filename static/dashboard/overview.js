// Charts of the owner's overview page (dashboard/templates/dashboard/overview.html), drawn with the
// vendored Chart.js from the numbers the page embeds (feedback.outcomes.weekly_stats).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("overview-data").textContent);
  var colours = { answered: "#2f7d32", handed_off: "#1a5fb4", lead: "#8e44ad", abandoned: "#c0504d", operator_closed: "#e39d21" };
  function canvas(id) { return document.getElementById(id); }
  // Chart.js writes its numbers (axes, tooltips) in the page's language: «1,5» in Russian.
  var base = { animation: false, maintainAspectRatio: false, locale: document.documentElement.lang };
  if (canvas("chart-accuracy")) {
    new Chart(canvas("chart-accuracy"), {
      type: "line",
      data: { labels: data.weeks, datasets: [{ label: data.labels.accuracy, data: data.accuracy.map(function (a) { return a === null ? null : Math.round(a * 100); }), borderColor: "#2f7d32", backgroundColor: "#2f7d32", spanGaps: true, tension: 0.2 }] },
      options: Object.assign({}, base, { scales: { y: { min: 0, max: 100, ticks: { callback: function (v) { return v + "%"; } } } } }),
    });
  }
  if (canvas("chart-gaps")) {
    new Chart(canvas("chart-gaps"), {
      type: "bar",
      data: { labels: data.weeks, datasets: [{ label: data.labels.gaps, data: data.gaps, backgroundColor: "#c0504d" }] },
      options: Object.assign({}, base, { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }),
    });
  }
  if (canvas("chart-outcomes")) {
    new Chart(canvas("chart-outcomes"), {
      type: "bar",
      data: { labels: data.weeks, datasets: data.outcomes.map(function (o) { return { label: o.label, data: o.counts, backgroundColor: colours[o.kind] }; }) },
      options: Object.assign({}, base, { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } }),
    });
  }
  // The visitors' stars per operator and week: one line each, a week without ratings left open.
  var palette = ["#1a56db", "#2f7d32", "#e39d21", "#8e44ad", "#c0504d", "#0e7490", "#6b7280"];
  if (canvas("chart-csat") && data.csat) {
    new Chart(canvas("chart-csat"), {
      type: "line",
      data: { labels: data.csat.weeks, datasets: data.csat.operators.map(function (o, i) {
        var colour = palette[i % palette.length];
        return { label: o.name, data: o.averages, borderColor: colour, backgroundColor: colour, spanGaps: true, tension: 0.2, pointRadius: 5, pointHoverRadius: 7 };
      }) },
      options: Object.assign({}, base, { scales: { y: { min: 1, max: 5, ticks: { stepSize: 1 }, title: { display: true, text: data.csat.label } } } }),
    });
  }
})();
