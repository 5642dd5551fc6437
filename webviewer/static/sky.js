// The sky map: footprints (polygons) and sources (points) from the page's JSON, drawn in a
// gnomonic (tangent-plane) projection about the view's centre, in which great circles are
// straight lines, so a footprint's edges are exact. North is up and right ascension grows
// to the left, as on the sky. The drawing is in plane degrees inside one group whose
// transform is the view (pan and zoom); the RA/Dec grid and its labels are redrawn in
// screen units after every change of view.
"use strict";

(function () {
  const svg = document.getElementById("sky");
  const source = document.getElementById("sky-data");
  if (!svg || !source) { return; }
  const data = JSON.parse(source.textContent);
  const SVG_NS = "http://www.w3.org/2000/svg";
  const W = 960, H = 640;
  const RAD = Math.PI / 180;
  const readout = document.getElementById("sky-readout");
  const ra0 = data.centre.ra * RAD, dec0 = data.centre.dec * RAD;
  const sin0 = Math.sin(dec0), cos0 = Math.cos(dec0);

  // (ra, dec) in degrees -> plane degrees (x to the west, i.e. -xi; y down, i.e. -eta), or
  // null for the hemisphere away from the centre.
  function project(ra, dec) {
    const a = ra * RAD - ra0, d = dec * RAD;
    const cosc = sin0 * Math.sin(d) + cos0 * Math.cos(d) * Math.cos(a);
    if (cosc <= 1e-6) { return null; }
    const xi = Math.cos(d) * Math.sin(a) / cosc;
    const eta = (cos0 * Math.sin(d) - sin0 * Math.cos(d) * Math.cos(a)) / cosc;
    return [-xi / RAD, -eta / RAD];
  }

  // plane degrees -> (ra, dec) in degrees
  function unproject(x, y) {
    const xi = -x * RAD, eta = -y * RAD;
    const rho = Math.hypot(xi, eta);
    if (rho < 1e-15) { return [data.centre.ra, data.centre.dec]; }
    const c = Math.atan(rho), sc = Math.sin(c), cc = Math.cos(c);
    const dec = Math.asin(cc * sin0 + eta * sc * cos0 / rho);
    const ra = ra0 + Math.atan2(xi * sc, rho * cos0 * cc - eta * sin0 * sc);
    return [((ra / RAD) % 360 + 360) % 360, dec / RAD];
  }

  function el(name, attributes, parent) {
    const node = document.createElementNS(SVG_NS, name);
    for (const key in attributes) { node.setAttribute(key, String(attributes[key])); }
    if (parent) { parent.appendChild(node); }
    return node;
  }

  const grid = el("g", { "class": "grid", "aria-hidden": "true" }, svg);
  const content = el("g", { "class": "content" }, svg);
  const labels = el("g", { "class": "labels", "aria-hidden": "true" }, svg);
  const layers = data.layers.map(function (layer, i) {
    return el("g", { "class": "layer layer-" + (i % 8), "data-layer": i }, content);
  });

  // object ids have up to 63 bits, beyond a JavaScript number's exact integers: the id is
  // read from the object's URL, which is text
  function idOf(item) { return item.url.split("/").pop(); }

  function describe(item) {
    return item["class"] + " " + idOf(item) + (item.date ? ", " + item.date : "");
  }

  function show(text) { if (readout) { readout.textContent = text; } }

  function link(item, parent) {
    const a = el("a", { "href": item.url, "class": "item", "data-object-id": idOf(item),
      "aria-label": describe(item) }, parent);
    el("title", {}, a).textContent = describe(item);
    a.addEventListener("mouseenter", function () { show(describe(item)); });
    a.addEventListener("focus", function () { show(describe(item)); });
    return a;
  }

  const bounds = [Infinity, Infinity, -Infinity, -Infinity];
  function extend(p) {
    bounds[0] = Math.min(bounds[0], p[0]); bounds[1] = Math.min(bounds[1], p[1]);
    bounds[2] = Math.max(bounds[2], p[0]); bounds[3] = Math.max(bounds[3], p[1]);
  }

  data.footprints.forEach(function (f) {
    const points = f.vertices.map(function (v) { return project(v[0], v[1]); });
    if (points.some(function (p) { return p === null; })) { return; }
    points.forEach(extend);
    const a = link(f, layers[f.layer]);
    a.classList.add("footprint");
    el("polygon", { "points": points.map(function (p) { return p.join(","); }).join(" ") }, a);
  });
  const dots = [];
  data.sources.forEach(function (s) {
    const p = project(s.ra, s.dec);
    if (p === null) { return; }
    extend(p);
    const a = link(s, layers[s.layer]);
    a.classList.add("source");
    a.setAttribute("tabindex", "-1");  // reached from the map's list, not one Tab each
    dots.push(el("circle", { "cx": p[0], "cy": p[1], "r": 0 }, a));
  });
  if (data.cone) {
    // the cone asked for, as its edge: points at the radius from the centre, all bearings
    const c = data.cone, d0 = c.dec * RAD, r = c.radius * RAD, edge = [];
    for (let k = 0; k <= 96; k++) {
      const bearing = 2 * Math.PI * k / 96;
      const dec = Math.asin(Math.sin(d0) * Math.cos(r) + Math.cos(d0) * Math.sin(r) * Math.cos(bearing));
      const ra = c.ra * RAD + Math.atan2(Math.sin(bearing) * Math.sin(r) * Math.cos(d0),
        Math.cos(r) - Math.sin(d0) * Math.sin(dec));
      const p = project(ra / RAD, dec / RAD);
      if (p) { edge.push(p); }
    }
    // the map fits the cone, which the footprints that overlap it may reach beyond
    bounds.splice(0, 4, Infinity, Infinity, -Infinity, -Infinity);
    edge.forEach(extend);
    el("polyline", { "class": "cone", "points": edge.map(function (p) { return p.join(","); }).join(" ") },
      content);
  }
  if (!isFinite(bounds[0])) { bounds.splice(0, 4, -1, -1, 1, 1); }

  // the view: screen = plane * scale + (tx, ty)
  const view = { scale: 1, tx: 0, ty: 0 };

  function fit() {
    const w = Math.max(bounds[2] - bounds[0], 1e-4), h = Math.max(bounds[3] - bounds[1], 1e-4);
    view.scale = 0.9 * Math.min(W / w, H / h);
    view.tx = W / 2 - view.scale * (bounds[0] + bounds[2]) / 2;
    view.ty = H / 2 - view.scale * (bounds[1] + bounds[3]) / 2;
    apply();
  }

  function zoom(factor, sx, sy) {
    const x = sx === undefined ? W / 2 : sx, y = sy === undefined ? H / 2 : sy;
    const scale = Math.min(1e7, Math.max(1e-2, view.scale * factor));
    view.tx = x - (x - view.tx) * scale / view.scale;
    view.ty = y - (y - view.ty) * scale / view.scale;
    view.scale = scale;
    apply();
  }

  function pan(dx, dy) { view.tx += dx; view.ty += dy; apply(); }

  function apply() {
    content.setAttribute("transform",
      "translate(" + view.tx + "," + view.ty + ") scale(" + view.scale + ")");
    const r = 3 / view.scale;
    dots.forEach(function (c) { c.setAttribute("r", r); });
    svg.setAttribute("data-scale", view.scale.toPrecision(6));
    drawGrid();
  }

  const STEPS = [90, 45, 30, 15, 10, 5, 2, 1, 0.5, 0.25, 1 / 6, 1 / 12, 1 / 30, 1 / 60,
    1 / 120, 1 / 360, 1 / 720, 1 / 1800, 1 / 3600];

  function niceStep(span) {
    for (const step of STEPS) { if (span / step >= 3) { return step; } }
    return STEPS[STEPS.length - 1];
  }

  function label(value, step) {
    const digits = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step) + 0.3)));
    return value.toFixed(digits) + "\u00b0";
  }

  function screen(ra, dec) {
    const p = project(ra, dec);
    return p && [p[0] * view.scale + view.tx, p[1] * view.scale + view.ty];
  }

  function drawGrid() {
    grid.textContent = "";
    labels.textContent = "";
    // the RA and Dec spanned by the view, from a grid of screen points
    let raLo = Infinity, raHi = -Infinity, decLo = Infinity, decHi = -Infinity;
    for (let i = 0; i <= 8; i++) {
      for (let j = 0; j <= 8; j++) {
        const s = unproject((i * W / 8 - view.tx) / view.scale, (j * H / 8 - view.ty) / view.scale);
        let dra = s[0] - data.centre.ra;
        dra = ((dra + 540) % 360) - 180;
        raLo = Math.min(raLo, dra); raHi = Math.max(raHi, dra);
        decLo = Math.min(decLo, s[1]); decHi = Math.max(decHi, s[1]);
      }
    }
    const decStep = niceStep(decHi - decLo);
    const raStep = niceStep(Math.min(360, raHi - raLo));
    const n = 48;
    function line(points, text, atBottom) {
      const inside = points.filter(function (p) {
        return p && p[0] >= 0 && p[0] <= W && p[1] >= 0 && p[1] <= H;
      });
      if (inside.length < 2) { return; }
      el("polyline", { "points": points.filter(Boolean).map(function (p) {
        return p[0].toFixed(1) + "," + p[1].toFixed(1);
      }).join(" ") }, grid);
      const at = inside.reduce(function (best, p) {
        return atBottom ? (p[1] > best[1] ? p : best) : (p[0] > best[0] ? p : best);
      });
      const t = el("text", { "x": atBottom ? at[0] : W - 4, "y": atBottom ? H - 4 : at[1] - 3,
        "text-anchor": atBottom ? "middle" : "end" }, labels);
      t.textContent = text;
    }
    const raStart = Math.ceil((data.centre.ra + raLo) / raStep) * raStep;
    for (let ra = raStart; ra <= data.centre.ra + raHi + 1e-9; ra += raStep) {
      const points = [];
      for (let k = 0; k <= n; k++) {
        points.push(screen(ra, Math.max(-90, Math.min(90, decLo + (decHi - decLo) * k / n))));
      }
      line(points, "RA " + label(((ra % 360) + 360) % 360, raStep), true);
    }
    const decStart = Math.ceil(decLo / decStep) * decStep;
    for (let dec = decStart; dec <= decHi + 1e-9; dec += decStep) {
      const points = [];
      for (let k = 0; k <= n; k++) {
        points.push(screen(data.centre.ra + raLo + (raHi - raLo) * k / n, dec));
      }
      line(points, "Dec " + label(dec, decStep), false);
    }
  }

  // pointer: drag to pan (a press that does not move stays a click on a footprint)
  let drag = null;
  function toScreen(event) {
    const box = svg.getBoundingClientRect();
    return [(event.clientX - box.left) * W / box.width, (event.clientY - box.top) * H / box.height];
  }
  svg.addEventListener("pointerdown", function (event) {
    if (event.button !== 0) { return; }
    drag = { start: toScreen(event), last: toScreen(event), moved: false, id: event.pointerId };
  });
  svg.addEventListener("pointermove", function (event) {
    const p = toScreen(event);
    const sky = unproject((p[0] - view.tx) / view.scale, (p[1] - view.ty) / view.scale);
    if (!event.target.closest || !event.target.closest("a.item")) {
      show("RA " + sky[0].toFixed(5) + "\u00b0, Dec " + sky[1].toFixed(5) + "\u00b0");
    }
    if (!drag) { return; }
    if (!drag.moved && Math.hypot(p[0] - drag.start[0], p[1] - drag.start[1]) > 4) {
      drag.moved = true;
      svg.setPointerCapture(drag.id);
      svg.classList.add("dragging");
    }
    if (drag.moved) { pan(p[0] - drag.last[0], p[1] - drag.last[1]); drag.last = p; }
  });
  function endDrag() {
    if (drag && drag.moved) {
      svg.classList.remove("dragging");
      // the click that ends a drag must not open the footprint under it
      svg.addEventListener("click", function (e) { e.preventDefault(); }, { once: true, capture: true });
    }
    drag = null;
  }
  svg.addEventListener("pointerup", endDrag);
  svg.addEventListener("pointercancel", endDrag);
  svg.addEventListener("wheel", function (event) {
    event.preventDefault();
    const p = toScreen(event);
    zoom(event.deltaY < 0 ? 1.25 : 0.8, p[0], p[1]);
  }, { passive: false });

  // keyboard, on the map or on a footprint in it
  svg.addEventListener("keydown", function (event) {
    const moves = { ArrowLeft: [40, 0], ArrowRight: [-40, 0], ArrowUp: [0, 40], ArrowDown: [0, -40] };
    if (moves[event.key]) { pan(moves[event.key][0], moves[event.key][1]); }
    else if (event.key === "+" || event.key === "=") { zoom(1.25); }
    else if (event.key === "-" || event.key === "_") { zoom(0.8); }
    else if (event.key === "0") { fit(); }
    else { return; }
    event.preventDefault();
  });
  document.querySelectorAll("[data-sky]").forEach(function (button) {
    button.addEventListener("click", function () {
      const what = button.getAttribute("data-sky");
      if (what === "in") { zoom(1.25); } else if (what === "out") { zoom(0.8); } else { fit(); }
    });
  });
  document.querySelectorAll(".sky-legend input[data-layer]").forEach(function (box) {
    box.addEventListener("change", function () {
      const group = layers[Number(box.getAttribute("data-layer"))];
      if (group) { group.style.display = box.checked ? "" : "none"; }
    });
  });
  fit();
  svg.setAttribute("data-ready", "true");
})();
