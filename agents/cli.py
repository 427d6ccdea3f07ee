"""Commands: ``eval`` and ``frames`` (``replay DIR`` is handled by the core ``replay``; ``report``,
``analyze``, ``leaderboard`` and ``video`` are in agents/report/cli.py)."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import click

from longpuzzle.engine.catalog import catalog

DEFAULT_OBJECTIVE = "maze_paint/easy"


def _objectives(objective, all_):
    if all_:
        return [o.id for o in catalog().objectives()]
    return list(objective) or [DEFAULT_OBJECTIVE]


def _clean(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


@click.command("eval")
@click.option("--agent", "agent_spec", default="solver", show_default=True,
              help="random (random gestures on the requested objective's board), random_anywhere (random "
              "actions anywhere), solver, greedy, or a .py file with one BaseAgent subclass.")
@click.option("--objective", multiple=True, metavar="GAME/DIFFICULTY", help="Objective(s) to run (repeatable).")
@click.option("--all", "all_", is_flag=True, help="All 16 objectives.")
@click.option("--protocol", type=click.Choice(["objective", "level"]), default="objective", show_default=True)
@click.option("--mode", type=click.Choice(["progressive", "all_levels"]), default="progressive", show_default=True,
              help="Level protocol only.")
@click.option("--episodes", default=1, show_default=True, help="Episodes per objective.")
@click.option("--budget", default=3600.0, show_default=True,
              help="Charged seconds per objective episode: real time + simulated action time + latency.")
@click.option("--max-actions", type=int, default=None, help="Cap on actions per episode (per level for --protocol level).")
@click.option("--action-timeout", default=120.0, show_default=True, help="Seconds an agent may take per action.")
@click.option("--invalid-actions", "invalid_action_policy", type=click.Choice(["watchdog", "dispatch_failed"]),
              default=None, help="A refused action: 'watchdog' stops and invalidates the run (the paper's, "
              "default for --protocol objective); 'dispatch_failed' answers it and ends after 3 in a row (the "
              "original repository's, default for --protocol level).")
@click.option("--charge-agent-time/--pause-while-thinking", "charge_agent_time", default=None,
              help="Whether the agent's own time counts toward the budget [default: charged for --protocol "
              "objective, as the paper; paused for --protocol level, as the original].")
@click.option("--action-latency", type=float, default=0.0, show_default=True,
              help="Seconds charged per executed action for browser synchronisation (the original harness "
              "spends 0.05 s to 1.15 s).")
@click.option("--viewport", default=None, metavar="WxH",
              help="Draw the suite letterboxed into a W x H page (the paper's agents saw 1280x900); "
              "coordinates are page pixels. Default: the game's own frame (540 x 960 times --scale).")
@click.option("--style", type=click.Choice(["2d", "3d"]), default="2d", show_default=True)
@click.option("--scale", default=1.0, show_default=True)
@click.option("--frames-per-move", default=0, show_default=True, help="Intermediate animation frames kept per move.")
@click.option("--no-frames", is_flag=True, help="Do not store frames (their hashes are still recorded).")
@click.option("--certify-budget", default=20_000, show_default=True,
              help="States the evaluator may search per move for a dead-end certificate (Bolt Unscrew, Nut and Bolt).")
@click.option("--seed", default=0, show_default=True)
@click.option("--trusted-agent", is_flag=True,
              help="Run the agent FILE in this process with all of longpuzzle at hand instead of isolated (only "
              "for code you trust, e.g. a scripted agent keeping a model of the app; recorded as trusted).")
@click.option("--agent-memory", type=float, default=4096, show_default=True,
              help="MiB of memory an agent file's process may use (its address space).")
@click.option("--agent-cpu", type=float, default=None,
              help="CPU seconds an agent file's process may use in all [default: the budget, if any].")
@click.option("--agent-cpu-per-action", type=float, default=None,
              help="CPU seconds an agent file may use per action [default: the action timeout].")
@click.option("--agent-env", multiple=True, metavar="NAME",
              help="Pass this environment variable on to an agent file's process (repeatable; e.g. an API key "
              "it needs). Its environment is otherwise nearly empty.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder [default: results/eval-<time>].")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as one JSON object.")
def eval_cmd(agent_spec, objective, all_, protocol, mode, episodes, budget, max_actions, action_timeout,
             invalid_action_policy, charge_agent_time, action_latency, viewport, style,
             scale, frames_per_move, no_frames, certify_budget, seed, trusted_agent, agent_memory, agent_cpu,
             agent_cpu_per_action, agent_env, out_dir, as_json):
    """Run an agent on objectives and measure it as LongPuzzleBench does.

    With no arguments: the solver agent on one default objective."""
    from longpuzzle.agents.builtin import load_agent
    from longpuzzle.agents.harness import Settings, run_level_chain, run_objective
    from longpuzzle.agents.metrics import aggregate
    from longpuzzle.engine.geometry import parse_viewport

    objs = _objectives(objective, all_)
    for o in objs:
        catalog().objective(o)          # unknown objective -> clear error before anything runs
    if episodes < 1:
        raise click.BadParameter("--episodes must be at least 1")
    if out_dir:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
    else:
        out = new_results_folder()
    st = Settings(style=style, scale=scale, frames_per_move=frames_per_move, budget=budget,
                  max_actions=max_actions, action_timeout=action_timeout, save_frames=not no_frames,
                  certify_budget=certify_budget, invalid_action_policy=invalid_action_policy,
                  charge_agent_time=charge_agent_time, action_latency=action_latency,
                  viewport=None if viewport is None else parse_viewport(viewport))
    limits = _agent_limits(agent_memory, agent_cpu, agent_cpu_per_action, st, protocol)
    first = load_agent(agent_spec, style=style, seed=seed, limits=limits, pass_env=agent_env, trusted=trusted_agent)
    if getattr(first, "trusted", True) is False:
        first.check()                   # an agent file that cannot load: one error line, nothing run
    plan = [(o, e) for o in objs for e in range(episodes)]
    results = []
    bar = _progress(len(plan), as_json)
    for o, e in plan:
        game, diff = o.split("/")
        agent = first if e == 0 and o == objs[0] else load_agent(agent_spec, style=style, seed=seed + e, limits=limits,
                                                                  pass_env=agent_env, trusted=trusted_agent)
        folder = out / o.replace("/", "_") / f"episode_{e + 1:03d}"
        status = EpisodeStatus(bar, o)
        if protocol == "objective":
            r = run_objective(agent, game, diff, settings=st, folder=folder, on_action=status)
        else:
            r = run_level_chain(agent, game, diff, settings=st, folder=folder, mode=mode, on_action=status)
        results.append(r)
        bar.set_postfix_str(f"{o}: {r.outcome.solved_count}/{len(r.outcome.levels)} {r.end}")
        bar.update(1)
    bar.close()
    metrics = aggregate([r.outcome for r in results])
    per_obj = metrics.pop("objectives")
    summary = {"agent": agent_spec, "protocol": protocol, "settings": st.as_dict(), "metrics": metrics,
               "objectives": per_obj,
               "episodes": [{**r.as_dict(), "folder": str(Path(r.folder).relative_to(out))} for r in results]}
    # the original's composite score: cell = mean level score (unreached levels 0), then the
    # macro mean over the cells run (16 for --all)
    cells = {}
    for r in results:
        if r.outcome.scored:
            cells.setdefault(r.objective, []).append(sum(l["score"] for l in r.levels) / len(r.levels))
    cell_scores = {k: sum(v) / len(v) for k, v in cells.items()}
    summary["cells"] = cell_scores
    summary["metrics"]["score"] = sum(cell_scores.values()) / len(cell_scores) if cell_scores else None
    summary = _clean(summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    if as_json:
        click.echo(json.dumps({**summary["metrics"], "objectives": summary["objectives"], "out": str(out)}))
        return
    click.echo(f"{'objective':<24} {'eps':>3} {'OSR':>6} {'LC':>6} {'FGP':>6} {'LPR':>6} {'PER':>5} {'SMR':>5}")
    for o in summary["objectives"]:
        click.echo(f"{o['objective']:<24} {o['episodes']:>3} " + " ".join(
            f"{_f(o[k]):>6}" for k in ("OSR", "LC", "FGP", "LPR")) + f" {_f(o['PER']):>5} {_f(o['SMR']):>5}")
    m = summary["metrics"]
    if len(m.get("games") or {}) > 1:
        for g in m["games"].values():
            click.echo(f"{'game ' + g['game']:<24} {g['episodes']:>3} " + " ".join(
                f"{_f(g[k]):>6}" for k in ("OSR", "LC", "FGP", "LPR")) + f" {_f(g['PER']):>5} {_f(g['SMR']):>5}")
    click.echo("overall: " + "  ".join(f"{k} {_f(m[k])}" for k in ("OSR", "LC", "FGP", "LPR", "H50", "LC_hard",
                                                                    "PER", "SMR", "score")))
    click.echo(f"results in {out}")


def _agent_limits(memory, cpu, cpu_per_action, st, protocol):
    """The sandbox limits of an agent file (longpuzzle.sandbox.Limits; it refuses values that
    make no sense with one error line)."""
    from longpuzzle.sandbox import Limits

    for name, v in (("--agent-memory", memory), ("--agent-cpu", cpu), ("--agent-cpu-per-action", cpu_per_action)):
        if v is not None and not (math.isfinite(v) and v > 0):
            from longpuzzle.agents.harness import HarnessError
            raise HarnessError(f"{name} must be a positive number, not {v}")
    if cpu is None and protocol == "objective" and st.budget is not None:
        cpu = st.budget
    if cpu_per_action is None:
        cpu_per_action = st.action_timeout or None
    return Limits(memory_mb=int(memory), cpu_seconds=cpu, call_cpu_seconds=cpu_per_action)


def _f(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def new_results_folder(root: str | Path = "results", prefix: str = "eval") -> Path:
    """A new folder ``root/prefix-<date>-<time>``, created here; a second one in the same
    second gets ``-2``, ``-3``, ... (mkdir is atomic, so two processes never share one)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    Path(root).mkdir(parents=True, exist_ok=True)
    k = 1
    while True:
        p = Path(root) / (f"{prefix}-{stamp}" if k == 1 else f"{prefix}-{stamp}-{k}")
        try:
            p.mkdir()
            return p
        except FileExistsError:
            k += 1


