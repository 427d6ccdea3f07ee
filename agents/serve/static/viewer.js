// The episode viewer (viewer.py): position i = the frame step i acted on, with its action drawn.
// Frames are fetched one at a time as the position changes (the neighbours prefetched).
"use strict";
const EVENTS = { won: "level won", dead_end: "dead end reached", restart: "restart", refusal: "refusal", fatal: "fatal move" };

class Viewer {
  constructor(root, run, path, opts = {}) {
    Object.assign(this, { root, run, path, opts, i: 0, overlay: true, oracle: null, listeners: [] });
  }
  async load() {
    this.doc = await LP.get(`/api/episode/${this.run}/${this.path}`);
    this.pos = this.doc.positions;
    this.build();
    this.show(0);
    this.askOracle(0);
    return this;
  }
  // the oracle's annotation: computed by the server's worker; 'computing' (202) until it is ready
  askOracle(tries) {
    LP.get(`/api/oracle/${this.run}/${this.path}`).then(o => {
      if (!o.computing) { this.setOracle(o); return; }
      this.root.dataset.oracle = "computing";
      setTimeout(() => this.askOracle(tries + 1), Math.min(2000, 250 * (tries + 1)));
    }).catch(() => {});
  }
  frameURL(i) {
    const p = this.pos[i];
    const step = this.overlay && p.step !== null && p.action ? `?step=${p.step}` : "";
    return `/frame/${this.run}/${p.frame}/${this.path}${step}`;
  }
  build() {
    const E = LP.el, d = this.doc;
    this.img = E("img", { alt: "frame", class: "frame" });
    this.stage = E("div", { class: "stage" }, this.img);
    this.slider = E("input", { type: "range", min: 0, max: this.pos.length - 1, value: 0, "aria-label": "position" });
    this.slider.addEventListener("input", () => this.show(+this.slider.value));
    this.jump = E("input", { type: "number", min: 1, placeholder: "step", title: "jump to step (Enter)" });
    this.jump.addEventListener("keydown", ev => { if (ev.key === "Enter") { this.gotoStep(+this.jump.value); this.jump.blur(); ev.stopPropagation(); } });
    this.kind = E("select", { title: "the kind of event n / p jump to" },
      ...Object.entries({ any: "any event", ...EVENTS }).map(([k, v]) => E("option", { value: k, text: v })));
    this.ovl = E("button", { class: "on", text: "action drawn", title: "draw the action on the frame (a)", onclick: () => this.toggleOverlay() });
    // play.py: this position's state as a live session (the state after the step before it)
    this.branch = E("a", { class: "branch-here", id: "lp-branch-here", text: "Branch here", title: "play on from this state, or hand it to an agent" });
    const controls = E("div", { class: "controls" },
      E("button", { text: "«", title: "first (Home)", onclick: () => this.show(0) }),
      E("button", { text: "◀", title: "previous step (←)", onclick: () => this.show(this.i - 1) }),
      E("button", { text: "▶", title: "next step (→)", onclick: () => this.show(this.i + 1) }),
      E("button", { text: "»", title: "last (End)", onclick: () => this.show(this.pos.length - 1) }),
      this.slider, this.jump, this.kind,
      E("button", { text: "prev event", title: "p", onclick: () => this.nextEvent(-1) }),
      E("button", { text: "next event", title: "n", onclick: () => this.nextEvent(1) }), this.ovl, this.branch);
    this.canvas = E("canvas", { class: "curves", width: 1200, height: 150 });
    this.canvas.addEventListener("click", ev => {
      const r = this.canvas.getBoundingClientRect();
      this.show(Math.round((ev.clientX - r.left) / r.width * (this.pos.length - 1)));
    });
    this.legend = E("div", { class: "legend" }, E("b", { class: "p", text: "— progress P " }), E("b", { class: "d", text: " — oracle d(s) " }),
      E("span", { class: "oracle-state", text: "(oracle: computing…)" }));
    this.info = E("div", { class: "side" });
    const left = E("div", {}, this.stage);
    const right = E("div", { class: "side" },
      E("div", { class: "card" }, E("div", { class: "k", text: d.objective || d.level || "episode" }),
        E("div", { class: "big", text: d.agent || "" }),
        E("div", { class: "kv" }, ...kv({ "ended by": d.result.end || (d.end && d.end.reason), "levels won": `${LP.fmt(d.result.solved)} / ${LP.fmt(d.result.target_levels)}`,
          actions: d.result.actions, "charged s": d.result.charged_seconds, frames: d.frames || "none stored: drawn again" }))),
      controls, this.canvas, this.legend, this.info,
      this.opts.compact ? null : E("div", { class: "keys" }, "keys: ", E("kbd", { text: "←" }), " ", E("kbd", { text: "→" }), " step · ",
        E("kbd", { text: "Home" }), " ", E("kbd", { text: "End" }), " · ", E("kbd", { text: "n" }), " ", E("kbd", { text: "p" }),
        " next / previous event · ", E("kbd", { text: "g" }), " jump to step · ", E("kbd", { text: "a" }), " action drawn"));
    this.root.replaceChildren(left, right);
    this.root.classList.add("viewer");
    this.drawCurves();
  }
  toggleOverlay() { this.overlay = !this.overlay; this.ovl.classList.toggle("on", this.overlay); this.show(this.i, true); }
  gotoStep(s) {
    const i = this.pos.findIndex(p => p.step === s);
    if (i >= 0) this.show(i);
  }
  eventsAt(i) {
    const ev = [...(this.pos[i].events || [])];
    if (this.fatalPos === i) ev.push("fatal");
    return ev;
  }
  nextEvent(dir) {
    const k = this.kind.value;
    for (let i = this.i + dir; i >= 0 && i < this.pos.length; i += dir) {
      const ev = this.eventsAt(i);
      if (ev.length && (k === "any" || ev.includes(k))) { this.show(i); return true; }
    }
    return false;
  }
  show(i, force) {
    i = Math.max(0, Math.min(this.pos.length - 1, i));
    if (i === this.i && !force && this.img.src) return;
    this.i = i;
    this.slider.value = i;
    const url = this.frameURL(i), t0 = performance.now();
    this.img.dataset.pending = "1";
    this.img.onload = () => {
      if (this.img.getAttribute("src") !== url) return;
      delete this.img.dataset.pending;
      this.img.dataset.frame = this.pos[i].frame; this.img.dataset.pos = i;
      this.lastLatency = performance.now() - t0;
      this.listeners.forEach(f => f(i));
    };
    this.img.src = url;
    for (const j of [i + 1, i - 1, i + 2]) if (j >= 0 && j < this.pos.length) new Image().src = this.frameURL(j);
    this.branch.href = `/branch/${this.run}/${this.path}?step=${i > 0 ? this.pos[i - 1].step || 0 : 0}`;
    this.drawInfo();
    this.drawCurves();
    if (this.opts.onMove) this.opts.onMove(i);
  }
  setOracle(o) {
    this.oracle = o;
    const st = this.legend.querySelector(".oracle-state");
    if (o.error) { st.textContent = `(oracle: ${o.error})`; return; }
    const byStep = new Map(o.steps.map(s => [s[0], s]));
    // the state shown at position i is the one after the step before it
    this.dShown = this.pos.map((p, i) => { const prev = i > 0 ? byStep.get(this.pos[i - 1].step) : null; return prev ? prev : null; });
    this.costOf = new Map(o.steps.map(s => [s[0], s[5]]));
    this.fatalPos = o.first_fatal ? this.pos.findIndex(p => p.step === o.first_fatal[0]) : -1;
    st.textContent = "";
    if (o.first_fatal) st.append(LP.el("b", { class: "f", text: ` ▍first fatal move: step ${o.first_fatal[0]} ` }));
    st.append(LP.el("b", { class: "l", text: " ▒ lost board " }),
      ` · ${o.moves} moves, optimal share ${LP.fmt(o.optimal_share)} %, ${o.lost_board_moves} on a lost board`);
    this.drawCurves(); this.drawInfo();
    this.root.dataset.oracle = "1";
  }
  drawCurves() {
    const c = this.canvas, g = c.getContext("2d"), n = this.pos.length, W = c.width, H = c.height, pad = 8;
    g.clearRect(0, 0, W, H);
    const X = i => pad + (W - 2 * pad) * (n > 1 ? i / (n - 1) : 0), Y = v => H - pad - (H - 2 * pad) * v;
    if (this.dShown) {                                        // lost-board stretches, shaded
      g.fillStyle = "rgba(160,90,90,0.28)";
      this.dShown.forEach((s, i) => { if (s && s[3] === "dead_end") g.fillRect(X(i - 0.5), 0, Math.max(2, X(1) - X(0)), H); });
      const ds = this.dShown.filter(s => s && typeof s[2] === "number" && isFinite(s[2])).map(s => s[2]);
      const dmax = Math.max(1, ...ds);
      g.strokeStyle = "#f6ad55"; g.lineWidth = 2; g.beginPath();
      let on = false;
      this.dShown.forEach((s, i) => {
        if (!s || typeof s[2] !== "number" || !isFinite(s[2])) { on = false; return; }
        const y = Y(s[2] / dmax); on ? g.lineTo(X(i), y) : g.moveTo(X(i), y); on = true; });
      g.stroke();
      if (this.fatalPos >= 0) {                              // the first fatal move, labelled
        g.fillStyle = "#ef5350"; g.fillRect(X(this.fatalPos) - 2, 0, 4, H);
        g.font = "bold 20px system-ui, sans-serif"; const label = "fatal";
        const tx = X(this.fatalPos) + 8 + g.measureText(label).width > W ? X(this.fatalPos) - 8 - g.measureText(label).width : X(this.fatalPos) + 8;
        g.fillText(label, tx, 22);
      }
    }
    g.strokeStyle = "#5aa9ff"; g.lineWidth = 2; g.beginPath();
    let on = false;
    this.pos.forEach((p, i) => {
      const v = i > 0 ? this.pos[i - 1].P : null;
      if (v === null || v === undefined) { on = false; return; }
      on ? g.lineTo(X(i), Y(v)) : g.moveTo(X(i), Y(v)); on = true; });
    g.stroke();
    this.pos.forEach((p, i) => { if ((p.events || []).includes("won")) { g.fillStyle = "#38c172"; g.fillRect(X(i) - 1, H - 10, 3, 10); } });
    g.strokeStyle = "#ff3d9a"; g.lineWidth = 2; g.beginPath(); g.moveTo(X(this.i), 0); g.lineTo(X(this.i), H); g.stroke();
  }
  drawInfo() {
    const E = LP.el, p = this.pos[this.i], m = (this.doc.model || {})[String(p.step)];
    const evs = this.eventsAt(this.i).map(e => E("span", { class: `ev ${e}`, text: EVENTS[e] }));
    const cost = p.step !== null && this.costOf ? this.costOf.get(p.step) : undefined;
    const facts = { level: p.level || p.screen, "P after": p.P, "agent time": p.t_agent !== undefined ? `${LP.fmt(p.t_agent, 3)} s` : null,
      "simulated": p.sim_ms !== undefined ? `${p.sim_ms} ms` : null, presses: p.presses,
      "extra cost e(s,a)": cost === undefined ? null : (cost === null ? "–" : cost === "inf" ? "∞ (fatal)" : cost),
      "model cost": m && m.cost !== null && m.cost !== undefined ? `$${m.cost}` : null, message: p.message };
    const cards = [E("div", { class: "card step" },
      E("div", { class: "k", text: p.step === null ? "end" : `step ${p.step} of ${this.pos.length - 1}` }),
      E("div", { class: "big action", text: p.action_text }), E("div", { class: "effect", text: p.effect }),
      evs.length ? E("div", {}, ...evs) : null, E("div", { class: "kv" }, ...kv(facts)))];
    if (m) {
      const calls = (m.tool_calls || []).map(c => `${c.name}(${JSON.stringify(c.arguments ?? c.args ?? {})})`).join("\n");
      cards.push(E("div", { class: "card model" }, E("div", { class: "k", text: "model" }),
        m.reasoning ? E("pre", { class: "reasoning", text: m.reasoning }) : null, E("pre", { class: "text", text: m.text || "(no text)" }),
        calls ? E("pre", { class: "calls", text: calls }) : null));
      const notes = Object.entries(m.notes || {});
      if (notes.length) cards.push(E("div", { class: "card notes" }, E("div", { class: "k", text: "VISTA notes after this step" }),
        ...notes.flatMap(([k, v]) => [E("b", { text: k }), E("pre", { text: v })])));
    }
    this.info.replaceChildren(...cards);
  }
}

function kv(o) {
  return Object.entries(o).filter(([, v]) => v !== null && v !== undefined && v !== "")
    .flatMap(([k, v]) => [LP.el("span", { text: k }), LP.el("span", { text: LP.fmt(v, 3) })]);
}

function keyboard(viewers) {
  document.addEventListener("keydown", ev => {
    if (ev.target.matches("input, select, textarea")) return;
    const act = { ArrowRight: v => v.show(v.i + 1), ArrowLeft: v => v.show(v.i - 1), Home: v => v.show(0),
      End: v => v.show(v.pos.length - 1), n: v => v.nextEvent(1), p: v => v.nextEvent(-1), a: v => v.toggleOverlay(),
      g: v => v.jump.focus() }[ev.key];
    if (!act) return;
    ev.preventDefault();
    viewers().forEach(act);
  });
}

if (LP.data().view === "episode") {
  const D = LP.data();
  const v = new Viewer(document.getElementById("viewer"), D.run, D.path);
  window.lpViewer = v;
  keyboard(() => [v]);
  v.load().then(() => { document.body.dataset.ready = "1"; })
    .catch(e => document.getElementById("viewer").append(LP.el("p", { class: "empty", text: "error: " + e.message })));
}
