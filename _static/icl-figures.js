/* icl-lab: click any figure of the book to see it at full size (an overlay; click or Esc closes).
   Local, no dependencies. Applies to notebook output images, figures and kernel-free slider frames. */
(function () {
  "use strict";
  var SELECTOR = "article img, .bd-article img";
  function isFigure(img) {
    return !img.closest("a") && !img.closest(".icl-no-zoom") && !img.closest("header, nav, .navbar");
  }
  function open(img) {
    var box = document.createElement("div");
    box.className = "icl-zoom";
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-label", "figure at full size (click or press Escape to close)");
    var big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt || "";
    box.appendChild(big);
    var cap = img.closest("figure") && img.closest("figure").querySelector("figcaption");
    if (cap) { var c = document.createElement("div"); c.className = "icl-zoom-caption"; c.innerHTML = cap.innerHTML; box.appendChild(c); }
    function close() { box.remove(); document.removeEventListener("keydown", onkey); }
    function onkey(e) { if (e.key === "Escape") close(); }
    box.addEventListener("click", close);
    document.addEventListener("keydown", onkey);
    document.body.appendChild(box);
  }
  function init() {
    document.addEventListener("click", function (e) {
      var img = e.target;
      if (img && img.tagName === "IMG" && img.matches(SELECTOR) && isFigure(img)) { e.preventDefault(); open(img); }
    });
    document.querySelectorAll(SELECTOR).forEach(function (img) {
      if (!isFigure(img)) return;
      img.classList.add("icl-zoomable");
      img.title = img.title || "click to enlarge";
      /* on a phone a figure is drawn at about half its size: a visible cue under it says that a tap
         shows it at full size (icl-book.css shows the cue on narrow screens only) */
      var host = img.closest(".icl-static-slider") || img;
      var next = host.nextElementSibling;
      if (!(next && next.classList.contains("icl-zoom-cue"))) {
        var cue = document.createElement("div");
        cue.className = "icl-zoom-cue";
        cue.textContent = "Tap the figure to see it at full size";
        cue.addEventListener("click", function () { open(img); });
        host.parentNode.insertBefore(cue, host.nextSibling);
      }
    });
    /* wide tables scroll inside the page column instead of overflowing it (phones) */
    document.querySelectorAll("article table").forEach(function (t) {
      var p = t.parentElement;
      if (!p || p.classList.contains("icl-scroll") || p.classList.contains("pst-scrollable-table-container") && getComputedStyle(p).overflowX !== "visible") return;
      var w = document.createElement("div"); w.className = "icl-scroll"; p.insertBefore(w, t); w.appendChild(t);
    });
  }
  /* a link to a claim's row inside a folded ledger (<details>) opens the fold and scrolls to the row */
  function reveal() {
    var id = decodeURIComponent((location.hash || "").slice(1));
    var el = id && document.getElementById(id);
    if (!el) return;
    var opened = false;
    for (var d = el.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) {
      if (!d.open) { d.open = true; opened = true; }
    }
    if (opened) el.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  /* a formula in running text wider than its column (on a phone) scrolls sideways in a box of its own,
     instead of running off the page; display formulas get the same from icl-book.css */
  function boxWideMath() {
    var items = document.querySelectorAll("article mjx-container:not([display='true']), .bd-article mjx-container:not([display='true'])");
    for (var i = 0; i < items.length; i++) {
      var m = items[i], col = m.parentElement;
      if (!col || m.parentElement.closest("mjx-container")) continue;
      var right = Math.min(window.innerWidth, col.getBoundingClientRect().right);
      if (m.classList.contains("icl-wide-math") || m.getBoundingClientRect().right > right + 1) {
        m.classList.add("icl-wide-math");
      }
    }
  }
  function whenTypeset() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(boxWideMath);
  }
  if (document.readyState === "complete") whenTypeset(); else window.addEventListener("load", whenTypeset);
  window.addEventListener("resize", boxWideMath);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
  if (document.readyState === "complete") reveal(); else window.addEventListener("load", reveal);
})();
