"""A dataset run: its plan, its jobs, resume, and the manifest.

    config     DatasetConfig: objectives, episodes per objective, agent and its variety,
               frame styles and scales to draw from, format, shard size, number of jobs
    plan       every episode with its id, seed and drawn style and scale (from the run's
               seed and the episode's number only), split into contiguous jobs; written to
               ``dataset.json`` in the output folder before anything runs
    jobs       ``run_job(config, job, episodes, out)`` plays a job's episodes in order and
               writes its shards ``shard-<job>-<k>`` and then ``parts/job-<job>.json`` (its
               shards with their hashes, its episodes); it is the picklable job function any
               backend of agents/runner.py runs (sequential, threads, Ray)
    resume     ``resume=True`` keeps every job whose part file names shards that exist with
               the recorded SHA-256, and runs the others again (with the plan of dataset.json)
    manifest   ``manifest.json``, written last: format, settings, the frame hash the rows
               hold (``frame_hash``: the harness's, agents/harness/frames.py; a manifest
               of format 1 names none and means "xxh3-128"), schema, shards, episodes,
               counts, the PNGs' deflate (``png_deflate``: library, its version and level,
               and the jobs it wrote: shards repeat byte for byte given the same ones), and
               the catalogue (its name, version and hash, and every level played: its id
               and content digest); with ``resume``, the catalogue recorded in the plan is
               used again
"""

from __future__ import annotations

import json
import os
import platform
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from longpuzzle.agents.harness.frames import FRAME_HASH
from longpuzzle.agents.jobs.local import SequentialBackend
from longpuzzle.agents.datasets.agents import GESTURES
from longpuzzle.agents.media.deflate import DEFAULT_LEVEL, check_level
from longpuzzle.agents.datasets.schema import CONVENTIONS, FORMAT, FORMATS, columns, episode_key, schema_doc
from longpuzzle.agents.datasets.shards import DatasetError, check_format, file_sha256
from longpuzzle.agents.datasets.writer import DEFAULT_SHARD_SIZE, StepWriter
from longpuzzle.engine.catalog import Catalog, builtin_catalog
from longpuzzle.engine.geometry import STYLES, check_scale
from longpuzzle import __version__
from longpuzzle.agents.harness.replay import recorded_catalog

PLAN_FILE, MANIFEST_FILE, PARTS = "dataset.json", "manifest.json", "parts"


