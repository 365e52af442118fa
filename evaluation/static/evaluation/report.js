// Evaluation report: while the run is going, poll its progress every 2 s and reload when it is done.
// The progress URL comes from the page (#status data-progress-url); a static file, as the CSP allows no inline script.
(function () {
  "use strict";
  var status = document.getElementById("status");
  var url = status && status.dataset.progressUrl;
  if (!url) return;
  setTimeout(function poll() {
    fetch(url).then(function (r) { return r.json(); }).then(function (p) {
      if (p.status === "done" || p.status === "failed") { location.reload(); return; }
      status.textContent = "Status: " + p.status + " — " + p.stage + " " + p.progress_done + "/" + p.progress_total;
      var bar = document.getElementById("bar");
      if (bar) { bar.max = Math.max(p.progress_total, 1); bar.value = p.progress_done; }
      setTimeout(poll, 2000);
    });
  }, 2000);
})();
