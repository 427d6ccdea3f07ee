// The compare page (compare.py): two viewers; the left one leads, the right one follows,
// by step (the same position) or by progress (the first position of B that reached A's P).
"use strict";
(function () {
  const D = LP.data(), E = LP.el, root = document.getElementById("compare");
  if (!D.a || !D.b) {
    root.append(E("p", { class: "empty", text: "Open a run, press ⇄ on one episode, then ⇄ on another of the same level." }));
    document.body.dataset.ready = "1";
    return;
  }
  const align = E("select", {}, E("option", { value: "step", text: "align by step" }), E("option", { value: "progress", text: "align by progress" }));
  align.value = D.align === "progress" ? "progress" : "step";
  const paneA = E("div"), paneB = E("div");
  root.before(E("div", { class: "pick" }, align, E("span", { class: "sub", text: "the left episode leads; ← → step both" })));
  root.append(paneA, paneB);
  let A, B;
  const P = (v, i) => (i > 0 ? v.pos[i - 1].P : 0) ?? 0;
  function follow(i) {
    if (!B || !B.pos) return;
    if (align.value === "step") { B.show(Math.min(i, B.pos.length - 1)); return; }
    const target = P(A, i);
    let j = B.pos.findIndex((_, k) => P(B, k) >= target - 1e-9);
    if (j < 0) j = B.pos.length - 1;
    B.show(j);
  }
  A = new Viewer(paneA, D.a[0], D.a[1], { compact: true, onMove: follow });
  B = new Viewer(paneB, D.b[0], D.b[1], { compact: true });
  align.addEventListener("change", () => follow(A.i));
  window.lpCompare = { A: () => A, B: () => B, align };
  Promise.all([A.load(), B.load()]).then(() => {
    const la = A.doc.level || A.doc.objective, lb = B.doc.level || B.doc.objective;
    if (la !== lb) root.before(E("p", { class: "pill bad", text: `not the same level: ${la} and ${lb}` }));
    follow(A.i);
    document.body.dataset.ready = "1";
  }).catch(e => root.append(E("p", { class: "empty", text: "error: " + e.message })));
  keyboard(() => [A]);
})();
