// The runs and leaderboard page, and a run's episodes (runs.py)
"use strict";
(function () {
  const D = LP.data();
  const filterBox = document.getElementById("filter");
  const matches = (r, q, keys) => !q || keys.some(k => String(r[k] ?? "").toLowerCase().includes(q));
  const M = ["OSR", "LC", "FGP", "LPR", "PER", "SMR", "score"];

  function verifiedPill(id) {
    const p = LP.el("span", { class: "pill wait", text: "checking…", "data-run": id });
    LP.get(`/api/runs/${id}/verified`).then(v => {
      if (v.ok === null) { p.className = "pill"; p.textContent = v.how; p.title = v.why || ""; return; }
      p.className = "pill " + (v.ok ? "ok" : "bad");
      p.textContent = v.ok ? `verified (${v.how})` : "UNVERIFIED";
      p.title = v.why || "";
    }).catch(e => { p.className = "pill bad"; p.textContent = "unreadable"; p.title = e.message; });
    return p;
  }

  async function runs() {
    const { runs } = await LP.get("/api/runs");
    const pills = {};
    runs.forEach(r => { pills[r.id] = verifiedPill(r.id); M.forEach(m => { r[m] = r.metrics ? r.metrics[m] : null; });
                        r.objectives_text = (r.objectives || []).join(", "); });
    const cols = [
      { key: "name", label: "run", render: r => LP.el("a", { href: `/run/${r.id}`, text: r.name }) },
      { key: "id", label: "verified", render: r => pills[r.id] },
      { key: "agent", label: "agent" }, { key: "preset", label: "preset" }, { key: "catalog", label: "catalogue" },
      { key: "objectives_text", label: "objectives", render: r => {     // each a link to the run's episodes of it
          const span = LP.el("span");
          (r.objectives || []).forEach((o, k) => span.append(k ? ", " : "", LP.el("a", { href: `/run/${r.id}?q=${encodeURIComponent(o)}`, text: o })));
          return span; } }, { key: "n_episodes", label: "episodes", num: true },
      ...M.map(m => ({ key: m, label: m, num: true })),
    ];
    const t = LP.table(document.getElementById("runs"), cols);
    const draw = () => t.set(runs.filter(r => matches(r, filterBox.value.toLowerCase(),
      ["name", "agent", "preset", "catalog", "objectives_text", "protocol"])));
    filterBox.addEventListener("input", draw);
    draw();
  }

  async function run() {
    const r = await LP.get(`/api/runs/${D.run}`);
    const head = document.getElementById("run-head");
    head.append(LP.el("p", { class: "sub" }, verifiedPill(r.id), "  ", `${r.agent} · preset ${r.preset} · catalogue ${r.catalog} · `,
      `${r.n_episodes} episodes · ${(r.objectives || []).join(", ")}`));
    const ms = LP.el("div", { class: "bar" });
    M.forEach(m => ms.append(LP.el("span", {}, LP.el("b", { text: m + " " }), LP.fmt(r.metrics && r.metrics[m]))));
    head.append(ms);
    let pickA = null;
    const cols = [
      { key: "path", label: "episode", render: e => e.path ? LP.el("a", { href: `/episode/${r.id}/${e.path}`, text: e.path }) : "(not on disk)" },
      { key: "objective", label: "objective" },
      { key: "success", label: "outcome", render: e => LP.el("span", { class: "pill " + (e.success ? "ok" : "bad"), text: e.success ? "success" : "failed" }) },
      { key: "solved", label: "levels won", num: true, render: e => `${LP.fmt(e.solved)} / ${LP.fmt(e.levels)}` },
      { key: "end", label: "ended by" }, { key: "actions", label: "actions", num: true },
      { key: "presses", label: "presses", num: true }, { key: "seconds", label: "charged s", num: true },
      { key: "score", label: "score", num: true },
      { key: "cmp", label: "⇄", title: "compare two episodes", render: e => e.path ? LP.el("button", { text: "⇄", title: "compare", onclick: ev => {
          if (!pickA) { pickA = `${r.id}:${e.path}`; ev.target.classList.add("on"); return; }
          location.href = `/compare?a=${encodeURIComponent(pickA)}&b=${encodeURIComponent(r.id + ":" + e.path)}`; } }) : "" },
    ];
    const count = document.getElementById("count"), more = document.getElementById("more"), failed = document.getElementById("failed");
    filterBox.value = new URLSearchParams(location.search).get("q") || "";        // (an objective linked from the runs)
    let limit = 200;
    const t = LP.table(document.getElementById("episodes"), cols, n => {
      count.textContent = `${n} of ${r.episodes.length}`; more.hidden = n <= limit; });
    const draw = () => t.set(r.episodes.filter(e => (!failed.checked || !e.success) &&
      matches(e, filterBox.value.toLowerCase(), ["path", "objective", "end"])), limit);
    filterBox.addEventListener("input", draw); failed.addEventListener("change", draw);
    more.addEventListener("click", () => { limit += 1000; draw(); });
    draw();
    document.body.dataset.ready = "1";
  }

  (D.view === "runs" ? runs() : run()).then(() => { document.body.dataset.ready = "1"; })
    .catch(e => document.querySelector("main").append(LP.el("p", { class: "empty", text: "error: " + e.message })));
})();
