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
