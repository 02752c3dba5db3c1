// Added to the in-browser copy of the book by scripts/build_lite.py.
// The Python of this page (Pyodide) is fetched from Pyodide's CDN the first time a notebook
// starts. When that download fails (no network, or the CDN is blocked), JupyterLite only turns
// the kernel icon red; this script fetches the same file itself and, if it cannot, tells the
// reader what failed and what to do instead.
(function () {
  "use strict";
  var script = document.currentScript;
  var url = script && script.getAttribute("data-pyodide-url");
  var running = script && script.getAttribute("data-running-page");
  if (!url || typeof fetch !== "function") {
    return;
  }

  function paragraph(box, text) {
    var p = document.createElement("p");
    p.style.margin = "0.3em 0";
    p.textContent = text;
    box.appendChild(p);
    return p;
  }

  function show(reason) {
    if (document.getElementById("labkit-runtime-message")) {
      return;
    }
    var box = document.createElement("div");
    box.id = "labkit-runtime-message";
    box.setAttribute("role", "alert");
    box.style.cssText = "position:fixed;top:0;left:0;right:0;z-index:10000;padding:0.8em 1.2em;" +
      "background:#fff4e5;color:#3b2300;border-bottom:2px solid #e08a00;" +
      "font:14px/1.45 system-ui,sans-serif;box-shadow:0 2px 6px rgba(0,0,0,0.2)";
    var title = paragraph(box, "Python could not be started in this browser tab.");
    title.style.fontWeight = "bold";
    paragraph(box, "What failed: the Python runtime (Pyodide) could not be downloaded from " +
      url + " (" + reason + ").");
    paragraph(box, "The in-browser copy needs the network once, to fetch Python with numpy, " +
      "scipy and matplotlib (a few tens of megabytes, which the browser keeps afterwards). " +
      "Until then you can read this notebook and its stored results, but not run it here.");
    var local = paragraph(box, "To run it without that download, run the notebook on your own " +
      "machine: install Python and labkit, then open it in JupyterLab (see ");
    var link = document.createElement("a");
    link.href = running || "../../book/running.html";
    link.target = "_blank";
    link.rel = "noopener";
    link.textContent = "Running the notebooks";
    local.appendChild(link);
    local.appendChild(document.createTextNode(")."));
    var close = document.createElement("button");
    close.type = "button";
    close.textContent = "Close";
    close.style.cssText = "margin-top:0.3em;font:inherit;cursor:pointer";
    close.addEventListener("click", function () { box.remove(); });
    box.appendChild(close);
    (document.body || document.documentElement).appendChild(box);
  }

  // "no-cors": any answer from the server will do (the runtime's own loader checks the file);
  // only a network failure rejects. "force-cache": a copy the browser already keeps counts.
  fetch(url, { mode: "no-cors", cache: "force-cache" }).catch(function (error) {
    var reason = (error && error.message) || String(error);
    if (document.body) {
      show(reason);
    } else {
      document.addEventListener("DOMContentLoaded", function () { show(reason); });
    }
  });
})();
