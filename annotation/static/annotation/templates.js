/* Live preview of a question template on real triples of its relation (GET the preview endpoint). */
(function () {
  "use strict";
  var table = document.getElementById("templates");
  if (!table) return;
  var endpoint = table.getAttribute("data-preview-url");
  var timers = {};
  function show(box, data, ok) {
    box.innerHTML = "";
    if (!ok) { var li = document.createElement("li"); li.className = "err"; li.textContent = data.error || "error"; box.appendChild(li); return; }
    data.rows.forEach(function (row) { var li = document.createElement("li"); li.textContent = row.question; box.appendChild(li); });
    if (!data.rows.length) { var li2 = document.createElement("li"); li2.textContent = "(no triple of this relation to preview)"; box.appendChild(li2); }
  }
  function preview(input) {
    var rel = input.getAttribute("data-relation");
    var box = document.getElementById("preview-" + rel);
    var q = endpoint + "?relation=" + encodeURIComponent(rel) + "&text=" + encodeURIComponent(input.value);
    fetch(q, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json().then(function (d) { show(box, d, r.ok); }); })
      .catch(function () { show(box, { error: "preview failed" }, false); });
  }
  table.addEventListener("input", function (e) {
    var input = e.target;
    if (!input.matches("input[data-relation]")) return;
    var rel = input.getAttribute("data-relation");
    clearTimeout(timers[rel]);
    timers[rel] = setTimeout(function () { preview(input); }, 250);
  });
  table.addEventListener("focusin", function (e) {
    var input = e.target;
    if (input.matches("input[data-relation]") && !input.dataset.previewed) { input.dataset.previewed = "1"; preview(input); }
  });
})();
