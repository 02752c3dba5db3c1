// Two small fixes for ipywidgets on the static site. This file is loaded before the page's
// deferred scripts (Font Awesome, MathJax), which is what both fixes rely on.

// 1. The book theme's Font Awesome (SVG + JS) swaps every <i class="fa ..."> for an <svg>. The ipywidgets
//    Play button looks its <i> up again to switch between play and pause, and throws when it is gone, so
//    an animation would never start. "nest" keeps the <i> and puts the <svg> inside it.
window.FontAwesomeConfig = Object.assign(window.FontAwesomeConfig || {}, { autoReplaceSvg: "nest" });

// 2. The widget manager typesets widget labels through the MathJax 2 API (MathJax.Hub.Queue), but the
//    book serves MathJax 3, so every label threw "Cannot read properties of undefined (reading 'Queue')".
//    Give MathJax 3 a Hub.Queue that typesets the label with the version 3 call.
(function () {
  var hub = {
    Queue: function (job) {
      var element = job && job[2];
      var mathjax = window.MathJax;
      if (element && mathjax && typeof mathjax.typesetPromise === "function") {
        mathjax.typesetPromise([element]).catch(function () {});
      }
    }
  };
  var config = window.MathJax = window.MathJax || {};
  config.Hub = hub;                        // used until MathJax 3 has loaded
  var startup = config.startup = config.startup || {};
  var ready = startup.ready;
  startup.ready = function () {            // MathJax 3 replaces window.MathJax when it loads
    if (ready) { ready(); } else { window.MathJax.startup.defaultReady(); }
    window.MathJax.Hub = hub;
  };
})();

// 3. A frame of an Image widget is an <img> that the widget manager gives no alt text. (Frames drawn
//    with lk.widgets' alt=... are HTML widgets whose <img> carries its own.) Describe such a frame by
//    its control, e.g. "Precomputed frame for epsilon: 0.1", so a screen reader says which picture
//    is shown; the description follows the control as the frames are switched.
(function () {
  function controlState(box) {
    if (!box) { return ""; }
    var label = box.querySelector(".widget-label");
    var name = label ? label.textContent.trim() : "";
    var value = "";
    var readout = box.querySelector(".widget-readout");
    var select = box.querySelector("select");
    var active = box.querySelector(".widget-toggle-button.mod-active");
    if (readout) { value = readout.textContent.trim(); }
    else if (select && select.selectedIndex >= 0) { value = select.options[select.selectedIndex].text; }
    else if (active) { value = active.textContent.trim(); }
    return [name, value].filter(Boolean).join(": ");
  }
  function describe(img) {
    if (img.getAttribute("alt")) { return; }
    var state = controlState(img.closest(".widget-vbox"));
    img.setAttribute("alt", "Precomputed frame" + (state ? " for " + state : ""));
  }
  function scan(node) {
    if (node.matches && node.matches("img.widget-image")) { describe(node); }
    if (node.querySelectorAll) { node.querySelectorAll("img.widget-image").forEach(describe); }
  }
  new MutationObserver(function (records) {
    records.forEach(function (record) { record.addedNodes.forEach(scan); });
  }).observe(document.documentElement, { childList: true, subtree: true });
})();
