"""RQ4 (PAPERS.md section 5, D.5): the 2 x 2 study of the rule card (K0 / K1) and the workflow
controller (P0 / P1) over objectives, with five isolated rule probes per session.

A SESSION is one objective episode from the home screen (the paper's protocol:
harness/objective.py ObjectiveEpisode), written as an ordinary episode folder that ``replay``
verifies, in one of four cells:

    K0 / K1   the instruction alone / the instruction followed by the game's rule card
              (rules.py; Chinese on the zh interface); the card enters at the start and stays
    P0 / P1   the agent does everything / the controller (workflow.py) does the entry and the
              evaluator-verified advancement, and on Bolt Unscrew restarts a certified dead
              end; every puzzle move stays with the agent

The five probes (rules.py) are asked through ``caller.probe`` before the agent's first action,
after 1/4, 1/2 and 3/4 of the session's action ceiling, and at its end (probes a session
did not reach are asked at its end): never through the acting conversation, never charged to
the clock. Beside the harness's own files the folder holds ``session.json`` (the cell, the
language, the agent's and the controller's action counts), ``probes.jsonl`` (per probe: its
index, the agent action it came after, the statements with their truth, the answer as given
and its grade) and, under P1, ``workflow.jsonl`` (per controller action: step, kind, action,
and whether it was an error: refused, or no visible effect).
The controller's actions are ordinary dispatched actions of the episode (so it replays).

The study (on the lab's study runner, study.py): every objective x repeat is a BLOCK holding
the four cells, run in a rotated order (block b starts at cell b mod 4: each cell comes first
equally often); a session ended by an infrastructure failure is replaced under the same
assignment (the first valid attempt in the fixed order is primary); resumable. Outcome per
session: LC (won target levels / target levels; the primary outcome), completion (every
level won), FGP, rules stated correctly (the share of the game's rules over the five probes,
and at the first and the last probe), the agent's actions, the controller's and its errors.
Contrasts, paired within blocks, with source-level bootstrap intervals
(source = the objective; stats.py): dK|P0 = K1P0 - K0P0, dK|P1 = K1P1 - K0P1, dP|K0 = K0P1 -
K0P0, dP|K1 = K1P1 - K1P0, and dKxP = dK|P1 - dK|P0 (statistic_bootstrap on the same draws).
Tables in the paper's layouts (Table 16: the cells; the contrasts), Figure 5c (rules stated
correctly by probe, per cell; LC per cell), written as a study folder (contract 3).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from longpuzzle.agents.base import NO_VISIBLE_EFFECT, AgentError, InfrastructureError, instruction_for
from longpuzzle.agents.diagnose import study
from longpuzzle.agents.diagnose.rules import PROBES_PER_SESSION, grade, make_question, probe_steps, rule_card
from longpuzzle.agents.diagnose.stats import DRAWS, SEED, cluster_bootstrap, paired_effect, statistic_bootstrap
from longpuzzle.agents.diagnose.workflow import Controller
from longpuzzle.agents.harness.agent_call import caller_isolation, save_agent_log
from longpuzzle.agents.harness.isolated import make_caller
from longpuzzle.agents.harness.objective import ObjectiveEpisode
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.engine.errors import LongPuzzleError

CELLS = ("K0P0", "K0P1", "K1P0", "K1P1")
CONTRASTS = (("dK|P0", "K0P0", "K1P0"), ("dK|P1", "K0P1", "K1P1"), ("dP|K0", "K0P0", "K0P1"),
             ("dP|K1", "K1P0", "K1P1"))
INFRASTRUCTURE = study.INFRASTRUCTURE
PROBES = "probes.jsonl"
SESSION = "session.json"
WORKFLOW = "workflow.jsonl"


class RulesStudyError(LongPuzzleError):
    """A rules study that cannot be run or checked (one error line)."""


# ---- one session -------------------------------------------------------------------------------

def run_session(agent, objective: str, cell: str, *, settings: Settings, folder: str | Path,
                deadlock_restart: bool = True, catalog=None) -> dict:
    """One session of ``cell`` (e.g. "K1P0") on ``objective`` ("game/difficulty"), written into
    ``folder``; returns its endpoints (session_endpoints)."""
    if cell not in CELLS:
        raise RulesStudyError(f"unknown cell {cell!r}: use one of {', '.join(CELLS)}")
    game, difficulty = objective.split("/")
    st = settings.resolved("objective")
    card = rule_card(game)
    knows, controlled = cell[1] == "1", cell[3] == "1"
    instruction = instruction_for(game, difficulty)
    if knows:
        instruction = f"{instruction}\n\n{card.text(st.lang)}"
    folder = Path(folder)
    ep = ObjectiveEpisode(game, difficulty, settings=st, folder=folder, instruction=instruction,
                          agent_name=getattr(agent, "name", type(agent).__name__), catalog=catalog)
    ceiling = st.max_actions or 600
    steps = probe_steps(ceiling)
    ctl = Controller(ep, deadlock_restart=deadlock_restart) if controlled else None
    caller = make_caller(agent, st.action_timeout)
    asked: list[dict] = []
    agent_actions = 0
    a_timeout = st.action_timeout or None

    def ask(index: int) -> None:
        q = make_question(card, index, st.lang)
        error = ""
        try:
            answer = caller.probe(q.probe, a_timeout)
        except AgentError as e:          # an agent that cannot answer: no answer (graded as such)
            answer, error = "", str(e)
        g = grade(card, q, answer)
        asked.append({"index": index, "after_actions": agent_actions, "step": ep.run.step,
                      "statements": list(q.probe.statements), "rules": list(q.probe.rules),
                      "truths": list(q.truths), "answer": answer, "error": error, "grade": g.as_dict()})

    workflow: list[dict] = []
    external = getattr(agent, "external", None) if ctl is not None and getattr(caller, "trusted", False) else None
    try:
        caller.reset(ep.instruction, ep.action_spec)
        while not ep.poll():
            c = ctl.action() if ctl is not None else None
            if c is not None:
                kind, a = c
                ctl.counts[kind] += 1
                fb = ep.submit(a, 0.0).feedback
                if external is not None:                   # a scripted agent's model of the app follows
                    external(a)
                # an error of the controller: an action refused, or one that changed nothing on screen
                workflow.append({"step": ep.run.step, "kind": kind, "action": a,
                                 "error": fb is None or not fb.executed or fb.status == NO_VISIBLE_EFFECT})
                continue
            while len(asked) < len(steps) and agent_actions >= steps[len(asked)]:
                ask(len(asked))
            obs = ep.observation()
            timeout, by_budget = ep.agent_timeout(a_timeout)
            t0 = time.perf_counter()
            try:
                action = caller.act(obs, timeout)
            except AgentError as e:
                if e.kind == "timeout" and by_budget:
                    ep.stop("budget", agent_seconds=time.perf_counter() - t0)
                    break
                raise
            ep.submit(action, time.perf_counter() - t0)
            agent_actions += 1
    except AgentError as e:
        ep.stop("agent_error", str(e))
    except InfrastructureError as e:
        ep.stop(INFRASTRUCTURE, f"{type(e).__name__}: {e}")
    try:
        if ep.end != INFRASTRUCTURE:
            while len(asked) < PROBES_PER_SESSION:         # the final probe, and any not reached
                try:
                    ask(len(asked))
                except InfrastructureError as e:
                    ep.stop(INFRASTRUCTURE, f"{type(e).__name__}: {e}")
                    break
    finally:
        caller.close()
        ep.clock.stop()
    save_agent_log(caller, folder)
    ep.finish({"agent_isolation": caller_isolation(caller)})
    write_atomic(folder / SESSION, {"experiment": "rules", "cell": cell, "lang": st.lang,
                                    "controller": ctl.counts if ctl is not None else None,
                                    "agent_actions": agent_actions})
    _write_lines(folder / PROBES, asked)
    if ctl is not None:
        _write_lines(folder / WORKFLOW, workflow)
    return session_endpoints(folder)


def _write_lines(path: Path, recs: list[dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    os.replace(tmp, path)


def session_endpoints(folder: str | Path) -> dict:
    """A session's outcomes from its folder alone: LC, completion, FGP (result.json), the rule
    probes RE-GRADED from the answers stored in probes.jsonl against the game's card, the
    agent's and the controller's actions."""
    folder = Path(folder)
    try:
        res = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RulesStudyError(f"{folder}: no readable result.json ({e})") from None
    try:
        session = json.loads((folder / SESSION).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RulesStudyError(f"{folder}: no readable {SESSION} ({e}): not a session of diagnose rules") from None
    game = res["objective"].split("/")[0]
    card = rule_card(game)
    lang = session.get("lang", "en")
    probes = []
    p = folder / PROBES
    if p.is_file():
        for line in p.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            q = make_question(card, rec["index"], lang)
            probes.append(list(grade(card, q, rec["answer"]).rules))
    levels = res.get("levels_outcome") or []
    won = [bool(lv.get("won")) for lv in levels]
    ctl = session.get("controller") or {}
    shares = [sum(r) / len(r) for r in probes]
    return {"end": res.get("end"), "LC": round(sum(won) / len(won), 6) if won else 0.0,
            "completed": bool(won) and all(won),
            "FGP": round(sum(1.0 if lv.get("won") else float(lv.get("max_P") or 0.0) for lv in levels) / len(levels), 6)
            if levels else 0.0,
            "probes": probes, "rules_share": round(sum(shares) / len(shares), 6) if shares else None,
            "first_probe": round(shares[0], 6) if shares else None,
            "last_probe": round(shares[-1], 6) if shares else None,
            "cell": session.get("cell"), "agent_actions": session.get("agent_actions"),
            "controller_actions": sum(ctl.values()) if ctl else 0, "controller": ctl,
            "controller_errors": _controller_errors(folder)}


def _controller_errors(folder: Path) -> int:
    """The controller's actions that were refused or changed nothing on screen (workflow.jsonl)."""
    p = folder / WORKFLOW
    if not p.is_file():
        return 0
    return sum(bool(json.loads(x).get("error")) for x in p.read_text(encoding="utf-8").splitlines() if x.strip())


