/* Keyboard judging: Y / N choose, C "can't tell" (and goes to the comment box: a comment is required), F or / focus the source, R / H / T fill in your last source or the head's / tail's page, Enter submits, S skips, Backspace undoes your last answer (a plain page load), Esc leaves a field (a source field
   the page focused itself keeps Y / N / C / F as shortcuts until the person types in it; a comment or reason box
   takes every key but Enter as text).
   Sends the visible page time (added up over re-renders after an error) as a hint: the server measures the
   time on task itself, from the hand-out, and keeps this figure only up to its own.

   No page load between items (issue 15): where the form says data-in-place="1", a save (or skip) goes out with
   fetch, every field and the pressed button included (FormData(form, submitter)), and the server answers with the
   page to show next, rendered from the same templates as a full page: the next item, the same item with its errors,
   or the "nothing left" page. Its <main> replaces this page's, the title and the address follow, and the keys work
   on the new form at once. Any other answer (a page this script does not drive, a different header: logged out) is
   shown as a normal page. Without JavaScript, or with JUDGING_IN_PLACE=0, the forms post and redirect as before. */
(function () {
  "use strict";
  if (window.kgpoolJudgeKeys) return;  // once per document, whatever pages are shown in place
  window.kgpoolJudgeKeys = true;
  var IN_PLACE_HEADER = "X-Kgpool-In-Place";
  var form, choice, focusField, skip, timeField, base, visibleSince, spent, prefill, armed, sent, inPlace;
  var undo, comment, sourceRequired;
  var preparing = null;  // the hand-out whose next page the server was asked to prepare

  function elapsed() { return base + Math.round(spent + (visibleSince === null ? 0 : performance.now() - visibleSince)); }
  document.addEventListener("visibilitychange", function () {
    if (document.hidden && visibleSince !== null) { spent += performance.now() - visibleSince; visibleSince = null; }
    else if (!document.hidden && visibleSince === null) { visibleSince = performance.now(); }
  });
  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    return (tag === "INPUT" && el.type !== "radio" && el.type !== "checkbox") || tag === "TEXTAREA" || el.isContentEditable;
  }
  function isSourceField(el) { return el === focusField && el.name === "source_url"; }
  function choose(value) {
    var input = form.querySelector("input[name=" + choice + "][value=" + value + "]");
    if (input) { input.checked = true; input.dispatchEvent(new Event("change", { bubbles: true })); }
    return !!input;
  }
  // The start of the person's last source (e.g. "https://en.wikipedia.org/wiki/") is written in only when they go
  // to the field, so an answer given without a source (where the campaign's evidence policy allows) sends none.
  function focusSource() {
    if (!focusField) return;
    if (prefill && !focusField.value) focusField.value = prefill;
    focusField.focus();
    var n = focusField.value.length;
    try { focusField.setSelectionRange(n, n); } catch (e) { /* not a text input */ }
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
  function submit() { if (form.requestSubmit) form.requestSubmit(); else form.submit(); }
  function skipItem() {
    if (sent || !skip) return;
    if (skip.requestSubmit) skip.requestSubmit(); else { sent = true; skip.submit(); }
  }
  function disarm() { armed = null; }

  // --- the form on the page (again after each page shown in place) ---------------------------------------
  function bind() {
    form = document.getElementById("judge-form");
    if (!form) return false;
    choice = form.getAttribute("data-choice") || "answer";
    focusField = form.querySelector("[data-focus-key]");
    skip = document.getElementById("skip-form");
    undo = document.getElementById("undo-form");
    comment = form.querySelector("[data-comment]");
    timeField = form.querySelector("[name=time_on_task_ms]");
    base = timeField && timeField.value ? parseInt(timeField.value, 10) || 0 : 0;
    visibleSince = document.hidden ? null : performance.now();
    spent = 0;
    prefill = focusField ? focusField.getAttribute("data-prefill") || "" : "";
    armed = null;
    sent = false;
    inPlace = form.getAttribute("data-in-place") === "1" && !!window.fetch && !!window.DOMParser;
    // A pasted full URL replaces the field (the prefilled site start included): appended it would be stored
    // as a doubled URL, "https://en.wikipedia.org/wiki/https://en.wikipedia.org/wiki/…".
    if (focusField && focusField.name === "source_url") {
      var field = focusField;
      field.addEventListener("paste", function (e) {
        var text = e.clipboardData ? e.clipboardData.getData("text").trim() : "";
        if (!/^https?:\/\//i.test(text)) return;
        e.preventDefault();
        field.value = text;
        field.setSelectionRange(text.length, text.length);
        field.dispatchEvent(new Event("input", { bubbles: true }));
      });
      // The same for a full URL typed after the site start: once its "http(s)://" is complete, the start goes.
      field.addEventListener("input", function () {
        var value = field.value;
        if (prefill && value.indexOf(prefill) === 0 && /^https?:\/\//i.test(value.slice(prefill.length))) {
          field.value = value.slice(prefill.length);
        }
      });
    }
    // A field the page focused (after a server error, or the browser's check of a required field), not the
    // person: until they enter it themselves (F, a click, a character that is no shortcut) Enter saves again
    // instead of typing a newline and, in the source field, Y / N / C / F / R / H / T / S keep their meaning, so
    // shortcuts typed by a person who did not see the focus move are not stored as a URL. In a comment or reason
    // box every other key is text: a sentence starts with any letter ("No source...", "Yet..."), and a shortcut
    // there would change the answer the person chose and eat the letter.
    form.addEventListener("invalid", function (e) {
      if (e.target !== document.activeElement) armed = e.target;  // already there: the person's own field
    }, true);
    ["mousedown", "input", "focusout"].forEach(function (type) {
      form.addEventListener(type, function (e) { if (e.target === armed) disarm(); });
    });
    // Can't tell: no source needed (whatever the evidence policy), a comment is.
    sourceRequired = !!(focusField && focusField.required);
    form.addEventListener("change", function (e) {
      if (e.target.name !== choice || !comment) return;
      comment.required = e.target.value === "C";
      if (focusField) focusField.required = sourceRequired && e.target.value !== "C";
    });
    var given = form.querySelector("input[name=" + choice + "]:checked");  // an answer the server sent back
    if (given) given.dispatchEvent(new Event("change", { bubbles: true }));
    form.addEventListener("submit", onSubmit);
    if (skip) skip.addEventListener("submit", onSubmit);
    var errorIn = form.getAttribute("data-autofocus-error");  // the field of the server's error, focused
    if (errorIn === "source") { focusSource(); armed = focusField; }
    else if (errorIn === "comment" && comment) { comment.focus(); armed = comment; }
    // While the person reads, the server prepares the page of the item it will likely hand out next (it answers
    // 204, nothing more), so that the save's answer is quicker. Once per item.
    var prepare = form.getAttribute("data-prepare-next");
    if (inPlace && prepare && prepare !== preparing) {
      preparing = prepare;
      setTimeout(function () { fetch(prepare, { credentials: "same-origin" }).catch(function () { /* only a hint */ }); }, 0);
    }
    return true;
  }

  function onSubmit(e) {
    if (sent) { e.preventDefault(); return; }   // a second click or Enter: the first request is on its way
    var target = e.target;
    if (target === form) {
      if (timeField) timeField.value = elapsed();
      if (focusField && prefill && focusField.value.trim() === prefill) focusField.value = "";  // a start, not a source
    }
    sent = true;
    var data = inPlace ? formData(target, e.submitter) : null;
    var button = form.querySelector("button[type=submit]");
    if (button) {  // after the browser has read the form (a disabled button would not be sent)
      setTimeout(function () { button.disabled = true; button.textContent = "Saving…"; }, 0);
    }
    if (!inPlace) return;
    e.preventDefault();
    fetch(target.action, { method: "POST", body: data, credentials: "same-origin", headers: pageHeaders() })
      .then(function (response) { return response.text().then(function (html) { show(response, html); }); })
      .catch(function () { HTMLFormElement.prototype.submit.call(target); });  // the request id makes a retry safe
  }

  function formData(target, submitter) {
    var data = new FormData(target, submitter || undefined);
    // Browsers before FormData(form, submitter) leave the pressed button out: add its name and value.
    if (submitter && submitter.name && target.contains(submitter) && data.getAll(submitter.name).indexOf(submitter.value) < 0) {
      data.append(submitter.name, submitter.value);
    }
    return data;
  }

  function pageHeaders() {
    var headers = {};
    headers[IN_PLACE_HEADER] = "1";
    return headers;
  }

  // The server's answer: a page this script drives (a judge or adjudicate form, or the "nothing left" page) under
  // the same header (the same person logged in) is shown in place; anything else as the browser would show it.
  function show(response, html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var main = doc.querySelector("main");
    var header = doc.querySelector("header");
    var current = document.querySelector("header");
    var driven = main && (main.querySelector("#judge-form[data-in-place='1']") || main.querySelector("#done"));
    if (!driven || !header || !current || header.textContent !== current.textContent) {
      if (response.redirected && response.ok) { window.location.assign(response.url); return; }
      document.open(); document.write(html); document.close();
      return;
    }
    if (document.activeElement && document.activeElement.blur) document.activeElement.blur();  // as after a page load
    document.querySelector("main").replaceWith(document.adoptNode(main));
    document.title = doc.title;
    var url = response.headers.get("Content-Location") || response.url;
    if (url) window.history.replaceState(null, "", url);
    window.scrollTo(0, 0);
    bind();
    announce(document.querySelector("main"));
    var root = document.documentElement;  // a count of the pages shown in place (tests wait on it)
    root.setAttribute("data-pages-shown", String((parseInt(root.getAttribute("data-pages-shown"), 10) || 0) + 1));
  }

  // A page shown in place is no page load, so screen readers would say nothing: a polite live region outside
  // <main> (it survives the swaps) reads the server's message (an error, "nothing left") and the new question.
  function announce(main) {
    var region = document.getElementById("judge-announce");
    if (!region) {
      region = document.createElement("div");
      region.id = "judge-announce";
      region.className = "visually-hidden";
      region.setAttribute("role", "status");
      region.setAttribute("aria-live", "polite");
      document.body.appendChild(region);
    }
    var parts = [];
    main.querySelectorAll(".messages li, .has-error, #done, #question").forEach(function (node) {
      var text = node.textContent.replace(/\s+/g, " ").trim();
      if (text && parts.indexOf(text) < 0) parts.push(text);
    });
    // "Saved." then "Is ...?": a full stop only between parts that do not end with one ("Saved.. Is" before)
    region.textContent = parts.reduce(function (text, part) {
      return text ? text + (/[.!?:]$/.test(text) ? " " : ". ") + part : part;
    }, "");
  }

  // --- keys (one listener for the page's lifetime; it acts on the form shown now) ----------------------------
  document.addEventListener("keydown", function (e) {
    if (!form || !document.body.contains(form)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var active = document.activeElement;
    var key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (typing(active)) {
      if (e.key === "Escape") { active.blur(); return; }
      if (active !== armed) return;
      if (key === "Enter") { e.preventDefault(); submit(); return; }  // save again (a newline in a reason box, else)
      if (!isSourceField(active)) return;  // a comment or reason box: text
      if (key === "y" || key === "n") { e.preventDefault(); choose(key.toUpperCase()); }
      else if (key === "c" && comment && choose("C")) { e.preventDefault(); disarm(); comment.focus(); }
      else if (key === "f" || key === "/") { e.preventDefault(); disarm(); focusSource(); }  // now typing here
      else if ((key === "r" || key === "h" || key === "t") && useSource(key)) { e.preventDefault(); }
      else if (key === "s" && skip) { e.preventDefault(); skipItem(); }
      return;
    }
    if (key === "y") { e.preventDefault(); choose("Y"); }
    else if (key === "n") { e.preventDefault(); choose("N"); }
    else if (key === "c" && comment && choose("C")) { e.preventDefault(); comment.focus(); }
    else if (key === "Backspace" && undo) { e.preventDefault(); if (!sent) { sent = true; undo.submit(); } }
    else if (key === "f" || key === "/") { e.preventDefault(); focusSource(); }
    else if ((key === "r" || key === "h" || key === "t") && useSource(key)) { e.preventDefault(); }
    else if (key === "s" && skip) { e.preventDefault(); skipItem(); }
    else if (key === "Enter" && !(active && (active.tagName === "BUTTON" || active.tagName === "A"))) { e.preventDefault(); submit(); }
  });

  bind();
})();
