// The object page: load "used by" into the page on request (the link works without it).
"use strict";

function objectLink(ref) {
  const link = document.createElement("a");
  link.href = ref.url;
  // ref.id, the id as text: ids have 63 bits, past what a JavaScript number holds exactly
  link.textContent = ref["class"] + " " + ref.id;
  return link;
}

function showUsedBy(target, answer) {
  target.replaceChildren();
  if (!answer.count) {
    const none = document.createElement("p");
    none.className = "muted";
    none.textContent = "No stored object links to it.";
    target.append(none);
    return;
  }
  for (const [attribute, group] of Object.entries(answer.used_by)) {
    const details = document.createElement("details");
    details.className = "linklist";
    details.dataset.name = attribute;
    const summary = document.createElement("summary");
    const code = document.createElement("code");
    code.textContent = attribute;
    summary.append(code, ": " + group.count);
    const list = document.createElement("ol");
    list.className = "members";
    for (const member of group.members) {
      const item = document.createElement("li");
      item.append(objectLink(member));
      list.append(item);
    }
    details.append(summary, list);
    if (group.count > group.members.length) {
      const more = document.createElement("p");
      more.className = "more muted";
      more.textContent = "and " + (group.count - group.members.length) + " more not shown";
      details.append(more);
    }
    target.append(details);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const link = document.getElementById("used-by-link");
  const target = document.getElementById("used-by");
  if (!link || !target) return;
  link.addEventListener("click", async (event) => {
    event.preventDefault();
    target.textContent = "Loading…";
    try {
      const response = await fetch(link.getAttribute("href"),
                                   {headers: {"Accept": "application/json"}});
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || response.statusText);
      showUsedBy(target, answer);
    } catch (error) {
      target.textContent = "Could not load: " + error.message;
    }
  });
});
