// The start page: load the plan summary (a dry run of every process class) after the page,
// and build its table from the JSON answer (text only, never HTML from the answer).
"use strict";

function planTable(plan) {
  const table = document.createElement("table");
  table.className = "plansummary";
  const caption = table.createCaption();
  caption.textContent = "What the target processor would make now, per process class " +
    "(planned in " + plan.seconds.toFixed(2) + " s)";
  const head = table.createTHead().insertRow();
  const cell = (row, tag, text, css) => {
    const c = document.createElement(tag);
    if (text !== undefined) c.textContent = text;
    if (css) c.className = css;
    row.appendChild(c);
    return c;
  };
  cell(head, "th", "Class").scope = "col";
  for (const state of plan.states) cell(head, "th", state, "state-" + state).scope = "col";
  cell(head, "th", "Top reasons").scope = "col";
  const body = table.createTBody();
  for (const entry of plan.classes) {
    const row = body.insertRow();
    row.dataset.class = entry.class;
    const name = cell(row, "th");
    name.scope = "row";
    const link = document.createElement("a");
    link.href = entry.plan_url;
    link.textContent = entry.short_name;
    name.appendChild(link);
    if (entry.error !== undefined) {
      cell(row, "td", "cannot plan: " + entry.error, "error").colSpan = plan.states.length;
      cell(row, "td");
      continue;
    }
    for (const state of plan.states) cell(row, "td", String(entry.counts[state]), "count state-" + state);
    const reasons = cell(row, "td");
    if (!entry.reasons.length) {
      const none = document.createElement("span");
      none.className = "muted";
      none.textContent = "none: nothing to make";
      reasons.appendChild(none);
    } else {
      const list = document.createElement("ul");
      list.className = "reasons";
      for (const r of entry.reasons) {
        const item = document.createElement("li");
        const kind = document.createElement("span");
        kind.className = "muted";
        kind.textContent = r.kind + " ×" + r.count;
        item.append(kind, " " + r.reason);
        list.appendChild(item);
      }
      reasons.appendChild(list);
      if (entry.more_reasons) reasons.append("and " + entry.more_reasons + " more");
    }
  }
  return table;
}

document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("plan-summary");
  if (!box) return;
  fetch(box.dataset.src, {headers: {Accept: "application/json"}})
    .then((answer) => answer.json().then((body) => ({ok: answer.ok, body})))
    .then(({ok, body}) => {
      box.replaceChildren();
      if (!ok) throw new Error(body.error || "the plan could not be made");
      if (!body.classes.length) {
        const none = document.createElement("p");
        none.className = "muted";
        none.textContent = "No process class is stored.";
        box.appendChild(none);
      } else {
        box.appendChild(planTable(body));
      }
      box.dataset.loaded = "true";
    })
    .catch((error) => {
      const failed = document.createElement("p");
      failed.className = "error";
      failed.textContent = "The plan summary did not load: " + error.message + " ";
      const link = document.createElement("a");
      link.href = box.dataset.src;
      link.textContent = "open it on its own page";
      failed.appendChild(link);
      box.replaceChildren(failed);
      box.dataset.loaded = "error";
    });
});
