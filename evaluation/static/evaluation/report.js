// Evaluation report: while the run is queued or running, poll its progress every 2 s ("queued" / "running,
// stage, N of M" and the progress bar) and reload when it is done or failed. The progress URL comes from the page
// (#status data-progress-url); a static file, as the CSP allows no inline script.
(function () {
  "use strict";
  var status = document.getElementById("status");
  var url = status && status.dataset.progressUrl;
  if (!url) return;
  function describe(p) {
    var text = "Status: " + (p.status === "pending" ? "queued" : p.status);
    if (p.stage && p.stage !== "queued") text += ", " + p.stage;
    if (p.progress_total) text += ", " + p.progress_done + " of " + p.progress_total;
    return text + " (this page reloads when the run is done)";
  }
  setTimeout(function poll() {
    fetch(url, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (p) {
      if (p.status === "done" || p.status === "failed") { location.reload(); return; }
      status.textContent = describe(p);
      var bar = document.getElementById("bar");
      if (bar) { bar.max = Math.max(p.progress_total, 1); bar.value = p.progress_done; }
      setTimeout(poll, 2000);
    }).catch(function () { setTimeout(poll, 5000); });
  }, 2000);
})();
