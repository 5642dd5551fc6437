// The image page: the preview PNG (stretched on the server by astropy's classes) drawn on a
// canvas with pan and zoom; the pixel values are the same binned grid as float32, fetched
// once, so the read-out under the cursor needs no request; RA/Dec come from the header's TAN
// parameters (FITS WCS paper II, zenithal projection with the native pole at the reference
// point). Overlays: boxes of the sources of source lists made from the image, and the
// lineage boxes of a clicked pixel (the pixels page's JSON).
"use strict";

(function () {
  const view = document.getElementById("image-view");
  if (!view) { return; }
  const canvas = document.getElementById("image-canvas");
  const ctx = canvas.getContext("2d");
  const rows = Number(view.dataset.rows);
  const cols = Number(view.dataset.cols);
  const bin = Number(view.dataset.binning);
  const objectId = view.dataset.object;
  const hdu = view.dataset.hdu;
  const binnedRows = Math.ceil(rows / bin);
  const binnedCols = Math.ceil(cols / bin);
  const coveredRows = binnedRows * bin;  // the preview's rows, in image pixels
  const wcs = view.dataset.wcs && view.dataset.wcs !== "null" ? JSON.parse(view.dataset.wcs) : null;
  const picture = new Image();
  let values = null;  // Float32Array, FITS row 0 first
  let scale = 1, originX = 0, originY = 0;  // image pixels at the canvas's top left
  let sourceBoxes = [];
  let lineageBoxes = [];
  let drag = null;
  const DEG = Math.PI / 180;

  function setText(id, text) { document.getElementById(id).textContent = text; }

  function resize() {
    const width = Math.max(200, Math.floor(view.clientWidth));
    if (canvas.width !== width) { canvas.width = width; }
  }

  function fit() {
    resize();
    scale = Math.min(canvas.width / cols, canvas.height / coveredRows);
    originX = (cols - canvas.width / scale) / 2;
    originY = (coveredRows - canvas.height / scale) / 2;
    draw();
  }

  function boxPath(box) {  // [x0, y0, x1, y1] inclusive, image pixels
    ctx.rect(box[0], coveredRows - 1 - box[3], box[2] - box[0] + 1, box[3] - box[1] + 1);
  }

  function draw() {
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = "#202020";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(scale, 0, 0, scale, -originX * scale, -originY * scale);
    ctx.imageSmoothingEnabled = false;
    if (picture.complete && picture.naturalWidth > 0) {
      ctx.drawImage(picture, 0, 0, binnedCols * bin, coveredRows);
    }
    ctx.lineWidth = 2 / scale;
    if (document.getElementById("show-sources").checked && sourceBoxes.length) {
      ctx.strokeStyle = "#30d158";
      ctx.beginPath();
      sourceBoxes.forEach(boxPath);
      ctx.stroke();
    }
    if (document.getElementById("show-lineage").checked && lineageBoxes.length) {
      ctx.strokeStyle = "#ff9f0a";
      ctx.beginPath();
      lineageBoxes.forEach(boxPath);
      ctx.stroke();
    }
    canvas.dataset.scale = String(scale);
    canvas.dataset.originX = String(originX);
    canvas.dataset.originY = String(originY);
    canvas.dataset.coveredRows = String(coveredRows);
    setText("readout-zoom", (scale * bin >= 1 ? scale.toFixed(2) : scale.toFixed(3)) + "\u00d7");
  }

  function pixelAt(cx, cy) {  // canvas point -> image pixel (x, y), or null outside
    const u = originX + cx / scale;
    const w = originY + cy / scale;
    const x = Math.floor(u);
    const y = coveredRows - 1 - Math.floor(w);
    if (x < 0 || x >= cols || y < 0 || y >= rows) { return null; }
    return { x: x, y: y };
  }

  function sky(x, y) {  // 0-based pixel -> [ra, dec] in degrees
    const p1 = x + 1 - wcs.crpix[0], p2 = y + 1 - wcs.crpix[1];
    const X = wcs.cd[0][0] * p1 + wcs.cd[0][1] * p2;
    const Y = wcs.cd[1][0] * p1 + wcs.cd[1][1] * p2;
    const r = Math.hypot(X, Y);
    const phi = r === 0 ? 0 : Math.atan2(X, -Y);
    const theta = Math.atan2(180 / Math.PI, r);
    const dp = wcs.crval[1] * DEG, dphi = phi - wcs.lonpole * DEG;
    const ra = wcs.crval[0] * DEG + Math.atan2(-Math.cos(theta) * Math.sin(dphi),
      Math.sin(theta) * Math.cos(dp) - Math.cos(theta) * Math.sin(dp) * Math.cos(dphi));
    const dec = Math.asin(Math.sin(theta) * Math.sin(dp) +
      Math.cos(theta) * Math.cos(dp) * Math.cos(dphi));
    return [((ra / DEG) % 360 + 360) % 360, dec / DEG];
  }

  function sexagesimal(deg, hours) {
    const sign = deg < 0 ? "-" : (hours ? "" : "+");
    let rest = Math.abs(deg) / (hours ? 15 : 1);
    const a = Math.floor(rest); rest = (rest - a) * 60;
    const b = Math.floor(rest); const c = (rest - b) * 60;
    return sign + String(a).padStart(2, "0") + ":" + String(b).padStart(2, "0") + ":" +
      c.toFixed(hours ? 3 : 2).padStart(hours ? 6 : 5, "0");
  }

  function readout(pixel) {
    const ids = ["readout-x", "readout-y", "readout-value", "readout-ra", "readout-dec"];
    if (!pixel) { ids.forEach(function (id) { setText(id, "\u2013"); }); return; }
    setText("readout-x", String(pixel.x));
    setText("readout-y", String(pixel.y));
    const cell = document.getElementById("readout-value");
    if (values) {
      const v = values[Math.floor(pixel.y / bin) * binnedCols + Math.floor(pixel.x / bin)];
      cell.dataset.value = String(v);
      cell.textContent = Number.isFinite(v) ? v.toPrecision(6) + (bin > 1 ? " (block mean)" : "") : "NaN";
    } else {
      cell.textContent = "loading\u2026";
    }
    if (wcs) {
      const [ra, dec] = sky(pixel.x, pixel.y);
      const raCell = document.getElementById("readout-ra");
      const decCell = document.getElementById("readout-dec");
      raCell.dataset.deg = String(ra);
      decCell.dataset.deg = String(dec);
      raCell.textContent = ra.toFixed(6) + "\u00b0 " + sexagesimal(ra, true);
      decCell.textContent = dec.toFixed(6) + "\u00b0 " + sexagesimal(dec, false);
    }
  }

  function zoomAt(factor, cx, cy) {
    const u = originX + cx / scale, w = originY + cy / scale;
    scale = Math.min(64, Math.max(0.02, scale * factor));
    originX = u - cx / scale;
    originY = w - cy / scale;
    draw();
  }

  function centre() { return pixelAt(canvas.width / 2, canvas.height / 2); }

  function canvasPoint(event) {
    const rect = canvas.getBoundingClientRect();
    return [(event.clientX - rect.left) * canvas.width / rect.width,
            (event.clientY - rect.top) * canvas.height / rect.height];
  }

  canvas.addEventListener("keydown", function (event) {
    const step = 0.1 * Math.min(canvas.width, canvas.height) / scale;
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step],
                    ArrowDown: [0, step] };
    if (moves[event.key]) {
      originX += moves[event.key][0];
      originY += moves[event.key][1];
      draw();
    } else if (event.key === "+" || event.key === "=") {
      zoomAt(1.5, canvas.width / 2, canvas.height / 2);
    } else if (event.key === "-" || event.key === "_") {
      zoomAt(1 / 1.5, canvas.width / 2, canvas.height / 2);
    } else if (event.key === "0") {
      fit();
    } else if (event.key === "Enter") {
      const pixel = centre();
      if (pixel) { trace(pixel); }
    } else {
      return;
    }
    event.preventDefault();
    readout(centre());
  });
  canvas.addEventListener("wheel", function (event) {
    event.preventDefault();
    const [cx, cy] = canvasPoint(event);
    zoomAt(event.deltaY < 0 ? 1.25 : 0.8, cx, cy);
  }, { passive: false });
  canvas.addEventListener("pointerdown", function (event) {
    if (event.button !== 0) { return; }
    canvas.setPointerCapture(event.pointerId);
    const [cx, cy] = canvasPoint(event);
    drag = { cx: cx, cy: cy, ox: originX, oy: originY, moved: false };
  });
  canvas.addEventListener("pointermove", function (event) {
    const [cx, cy] = canvasPoint(event);
    if (drag) {
      if (Math.abs(cx - drag.cx) + Math.abs(cy - drag.cy) > 3) { drag.moved = true; }
      if (drag.moved) {
        originX = drag.ox - (cx - drag.cx) / scale;
        originY = drag.oy - (cy - drag.cy) / scale;
        draw();
      }
    }
    readout(pixelAt(cx, cy));
  });
  canvas.addEventListener("pointerup", function (event) {
    if (!drag) { return; }
    const moved = drag.moved;
    drag = null;
    if (!moved) {
      const [cx, cy] = canvasPoint(event);
      const pixel = pixelAt(cx, cy);
      if (pixel) { trace(pixel); }
    }
  });
  canvas.addEventListener("pointercancel", function () { drag = null; });

  function getJSON(url) {
    return fetch(url, { headers: { Accept: "application/json" } }).then(function (response) {
      if (!response.ok) { throw new Error(url + ": " + response.status); }
      return response.json();
    });
  }

  function status(text) { document.getElementById("overlay-status").textContent = text; }

  function trace(pixel) {  // the lineage boxes of one pixel, backward
    status("Tracing pixel x=" + pixel.x + ", y=" + pixel.y + "\u2026");
    getJSON("/obj/" + objectId + "/pixels?hdu=" + hdu + "&x=" + pixel.x + "&y=" + pixel.y)
      .then(function (found) {
        const list = document.getElementById("lineage-list");
        list.replaceChildren();
        lineageBoxes = [[pixel.x, pixel.y, pixel.x, pixel.y]];
        found.images.forEach(function (item) {
          // ids as text (item.object.id): a 63-bit id read as a JavaScript number loses digits
          if (item.object.id === objectId && item.shape.length === 2) {
            lineageBoxes = lineageBoxes.concat(item.boxes);
          }
          const li = document.createElement("li");
          const a = document.createElement("a");
          const box = item.boxes.length ? item.boxes[0] : null;
          a.href = item.preview_url && box ?
            "/obj/" + item.object.id + "/image?hdu=" + item.hdu + "&box=" + box.join(",") :
            item.object.url;
          a.textContent = item.object.class + " " + item.object.id;
          li.append(a, " " + item.array + ": " + item.cells + " cells in " +
                    item.boxes_total + " boxes");
          list.append(li);
        });
        view.dataset.lineageBoxes = String(lineageBoxes.length);
        status("Pixel x=" + pixel.x + ", y=" + pixel.y + ": " + found.images_total +
               " arrays reached backward" + (found.message ? " (" + found.message + ")" : ""));
        draw();
      })
      .catch(function (error) { status("Tracing failed: " + error.message); });
  }

  function loadSources() {
    getJSON(view.dataset.overlays).then(function (overlays) {
      const lists = overlays.source_lists;
      lists.forEach(function (list) { sourceBoxes = sourceBoxes.concat(list.boxes); });
      view.dataset.sources = String(sourceBoxes.length);
      status(lists.length ? lists.map(function (list) {
        return list.boxes.length + " sources of " + list["class"] + " " + list.id;
      }).join("; ") + (overlays.limits_hit.length ? " (" + overlays.limits_hit[0] + ")" : "")
        : "No source list made from this image.");
      draw();
    }).catch(function (error) { status("Overlays failed: " + error.message); });
  }

  function restretch() {
    const stretch = document.getElementById("stretch").value;
    const limits = document.getElementById("limits").value;
    picture.src = view.dataset.previewBase + "&stretch=" + stretch + "&limits=" + limits;
    const params = new URLSearchParams(window.location.search);
    params.set("stretch", stretch);
    params.set("limits", limits);
    window.history.replaceState(null, "", window.location.pathname + "?" + params.toString());
  }
  document.getElementById("stretch").addEventListener("change", restretch);
  document.getElementById("limits").addEventListener("change", restretch);
  document.getElementById("show-sources").addEventListener("change", draw);
  document.getElementById("show-lineage").addEventListener("change", draw);

  const asked = new URLSearchParams(window.location.search).get("box");
  if (asked && /^\d+,\d+,\d+,\d+$/.test(asked)) { lineageBoxes = [asked.split(",").map(Number)]; }
  picture.onload = function () { view.dataset.loaded = picture.src; draw(); };
  picture.src = view.dataset.preview;
  fetch(view.dataset.data).then(function (response) { return response.arrayBuffer(); })
    .then(function (buffer) { values = new Float32Array(buffer); view.dataset.values = "ready"; });
  window.addEventListener("resize", fit);
  fit();
  loadSources();
})();
