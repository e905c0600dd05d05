// convtrace viewer: script of the cost page; does nothing elsewhere.
// Clicking a model in a chart's legend picks it out: the other models'
// bars fade in both charts, so one model's share reads at a glance. The
// charts themselves are drawn by the server and need no script.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const items = document.querySelectorAll(".cost-chart .legend-item");
  if (items.length === 0) {
    return;
  }
  let picked = "";
  const show = () => {
    document.querySelectorAll("svg.chart rect.bar").forEach((bar) => {
      bar.classList.toggle("faded", picked !== "" && !bar.classList.contains(picked));
    });
    items.forEach((item) => item.setAttribute("aria-pressed", String(item.dataset.series === picked)));
  };
  items.forEach((item) => {
    item.addEventListener("click", () => {
      picked = picked === item.dataset.series ? "" : item.dataset.series;
      show();
    });
  });
});