class EpisodeStatus:
    """Live status of the running episode on the progress bar: the objective, the level on
    screen (its number among the targets) and its P, actions so far and the budget's charged
    time left (the level's play time left under the level protocol)."""

    def __init__(self, bar, objective: str):
        self.bar, self.objective = bar, objective
        self.targets = catalog().objective(objective).level_ids

    def text(self, step: int, record: dict, left: float | None = None) -> str:
        parts = [self.objective]
        lid = record.get("level")
        if lid in self.targets:
            parts.append(f"level {self.targets.index(lid) + 1}/{len(self.targets)} P {record.get('P') or 0:.2f}")
        elif record.get("screen"):
            parts.append(record["screen"])
        parts.append(f"{step} action" if step == 1 else f"{step} actions")
        if left is not None:
            parts.append(f"{max(0.0, left):.0f} s left")
        return ", ".join(parts)

    def __call__(self, step: int, record: dict, left: float | None = None) -> None:
        self.bar.set_postfix_str(self.text(step, record, left), refresh=False)
        self.bar.update(0)          # redraws at most every mininterval


def _progress(total, quiet):
    try:
        from tqdm import tqdm
        return tqdm(total=total, unit="episode", disable=quiet or not sys.stderr.isatty(), file=sys.stderr)
    except ImportError:          # pragma: no cover
        class _Null:
            def update(self, n): ...
            def set_postfix_str(self, s, refresh=True): ...
            def close(self): ...
        return _Null()


