// Live play (agents/serve/play.py): pointer events and keys on the canvas become the GUI
// actions an agent sends (click, long_press, drag with its path, key), posted to the live
// session; the answer is the engine's next frame (raw RGB) with the session's state in headers.
// Actions are sent one at a time, in order; input made meanwhile waits its turn.
"use strict";
// The forms of the play and branch pages post their fields with the page token (LP.post, app.js)
// and go where the answer says (a live session's page, an episode in the viewer).
(function () {
  for (const form of document.querySelectorAll("form.lp-post")) {
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const out = form.querySelector(".lp-error");
      const body = Object.fromEntries(new FormData(form, ev.submitter).entries());
      if (ev.submitter && ev.submitter.name) body[ev.submitter.name] = ev.submitter.value;
      for (const b of form.querySelectorAll("button")) b.disabled = true;
      try {
        const j = await LP.post(form.dataset.action, body);
        window.location.assign(j.url);
      } catch (e) {
        if (out) out.textContent = "error: " + e.message;
        for (const b of form.querySelectorAll("button")) b.disabled = false;
      }
    });
  }
})();

(function () {
  const canvas = document.getElementById("lp-screen");
  if (!canvas) return;
  const ctx = canvas.getContext("2d");
  const sid = canvas.dataset.session;
  const base = canvas.dataset.base;                 // the session's URL prefix
  const token = LP.token();                         // the page token, sent with every action
  const status = document.getElementById("lp-status");
  const CLICK_PX = 6, LONG_MS = 600, MAX_VIA = 60;
  const KEYS = {"Enter": "Enter", "Escape": "Escape", " ": "Space", "Backspace": "Backspace", "Tab": "Tab",
                "ArrowUp": "ArrowUp", "ArrowDown": "ArrowDown", "ArrowLeft": "ArrowLeft", "ArrowRight": "ArrowRight"};
  let queue = Promise.resolve(), ended = false, down = null, have = null;   // have: the version drawn
  window.lpPlay = {latencies: [], frames: 0, state: null, busy: 0};   // read by the tests and the benchmark

  function at(ev) {            // canvas pixels (= the frame's pixels), whatever the CSS size
    const r = canvas.getBoundingClientRect();
    const x = Math.round((ev.clientX - r.left) * canvas.width / r.width);
    const y = Math.round((ev.clientY - r.top) * canvas.height / r.height);
    return [Math.min(canvas.width - 1, Math.max(0, x)), Math.min(canvas.height - 1, Math.max(0, y))];
  }

  function show(state) {
    window.lpPlay.state = state;
    const fb = state.feedback || {};
    let text = `step ${state.step}` + (fb.status ? ` \u00b7 ${fb.status}` : "") + (fb.message ? `: ${fb.message}` : "");
    if (state.time_left !== null && state.time_left !== undefined) text += ` \u00b7 ${Math.round(state.time_left)} s left`;
    if (state.ended) {
      ended = true;
      const r = state.result || {};
      text = `ended: ${state.ended}` + (r.solved !== undefined ? ` \u00b7 ${r.solved}/${r.target_levels} levels won` : "")
        + (r.presses !== undefined ? ` \u00b7 ${r.presses} presses` : "") + (r.error ? ` \u00b7 ${r.error}` : "");
      document.body.classList.add("lp-ended");
      canvas.classList.add("lp-ended");
      const leave = document.getElementById("lp-leave");
      if (leave) leave.disabled = true;
      const link = document.getElementById("lp-episode");
      if (link && state.episode_url) { link.href = state.episode_url; link.hidden = false; }
    }
    status.textContent = text;
  }

  async function draw(resp, t0) {
    const state = JSON.parse(resp.headers.get("X-Play-State") || "{}");
    const [w, h] = (resp.headers.get("X-Frame-Size") || "0,0").split(",").map(Number);
    const [bx, by, bw, bh] = (resp.headers.get("X-Frame-Box") || "0,0,0,0").split(",").map(Number);
    const tHead = performance.now();
    const rgb = new Uint8Array(await resp.arrayBuffer());      // the changed box of the engine's frame, RGB row by row
    const tBody = performance.now();
    if (w && (canvas.width !== w || canvas.height !== h)) { canvas.width = w; canvas.height = h; }
    if (bw && bh) {
      const img = ctx.createImageData(bw, bh), px = img.data;
      for (let i = 0, j = 0; i < rgb.length; i += 3, j += 4) { px[j] = rgb[i]; px[j + 1] = rgb[i + 1]; px[j + 2] = rgb[i + 2]; px[j + 3] = 255; }
      ctx.putImageData(img, bx, by);
    }
    if (state.version !== undefined) have = state.version;
    window.lpPlay.frames += 1;
    const drawn = performance.now();
    requestAnimationFrame(() => {        // the frame is on screen at the next paint
      if (t0 !== null) window.lpPlay.latencies.push({drawn: drawn - t0, painted: performance.now() - t0,
                                                     headers: tHead - t0, body: tBody - t0,
                                                     server: Number(resp.headers.get("X-Play-Server-Ms") || 0)});
    });
    show(state);
  }

  function post(path, body, t0) {
    window.lpPlay.busy += 1;
    queue = queue.then(async () => {
      try {
        const resp = await fetch(base + path, {method: "POST", body: JSON.stringify({...body, have: have}), credentials: "same-origin",
          headers: {"Content-Type": "application/json", "X-LP-Token": token}});
        if (!resp.ok) { status.textContent = "error: " + (await resp.text()); return; }
        await draw(resp, t0);
      } catch (e) {
        status.textContent = "error: " + e;
      } finally {
        window.lpPlay.busy -= 1;
      }
    });
  }

  function act(action, t0) { if (!ended) post("/act", {action: action}, t0); }
  // (the body is made when the request goes: "have" is then the version last drawn)

  canvas.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || ended) return;
    canvas.setPointerCapture(ev.pointerId);
    const p = at(ev);
    down = {x: p[0], y: p[1], t: performance.now(), path: [p]};
    ev.preventDefault();
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (!down) return;
    const p = at(ev), last = down.path[down.path.length - 1];
    if (Math.abs(p[0] - last[0]) + Math.abs(p[1] - last[1]) >= 3) down.path.push(p);
  });
  canvas.addEventListener("pointerup", (ev) => {
    if (!down) return;
    const t0 = performance.now(), p = at(ev), d = down;
    down = null;
    const ms = Math.max(1, Math.round(t0 - d.t));
    if (Math.abs(p[0] - d.x) + Math.abs(p[1] - d.y) < CLICK_PX) {
      act(ms >= LONG_MS ? {type: "long_press", x: d.x, y: d.y, ms: Math.min(ms, 10000)} : {type: "click", x: d.x, y: d.y}, t0);
      return;
    }
    let via = d.path.slice(1);                       // the path's corners, thinned to at most MAX_VIA
    if (via.length > MAX_VIA) { const k = via.length / MAX_VIA; via = Array.from({length: MAX_VIA}, (_, i) => via[Math.floor(i * k)]); }
    const action = {type: "drag", x0: d.x, y0: d.y, x1: p[0], y1: p[1], ms: Math.min(ms, 10000), steps: 2};
    if (via.length) action.via = via;
    act(action, t0);
  });
  canvas.addEventListener("pointercancel", () => { down = null; });
  document.addEventListener("keydown", (ev) => {
    if (ended || ev.ctrlKey || ev.metaKey || ev.altKey || ev.target.closest("input, select, textarea, button")) return;
    let name = KEYS[ev.key];
    if (!name && /^[A-Za-z0-9]$/.test(ev.key)) name = ev.key;
    if (!name) return;
    ev.preventDefault();
    act({type: "key", name: name}, performance.now());
  });
  const leave = document.getElementById("lp-leave");
  if (leave) leave.addEventListener("click", () => post("/leave", {}, null));
  // the first screen (the session has started: the protocol's first wait is done)
  fetch(base + "/frame", {credentials: "same-origin"}).then((r) => draw(r, null));
})();
