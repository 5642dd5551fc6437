// The pixels page: a click on the preview traces that pixel, a drag traces the box. The
// point is mapped through the overlay's viewBox, which is in image pixels with row 0 at the
// bottom, so binning and the displayed size need no arithmetic here. Each choice is a new
// URL (x, y or x0, y0, x1, y1), so every view can be shared.
"use strict";

(function () {
  const pick = document.getElementById("pick");
  if (!pick) { return; }
  const svg = pick.querySelector("svg.overlay");
  const rows = Number(pick.dataset.rows);
  const cols = Number(pick.dataset.cols);
  const coveredRows = Number(pick.dataset.coveredRows);
  const SVG_NS = "http://www.w3.org/2000/svg";
  let start = null;
  let band = null;

  function pixelAt(event) {
    const point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    const inImage = point.matrixTransform(svg.getScreenCTM().inverse());
    const x = Math.min(cols - 1, Math.max(0, Math.floor(inImage.x)));
    const y = Math.min(rows - 1, Math.max(0, coveredRows - 1 - Math.floor(inImage.y)));
    return { x: x, y: y };
  }

  function drawBand(a, b) {
    if (!band) {
      band = document.createElementNS(SVG_NS, "rect");
      band.setAttribute("fill", "#0a84ff");
      band.setAttribute("fill-opacity", "0.2");
      band.setAttribute("stroke", "#0a84ff");
      band.setAttribute("stroke-width", "2");
      band.setAttribute("vector-effect", "non-scaling-stroke");
      svg.appendChild(band);
    }
    const x0 = Math.min(a.x, b.x), x1 = Math.max(a.x, b.x);
    const y0 = Math.min(a.y, b.y), y1 = Math.max(a.y, b.y);
    band.setAttribute("x", String(x0));
    band.setAttribute("y", String(coveredRows - 1 - y1));
    band.setAttribute("width", String(x1 - x0 + 1));
    band.setAttribute("height", String(y1 - y0 + 1));
  }

  function go(a, b) {
    const params = new URLSearchParams(window.location.search);
    for (const name of ["x", "y", "x0", "y0", "x1", "y1"]) { params.delete(name); }
    if (a.x === b.x && a.y === b.y) {
      params.set("x", String(a.x));
      params.set("y", String(a.y));
    } else {
      params.set("x0", String(Math.min(a.x, b.x)));
      params.set("y0", String(Math.min(a.y, b.y)));
      params.set("x1", String(Math.max(a.x, b.x)));
      params.set("y1", String(Math.max(a.y, b.y)));
    }
    window.location.assign(window.location.pathname + "?" + params.toString());
  }

  pick.addEventListener("pointerdown", function (event) {
    if (event.button !== 0) { return; }
    event.preventDefault();
    pick.setPointerCapture(event.pointerId);
    start = pixelAt(event);
    drawBand(start, start);
  });
  pick.addEventListener("pointermove", function (event) {
    if (start) { drawBand(start, pixelAt(event)); }
  });
  pick.addEventListener("pointerup", function (event) {
    if (!start) { return; }
    const from = start;
    start = null;
    go(from, pixelAt(event));
  });
  pick.addEventListener("pointercancel", function () { start = null; });
})();
