"""Commands: ``eval`` and ``frames`` (``replay DIR`` is handled by the core ``replay``; ``report``,
``analyze``, ``leaderboard`` and ``video`` are in agents/report/cli.py).

The imports inside the commands are lazy on purpose (marked "lazy"): building the command
table and ``--help`` loads none of the harness, the models or the sandbox; each command loads
what it runs, and a model's client only with --model."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from click.core import ParameterSource

from longpuzzle.agents.harness.presets import HARNESSES, PRESET_NAMES, PRESETS
from longpuzzle.agents.harness.presets import label as preset_label_of
from longpuzzle.agents.jobs.options import backend_for, backend_options
from longpuzzle.agents.agent_options import agent_options, build_agent, with_defaults
from longpuzzle.engine.catalog_store import catalog_option

DEFAULT_OBJECTIVE = "maze_paint/easy"


def _objectives(objective, all_, catalog):
    if all_ and objective:
        raise click.UsageError("--all runs every objective; give --all or --objective, not both")
    if all_:
        return [o.id for o in catalog.objectives()]
    return list(objective) or [DEFAULT_OBJECTIVE]



@click.command("eval")
@click.option("--preset", type=click.Choice(list(PRESET_NAMES)), default=None,
              help="The conditions of a published setting [default: paper with --model, else fast]: paper (the "
              "paper's: 1280x900 page, Chinese screens and prompts, 60 min with model time charged), fast (the "
              "game's own 540x960 frame, English), repo (the original repository's level protocol). Options given "
              "as well win, and the result records them with the preset.")
@click.option("--objective", multiple=True, metavar="GAME/DIFFICULTY", help="Objective(s) to run (repeatable).")
@click.option("--all", "all_", is_flag=True, help="All 16 objectives.")
@click.option("--protocol", type=click.Choice(["objective", "level"]), default="objective",
              help="[default: the preset's]")
@click.option("--mode", type=click.Choice(["progressive", "all_levels"]), default="progressive", show_default=True,
              help="Level protocol only.")
@click.option("--episodes", default=1, show_default=True, help="Episodes per objective.")
@click.option("--budget", default=3600.0, show_default=True,
              help="Charged seconds per objective episode: real time + simulated action time + latency.")
@click.option("--max-actions", type=int, default=None, help="Cap on actions per episode (per level for --protocol level).")
@click.option("--action-timeout", type=float, default=None,
              help="Seconds an agent may take per action [default: 120; none for model agents, whose requests "
                   "have --request-timeout].")
@click.option("--invalid-actions", "invalid_action_policy", type=click.Choice(["dispatch_failed", "watchdog"]),
              default=None, help="A refused action is the agent's own failure: 'dispatch_failed' (default) "
              "answers it with feedback and ends the episode after 3 in a row; 'watchdog' ends it at the first. "
              "Either end (invalid_action_limit) is scored.")
@click.option("--charge-agent-time/--pause-while-thinking", "charge_agent_time", default=None,
              help="Whether the agent's own time counts toward the budget [default: charged for --protocol "
              "objective, as the paper; paused for --protocol level, as the original].")
@click.option("--action-latency", type=float, default=0.0, show_default=True,
              help="Seconds charged per executed action for browser synchronisation (the original harness "
              "spends 0.05 s to 1.15 s).")
@click.option("--viewport", default=None, metavar="WxH",
              help="Draw the suite letterboxed into a W x H page (the paper's agents saw 1280x900); "
              "coordinates are page pixels. Default: the game's own frame (540 x 960 times --scale).")
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en",
              help="The language of the screens' texts (zh: the original's Chinese interface; same layout) "
              "[default: the preset's].")
@click.option("--style", type=click.Choice(["2d", "3d"]), default="2d", show_default=True)
@click.option("--scale", default=1.0, show_default=True)
@click.option("--frames-per-move", default=0, show_default=True, help="Intermediate animation frames kept per move.")
@click.option("--no-frames", is_flag=True, help="Do not store frames (their hashes are still recorded).")
@click.option("--certify-budget", default=20_000, show_default=True,
              help="States the evaluator may search per move for a dead-end certificate (Bolt Unscrew, Nut and Bolt; "
                   "0: no certificates).")
@click.option("--seed", default=0, show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder [default: results/eval-<time>].")
@backend_options(
    "Where episodes run: this process (with --workers threads), worker processes of this machine (for agents that "
    "compute, e.g. the solver: one per core), or Ray tasks (a local Ray, or the cluster at --address); same folders, "
    "results and --resume.",
    "Episodes run at once [default: 1]: threads with --backend local (32 is fine for models, which wait on the "
    "network), worker processes with --backend processes [default: the CPUs this process may use], Ray tasks with "
    "--backend ray.")
@click.option("--cpus-per-episode", type=float, default=1.0, show_default=True,
              help="CPUs Ray reserves per episode (a model agent's episode mostly waits: e.g. 0.1).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False), default=None,
              help="Continue the run in this folder: finished episodes are kept, the others run again.")
@click.option("--infra-retries", default=2, show_default=True,
              help="Times an episode stopped by an infrastructure failure (unscored) is run again.")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as one JSON object.")
@agent_options()
@catalog_option
@click.pass_context
def eval_cmd(ctx, preset, agent_opts, objective, all_, protocol, mode, episodes, budget, max_actions, action_timeout,
             invalid_action_policy, charge_agent_time, action_latency, viewport, lang, style,
             scale, frames_per_move, no_frames, certify_budget, seed, out_dir, workers, backend_name, address,
             ship_code, cpus_per_episode, resume_dir, infra_retries, as_json, catalog):
    """Run an agent on objectives and measure it as LongPuzzleBench does.

    With no arguments: the solver agent on one default objective. With --model: a model
    endpoint through an agent protocol, e.g.

        longpuzzle eval --model gpt-6-sol --objective maze_paint/easy --workers 8"""
    from longpuzzle.agents.base import InternalError      # lazy (module doc): what the command runs
    from longpuzzle.agents.harness import HarnessError, Settings
    from longpuzzle.agents.runner import RunConfig, execute, load_run, start_run
    from longpuzzle.engine.geometry import parse_viewport

    if workers is not None and workers < 1:
        raise click.BadParameter("--workers must be at least 1")
    if action_timeout is not None and not action_timeout > 0:
        raise HarnessError(f"--action-timeout must be a positive number of seconds (inf for no limit), not "
                           f"{action_timeout}")
    # a usage error of the backend's options before anything is created (no results folder left behind)
    backend = backend_for(backend_name, workers, address=address, ship_code=ship_code, num_cpus=cpus_per_episode,
                          threads=True)
    if resume_dir:
        out = Path(resume_dir)
        run = load_run(out)                  # (execute goes on with the catalogue it began with)
        if run.catalog:                      # one not available here: one error line before anything runs
            from longpuzzle.agents.harness.replay import recorded_catalog    # lazy: --resume only
            recorded_catalog(run.catalog, catalog)
    else:
        objs = _objectives(objective, all_, catalog)
        for o in objs:
            catalog.objective(o)            # unknown objective -> clear error before anything runs
        if episodes < 1:
            raise click.BadParameter("--episodes must be at least 1")
        agent_spec, prompt_setting, language = agent_opts.agent, agent_opts.prompt_setting, agent_opts.language
        # the preset fills every option not given on the command line (given ones win and are recorded)
        preset = preset or ("paper" if agent_opts.wants_model else "fast")
        pr, changed = PRESETS[preset], []

        def given(name: str) -> bool:
            return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)

        picked = {"protocol": protocol, "viewport": None if viewport is None else parse_viewport(viewport),
                  "lang": lang, "scale": float(scale), "budget": budget, "charge_agent_time": charge_agent_time,
                  "invalid_action_policy": invalid_action_policy}
        want = {"protocol": pr["protocol"], **pr["settings"]}
        for name, v in want.items():
            if not given(name):
                picked[name] = v
            elif picked[name] != v:
                changed.append(name)
        protocol, lang, scale, budget = picked["protocol"], picked["lang"], picked["scale"], picked["budget"]
        charge_agent_time, invalid_action_policy = picked["charge_agent_time"], picked["invalid_action_policy"]
        page = picked["viewport"]
        for name, v in pr["agent_options"].items():
            cli_v = {"prompt_setting": None if prompt_setting == "none" else prompt_setting,
                     "language": language}[name]
            if not given(name):
                if name == "prompt_setting":
                    prompt_setting = "none" if v is None else v
                else:
                    language = v
            elif cli_v != v:
                changed.append(name)
        if pr["agent"] and agent_spec is None and agent_opts.model:
            agent_spec = pr["agent"]
        if agent_opts.harness not in (None, "default"):   # the harness's settings, where none was given
            hs = HARNESSES[agent_opts.harness]["settings"]
            page = page if given("viewport") else hs.get("viewport", page)
            action_latency = action_latency if given("action_latency") else hs.get("action_latency", action_latency)
            changed.append("harness")
        preset_label = preset_label_of(preset, changed)
        opts = with_defaults(agent_opts, agent=agent_spec, prompt_setting=prompt_setting, language=language)
        choice = None
        if opts.wants_model:                # the model is resolved first: its errors before the settings'
            choice = build_agent(opts, lang=lang, seed=seed, style=style, protocol=protocol)
            if action_timeout is None:
                action_timeout = 0.0        # no harness limit: each request has its own timeout
        if action_timeout is None:
            action_timeout = 120.0
        try:                            # settings that make no sense: one error line naming the option
            st = Settings(style=style, scale=scale, frames_per_move=frames_per_move, budget=budget,
                          max_actions=max_actions, action_timeout=action_timeout or None, save_frames=not no_frames,
                          certify_budget=certify_budget, invalid_action_policy=invalid_action_policy,
                          charge_agent_time=charge_agent_time, action_latency=action_latency,
                          viewport=page, lang=lang, preset=preset_label)
        except HarnessError as e:
            raise HarnessError(_option_names(str(e))) from None
        if choice is None:              # unknown agent, an agent file that cannot load: one error line now
            choice = build_agent(opts, st, protocol=protocol, seed=seed)
        run = RunConfig(agent=choice.agent, objectives=objs, episodes=episodes, protocol=protocol, mode=mode,
                        catalog=catalog.identity(),
                        settings=st.as_dict(), seed=seed, model=choice.model, agent_options=choice.agent_options or {},
                        infra_retries=infra_retries, agent_file=choice.agent_file)
        if out_dir:
            out = Path(out_dir)
            if (out / "run.json").exists():
                raise click.UsageError(f"{out} already holds a run; continue it with --resume {out}")
            out.mkdir(parents=True, exist_ok=True)
            probe = out / ".write-test"
            probe.write_bytes(b"")      # an unwritable --out: one error line before anything runs
            probe.unlink()
        else:
            out = new_results_folder()
        start_run(out, run)
    try:
        summary = execute(out, run, backend=backend, quiet=as_json, catalog=catalog)
    except InternalError as e:              # our own bug: the run stops, nothing is scored or retried
        click.echo(f"error: internal error, the run stopped (continue it with --resume {out} once fixed): {e}",
                   err=True)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps({**summary["metrics"], "objectives": summary["objectives"],
                               "usage": summary.get("usage"), "out": str(out)}))
    else:
        _print_summary(summary)
        click.echo(f"results in {out}")
    unscored = summary["metrics"].get("unscored") or 0
    if unscored:                            # scripts and CI must notice episodes left unscored
        click.echo(f"error: {unscored} episode{'s' if unscored != 1 else ''} could not be scored (infrastructure "
                   f"failures after {run.infra_retries} reruns); run them again with --resume {out}", err=True)
        sys.exit(1)


def _print_summary(summary: dict) -> None:
    usage = summary.get("usage")
    head = f"{'objective':<24} {'eps':>3} {'OSR':>6} {'LC':>6} {'FGP':>6} {'LPR':>6} {'PER':>5} {'SMR':>5}"
    if usage:
        head += f" {'calls':>6} {'in tok':>10} {'out tok':>9} {'cost $':>9}"
    click.echo(head)
    for o in summary["objectives"]:
        line = f"{o['objective']:<24} {o['episodes']:>3} " + " ".join(
            f"{_f(o[k]):>6}" for k in ("OSR", "LC", "FGP", "LPR")) + f" {_f(o['PER']):>5} {_f(o['SMR']):>5}"
        u = o.get("usage")
        if usage and u:
            line += (f" {u['calls']:>6} {u['input_uncached'] + u['input_cached']:>10} {u['output']:>9} "
                     f"{_cost(u['cost']):>9}")
        click.echo(line)
    m = summary["metrics"]
    if len(m.get("games") or {}) > 1:
        for g in m["games"].values():
            click.echo(f"{'game ' + g['game']:<24} {g['episodes']:>3} " + " ".join(
                f"{_f(g[k]):>6}" for k in ("OSR", "LC", "FGP", "LPR")) + f" {_f(g['PER']):>5} {_f(g['SMR']):>5}")
    shown = ("OSR", "LC", "FGP", "LPR", "H50", "LC_hard", "PER", "SMR") + \
        (("NGAR",) if summary.get("setting") == "code" else ()) + ("score",)      # NGAR: the code setting's
    click.echo("overall: " + "  ".join(f"{k} {_f(m.get(k))}" for k in shown))
    if m.get("unscored"):
        click.echo(f"unscored episodes (infrastructure failures, left out of the metrics): {m['unscored']}")
    if usage:
        click.echo(f"model: {usage['calls']} calls, {usage['input_uncached']} uncached + {usage['input_cached']} cached "
                   f"input tokens, {usage['output']} output ({usage['reasoning']} reasoning), "
                   f"{usage['retries']} retries, {usage['parse_failures']} parse failures, "
                   f"{usage['compactions']} compactions, cost {_cost(usage['cost'])} USD")


def _cost(c) -> str:
    return "-" if c is None else f"{c:.4f}"


_OPTIONS = {"frames_per_move": "--frames-per-move", "max_actions": "--max-actions", "action_timeout": "--action-timeout",
            "certify_budget": "--certify-budget", "budget": "--budget", "style": "--style", "action_latency":
            "--action-latency", "invalid_action_policy": "--invalid-actions", "scale": "--scale"}


def _option_names(msg: str) -> str:
    """A Settings message with the setting's name as the eval option that sets it."""
    for name, opt in _OPTIONS.items():
        if msg.startswith(name + " "):
            return opt + msg[len(name):]
    return msg


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
    """The running episode's status on a progress bar (the text: runner.EpisodeStatus)."""

    def __init__(self, bar, objective: str):
        from longpuzzle.agents.runner import EpisodeStatus as Status     # lazy: made while eval runs

        self.bar = bar
        self._status = Status(objective, self._show)

    def _show(self, text: str) -> None:
        self.bar.set_postfix_str(text, refresh=False)
        self.bar.update(0)          # redraws at most every mininterval

    def text(self, step: int, record: dict, left: float | None = None) -> str:
        return self._status.text(step, record, left)

    def __call__(self, step: int, record: dict, left: float | None = None) -> None:
        self._status(step, record, left)