# ---- the study --------------------------------------------------------------------------------

def schedule(objectives: list[str], repeats: int) -> list[dict]:
    """The blocks (objective x repeat; the objective is the bootstrap's source) with each
    block's cell order rotated by its index (study.interleaved), so each cell is first (and
    last) equally often."""
    blocks = [{"unit": f"{o.replace('/', '-')}-r{r}", "source": o, "objective": o, "repeat": r}
              for o in objectives for r in range(repeats)]
    return study.interleaved(blocks, lambda b: CELLS)


def run_study(objectives: list[str], make_agent, out: str | Path, *, repeats: int = 1,
              settings: Settings | None = None, agent_label: str | dict = "", deadlock_restart: bool = True,
              draws: int = DRAWS, seed: int = SEED, catalog=None) -> dict:
    """Every block's four sessions in the schedule's order, through the lab's study runner
    (study.run_units: units.jsonl appended as it goes, infrastructure failures replaced under
    the same assignment, resumable), then study.json (atomically) and Figure 5c.
    ``make_agent(objective, folder, repeat)``: a fresh agent per session, seeded by the block's
    repeat where it takes a seed (the four cells of a block share it, repeats differ), logging
    into the session's folder where it keeps a log (a model agent's conversation.jsonl).
    Returns the study document."""
    out = Path(out)
    for o in objectives:
        rule_card(o.split("/")[0])               # a game without a card fails before any session
    st = settings or Settings(budget=3600.0, max_actions=600)
    sched = schedule(objectives, repeats)

    def play(block: dict, cell: str, folder: Path) -> None:
        agent = make_agent(block["objective"], folder, block["repeat"])
        run_session(agent, block["objective"], cell, settings=st, folder=folder, deadlock_restart=deadlock_restart,
                    catalog=catalog)

    units = study.run_units(out, sched, play, lambda block, cell, folder: session_endpoints(folder))
    doc = study_document(sched, units, agent_label=agent_label, settings=st, draws=draws, seed=seed,
                         catalog=catalog, deadlock_restart=deadlock_restart)
    study.write_study(out, doc)
    figure_5c(doc, units, out)
    return doc


