"""Run orchestration for ``longpuzzle eval``: the plan, workers, resume and progress.

    plan       the run's episodes (objective x episode number), written with the run's
               settings to ``run.json`` in the output folder before anything runs
    backends   where episodes run (agents/jobs/local.py). ``SequentialBackend``;
               ``ThreadBackend(N)``: model agents wait on the network, so threads suffice
               (N = 32 on two cores); ``ProcessBackend(N)``: worker processes, for agents
               that compute (``--backend processes``); ``longpuzzle.agents.jobs.RayBackend``:
               episodes as Ray tasks (``--backend ray``; it brings folders back from remote
               nodes). All run the picklable job function ``run_episode(run, spec, out)``.
               Each episode has its own suite, clock, evaluator, agent and folder, and its
               seed depends only on its place in the plan, so results equal a sequential
               run's.
    resume     ``--resume DIR`` keeps the finished episodes and runs the others again.
               Episodes ended by an infrastructure failure (unscored) run again up to
               ``infra_retries`` times, the failed attempt kept as ``<episode>.attempt-N``;
               agent failures are outcomes and stay scored.
    progress   done / running / failed episodes, cost so far and time left, on stderr
    summary    summary.json: metrics, per-objective rows, episodes, and model usage and
               cost per episode, objective and run
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from longpuzzle.agents.jobs.local import (  # noqa: F401 - the backends, here as before
    Backend, ProcessBackend, SequentialBackend, ThreadBackend, make_backend,
)
from longpuzzle.agents.base import InternalError
from longpuzzle.agents.harness import HarnessError, Settings, run_level_chain, run_objective
from longpuzzle.agents.registry import MODEL_AGENTS, SCRIPTED_AGENTS, TOOL_AGENTS, BY_NAME, load_agent, runs_model_code
from longpuzzle.agents.metrics import UNSCORED_ENDS, EpisodeOutcome, LevelOutcome, aggregate, json_ready
from longpuzzle.engine.catalog import Catalog, builtin_catalog

RUN_FORMAT = "longpuzzle-run/1"
DEFAULT_INFRA_RETRIES = 2


@dataclass
class RunConfig:
    """Everything that defines a run (JSON-able; no secrets: API keys stay in the environment)."""
    agent: str = "solver"
    objectives: list[str] = field(default_factory=list)
    episodes: int = 1
    protocol: str = "objective"            # objective | level
    mode: str = "progressive"              # level protocol: progressive | all_levels
    settings: dict = field(default_factory=dict)     # harness Settings fields
    seed: int = 0
    model: dict | None = None              # ModelConfig fields (model agents)
    agent_options: dict = field(default_factory=dict)   # prompt_setting, language, history_images, resize, scale_factor
    infra_retries: int = DEFAULT_INFRA_RETRIES
    agent_file: dict | None = None         # an agent file's sandbox: limits (sandbox.Limits fields), pass_env, trusted
    catalog: dict | None = None            # the level catalogue's identity (name, version, hash)
    sandbox: dict | None = None            # untrusted code's sandbox: the guarantees in force (agents/sandbox/guarantees.py)

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    def plan(self) -> list[dict]:
        return [{"objective": o, "episode": e, "folder": f"{o.replace('/', '_')}/episode_{e + 1:03d}"}
                for o in self.objectives for e in range(self.episodes)]


def make_agent(run: RunConfig, spec: dict, folder: Path, catalog: Catalog | None = None, **extra):
    """The agent of one episode (a fresh one per episode), on the levels of ``catalog``. A
    scripted agent or a trusted agent file is also given the episode ``folder`` (where the
    paper-like agents leave their text, as a model agent its conversation) and ``extra``
    where its ``__init__`` takes them; a sandboxed file gets neither."""
    game, diff = spec["objective"].split("/")
    if run.agent in MODEL_AGENTS:
        from longpuzzle.agents.models.agent import ModelAgent      # lazy: the SDKs load for model agents only
        from longpuzzle.agents.models.config import ModelConfig
        if not run.model:
            raise HarnessError(f"agent {run.agent} needs a model (--model)")
        cfg = ModelConfig(**run.model)
        opts = dict(run.agent_options)
        if run.agent in TOOL_AGENTS:
            from longpuzzle.agents.vista.model import ToolModelAgent     # lazy: tool agents only
            if run.protocol != "objective":
                raise HarnessError(f"agent {run.agent} plays through tools under the objective protocol only")
            return ToolModelAgent(run.agent, cfg, folder=folder, history_images=opts.get("history_images"),
                                  text_reply=opts.get("text_reply", "final"))
        return ModelAgent(run.agent, cfg, game=game, difficulty=diff, folder=folder,
                          level_protocol=run.protocol == "level", **opts)
    f = run.agent_file or {}
    limits = None
    if f.get("limits"):
        from longpuzzle.agents.sandbox import Limits       # lazy: agent files only
        limits = Limits(**f["limits"])
    in_process = run.agent in SCRIPTED_AGENTS or bool(f.get("trusted"))
    return load_agent(run.agent, style=run.settings.get("style", "2d"), seed=run.seed + spec["episode"],
                      limits=limits, pass_env=tuple(f.get("pass_env") or ()), trusted=bool(f.get("trusted")),
                      catalog=catalog, **({"folder": Path(folder), **extra} if in_process else {}))


def run_episode(run: RunConfig | dict, spec: dict, out: str | Path, live: dict | None = None,
                on_action: Callable | None = None, catalog: Catalog | None = None) -> dict:
    """Run one planned episode into ``out/spec["folder"]`` on the levels of ``catalog`` (the
    run's: a job's argument, which travels to worker processes and Ray tasks as level data;
    default the built-in catalogue); returns its result record (the episode's result.json,
    with the model's usage under "model" for model agents).
    ``live`` (threads only): the running agents by folder; ``on_action(step, record, left)``:
    called after every action (the live status of a sequential run)."""

    run = run if isinstance(run, RunConfig) else RunConfig.from_dict(run)
    folder = Path(out) / spec["folder"]
    game, diff = spec["objective"].split("/")
    st = Settings(**{k: v for k, v in run.settings.items() if k in Settings.__dataclass_fields__})
    cat = catalog or builtin_catalog()
    agent = None
    try:
        agent = make_agent(run, spec, folder, cat)
        if live is not None:
            live[spec["folder"]] = agent
        # the episode's planned identity, in its header: the folder the plan puts it in and
        # how many attempts of it were set aside before it started (verify.py checks both
        # against where it is found, so a copy filed elsewhere is refused)
        ident = {"planned": {"folder": spec["folder"],
                             "attempt": int(spec.get("attempt", _attempts(Path(out), spec["folder"])))}}
        if run.agent in TOOL_AGENTS:
            from longpuzzle.agents.vista.model import run_tool_agent     # lazy: tool agents only
            r = run_tool_agent(agent, game, diff, settings=st, folder=folder, on_action=on_action, header=ident,
                               catalog=cat)
        elif run.protocol == "objective":
            r = run_objective(agent, game, diff, settings=st, folder=folder, on_action=on_action, header=ident,
                              catalog=cat)
        else:
            r = run_level_chain(agent, game, diff, settings=st, folder=folder, mode=run.mode, on_action=on_action,
                                header=ident, catalog=cat)
        written = folder / "result.json"
        try:                                  # the harness's own result.json, with its metrics
            res = json.loads(written.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            res = r.as_dict()
    except InternalError as e:
        # an error of our own code stops the run (the episode stays unfinished); the model
        # agents running beside it (threads) stop at their next request
        for other in list((live or {}).values()):
            if hasattr(other, "stop_run"):
                other.stop_run(f"another episode met an internal error: {e}")
        raise
    except Exception as e:  # noqa: BLE001 - a crash of one episode must not end the run
        res = {"objective": spec["objective"], "protocol": run.protocol, "agent": run.agent,
               "end": "infrastructure_error", "scored": False, "actions": 0, "seconds": 0.0,
               "error": f"the episode could not run: {type(e).__name__}: {e}", "traceback": traceback.format_exc(),
               "success": False, "solved": 0, "target_levels": 0, "levels_outcome": [], "mismatch": False,
               "budget_remaining": False, "levels": []}
    finally:
        if live is not None:
            live.pop(spec["folder"], None)
    if agent is not None and hasattr(agent, "report"):
        try:
            agent.close()
        except Exception:  # noqa: BLE001
            pass
        res["model"] = agent.report()
    res["folder"] = spec["folder"]
    _write_json(folder / "result.json", res)
    return res


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(json_ready(data), indent=1), encoding="utf-8")
    os.replace(tmp, path)



def outcome_of(res: dict, catalog: Catalog | None = None) -> EpisodeOutcome:
    """The metrics' view of a result record (of an episode on ``catalog``, default the
    built-in catalogue: a record without levels counts its objective's levels unreached)."""
    game, diff = res["objective"].split("/")
    levels = [LevelOutcome(l["reached"], l["won"], l["max_P"]) for l in res.get("levels_outcome") or []]
    if not levels:
        levels = [LevelOutcome() for _ in (catalog or builtin_catalog()).objective(res["objective"]).level_ids]
    extra = {k: res[k] for k in EpisodeOutcome.__dataclass_fields__
             if k in res and k not in ("game", "difficulty", "levels")}      # end, mismatch, NGAR steps, ...
    return EpisodeOutcome(game, diff, levels, **extra)


# ---- progress ----------------------------------------------------------------------------

class EpisodeStatus:
    """Live status of one running episode: the objective, the level on screen (its number
    among the targets) and its P, actions so far and the budget's charged time left (the
    level's play time left under the level protocol). Called after every action."""

    def __init__(self, objective: str, show: Callable[[str], None], catalog: Catalog | None = None):
        self.objective, self.show = objective, show
        self.targets = (catalog or builtin_catalog()).objective(objective).level_ids

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
        self.show(self.text(step, record, left))


class Progress:
    """Episodes done / running / failed, cost so far, time left (tqdm on a terminal); with
    one worker, also the running episode's own status."""

    def __init__(self, total: int, quiet: bool, live: dict, cost_known: bool):
        self.total, self.live, self.cost_known = total, live, cost_known
        self.done = self.failed = 0
        self.cost = 0.0
        self.t0 = time.monotonic()
        self._bar = None
        if not quiet and sys.stderr.isatty():
            try:
                from tqdm import tqdm         # lazy and optional: a bar only on a terminal
                self._bar = tqdm(total=total, unit="episode", file=sys.stderr)
            except ImportError:  # pragma: no cover
                self._bar = None

    def live_cost(self) -> float:
        c = 0.0
        for a in list(self.live.values()):
            u = getattr(a, "usage", None)
            if u is not None and u.cost:
                c += u.cost
        return c

    def finished(self, res: dict) -> None:
        self.done += 1
        if res.get("end") in UNSCORED_ENDS:
            self.failed += 1
        u = (res.get("model") or {}).get("usage") or {}
        if u.get("cost"):
            self.cost += u["cost"]
        if self._bar is not None:
            self._bar.update(1)
        self.tick()

    def status(self) -> str:
        cost = self.cost + self.live_cost()
        s = f"done {self.done}/{self.total}  running {len(self.live)}  failed {self.failed}"
        if self.cost_known:
            s += f"  cost ${cost:.4f}"
        if self.done:
            left = (time.monotonic() - self.t0) / self.done * (self.total - self.done)
            s += f"  left ~{left:.0f} s"
        return s

    def tick(self) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(self.status(), refresh=True)

    def episode_status(self, objective: str, catalog: Catalog | None = None) -> EpisodeStatus | None:
        if self._bar is None:
            return None

        def show(text: str) -> None:
            self._bar.set_postfix_str(f"{self.status()} | {text}", refresh=False)
            self._bar.update(0)          # redraws at most every mininterval
        return EpisodeStatus(objective, show, catalog)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# ---- the run -----------------------------------------------------------------------------

def _attempts(out: Path, folder: str) -> int:
    p = out / folder
    return len(list(p.parent.glob(p.name + ".attempt-*"))) if p.parent.is_dir() else 0


def _finished(out: Path, spec: dict, run: RunConfig) -> dict | None:
    """The episode's result if it ran to its end (and, for model agents, recorded usage)."""
    p = out / spec["folder"] / "result.json"
    if not p.is_file():
        return None
    try:
        res = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if "end" not in res or (run.agent in MODEL_AGENTS and "model" not in res):
        return None
    return res


def runs_untrusted_code(run: RunConfig) -> bool:
    """Does the run execute code it does not trust: an agent file run isolated, or the code a
    model writes (run_python)?"""
    isolated_file = run.agent.endswith(".py") and not (run.agent_file or {}).get("trusted")
    return isolated_file or runs_model_code(run.agent)


def start_run(out: Path, run: RunConfig) -> None:
    """Write run.json; for a run of untrusted code, record the sandbox's guarantees in force
    here first, and say once (stderr) which are missing and what they need."""
    if runs_untrusted_code(run) and run.sandbox is None:
        from longpuzzle.agents.sandbox.guarantees import missing_note, probe, record   # lazy: untrusted code only
        network = bool(((run.agent_file or {}).get("limits") or {}).get("network"))    # --agent-network
        prot = probe(network)
        run.sandbox = record(prot)
        note = missing_note(prot, network)
        if note:
            print(f"note: {note}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / "run.json", {"format": RUN_FORMAT, "run": run.as_dict(), "plan": run.plan()})


def load_run(out: Path) -> RunConfig:
    p = out / "run.json"
    if not p.is_file():
        raise HarnessError(f"{out} is not a run folder (no run.json); --resume needs the folder of an earlier eval")
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        raise HarnessError(f"{p} is not valid JSON") from None
    if d.get("format") != RUN_FORMAT:
        raise HarnessError(f"{p}: unknown run format")
    return RunConfig.from_dict(d["run"])


def execute(out: str | Path, run: RunConfig, *, workers: int = 1, backend: Backend | None = None,
            quiet: bool = False, catalog: Catalog | None = None) -> dict:
    """Run (or resume) every planned episode of ``run`` in ``out``; returns the summary. The
    episodes play the run's catalogue: the one ``run.catalog`` records (``catalog`` when it is
    that one, else the stored snapshot of its name, checked by hash: replay.recorded_catalog),
    or ``catalog`` (default: the built-in one) for a run that records none."""
    from longpuzzle.agents.harness.replay import recorded_catalog

    out = Path(out)
    cat = recorded_catalog(run.catalog, catalog) if run.catalog else (catalog or builtin_catalog())
    backend = backend or make_backend(workers)
    backend.output(out)
    plan = run.plan()
    results: dict[str, dict] = {}
    todo = []
    for spec in plan:
        res = _finished(out, spec, run)
        if res is not None and not (res["end"] in UNSCORED_ENDS and _attempts(out, spec["folder"]) < run.infra_retries):
            results[spec["folder"]] = res
        else:
            if (out / spec["folder"]).exists():   # an unscored attempt with retries left, or an
                _set_aside(out, spec["folder"],   # interrupted one: kept aside, never deleted
                           "attempt" if res is not None else "interrupted")
            todo.append(spec)
    live: dict = {}
    prog = Progress(len(plan), quiet, live, run.agent in MODEL_AGENTS)
    prog.done = len(results)
    for r in results.values():
        prog.cost += ((r.get("model") or {}).get("usage") or {}).get("cost") or 0.0
    try:
        while todo:
            again = []
            specs = {s["folder"]: s for s in todo}
            seq = isinstance(backend, SequentialBackend)
            # each job's spec carries its attempt number (the attempts set aside so far, counted
            # here: a remote backend's worker does not see the run folder)
            jobs = [(s["folder"], run_episode, (run, {**s, "attempt": _attempts(out, s["folder"])}, str(out),
                                                live if backend.shares_memory else None,
                                                prog.episode_status(s["objective"], cat) if seq else None, cat))
                    for s in todo]

            def on_done(key, res, specs=specs, again=again):   # (bound: one round's jobs)
                spec = specs[key]
                if res["end"] in UNSCORED_ENDS and _attempts(out, key) < run.infra_retries:
                    _set_aside(out, key)
                    again.append(spec)
                    prog.failed += 1
                    prog.tick()
                    return
                results[key] = res
                prog.finished(res)
            backend.run(jobs, on_done, prog.tick)
            todo = again
    finally:
        prog.close()
    ordered = [results[s["folder"]] for s in plan if s["folder"] in results]
    summary = summarise(run, ordered, cat)
    _write_json(out / "summary.json", summary)
    return summary


def _set_aside(out: Path, folder: str, kind: str = "attempt") -> None:
    p = out / folder
    if p.exists():
        n = len(list(p.parent.glob(f"{p.name}.{kind}-*"))) + 1
        os.replace(p, p.with_name(f"{p.name}.{kind}-{n}"))


def summarise(run: RunConfig, results: list[dict], catalog: Catalog | None = None) -> dict:
    """summary.json: metrics (scored episodes only), objectives, the original's cell scores,
    episodes, and model usage per episode, objective and run."""
    from longpuzzle.agents.models.accounting import Usage     # lazy: the models package loads its SDK clients

    metrics = aggregate([outcome_of(r, catalog) for r in results])
    per_obj = metrics.pop("objectives")
    cells: dict[str, list[float]] = {}
    for r in results:
        if r.get("end") not in UNSCORED_ENDS and r.get("levels"):
            cells.setdefault(r["objective"], []).append(sum(l["score"] for l in r["levels"]) / len(r["levels"]))
    cell_scores = {k: sum(v) / len(v) for k, v in cells.items()}
    metrics["score"] = sum(cell_scores.values()) / len(cell_scores) if cell_scores else None
    summary = {"agent": run.agent, "protocol": run.protocol, "catalog": run.catalog or (catalog or builtin_catalog()).identity(),
               "settings": run.settings, "metrics": metrics,
               "objectives": per_obj, "cells": cell_scores, "episodes": results}
    if run.agent in TOOL_AGENTS:                # the action setting its tools come from
        summary["setting"] = BY_NAME[run.agent].setting
    if run.agent in MODEL_AGENTS:
        from longpuzzle.agents.models.config import ModelConfig     # lazy: model runs only
        total = Usage()
        by_obj: dict[str, Usage] = {}
        for r in results:
            u = Usage.from_dict((r.get("model") or {}).get("usage"))
            total.merge(Usage.from_dict(u.as_dict()))
            by_obj.setdefault(r["objective"], Usage()).merge(u)
        cfg = ModelConfig(**run.model) if run.model else None
        # the run's identity for reports and leaderboards: the model's name, the provider
        # (API and endpoint), then every model setting apart
        summary["model"] = (cfg.name or cfg.model) if cfg else None
        summary["provider"] = f"{cfg.api} {cfg.base_url or 'default endpoint'}" if cfg else None
        summary["model_settings"] = cfg.public() if cfg else None
        summary["agent_options"] = run.agent_options
        summary["usage"] = total.as_dict()
        summary["cost_usd"] = summary["usage"]["cost"]
        for o in per_obj:
            if o["objective"] in by_obj:
                o["usage"] = by_obj[o["objective"]].as_dict()
        summary["usage_by_objective"] = {k: v.as_dict() for k, v in by_obj.items()}
    return json_ready(summary)