@click.command("frames")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--index", "indices", type=int, multiple=True, help="Frame index (repeatable; negative from the end).")
@click.option("--step", "steps", type=int, multiple=True, help="All frames of a recorded step (0 = the first observation).")
@click.option("--png", "png_dir", type=click.Path(), default=None,
              help="Write the chosen frames (all frames if none chosen) as PNG files into this folder; a "
              "name ending in .png writes the one chosen frame to that file.")
@click.option("--json", "as_json", is_flag=True)
def frames_cmd(folder, indices, steps, png_dir, as_json):
    """The stored frames of an episode folder: count, size, hashes; export them as PNG."""
    from longpuzzle.agents.harness import HarnessError, open_frames, read_events, step_frame_indices  # lazy
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
        png_file = png_dir is not None and Path(png_dir).suffix.lower() == ".png"
        if png_file and len(chosen) != 1:
            raise click.BadParameter(f"{png_dir} is one file, for one frame (--index / --step chose {len(chosen)}); "
                                     "give a folder for several", param_hint="--png")
        if png_file:
            save_png(fs.read(chosen[0]), png_dir)
        elif png_dir:
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
        click.echo(f"wrote {png_dir}" if png_file else f"wrote {len(chosen)} PNG files to {png_dir}")


COMMANDS = [eval_cmd, frames_cmd]
