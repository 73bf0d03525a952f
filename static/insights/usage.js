/* The usage page's chart (insights/usage.html): cost per day, one stacked bar per route. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("usage-data").textContent);
  var lang = document.documentElement.lang;  // numbers in the page's language: «0,0042 $» in Russian
  var money = new Intl.NumberFormat(lang, {minimumFractionDigits: 2, maximumFractionDigits: 4});
  var colors = ["#1a56db", "#0e9f6e", "#c27803", "#9061f9", "#e02424", "#3f83f8", "#57606a"];
  var datasets = data.datasets.map(function (set, index) {
    return {label: set.label, data: set.data, backgroundColor: colors[index % colors.length], stack: "cost"};
  });
  new window.Chart(document.getElementById("usage-chart"), {
    type: "bar",
    data: {labels: data.labels, datasets: datasets},
    options: {
      responsive: true, maintainAspectRatio: false, animation: false, locale: lang,
      scales: {x: {stacked: true}, y: {stacked: true, beginAtZero: true,
        ticks: {callback: function (value) { return money.format(value) + " " + data.currency; }}}},
      plugins: {tooltip: {callbacks: {label: function (ctx) {
        return ctx.dataset.label + ": " + money.format(ctx.parsed.y) + " " + data.currency; }}}}
    }
  });
})();