def _pct(v) -> str:
    return "" if v is None else f"{100 * v:.1f}"


def _iv(iv) -> str:
    """An interval in percentage points, as the paper prints its contrasts."""
    def f(v):
        return "n/a" if v is None else (f"{100 * v:+.1f}" if iv.signed else f"{100 * v:.1f}")
    return f"{f(iv.estimate)} [{f(iv.low)}, {f(iv.high)}]"


def rules_tables(units: list[dict], *, draws: int = DRAWS, seed: int = SEED) -> list[dict]:
    """Table 16 (per cell), the five contrasts, when rules are first stated correctly, and
Figure 5c's data, from the units' endpoints."""
    prim = study.primary(units)
    blocks = sorted({u for u, _ in prim})
    full = [b for b in blocks if all((b, c) in prim for c in CELLS)]          # blocks with all four cells
    src = {b: prim[(b, CELLS[0])]["source"] for b in full}
    rows = []
    for c in CELLS:
        es = [prim[(b, c)]["endpoints"] for b in full]
        lc = cluster_bootstrap({s: [e["LC"] for b, e in zip(full, es) if src[b] == s] for s in set(src.values())},
                               draws=draws, seed=seed) if es else None
        probe_k = [sum(p) for e in es for p in e["probes"]]
        probe_n = [len(p) for e in es for p in e["probes"]]
        rows.append([c, len(es), f"{sum(e['completed'] for e in es)}/{len(es)}", _iv(lc) if lc else "",
                     _pct(_mean([e["FGP"] for e in es])),
                     f"{sum(probe_k)}/{sum(probe_n)}", _pct(_mean([e["first_probe"] for e in es])),
                     _pct(_mean([e["last_probe"] for e in es])),
                     _fmt(_mean([e["agent_actions"] for e in es])),
                     _fmt(_mean([e["controller_actions"] for e in es])),
                     sum(e.get("controller_errors", 0) for e in es)])
    t16 = {"id": "table16", "title": "Rule card (K) x workflow controller (P): outcomes per cell",
           "columns": ["cell", "sessions", "completed", "LC % [95% CI]", "FGP %", "rules stated correctly",
                       "first probe %", "last probe %", "agent actions", "controller actions",
                       "controller errors"],
           "rows": rows,
           "note": f"Primary sessions of the {len(full)} blocks holding all four cells. Rules stated correctly: "
                   "rule-probe verdicts over the five probes (a rule counts when both its true statement and its "
                   f"false counterpart are judged right). Bootstrap over objectives ({draws:,} draws, seed {seed})."}
    crow = []
    for name, a, b in CONTRASTS:
        pairs_lc, pairs_r = {}, {}
        for blk in full:
            ea, eb = prim[(blk, a)]["endpoints"], prim[(blk, b)]["endpoints"]
            pairs_lc.setdefault(src[blk], []).append((ea["LC"], eb["LC"]))
            if ea["rules_share"] is not None and eb["rules_share"] is not None:
                pairs_r.setdefault(src[blk], []).append((ea["rules_share"], eb["rules_share"]))
        crow.append([name, f"{b} - {a}", len(full),
                     _iv(paired_effect(pairs_lc, draws=draws, seed=seed)) if pairs_lc else "",
                     _iv(paired_effect(pairs_r, draws=draws, seed=seed)) if pairs_r else ""])
    if full:
        groups = {}
        for blk in full:
            groups.setdefault(src[blk], []).append({c: prim[(blk, c)]["endpoints"] for c in CELLS})

        def interaction(key):
            def stat(drawn):
                bl = [blk for g in drawn for blk in g]
                if not bl:
                    return None
                return sum((e["K1P1"][key] - e["K0P1"][key]) - (e["K1P0"][key] - e["K0P0"][key]) for e in bl) / len(bl)
            return stat
        lc_x = statistic_bootstrap(groups, interaction("LC"), draws=draws, seed=seed, signed=True)
        have_r = all(e[c]["rules_share"] is not None for g in groups.values() for e in g for c in CELLS)
        r_x = statistic_bootstrap(groups, interaction("rules_share"), draws=draws, seed=seed, signed=True) \
            if have_r else None
        crow.append(["dKxP", "dK|P1 - dK|P0", len(full), _iv(lc_x), _iv(r_x) if r_x else ""])
    else:
        crow.append(["dKxP", "dK|P1 - dK|P0", 0, "", ""])
    tc = {"id": "contrasts", "title": "The five contrasts (percentage points)",
          "columns": ["contrast", "definition", "blocks", "LC [95% CI]", "rules stated correctly [95% CI]"],
          "rows": crow,
          "note": "Paired within blocks (an objective and a repeat holding the four cells); source-level bootstrap "
                  f"over objectives ({draws:,} draws, seed {seed}; dKxP through statistic_bootstrap on the same draws)."}
    trows = []
    for c in CELLS:
        es = [prim[(b, c)]["endpoints"] for b in full]
        ever = later = 0
        for e in es:
            for k in range(len(e["probes"][0]) if e["probes"] else 0):
                when = [i for i, pr in enumerate(e["probes"]) if pr[k]]
                ever += bool(when)
                later += bool(when) and when[0] > 0
        knows_all = [e for e in es if e["probes"] and all(e["probes"][-1])]
        trows.append([c, ever, later, f"{sum(not e['completed'] for e in knows_all)}/{len(knows_all)}"])
    timing = {"id": "probe_timing", "title": "When rules are first stated correctly",
              "columns": ["cell", "rules ever stated correctly", "first stated after the initial probe",
                          "final probe states every rule: sessions with levels unsolved"],
              "rows": trows,
              "note": "Counted over (session, rule) pairs of the primary sessions: a rule first stated correctly "
                      "after the initial probe was learnt during play (the paper: 29/36 at P0 and 40/48 at P1 "
                      "without the card); knowing every rule at the end without completing the objective "
                      "(the paper: 7 of 16 sessions)."}
    per_probe = {"id": "figure5c_data", "title": "Rules stated correctly by probe (%), per cell",
                 "columns": ["cell"] + [f"probe {i + 1}" for i in range(PROBES_PER_SESSION)],
                 "rows": [[c] + [_pct(v) for v in probe_curve(prim, full, c)] for c in CELLS],
                 "note": "The data of Figure 5c: the mean share of the game's rules stated correctly at each probe."}
    return [t16, tc, timing, per_probe]