@dataclass
class DatasetConfig:
    objectives: list[str] = field(default_factory=list)
    episodes: int = 1                      # per objective
    agent: str = "solver"
    styles: list[str] = field(default_factory=lambda: ["2d"])      # drawn per episode
    scales: list[float] = field(default_factory=lambda: [1.0])     # drawn per episode
    detours: float = 0.0
    restarts: float = 0.0
    gestures: str = "runs"
    seed: int = 0
    format: str = "parquet"
    shard_size: int = DEFAULT_SHARD_SIZE
    jobs: int = 1
    settings: dict = field(default_factory=dict)     # harness settings: budget, max_actions, viewport ...
    png_level: int = DEFAULT_LEVEL         # the PNGs' deflate level: 1 fastest ... 9 smallest
    oracle: bool = False                   # the rows carry the oracle's columns (schema.ORACLE_COLUMNS)
    # the level catalogue: given as a Catalog (or None: the built-in one), kept as its identity
    # (name, version, hash); a plan read back holds the identity only (build resolves it)
    catalog: dict | None = None

    def __post_init__(self):
        self.source = None                   # the Catalog itself, where given (not part of the plan)
        if self.catalog is None or isinstance(self.catalog, Catalog):
            self.source = self.catalog or builtin_catalog()
            self.catalog = self.source.identity()
        if not self.objectives:
            raise DatasetError("name at least one objective (--objective G/D)")
        for o in self.objectives:
            if self.source is not None:
                self.source.objective(o)               # an unknown objective is a clear error
        if self.episodes < 1 or self.jobs < 1 or self.shard_size < 1:
            raise DatasetError("episodes, jobs and the shard size must be at least 1")
        bad = [s for s in self.styles if s not in STYLES]
        if bad or not self.styles:
            raise DatasetError(f"styles must be among {', '.join(STYLES)}, not {bad or self.styles}")
        if not self.scales:
            raise DatasetError("give at least one scale")
        self.scales = [float(check_scale(s)) for s in self.scales]
        if self.gestures not in GESTURES:
            raise DatasetError(f"gestures must be {' or '.join(GESTURES)}")
        check_format(self.format)
        try:
            check_level(self.png_level)
        except ValueError as e:
            raise DatasetError(f"--png-level: {e}") from None

    def plan(self) -> list[dict]:
        """Every episode: id, objective, seed, style, scale and the agent's options."""
        out = []
        n = 0
        for o in self.objectives:
            for _ in range(self.episodes):
                r = random.Random(f"{self.seed}:{n}")
                out.append({"id": episode_key(n), "objective": o, "seed": self.seed + n,
                            "style": r.choice(self.styles), "scale": r.choice(self.scales), "agent": self.agent,
                            "detours": self.detours, "restarts": self.restarts, "gestures": self.gestures})
                n += 1
        return out

    def job_plan(self) -> list[list[dict]]:
        """The plan in ``jobs`` contiguous parts (as even as they go; none empty)."""
        plan = self.plan()
        k = min(self.jobs, len(plan))
        return [plan[i * len(plan) // k:(i + 1) * len(plan) // k] for i in range(k)]

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict, catalog: Catalog | None = None) -> DatasetConfig:
        """The config of a plan; ``catalog``: its catalogue, where the caller has it."""
        kw = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        if catalog is not None and kw.get("catalog") == catalog.identity():
            kw["catalog"] = catalog
        return cls(**kw)


def part_path(out: Path, job: int) -> Path:
    return out / PARTS / f"job-{job:05d}.json"


def run_job(config: dict, job: int, episodes: list[dict], out: str, catalog: Catalog | None = None) -> dict:
    """Play ``episodes`` on the levels of ``catalog`` (the dataset's: a job's argument, which
    travels to worker processes and Ray tasks as level data) and write their shards into
    ``out``; returns the job's part record (also written to parts/job-<job>.json once its
    shards are complete)."""
    from longpuzzle.agents.datasets.collect import play_episode     # lazy: loaded in the job's worker

    cfg = DatasetConfig.from_dict(config)
    out_p = Path(out)
    t0, c0 = time.perf_counter(), time.thread_time()
    w = StepWriter(out_p, cfg.format, job, cfg.shard_size, png_level=cfg.png_level, columns=columns(cfg.oracle))
    done = []
    try:
        for spec in episodes:
            done.append(play_episode(spec, cfg.settings, w, catalog, oracle=cfg.oracle))
    finally:
        shards = w.close()
    # the job plays and writes in this thread: its CPU time is what the job cost one core
    part = {"job": job, "episodes": done, "shards": shards, "rows": w.rows, "png_deflate": w.deflate,
            "writer_cpu_seconds": round(w.cpu_seconds, 4), "cpu_seconds": round(time.thread_time() - c0, 4),
            "seconds": round(time.perf_counter() - t0, 3), "host": platform.node()}
    _write_json(part_path(out_p, job), part)
    return part


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _kept_part(out: Path, job: int, n_episodes: int) -> dict | None:
    """A finished job's part record if every shard it names is there, unaltered."""
    p = part_path(out, job)
    try:
        part = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if len(part.get("episodes", ())) != n_episodes:
        return None
    for s in part.get("shards", ()):
        f = out / s["file"]
        if not f.is_file() or f.stat().st_size != s["bytes"] or file_sha256(f) != s["sha256"]:
            return None
    return part


def load_plan(out: Path) -> DatasetConfig:
    p = Path(out) / PLAN_FILE
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except OSError:
        raise DatasetError(f"{out} is not a dataset folder (no {PLAN_FILE}); --resume needs the folder "
                           "of an earlier dataset run") from None
    except json.JSONDecodeError:
        raise DatasetError(f"{p} is not valid JSON") from None
    if d.get("format") in FORMATS and d.get("format") != FORMAT:
        # its finished jobs' rows hold another frame hash than this version would write
        raise DatasetError(f"{p}: a {d['format']} plan, from an older longpuzzle: finish it with that version, "
                           "or start the dataset again in a new folder")
    if d.get("format") != FORMAT:
        raise DatasetError(f"{p}: not a {FORMAT} plan")
    return DatasetConfig.from_dict(d["config"])


def build(out: str | Path, config: DatasetConfig | None = None, *, backend=None, resume: bool = False,
          on_job=None, catalog: Catalog | None = None) -> dict:
    """Write (or, with ``resume``, finish) the dataset of ``config`` in ``out``; returns the
    manifest. ``backend``: an agents.runner Backend (default sequential); ``on_job(part)``:
    called as each job finishes. The episodes play the config's catalogue; a resumed dataset
    goes on with the one its plan records (``catalog`` when it is that one, else the stored
    snapshot of its name, checked by hash: replay.recorded_catalog)."""

    out = Path(out)
    if resume:
        config = load_plan(out)
    elif config is None:
        raise DatasetError("build needs a config (or resume=True)")
    elif (out / PLAN_FILE).exists() or (out / MANIFEST_FILE).exists():
        raise DatasetError(f"{out} already holds a dataset: choose another --out, or --resume it")
    cat = config.source or recorded_catalog(config.catalog, catalog)
    return _build(out, config, backend, resume, on_job, cat)


def _build(out: Path, config: DatasetConfig, backend, resume: bool, on_job, cat: Catalog) -> dict:
    jobs = config.job_plan()
    out.mkdir(parents=True, exist_ok=True)
    if not resume:
        _write_json(out / PLAN_FILE, {"format": FORMAT, "frame_hash": FRAME_HASH, "config": config.as_dict(),
                                       "jobs": [[e["id"] for e in eps] for eps in jobs]})
    parts: dict[int, dict] = {}
    todo = []
    for j, eps in enumerate(jobs):
        kept = _kept_part(out, j, len(eps)) if resume else None
        if kept is not None:
            parts[j] = kept
        else:
            todo.append((j, run_job, (config.as_dict(), j, eps, str(out), cat)))
    backend = backend or SequentialBackend()
    if hasattr(backend, "output"):
        backend.output(out)
    t0 = time.perf_counter()

    def done(key, part):
        parts[key] = part
        if on_job is not None:
            on_job(part)
    if todo:
        backend.run(todo, done)
    manifest = make_manifest(out, config, [parts[j] for j in range(len(jobs))], time.perf_counter() - t0, cat)
    _write_json(out / MANIFEST_FILE, manifest)
    return manifest


def make_manifest(out: Path, config: DatasetConfig, parts: list[dict], seconds: float, cat: Catalog) -> dict:
    episodes = [e for p in parts for e in p["episodes"]]
    shards = [s for p in parts for s in p["shards"]]
    rows = sum(s["rows"] for s in shards)
    by_obj: dict[str, dict] = {}
    for e in episodes:
        o = by_obj.setdefault(e["objective"], {"episodes": 0, "rows": 0, "solved_levels": 0, "target_levels": 0})
        o["episodes"] += 1
        o["rows"] += e["rows"]
        o["solved_levels"] += e["solved_levels"]
        o["target_levels"] += e["target_levels"]
    levels = {}
    for o in config.objectives:
        for lid in cat.objective(o).level_ids:
            levels[lid] = cat.level(lid).sha256
    cpu = sum(p.get("writer_cpu_seconds", 0.0) for p in parts)
    job_cpu = sum(p.get("cpu_seconds", 0.0) for p in parts)          # (parts of older jobs lack it)
    return {
        "format": FORMAT, "longpuzzle": __version__, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": config.as_dict(), "shard_format": config.format, "frame_hash": FRAME_HASH,
        "conventions": list(CONVENTIONS), "schema": schema_doc(config.oracle),
        "counts": {"rows": rows, "episodes": len(episodes), "shards": len(shards),
                   "bytes": sum(s["bytes"] for s in shards), "objectives": by_obj,
                   "detours": sum(e["detours"] for e in episodes), "restarts": sum(e["restarts"] for e in episodes),
                   "ends": _count(e["end"] for e in episodes)},
        "png_deflate": png_deflates(parts),
        "catalogue": {**(config.catalog or cat.identity()), "levels": levels},
        "shards": shards, "episodes": episodes,
        "timing": {"seconds": round(seconds, 3), "writer_cpu_seconds": round(cpu, 3),
                   "rows_per_writer_cpu_second": round(rows / cpu) if cpu > 0 else None,
                   "cpu_seconds": round(job_cpu, 3),
                   "rows_per_cpu_second": round(rows / job_cpu) if job_cpu > 0 else None},
    }


def png_deflates(parts: list[dict]) -> list[dict]:
    """The deflates the jobs' PNGs were made with (deflate.Deflate.record), each with its jobs:
    one, unless jobs ran where zlib-ng was another version or missing (a resumed dataset,
    a cluster). A job's shards have the same bytes again given the same deflate; their
    pixels are the same whatever it is."""
    out: list[dict] = []
    for p in parts:
        rec = p.get("png_deflate") or {"library": "unrecorded"}      # (parts of older jobs lack it)
        for d in out:
            if {k: v for k, v in d.items() if k != "jobs"} == rec:
                d["jobs"].append(p["job"])
                break
        else:
            out.append({**rec, "jobs": [p["job"]]})
    return out


def _count(values) -> dict:
    out: dict = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def read_manifest(folder: str | Path) -> dict:
    p = Path(folder) / MANIFEST_FILE
    try:
        m = json.loads(p.read_text(encoding="utf-8"))
    except OSError:
        raise DatasetError(f"{folder} has no {MANIFEST_FILE} (an unfinished dataset: --resume it)") from None
    except json.JSONDecodeError:
        raise DatasetError(f"{p} is not valid JSON") from None
    if m.get("format") not in FORMATS:
        raise DatasetError(f"{p}: not a manifest of {' or '.join(FORMATS)}")
    return m
