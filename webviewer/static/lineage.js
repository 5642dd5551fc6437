// The lineage graph page: a click on an object node opens a small menu (open the object, or
// follow its own lineage one hop further); groups expand through their link as without script.
"use strict";

(function () {
  const graph = document.getElementById("lineage-graph");
  if (!graph) {
    return;
  }
  const menu = document.createElement("div");
  menu.className = "node-menu";
  menu.hidden = true;
  menu.setAttribute("role", "menu");
  document.body.appendChild(menu);

  function item(text, href) {
    const link = document.createElement("a");
    link.textContent = text;
    link.href = href;
    link.setAttribute("role", "menuitem");
    return link;
  }

  graph.addEventListener("click", function (event) {
    const node = event.target.closest("g.lineage-node");
    if (!node || node.classList.contains("group")) {
      return; // a group's link expands it
    }
    const key = node.id.replace(/^node-/, "");
    const row = document.getElementById("row-" + key);
    const anchor = node.querySelector("a");
    if (!row || !anchor) {
      return;
    }
    event.preventDefault();
    const lineage = row.querySelector("td:last-child a");
    menu.replaceChildren(item("Open object " + key, anchor.getAttribute("xlink:href") ||
                                                     anchor.getAttribute("href")));
    if (lineage) {
      menu.appendChild(item("Lineage from here", lineage.getAttribute("href")));
    }
    menu.style.left = (event.pageX + 4) + "px";
    menu.style.top = (event.pageY + 4) + "px";
    menu.hidden = false;
    event.stopPropagation();
  });

  document.addEventListener("click", function (event) {
    if (!menu.contains(event.target)) {
      menu.hidden = true;
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      menu.hidden = true;
    }
  });
})();
