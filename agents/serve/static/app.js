// longpuzzle serve: helpers every page uses. Text from run folders is only ever set through
// textContent (never innerHTML), so no agent name or model text can become markup.
"use strict";
const LP = {
  data() { return JSON.parse(document.getElementById("lp-data").textContent); },
  token() { return document.querySelector('meta[name="lp-token"]').content; },
  async get(url) {
    const r = await fetch(url, { credentials: "same-origin" });
    const j = await r.json();
    if (!r.ok) throw new Error(j.error || r.statusText);
    return j;
  },
  // a state-changing request: carries the page's token (security.py)
  async post(url, body) {
    const r = await fetch(url, { method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "x-lp-token": LP.token() }, body: JSON.stringify(body || {}) });
    const j = await r.json();
    if (!r.ok) throw new Error(j.error || r.statusText);
    return j;
  },
  // el("td", {class: "num"}, "text", child...): an element, its text set as text
  el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  },
  fmt(v, d = 1) {
    if (v === null || v === undefined || v === "") return "–";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(d);
    return String(v);
  },
  // a sortable table: cols [{key, label, num, render(row) -> Node|text}], rows; returns {set(rows)}
  table(tableEl, cols, onSorted) {
    let rows = [], key = null, dir = 1;
    const head = LP.el("tr");
    cols.forEach(c => head.append(LP.el("th", { text: c.label, title: c.title || "", onclick: () => {
      dir = key === c.key ? -dir : (c.num ? -1 : 1); key = c.key; draw(); } })));
    const thead = LP.el("thead", {}, head), tbody = LP.el("tbody");
    tableEl.replaceChildren(thead, tbody);
    let limit = Infinity;
    function draw() {
      [...head.children].forEach((th, i) => { th.className = cols[i].key === key ? (dir > 0 ? "asc" : "desc") : ""; });
      const sorted = key === null ? rows : [...rows].sort((a, b) => {
        const x = a[key], y = b[key];
        if (x === y) return 0; if (x === null || x === undefined) return 1; if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * dir; });
      const frag = document.createDocumentFragment();
      for (const r of sorted.slice(0, limit)) {
        const tr = LP.el("tr");
        for (const c of cols) {
          const v = c.render ? c.render(r) : LP.fmt(r[c.key]);
          tr.append(LP.el("td", { class: c.num ? "num" : "" }, v));
        }
        frag.append(tr);
      }
      tbody.replaceChildren(frag);
      if (onSorted) onSorted(sorted.length);
    }
    return { set(r, lim) { rows = r; if (lim !== undefined) limit = lim; draw(); } };
  },
};
