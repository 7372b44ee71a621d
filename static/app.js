// Renders the Plotly figures the server embedded as JSON (data-figure), on load and after
// every htmx swap. No inline scripts: the pages work under a strict Content-Security-Policy.
(function () {
  function render(root) {
    if (!window.Plotly) return;
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      var fig = JSON.parse(el.getAttribute("data-figure"));
      var config = { responsive: true, displaylogo: false,
                     toImageButtonOptions: { format: "png", filename: el.id || "chart" } };
      window.Plotly.react(el, fig.data, fig.layout, config);
    });
  }
  document.addEventListener("DOMContentLoaded", function () { render(document); });
  document.addEventListener("htmx:afterSettle", function (e) { render(e.target); });
})();
