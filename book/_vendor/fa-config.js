// The book theme's Font Awesome (SVG + JS) swaps every <i class="fa ..."> for an <svg>. The ipywidgets
// Play button looks its <i> up again to switch between play and pause, and throws when it is gone, so
// an animation would never start on the static site. "nest" keeps the <i> and puts the <svg> inside.
window.FontAwesomeConfig = Object.assign(window.FontAwesomeConfig || {}, { autoReplaceSvg: "nest" });
