// The evaluation form: once submitted, say that the run is being queued or computed and keep the button from
// sending it twice. Embedded (tasks in-process) the server answers only when the run is done.
(function () {
  "use strict";
  var form = document.getElementById("new-evaluation");
  if (!form) return;
  form.addEventListener("submit", function () {
    var button = form.querySelector("button[type=submit]");
    var status = document.getElementById("submitting");
    if (button) button.disabled = true;
    if (status) {
      status.textContent = form.dataset.embedded
        ? "Computing the evaluation (embedded mode: this page waits for it, seconds to minutes)…"
        : "Queuing the evaluation…";
    }
  });
})();
