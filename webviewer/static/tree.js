// The object tree (webviewer/_tree.py): an ARIA tree. Opening an object's branch fetches its
// own level as JSON (/obj/ID/tree?depth=0) and inserts it in place; link lists open in place
// and load their further members a page at a time. Arrow keys move, open and close; Enter
// opens or closes; Shift+Enter follows the object's link. Without script the tree is plain
// nested lists of links.
"use strict";

function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function idOf(n) {
  // Object ids are 63-bit: past 2**53 a JSON number loses digits, its URL does not.
  return n.url.split("/").pop();
}

function stateMark(n) {
  const state = make("span", "state state-" + n.state);
  state.title = n.state + (n.reasons.length ? ": " + n.reasons.join("; ") : "");
  state.setAttribute("aria-label", "state " + n.state);
  return state;
}

function newerLink(n) {
  const newer = make("a", "newer", "newer version exists");
  newer.href = n.versions_url;
  newer.tabIndex = -1;
  return newer;
}

function retractedLink(n) {
  // the object is retracted now (awl retract): the mark links to what the retraction reached
  const mark = make("a", "retracted",
    "\u2298 " + (n.retracted.whole ? "retracted" : "cells retracted"));
  mark.href = n.retracted.affected_url;
  mark.title = n.retracted.sentences.join("; ");
  mark.tabIndex = -1;
  return mark;
}

function objectLabel(n) {
  const link = make("a", "objref", n["class"] + " " + idOf(n));
  link.href = n.url;
  link.tabIndex = -1;
  const parts = [stateMark(n), " ", link];
  if (n.version) parts.push(" ", make("span", "version", "v" + n.version));
  if (n.newer) parts.push(" ", newerLink(n));
  if (n.retracted) parts.push(" ", retractedLink(n));
  if (n.cycle) parts.push(" ", make("span", "cycle muted", "(above in this tree)"));
  return parts;
}

function treeItem(className) {
  const item = make("li", className);
  item.setAttribute("role", "treeitem");
  item.tabIndex = -1;
  return item;
}

function nameSpan(name, doc) {
  const span = make("span", "name", name);
  if (doc) span.title = doc;
  return span;
}

function branchItem(name, n) {
  const item = treeItem("branch object");
  item.dataset.objectId = idOf(n);
  if (!n.cycle) {
    item.setAttribute("aria-expanded", "false");
    item.dataset.treeUrl = n.tree_url;
  }
  const row = make("span", "row");
  if (name) row.append(nameSpan(name), " = ");
  row.append(...objectLabel(n));
  item.append(row);
  if (n.expanded) {
    item.append(group(levelItems(n)));
    item.setAttribute("aria-expanded", "true");
  }
  return item;
}

function group(items) {
  const list = make("ul");
  list.setAttribute("role", "group");
  list.append(...items);
  return list;
}

function leafItem(className, name, doc, sep, value, valueClass, title) {
  const item = treeItem("leaf " + className);
  const row = make("span", "row");
  const shown = make("span", valueClass, value);
  if (title) shown.title = title;
  row.append(nameSpan(name, doc), sep, shown);
  item.append(row);
  return item;
}

function moreItem(url, count) {
  const item = treeItem("more");
  item.dataset.nextUrl = url;
  const link = make("a", "", count + " more");
  link.href = url;
  link.tabIndex = -1;
  const row = make("span", "row");
  row.append(link);
  item.append(row);
  return item;
}

function memberItems(lst, members, start) {
  return members.map((m, i) => branchItem(lst + "[" + (start + i) + "]", m));
}

function levelItems(n) {
  const items = [];
  for (const a of n.attributes) {
    items.push(leafItem("attribute", a.name, a.doc, " = ", a.summary, "value",
                        a.folded ? a.value : ""));
  }
  for (const link of n.links) {
    if (link.target) items.push(branchItem(link.name, link.target));
    else items.push(leafItem("link", link.name, link.doc, " = ", "None", "muted"));
  }
  for (const lst of n.lists) {
    if (!lst.count) {
      items.push(leafItem("list", lst.name, lst.doc, ": ", lst.label, "count muted"));
      continue;
    }
    const item = treeItem("branch list");
    item.setAttribute("aria-expanded", "false");
    item.dataset.list = lst.name;
    const row = make("span", "row");
    row.append(nameSpan(lst.name, lst.doc), ": ", make("span", "count", lst.label));
    const members = memberItems(lst.name, lst.members, lst.start);
    if (lst.next_url) {
      members.push(moreItem(lst.next_url, lst.count - lst.start - lst.members.length));
    }
    item.append(row, group(members));
    items.push(item);
  }
  return items;
}

async function fetchJson(url) {
  const response = await fetch(url, {headers: {"Accept": "application/json"}});
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || response.statusText);
  return answer;
}

function ancestorIds(item) {
  const ids = new Set();
  for (let node = item; node; node = node.parentElement.closest("[role=treeitem]")) {
    if (node.dataset.objectId) ids.add(node.dataset.objectId);
  }
  return ids;
}

function markCycles(item, items) {
  // An object above in the tree is shown, not expandable: opening cannot go round forever.
  const above = ancestorIds(item);
  for (const child of items) {
    const id = child.dataset.objectId;
    if (id && above.has(id) && child.hasAttribute("aria-expanded")) {
      child.removeAttribute("aria-expanded");
      delete child.dataset.treeUrl;
      child.querySelector(".row").append(" ", make("span", "cycle muted", "(above in this tree)"));
    }
  }
}