def probe_curve(prim, blocks, cell) -> list[float | None]:
    es = [prim[(b, cell)]["endpoints"] for b in blocks]
    out = []
    for i in range(PROBES_PER_SESSION):
        v = [sum(e["probes"][i]) / len(e["probes"][i]) for e in es if len(e["probes"]) > i]
        out.append(_mean(v))
    return out


def _mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def _fmt(v):
    return "" if v is None else f"{v:.1f}"


def study_document(sched, units, *, agent_label, settings, draws, seed, catalog=None,
                   deadlock_restart=True) -> dict:
    from longpuzzle.engine.catalog import builtin_catalog

    cat = catalog or builtin_catalog()
    return study.document("rules", catalog=cat.identity(), agent=agent_label, seed=seed, draws=draws, schedule=sched,
                          tables=rules_tables(units, draws=draws, seed=seed),
                          figures=[{"id": "figure5c", "title": "Figure 5c: rules stated correctly by probe, and LC, "
                                                               "per cell", "png": "figure5c.png"}],
                          settings=dict(vars(settings)), deadlock_restart=deadlock_restart)


def figure_5c(doc: dict, units: list[dict], out: Path) -> None:
    """Figure 5c: (left) the share of rules stated correctly at each of the five probes, one
    line per cell (P1 dashed, so that cells on the same values stay visible); (right) LC per
    cell with its source-level bootstrap interval."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    prim = study.primary(units)
    blocks = sorted({u for u, _ in prim})
    full = [b for b in blocks if all((b, c) in prim for c in CELLS)]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    xs = list(range(1, PROBES_PER_SESSION + 1))
    colours = {"K0P0": "#999999", "K0P1": "#6699cc", "K1P0": "#cc9966", "K1P1": "#669966"}
    for c in CELLS:
        ys = [float("nan") if v is None else 100 * v for v in probe_curve(prim, full, c)]
        p1 = c.endswith("P1")
        a1.plot(xs, ys, marker="s" if p1 else "o", markersize=5 if p1 else 9, linestyle="--" if p1 else "-",
                color=colours[c], label=c)
    a1.set_xlabel("probe")
    a1.set_ylabel("rules stated correctly (%)")
    a1.set_title("Rule probes", fontsize=10)
    a1.set_ylim(-3, 103)
    a1.set_xticks(xs)
    a1.legend(fontsize=8)
    lcs, err = [], [[], []]
    for c in CELLS:
        groups: dict = {}
        for b in full:
            groups.setdefault(prim[(b, c)]["source"], []).append(prim[(b, c)]["endpoints"]["LC"])
        iv = cluster_bootstrap(groups, draws=doc["draws"], seed=doc["seed"]) if groups else None
        est = 100 * (iv.estimate or 0.0) if iv else 0.0
        lcs.append(est)
        err[0].append(est - 100 * iv.low if iv and iv.low is not None else 0.0)
        err[1].append(100 * iv.high - est if iv and iv.high is not None else 0.0)
    a2.bar(CELLS, lcs, yerr=err, capsize=4, color=[colours[c] for c in CELLS])
    a2.set_ylabel("LC (%)")
    a2.set_title("Level completion (95% CI)", fontsize=10)
    a2.set_ylim(0, 105)
    fig.tight_layout()
    tmp = out / "figure5c.tmp.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, out / "figure5c.png")


def write_atomic(path: Path, doc: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def check_study(folder: str | Path, replay: bool = True) -> tuple[bool, list[str]]:
    """Re-derive a rules study: every session folder replays (``replay``; else only the
    endpoints), every unit's endpoints are what its folder shows (the probes graded again from
    the stored answers), and the tables are study.json's."""
    folder = Path(folder)
    try:
        doc, units = study.load_study(folder, "rules")
    except study.StudyError as e:
        raise RulesStudyError(str(e)) from None
    if replay:
        problems = study.check_replays(folder, units, lambda r, ep: session_endpoints(ep))
    else:
        problems = [f"{u['folder']}: endpoints differ from units.jsonl" for u in units if u["status"] == "valid"
                    and json.loads(json.dumps(session_endpoints(folder / u["folder"]))) != u["endpoints"]]
    tables = rules_tables(units, draws=doc["draws"], seed=doc["seed"])
    if json.loads(json.dumps(tables, ensure_ascii=False)) != doc["tables"]:
        problems.append("the tables re-derived from the units differ from study.json")
    return not problems, problems


__all__ = ["CELLS", "CONTRASTS", "RulesStudyError", "check_study", "rules_tables", "run_session", "run_study",
           "schedule", "session_endpoints"]
