// The lineage graph page: the graph the page carries as JSON (#lineage-data), drawn in the
// browser by the vendored cytoscape with dagre's layered layout, inputs left and products
// right. Pan, zoom, fit; a group expands and collapses in place (the graph with or without it
// is fetched as JSON and the difference applied, no reload); hover or keyboard focus shows a
// node's state and reasons; a click or Enter opens an object or expands a group. The table
// below the graph lists the same nodes and follows each change.
"use strict";

(function () {
  const holder = document.getElementById("lineage-graph");
  const source = document.getElementById("lineage-data");
  if (!holder || !source || typeof window.cytoscape !== "function") {
    return;
  }
  if (window.cytoscapeDagre) {
    window.cytoscape.use(window.cytoscapeDagre);
  }
  const tip = document.getElementById("lineage-tip");
  const toolbar = document.getElementById("lineage-toolbar");
  const status = document.getElementById("lineage-status");
  const expandedList = document.getElementById("lineage-expanded");
  const LARGE = 400; // from this many nodes: no animation, straight edges, cached textures
  const COLOURS = {
    green: ["#dcf5e0", "#1a7f37"], red: ["#fde0e0", "#c62828"],
    orange: ["#ffe9cc", "#d96c00"], blocked: ["#e4e4e4", "#555555"],
    stored: ["#f0f1f3", "#8a939c"], unknown: ["#ffffff", "#8a939c"],
  };

  let data = JSON.parse(source.textContent);
  const groupLabels = {}; // group key -> its label, for the collapse buttons
  const memberOf = {}; // node key -> the group key it came from (expanded in this page)
  let focused = null;
  let busy = false;

  // a retracted node (awl retract) and what it reaches downstream get a mark of their own
  const MARK_WORDS = { retracted: "\u2298 retracted", reached: "\u26a0 uses retracted data" };

  function nodeElement(node) {
    const lines = [node.label, node.state_text];
    const classes = ["state-" + node.state];
    if (node.retraction) {
      const mark = node.retraction.mark;
      lines.push(MARK_WORDS[mark] +
        (node.count > 1 && node.retraction.retracted ? " (" + node.retraction.retracted + ")" : ""));
      classes.push(mark);
    }
    const longest = Math.max.apply(null, lines.map(function (l) { return l.length; }));
    if (node.count > 1) { classes.push("group"); groupLabels[node.key] = node.label; }
    if (node.root) { classes.push("root"); }
    return {
      group: "nodes",
      data: { id: node.key, label: lines.join("\n"), w: Math.max(60, longest * 6.4 + 18),
              h: 22 + 14 * (lines.length - 1), node: node },
      classes: classes.join(" "),
    };
  }

  function edgeElement(edge) {
    return { group: "edges",
             data: { id: edge.from + ">" + edge.to, source: edge.from, target: edge.to,
                     label: edge.label } };
  }

  function style(large) {
    const rules = [
      { selector: "node", style: {
        "shape": "round-rectangle", "label": "data(label)", "text-wrap": "wrap",
        "text-valign": "center", "text-halign": "center", "font-size": 11,
        "font-family": "Helvetica, Arial, sans-serif", "color": "#1b1f24",
        "width": "data(w)", "height": "data(h)", "border-width": 1.2,
        "min-zoomed-font-size": 5 } },
      { selector: "node.group", style: { "border-style": "double", "border-width": 4 } },
      { selector: "node.root", style: { "border-width": 3 } },
      { selector: "node.state-unknown", style: { "border-style": "dashed" } },
      { selector: "node.state-pending", style: { "border-style": "dotted" } },
      { selector: "node.retracted", style: {
        "outline-width": 4, "outline-color": "#b00020", "outline-style": "solid",
        "outline-offset": 2, "color": "#8c001a", "font-weight": "bold" } },
      { selector: "node.reached", style: {
        "outline-width": 2, "outline-color": "#b00020", "outline-style": "dashed",
        "outline-offset": 2 } },
      { selector: "node.focused", style: {
        "underlay-color": "#0b57d0", "underlay-opacity": 0.35, "underlay-padding": 5,
        "underlay-shape": "round-rectangle" } },
      { selector: "edge", style: {
        "curve-style": large ? "straight" : "bezier", "width": 1.2,
        "line-color": "#6b7480", "target-arrow-color": "#6b7480",
        "target-arrow-shape": "triangle", "arrow-scale": 0.8,
        "label": large ? "" : "data(label)", "font-size": 9, "color": "#4a525b",
        "text-background-color": "#ffffff", "text-background-opacity": 0.8,
        "min-zoomed-font-size": 7 } },
    ];
    Object.keys(COLOURS).forEach(function (state) {
      rules.push({ selector: "node.state-" + state, style: {
        "background-color": COLOURS[state][0], "border-color": COLOURS[state][1] } });
    });
    return rules;
  }

  function elements(answer) {
    const keys = new Set(answer.nodes.map(function (n) { return n.key; }));
    return answer.nodes.map(nodeElement).concat(answer.edges.filter(function (e) {
      return keys.has(e.from) && keys.has(e.to);
    }).map(edgeElement));
  }

  const large = data.nodes.length >= LARGE;
  const building = performance.now();
  const cy = window.cytoscape({
    container: holder,
    elements: elements(data),
    style: style(large),
    layout: { name: "preset" },
    minZoom: 0.02, maxZoom: 4,
    autoungrabify: true, boxSelectionEnabled: false,
    textureOnViewport: large, hideEdgesOnViewport: false,
    pixelRatio: large ? 1 : "auto",
  });

  // dagre's layered layout (crossing minimisation) takes seconds past a few hundred nodes;
  // larger graphs get the walk's own layers (hops from the root) ordered by the mean height
  // of their neighbours in the layer nearer the root: linear time, inputs still on the left
  const DAGRE_MAX = 500;

  function layeredPositions() {
    const byLevel = new Map();
    cy.nodes().forEach(function (n) {
      const level = n.data("node").level;
      if (!byLevel.has(level)) { byLevel.set(level, []); }
      byLevel.get(level).push(n);
    });
    const ascending = Array.from(byLevel.keys()).sort(function (a, b) { return a - b; });
    const xs = {};
    let x = 0;
    ascending.forEach(function (level, i) {
      const widest = Math.max.apply(null, byLevel.get(level).map(function (n) {
        return n.data("w");
      }));
      if (i) { x += widest / 2 + 80; }
      xs[level] = x;
      x += widest / 2;
    });
    const ys = {};
    const outward = ascending.slice().sort(function (a, b) {
      return Math.abs(a) - Math.abs(b) || a - b;
    });
    outward.forEach(function (level) {
      const scored = byLevel.get(level).map(function (n) {
        const near = n.neighborhood("node").map(function (m) { return ys[m.id()]; })
          .filter(function (v) { return v !== undefined; });
        const mean = near.length ? near.reduce(function (a, b) { return a + b; }, 0) /
          near.length : 0;
        return [mean, n.id()];
      });
      scored.sort(function (a, b) { return a[0] - b[0] || (a[1] < b[1] ? -1 : 1); });
      const centre = scored.reduce(function (a, b) { return a + b[0]; }, 0) / scored.length;
      scored.forEach(function (entry, i) {
        ys[entry[1]] = centre + (i - (scored.length - 1) / 2) * 48;
      });
    });
    const positions = {};
    cy.nodes().forEach(function (n) {
      positions[n.id()] = { x: xs[n.data("node").level], y: ys[n.id()] };
    });
    return positions;
  }

  function layout(animate) {
    const started = performance.now();
    return new Promise(function (done) {
      const count = cy.nodes().length;
      let options;
      if (count > DAGRE_MAX) {
        const positions = layeredPositions();
        options = { name: "preset", fit: true, padding: 20,
                    positions: function (node) { return positions[node.id()]; } };
      } else {
        options = { name: "dagre", rankDir: "LR", nodeSep: 12, rankSep: 70, edgeSep: 8,
                    fit: true, padding: 20, animate: animate && count < LARGE,
                    animationDuration: 250 };
      }
      const run = cy.layout(options);
      run.one("layoutstop", function () {
        holder.dataset.layoutMs = String(Math.round(performance.now() - started));
        done();
      });
      run.run();
    });
  }

  function announce(text) {
    if (status) { status.textContent = text; }
    holder.dataset.nodes = String(cy.nodes().length);
  }

  // -- the tip: state and reasons of the hovered or focused node --

  function showTip(element) {
    const node = element.data("node");
    const parts = [node.label + ": " + node.state_text];
    if (node.count > 1) {
      parts.push(Object.keys(node.states).map(function (s) {
        return node.states[s] + " " + s;
      }).join(", "));
    }
    tip.replaceChildren();
    const head = document.createElement("strong");
    head.textContent = parts.join(" — ");
    tip.appendChild(head);
    if (node.retraction) {
      const marks = document.createElement("ul");
      marks.className = "retraction-tip";
      node.retraction.sentences.forEach(function (text) {
        const item = document.createElement("li");
        item.textContent = (node.retraction.mark === "reached" ? "made from retracted data: " : "") + text;
        marks.appendChild(item);
      });
      tip.appendChild(marks);
    }
    if (node.reasons.length) {
      const list = document.createElement("ul");
      node.reasons.forEach(function (reason) {
        const item = document.createElement("li");
        item.textContent = reason;
        list.appendChild(item);
      });
      tip.appendChild(list);
    }
    const hint = document.createElement("div");
    hint.className = "muted";
    hint.textContent = node.count > 1 ? "Click or Enter: expand this group here" :
      "Click or Enter: open this object" +
      (memberOf[node.key] ? " (collapse its group with the button above)" : "");
    tip.appendChild(hint);
    const box = holder.getBoundingClientRect();
    const at = element.renderedBoundingBox();
    tip.hidden = false;
    tip.style.left = (window.scrollX + box.left + Math.max(0, Math.min(at.x1, box.width - 40))) + "px";
    tip.style.top = (window.scrollY + box.top + Math.max(0, Math.min(at.y2 + 6, box.height))) + "px";
  }

  function hideTip() {
    tip.hidden = true;
  }

  // -- the table under the graph --

  function cell(row, content) {
    const td = document.createElement("td");
    if (content instanceof Node) { td.appendChild(content); } else { td.textContent = content; }
    row.appendChild(td);
    return td;
  }

  function link(text, href) {
    const a = document.createElement("a");
    a.textContent = text;
    a.href = href;
    return a;
  }

  function renderTable() {
    const rows = document.getElementById("lineage-rows");
    const count = document.getElementById("lineage-count");
    if (!rows) { return; }
    rows.replaceChildren.apply(rows, data.nodes.map(function (node) {
      const row = document.createElement("tr");
      row.id = "row-" + node.key;
      const name = cell(row, link(node.label, node.url));
      if (node.retraction) {
        const badge = document.createElement("span");
        badge.className = "mark mark-" + node.retraction.mark;
        badge.title = node.retraction.sentences.join("; ");
        badge.textContent = node.retraction.mark;
        name.append(" ", badge);
      }
      cell(row, node.class);
      cell(row, String(node.level));
      let state = node.state + ": " + node.state_text;
      if (node.count > 1) {
        state += " (" + Object.keys(node.states).map(function (s) {
          return node.states[s] + " " + s;
        }).join(", ") + ")";
      }
      cell(row, state).className = "state-" + node.state;
      const reasons = document.createElement("ul");
      reasons.className = "reasons";
      (node.retraction ? node.retraction.sentences : []).forEach(function (r) {
        const li = document.createElement("li");
        li.className = "retraction-reason";
        li.textContent = (node.retraction.mark === "reached" ? "made from retracted data: " : "") + r;
        reasons.appendChild(li);
      });
      node.reasons.forEach(function (r) {
        const li = document.createElement("li");
        li.textContent = r;
        reasons.appendChild(li);
      });
      cell(row, reasons.children.length ? reasons : "");
      let action = link("lineage from here", node.lineage_url);
      if (node.count > 1) {
        action = link("expand", node.url);
        action.className = "expand";
      }
      cell(row, action);
      return row;
    }));
    if (count) { count.textContent = String(data.nodes.length); }
  }

  // -- expanding and collapsing groups in place --

  function pageUrl(expand, json) {
    const query = new URLSearchParams();
    query.set("depth", String(data.depth));
    query.set("direction", data.direction);
    expand.slice().sort().forEach(function (key) { query.append("expand", key); });
    if (json) { query.set("format", "json"); }
    // the path, not data.object_id: ids are 64-bit, past what a JavaScript number holds
    return window.location.pathname + "?" + query.toString();
  }

  function renderExpanded() {
    const inputs = document.getElementById("lineage-expand-inputs");
    if (inputs) {
      inputs.replaceChildren.apply(inputs, data.expanded.map(function (key) {
        const input = document.createElement("input");
        input.type = "hidden";
        input.name = "expand";
        input.value = key;
        return input;
      }));
    }
    if (!expandedList) { return; }
    expandedList.replaceChildren.apply(expandedList, data.expanded.map(function (key) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "collapse";
      button.dataset.group = key;
      button.textContent = "Collapse " + (groupLabels[key] || "group " + key);
      return button;
    }));
  }

  async function change(expand, from) {
    if (busy) { return; }
    busy = true;
    announce("Loading…");
    try {
      const answer = await fetch(pageUrl(expand, true), { headers: { Accept: "application/json" } });
      const body = await answer.json();
      if (!answer.ok) {
        throw new Error(body.error || answer.statusText);
      }
      await apply(body, from);
      history.replaceState(null, "", pageUrl(body.expanded, false));
      announce(cy.nodes().length + " nodes" + (body.partial ? " (partial: a limit stopped the walk)" : ""));
    } catch (error) {
      announce("Could not change the graph: " + error.message);
    } finally {
      busy = false;
      holder.dataset.changes = String(Number(holder.dataset.changes || 0) + 1);
    }
  }

  async function apply(answer, from) {
    const before = new Set(cy.nodes().map(function (n) { return n.id(); }));
    const origin = from ? cy.getElementById(from) : null;
    const at = origin && origin.nonempty() ? Object.assign({}, origin.position()) : null;
    const wanted = elements(answer);
    const keys = new Set(answer.nodes.map(function (n) { return n.key; }));
    if (focused && !keys.has(focused.id())) { focused = null; hideTip(); }
    cy.batch(function () {
      cy.edges().remove();
      cy.nodes().filter(function (n) { return !keys.has(n.id()); }).remove();
      wanted.forEach(function (element) {
        if (element.group === "nodes") {
          const there = cy.getElementById(element.data.id);
          if (there.nonempty()) {
            there.data(element.data);
            there.classes(element.classes + (focused && focused.id() === there.id() ? " focused" : ""));
            return;
          }
          if (at) { element.position = { x: at.x, y: at.y }; }
          if (from && !before.has(element.data.id)) { memberOf[element.data.id] = from; }
        }
        cy.add(element);
      });
    });
    data = answer;
    renderTable();
    renderExpanded();
    await layout(true);
  }

  function activate(element) {
    const node = element.data("node");
    if (node.count > 1) {
      change(data.expanded.concat([node.key]), node.key);
    } else {
      window.location.href = node.url;
    }
  }

  // -- keyboard: arrows move between nodes, Enter opens, + - 0 zoom and fit --

  function focusNode(element) {
    if (focused) { focused.removeClass("focused"); }
    focused = element;
    element.addClass("focused");
    const extent = cy.extent();
    const p = element.position();
    if (p.x < extent.x1 || p.x > extent.x2 || p.y < extent.y1 || p.y > extent.y2) {
      cy.center(element);
    }
    holder.dataset.focused = element.id();
    showTip(element);
  }

  function neighbour(direction) {
    const here = focused.position();
    let best = null;
    let bestScore = Infinity;
    cy.nodes().forEach(function (other) {
      if (other === focused) { return; }
      const p = other.position();
      const dx = p.x - here.x;
      const dy = p.y - here.y;
      let along;
      let across;
      if (direction === "ArrowRight") { along = dx; across = dy; }
      else if (direction === "ArrowLeft") { along = -dx; across = dy; }
      else if (direction === "ArrowDown") { along = dy; across = dx; }
      else { along = -dy; across = dx; }
      if (along <= 1) { return; }
      const score = along + 3 * Math.abs(across);
      if (score < bestScore) { bestScore = score; best = other; }
    });
    return best;
  }

  function zoomBy(factor) {
    cy.zoom({ level: cy.zoom() * factor,
              renderedPosition: { x: holder.clientWidth / 2, y: holder.clientHeight / 2 } });
  }

  holder.addEventListener("focus", function () {
    if (!focused || focused.removed()) {
      const root = cy.nodes(".root");
      focusNode(root.nonempty() ? root[0] : cy.nodes()[0]);
    } else {
      focusNode(focused);
    }
  });
  holder.addEventListener("blur", hideTip);
  holder.addEventListener("keydown", function (event) {
    if (event.key.startsWith("Arrow")) {
      if (focused) {
        const next = neighbour(event.key);
        if (next) { focusNode(next); }
      }
      event.preventDefault();
    } else if (event.key === "Enter" && focused) {
      activate(focused);
      event.preventDefault();
    } else if (event.key === "+" || event.key === "=") {
      zoomBy(1.25);
    } else if (event.key === "-") {
      zoomBy(0.8);
    } else if (event.key === "0") {
      cy.fit(undefined, 20);
    } else if (event.key === "Escape") {
      hideTip();
    }
  });

  // -- mouse --

  cy.on("mouseover", "node", function (event) { showTip(event.target); });
  cy.on("mouseout", "node", function () {
    if (focused && document.activeElement === holder) { showTip(focused); } else { hideTip(); }
  });
  cy.on("tap", "node", function (event) { activate(event.target); });
  cy.on("viewport", function () { if (!tip.hidden && !focused) { hideTip(); } });

  if (toolbar) {
    toolbar.hidden = false;
    toolbar.addEventListener("click", function (event) {
      const button = event.target.closest("button");
      if (!button) { return; }
      if (button.dataset.action === "fit") { cy.fit(undefined, 20); }
      else if (button.dataset.action === "zoom-in") { zoomBy(1.25); }
      else if (button.dataset.action === "zoom-out") { zoomBy(0.8); }
      else if (button.dataset.group) {
        change(data.expanded.filter(function (k) { return k !== button.dataset.group; }), null);
      }
    });
  }

  holder.dataset.buildMs = String(Math.round(performance.now() - building));
  // the table: focusing a row shows its node; "expand" expands in place here too
  const rowsBody = document.getElementById("lineage-rows");
  if (rowsBody) {
    rowsBody.addEventListener("focusin", function (event) {
      const row = event.target.closest("tr");
      const element = row ? cy.getElementById(row.id.replace(/^row-/, "")) : null;
      if (element && element.nonempty()) { focusNode(element); }
    });
    rowsBody.addEventListener("focusout", hideTip);
    rowsBody.addEventListener("click", function (event) {
      const expand = event.target.closest("a.expand");
      if (!expand) { return; }
      event.preventDefault();
      const key = expand.closest("tr").id.replace(/^row-/, "");
      change(data.expanded.concat([key]), key);
    });
  }

  // the page is sent before its nodes' states are worked out (they are most of its work):
  // its JSON form has them, asked once the graph is drawn
  async function loadStates() {
    if (!data.states_pending) { return; }
    announce("Working out the states…");
    busy = true;  // a group expanded meanwhile waits: its answer would have them too
    try {
      const answer = await fetch(pageUrl(data.expanded, true), { headers: { Accept: "application/json" } });
      const body = await answer.json();
      if (!answer.ok) { throw new Error(body.error || answer.statusText); }
      await apply(body, null);
    } finally {
      busy = false;
    }
  }

  renderExpanded();
  layout(false).then(loadStates).then(function () {
    announce(cy.nodes().length + " nodes");
  }, function (error) {
    announce("Could not work out the states: " + error.message);
  }).finally(function () {
    holder.dataset.ready = "1";
  });
  window.awlLineage = { cy: cy, change: change, data: function () { return data; } };
})();