function childGroup(item) {
  return Array.from(item.children).find((c) => c.getAttribute("role") === "group");
}

async function expand(item) {
  if (item.getAttribute("aria-expanded") !== "false") return;
  if (!childGroup(item) && item.dataset.treeUrl) {
    item.setAttribute("aria-busy", "true");
    try {
      const answer = await fetchJson(item.dataset.treeUrl);
      const items = levelItems(answer.tree);
      markCycles(item, items);
      for (const list of items) {
        if (list.dataset.list) markCycles(item, Array.from(childGroup(list).children));
      }
      item.append(group(items));
    } catch (error) {
      item.append(group([leafItem("error", "error", "", ": ", error.message, "error")]));
    } finally {
      item.removeAttribute("aria-busy");
    }
  }
  item.setAttribute("aria-expanded", "true");
}

function collapse(item) {
  if (item.getAttribute("aria-expanded") === "true") item.setAttribute("aria-expanded", "false");
}

async function loadMore(item) {
  const listItem = item.parentElement.closest("[role=treeitem]");
  try {
    const answer = await fetchJson(item.dataset.nextUrl);
    const items = memberItems(answer.list, answer.members, answer.start);
    if (answer.next_url) {
      items.push(moreItem(answer.next_url, answer.count - answer.start - answer.members.length));
    }
    markCycles(listItem, items);
    item.replaceWith(...items);
    focusItem(items[0]);
  } catch (error) {
    item.querySelector(".row").append(" ", make("span", "error", error.message));
  }
}

function visibleItems(tree) {
  return Array.from(tree.querySelectorAll("[role=treeitem]")).filter((item) => {
    for (let up = item.parentElement.closest("[role=treeitem]"); up;
         up = up.parentElement.closest("[role=treeitem]")) {
      if (up.getAttribute("aria-expanded") === "false") return false;
    }
    return true;
  });
}

function focusItem(item) {
  const tree = item.closest("[role=tree]");
  for (const other of tree.querySelectorAll("[role=treeitem][tabindex='0']")) other.tabIndex = -1;
  item.tabIndex = 0;
  item.focus();
}

function activate(item) {
  if (item.dataset.nextUrl) return loadMore(item);
  if (item.getAttribute("aria-expanded") === "true") return collapse(item);
  return expand(item);
}

function onKey(event) {
  const item = event.target.closest("[role=treeitem]");
  if (!item) return;
  const tree = event.currentTarget;
  const visible = visibleItems(tree);
  const index = visible.indexOf(item);
  const expanded = item.getAttribute("aria-expanded");
  switch (event.key) {
    case "ArrowDown":
      if (index + 1 < visible.length) focusItem(visible[index + 1]);
      break;
    case "ArrowUp":
      if (index > 0) focusItem(visible[index - 1]);
      break;
    case "Home":
      focusItem(visible[0]);
      break;
    case "End":
      focusItem(visible[visible.length - 1]);
      break;
    case "ArrowRight":
      if (expanded === "false") expand(item);
      else if (expanded === "true" && index + 1 < visible.length) focusItem(visible[index + 1]);
      break;
    case "ArrowLeft":
      if (expanded === "true") collapse(item);
      else {
        const parent = item.parentElement.closest("[role=treeitem]");
        if (parent) focusItem(parent);
      }
      break;
    case "Enter":
      if (event.shiftKey) {
        const link = item.querySelector(":scope > .row a");
        if (link) link.click();
      } else activate(item);
      break;
    default:
      return;
  }
  event.preventDefault();
}

function onClick(event) {
  const item = event.target.closest("[role=treeitem]");
  if (!item) return;
  if (event.target.closest("a")) {
    if (!item.dataset.nextUrl) return;  // an object's link opens its page
    event.preventDefault();
  } else if (!event.target.closest(".row")) return;
  focusItem(item);
  activate(item);
}

function levelNodes(n) {
  const nodes = [n];
  for (const link of n.links || []) if (link.target) nodes.push(link.target);
  for (const lst of n.lists || []) nodes.push(...lst.members);
  return nodes;
}

async function fillStates(tree) {
  // The object page leaves the states that need the processor's plan to this request.
  let answer;
  try {
    answer = await fetchJson(tree.dataset.statesUrl);
  } catch (error) {
    return;  // the marks stay "being worked out"; the tree works without them
  }
  const byId = new Map(levelNodes(answer.tree).map((n) => [idOf(n), n]));
  for (const mark of tree.querySelectorAll(".row > .state-pending")) {
    const item = mark.closest("[role=treeitem]");
    const n = byId.get(item.dataset.objectId);
    if (!n) continue;
    mark.replaceWith(stateMark(n));
    if (n.newer && !item.querySelector(":scope > .row > .newer")) {
      const after = item.querySelector(":scope > .row > .version") ||
                    item.querySelector(":scope > .row > .objref");
      after.after(" ", newerLink(n));
    }
  }
  tree.dataset.statesLoaded = "true";
}

function setUp(tree) {
  tree.classList.add("js");
  const items = tree.querySelectorAll("[role=treeitem]");
  items.forEach((item) => { item.tabIndex = -1; });
  if (items.length) items[0].tabIndex = 0;
  tree.addEventListener("keydown", onKey);
  tree.addEventListener("click", onClick);
  if (tree.dataset.statesUrl) fillStates(tree);
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("ul.awltree[role=tree]").forEach(setUp);
});
