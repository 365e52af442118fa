"use strict";
// Tables (and .scroll boxes) wider than the window scroll inside their own box (site.css). One that scrolls gets a
// tab stop, so that keyboard users can scroll it too (WCAG 2.1.1; axe-core's scrollable-region-focusable); one that
// fits loses it again, leaving no useless stop on wide screens. A tabindex written in the markup is left alone.
(function () {
  const observer = new ResizeObserver((entries) => {
    for (const { target } of entries) {
      if (target.scrollWidth > target.clientWidth) target.tabIndex = 0;
      else target.removeAttribute("tabindex");
    }
  });
  document.querySelectorAll("table:not([tabindex]), .scroll:not([tabindex])").forEach((box) => observer.observe(box));
})();
