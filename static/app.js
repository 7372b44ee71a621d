// Progressive enhancement for the server-rendered pages; nothing here is needed to see results.
// - renders the Plotly figures embedded as JSON (data-figure), on load and after htmx swaps;
// - sorts tables marked data-sortable when a header button is pressed;
// - wires the Print and Copy-link buttons (hidden without JavaScript).
// No inline scripts: the pages work under a strict Content-Security-Policy.
(function () {
  function renderFigures(root) {
    if (!window.Plotly) return;
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      var fig = JSON.parse(el.getAttribute("data-figure"));
      var config = { responsive: true, displaylogo: false,
                     toImageButtonOptions: { format: "png", filename: el.id || "chart", scale: 2 } };
      window.Plotly.react(el, fig.data, fig.layout, config);
    });
  }

  function cellValue(row, index) {
    var cell = row.children[index];
    var raw = cell.getAttribute("data-sort");
    if (raw === null) raw = cell.textContent.trim();
    var n = parseFloat(raw);
    return raw !== "" && !isNaN(n) && isFinite(raw) ? n : raw.toLowerCase();
  }

  function sortBy(table, th) {
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("thead th").forEach(function (h) { h.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      if (x === "" || y === "") return x === "" ? 1 : -1;  // blanks last
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function enhance(root) {
    renderFigures(root);
    root.querySelectorAll("[data-print], [data-copy]").forEach(function (b) { b.hidden = false; });
  }

  document.addEventListener("click", function (e) {
    var sortButton = e.target.closest("table[data-sortable] button.sort");
    if (sortButton) { sortBy(sortButton.closest("table"), sortButton.closest("th")); return; }
    if (e.target.closest("[data-print]")) { window.print(); return; }
    var copy = e.target.closest("[data-copy]");
    if (copy) {
      var field = document.querySelector(copy.getAttribute("data-copy"));
      field.select();
      if (navigator.clipboard) {
        navigator.clipboard.writeText(field.value).then(function () { copy.textContent = "Copied"; },
                                                        function () { copy.textContent = "Press Ctrl+C"; });
      }
    }
  });
  // A printed report shows everything: open the collapsed sections first.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
  document.addEventListener("DOMContentLoaded", function () { enhance(document); });
  document.addEventListener("htmx:afterSettle", function (e) { enhance(e.target); });
})();