@click.command("frames")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--index", "indices", type=int, multiple=True, help="Frame index (repeatable; negative from the end).")
@click.option("--step", "steps", type=int, multiple=True, help="All frames of a recorded step (0 = the first observation).")
@click.option("--png", "png_dir", type=click.Path(file_okay=False), default=None,
              help="Write the chosen frames (all frames if none chosen) as PNG files into this folder.")
@click.option("--json", "as_json", is_flag=True)
def frames_cmd(folder, indices, steps, png_dir, as_json):
    """The stored frames of an episode folder: count, size, hashes; export them as PNG."""
    from longpuzzle.agents.harness import HarnessError, open_frames, read_events, step_frame_indices
    from longpuzzle.render.frame import save_png

    with open_frames(folder) as fs:
        chosen = [i if i >= 0 else len(fs) + i for i in indices]
        if steps:
            by_step = step_frame_indices(read_events(folder))
            for s_ in steps:
                if s_ not in by_step:
                    raise HarnessError(f"{folder} has no recorded step {s_}")
                chosen += by_step[s_]
        if not chosen and png_dir:
            chosen = list(range(len(fs)))
        for i in chosen:
            if not 0 <= i < len(fs):
                raise HarnessError(f"{folder} has {len(fs)} frames; no frame {i}")
        if png_dir:
            Path(png_dir).mkdir(parents=True, exist_ok=True)
            for i in chosen:
                save_png(fs.read(i), Path(png_dir) / f"{i:06d}.png")
        info = {"frames": len(fs), "format": fs.format, "cut_off_record": fs.torn,
                "size": None if not len(fs) else list(fs.read(0).shape[1::-1]),
                "hashes": {i: fs.hash(i) for i in chosen}}
    if as_json:
        click.echo(json.dumps(info))
        return
    click.echo(f"{folder}: {info['frames']} frames ({info['format']}"
               + (f", {info['size'][0]} x {info['size'][1]}" if info["size"] else "") + ")"
               + (" and a cut-off last record" if fs.torn else ""))
    for i, h in info["hashes"].items():
        click.echo(f"{i:>8} {h}")
    if png_dir:
        click.echo(f"wrote {len(chosen)} PNG files to {png_dir}")


COMMANDS = [eval_cmd, frames_cmd]
