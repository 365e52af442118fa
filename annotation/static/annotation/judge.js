/* Keyboard judging: Y / N choose, F or / focus the source, R / H / T fill in your last source or the head's / tail's page, Enter submits, S skips, Esc leaves a field (a field
   the page focused itself keeps Y / N / F as shortcuts until the person types in it).
   Sends the visible page time (added up over re-renders after an error) as a hint: the server measures the
   time on task itself, from the hand-out, and keeps this figure only up to its own. */
(function () {
  "use strict";
  var form = document.getElementById("judge-form");
  if (!form) return;
  var choice = form.getAttribute("data-choice") || "answer";
  var focusField = form.querySelector("[data-focus-key]");
  var skip = document.getElementById("skip-form");
  var timeField = form.querySelector("[name=time_on_task_ms]");
  var base = timeField && timeField.value ? parseInt(timeField.value, 10) || 0 : 0;
  var visibleSince = document.hidden ? null : performance.now();
  var spent = 0;
  document.addEventListener("visibilitychange", function () {
    if (document.hidden && visibleSince !== null) { spent += performance.now() - visibleSince; visibleSince = null; }
    else if (!document.hidden && visibleSince === null) { visibleSince = performance.now(); }
  });
  function elapsed() { return base + Math.round(spent + (visibleSince === null ? 0 : performance.now() - visibleSince)); }
  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    return (tag === "INPUT" && el.type !== "radio" && el.type !== "checkbox") || tag === "TEXTAREA" || el.isContentEditable;
  }
  function choose(value) {
    var input = form.querySelector("input[name=" + choice + "][value=" + value + "]");
    if (input) { input.checked = true; input.dispatchEvent(new Event("change", { bubbles: true })); }
  }
  // The start of the person's last source (e.g. "https://en.wikipedia.org/wiki/") is written in only when they go
  // to the field, so an answer given without a source (where the campaign's evidence policy allows) sends none.
  var prefill = focusField ? focusField.getAttribute("data-prefill") || "" : "";
  function focusSource() {
    if (!focusField) return;
    if (prefill && !focusField.value) focusField.value = prefill;
    focusField.focus();
    var n = focusField.value.length;
    try { focusField.setSelectionRange(n, n); } catch (e) { /* not a text input */ }
  }
  // A pasted full URL replaces the field (the prefilled site start included): appended it would be stored
  // as a doubled URL, "https://en.wikipedia.org/wiki/https://en.wikipedia.org/wiki/…".
  if (focusField && focusField.name === "source_url") {
    focusField.addEventListener("paste", function (e) {
      var text = e.clipboardData ? e.clipboardData.getData("text").trim() : "";
      if (!/^https?:\/\//i.test(text)) return;
      e.preventDefault();
      focusField.value = text;
      focusField.setSelectionRange(text.length, text.length);
      focusField.dispatchEvent(new Event("input", { bubbles: true }));
    });
    // The same for a full URL typed after the site start: once its "http(s)://" is complete, the start goes.
    focusField.addEventListener("input", function () {
      var value = focusField.value;
      if (prefill && value.indexOf(prefill) === 0 && /^https?:\/\//i.test(value.slice(prefill.length))) {
        focusField.value = value.slice(prefill.length);
      }
    });
  }
  // R: the person's last source; H / T: the head's / tail's own page (where the campaign accepts it as a source).
  // The URL is written into the field and the focus stays out of it, so Enter saves: Y, H, Enter is a Yes with
  // a source in three keys.
  function useSource(key) {
    var url = focusField ? focusField.getAttribute("data-key-" + key) || "" : "";
    if (!url) return false;
    focusField.value = url;
    focusField.dispatchEvent(new Event("input", { bubbles: true }));
    return true;
  }
  var sent = false;
  function submit() { if (form.requestSubmit) form.requestSubmit(); else form.submit(); }
  // A field the page focused (after a server error, or the browser's check of a required field), not the person:
  // until they enter it themselves (F, a click, a character that is no shortcut) Y / N / F / R / H / T / S keep
  // their meaning,
  // so shortcuts typed by a person who did not see the focus move are not stored as text ("YfSource of...").
  var armed = null;
  form.addEventListener("invalid", function (e) { armed = e.target; }, true);
  function disarm() { armed = null; }
  ["mousedown", "input", "focusout"].forEach(function (type) {
    form.addEventListener(type, function (e) { if (e.target === armed) disarm(); });
  });
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var active = document.activeElement;
    var key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (typing(active)) {
      if (e.key === "Escape") { active.blur(); return; }
      if (active !== armed) return;
      if (key === "y" || key === "n") { e.preventDefault(); choose(key.toUpperCase()); }
      else if (key === "f" || key === "/") { e.preventDefault(); disarm(); focusSource(); }  // now typing here
      else if ((key === "r" || key === "h" || key === "t") && useSource(key)) { e.preventDefault(); }
      else if (key === "s" && skip) { e.preventDefault(); if (!sent) { sent = true; skip.submit(); } }
      else if (key === "Enter") { e.preventDefault(); submit(); }  // save again (a newline in a reason box, else)
      return;
    }
    if (key === "y") { e.preventDefault(); choose("Y"); }
    else if (key === "n") { e.preventDefault(); choose("N"); }
    else if (key === "f" || key === "/") { e.preventDefault(); focusSource(); }
    else if ((key === "r" || key === "h" || key === "t") && useSource(key)) { e.preventDefault(); }
    else if (key === "s" && skip) { e.preventDefault(); if (!sent) { sent = true; skip.submit(); } }
    else if (key === "Enter" && !(active && (active.tagName === "BUTTON" || active.tagName === "A"))) { e.preventDefault(); submit(); }
  });
  form.addEventListener("submit", function (e) {
    if (sent) { e.preventDefault(); return; }   // a second click or Enter: the first request is on its way
    if (timeField) timeField.value = elapsed();
    if (focusField && prefill && focusField.value.trim() === prefill) focusField.value = "";  // a start, not a source
    sent = true;
    var button = form.querySelector("button[type=submit]");
    if (button) { button.disabled = true; button.textContent = "Saving…"; }
  });
  if (form.getAttribute("data-autofocus-error") === "1") { focusSource(); armed = focusField; }
})();
