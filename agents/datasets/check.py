"""Checking a dataset against its manifest and against a replay of its episodes.

    shards     every shard the manifest names exists with its recorded size, SHA-256 and
               row count
    frames     every row's PNG decodes (Pillow) to a frame of the recorded size whose pixel
               hash is the recorded ``frame_hash`` (by the hash the manifest names:
               schema.manifest_frame_hash, every frame hashed in full)
    replay     every episode is played again from a fresh suite: the opening wait, then each
               row's action; before it the screen must be the row's frame (by hash), after it
               the moves made, P, the solved state and the next frame must be the row's.
               (An episode that ended at its budget may have had its last action cut at the
               deadline: its last row's after-state is not compared.) A dataset built with
               ``oracle`` has its oracle columns computed again from the replayed boards.
    deflate    the PNGs' deflate the manifest records (``png_deflate``: library, version,
               level, jobs; absent in manifests written before it was recorded) is in the
               report; a level other than the settings' ``png_level`` is a problem
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from longpuzzle.agents.harness.frames import FrameStoreError, hasher
from longpuzzle.agents.datasets.build import read_manifest
from longpuzzle.agents.media.deflate import DEFAULT_LEVEL
from longpuzzle.agents.media.images import decode_png
from longpuzzle.agents.datasets.schema import manifest_frame_hash
from longpuzzle.agents.datasets.shards import DatasetError, file_sha256, read_rows

MAX_PROBLEMS = 20


class _Replay:
    """One episode played again in a fresh suite."""

    def __init__(self, ep: dict, frame_hash, catalog, oracle: bool = False):
        from longpuzzle.engine.suite import Suite
        from longpuzzle.render.frame import renderer
        vp = tuple(ep["viewport"]) if ep.get("viewport") else None
        self.suite = Suite("home", style=ep["style"], scale=ep["scale"], viewport=vp, catalog=catalog)
        self.rend = renderer(ep["style"], ep["scale"], vp)
        if ep.get("opening") is not None:
            self.suite.dispatch(ep["opening"])
        self.frame_hash = frame_hash
        self.hash = frame_hash(self.rend.render(self.suite))
        self.labels = None
        if oracle:
            from longpuzzle.agents.datasets.oracle_columns import OracleLabels
            self.labels = OracleLabels(catalog)

    def _board(self) -> tuple[str | None, np.ndarray | None]:
        s = self.suite
        if s.session is None or s.screen.get("name") != "level":
            return None, None
        return s.session.level.id, np.array(s.session.state)

    def step(self, action: dict) -> dict:
        lvl, state = self._board() if self.labels is not None else (None, None)
        fb = self.suite.dispatch(action)
        s = self.suite
        on_level = s.session is not None and s.screen.get("name") == "level"
        self.hash = self.frame_hash(self.rend.render(s))
        got = {"moves": fb.moves, "P": s.session.progress if on_level else None,
               "solved": bool(on_level and s.session.solved), "next_frame_hash": self.hash}
        if self.labels is not None:
            got.update(self.labels.row(lvl, state, *self._board(), fb.effects))
        return got


def check_dataset(folder: str | Path, *, replay: bool = True, frames: bool = True, catalog=None) -> dict:
    """Check a dataset folder (module doc); returns a report with ``ok`` and ``problems``.
    The episodes are replayed on the catalogue the manifest names (``catalog``, default the
    built-in one, when its hash matches, else the stored snapshot of that name and version)."""
    from longpuzzle.agents.harness.replay import recorded_catalog

    folder = Path(folder)
    m = read_manifest(folder)
    ident = {k: m.get("catalogue", {}).get(k) for k in ("name", "version", "hash")}
    return _check(folder, m, replay, frames, recorded_catalog(ident if ident["hash"] else None, catalog))


def _check(folder: Path, m: dict, replay: bool, frames: bool, cat) -> dict:
    problems: list[str] = []
    try:
        frame_hash = hasher(manifest_frame_hash(m))
    except FrameStoreError as e:
        raise DatasetError(f"{folder}: {e}") from None

    def problem(text: str) -> None:
        if len(problems) < MAX_PROBLEMS:
            problems.append(text)
    episodes = {e["id"]: e for e in m["episodes"]}
    oracle = bool(m.get("settings", {}).get("oracle"))
    replays: dict[str, _Replay] = {}
    next_index: dict[str, int] = {}
    rows = checked_frames = replayed = 0
    for s in m["shards"]:
        f = folder / s["file"]
        if not f.is_file():
            problem(f"{s['file']}: missing")
            continue
        if f.stat().st_size != s["bytes"] or file_sha256(f) != s["sha256"]:
            problem(f"{s['file']}: its content is not what the manifest recorded (size or SHA-256)")
            continue
        n = 0
        try:
            for row in read_rows(f):
                n += 1
                rows += 1
                where = f"{s['file']} row {row['key']}"
                if frames:
                    px = decode_png(row["image"])
                    if px.shape != (row["height"], row["width"], 3) or frame_hash(px) != row["frame_hash"]:
                        problem(f"{where}: the image is not the recorded frame")
                    checked_frames += 1
                if not replay:
                    continue
                ep = episodes.get(row["episode"])
                if ep is None:
                    problem(f"{where}: episode {row['episode']} is not in the manifest")
                    continue
                if next_index.get(row["episode"], 0) != row["index"]:
                    problem(f"{where}: rows of episode {row['episode']} out of order")
                    continue
                next_index[row["episode"]] = row["index"] + 1
                r = replays.get(row["episode"])
                if isinstance(r, _Dead):
                    continue
                if r is None:
                    r = replays[row["episode"]] = _Replay(ep, frame_hash, cat, oracle)
                if r.hash != row["frame_hash"]:
                    problem(f"{where}: the replayed screen before the action is not the row's frame")
                    replays[row["episode"]] = _Dead()
                    continue
                got = r.step(json.loads(row["action"]))
                replayed += 1
                if row["last"] and ep["end"] == "budget":
                    continue
                want = {k: row[k] for k in got}
                if got != want:
                    diff = ", ".join(f"{k}: replay {got[k]!r} vs row {want[k]!r}" for k in got if got[k] != want[k])
                    problem(f"{where}: the replayed action differs ({diff})")
        except DatasetError as e:
            problem(str(e))
            continue
        if n != s["rows"]:
            problem(f"{s['file']}: {n} rows, the manifest says {s['rows']}")
    for eid, e in episodes.items():
        if replay and next_index.get(eid, 0) != e["rows"]:
            problem(f"episode {eid}: {next_index.get(eid, 0)} rows found, the manifest says {e['rows']}")
    if rows != m["counts"]["rows"]:
        problem(f"{rows} rows in the shards, the manifest counts {m['counts']['rows']}")
    deflates = m.get("png_deflate", [])
    for p in _deflate_problems(deflates, m.get("settings", {}).get("png_level", DEFAULT_LEVEL)):
        problem(p)
    return {"folder": str(folder), "ok": not problems, "shards": len(m["shards"]), "rows": rows,
            "episodes": len(episodes), "frames_checked": checked_frames, "actions_replayed": replayed,
            "png_deflate": deflates, "problems": problems}


def _deflate_problems(deflates, level) -> list[str]:
    if not isinstance(deflates, list) or not all(isinstance(d, dict) and "library" in d for d in deflates):
        return ["png_deflate: not a list of deflate records (library, version, level, jobs)"]
    return [f"png_deflate: jobs {d.get('jobs')} were deflated at level {d.get('level')}, the settings say {level}"
            for d in deflates if d["library"] != "unrecorded" and d.get("level") != level]


def describe_deflates(deflates: list[dict]) -> str:
    """The manifest's png_deflate in a line: ``zlib-ng 2.3.3 level 1`` (jobs named when
    several deflates wrote the dataset)."""
    if not deflates:
        return "not recorded"
    parts = []
    for d in deflates:
        text = " ".join(str(d[k]) for k in ("library", "version") if d.get(k) is not None)
        if d.get("level") is not None:
            text += f" level {d['level']}"
        if len(deflates) > 1:
            text += f" (jobs {', '.join(map(str, d.get('jobs', [])))})"
        if d.get("note"):
            text += f" - {d['note']}"
        parts.append(text)
    return "; ".join(parts)


def shard_differences(a: str | Path, b: str | Path, limit: int = 5) -> list[str]:
    """Where two shards of the same rows differ (e.g. a shard written again, or by another
    backend, whose SHA-256 is not the recorded one): up to ``limit`` lines naming the row and
    the field; for ``image``, whether the decoded pixels differ too or only the PNG bytes.
    Empty when every row is equal."""
    out: list[str] = []
    ra, rb = list(read_rows(a)), list(read_rows(b))
    if len(ra) != len(rb):
        out.append(f"{len(ra)} rows against {len(rb)}")
    for x, y in zip(ra, rb):
        for k in x:
            if len(out) >= limit:
                return out
            if x[k] == y.get(k):
                continue
            if k == "image":
                same = np.array_equal(decode_png(x[k]), decode_png(y[k]))
                out.append(f"row {x['key']}: image: {'the PNG bytes only (same pixels)' if same else 'the pixels'}")
            else:
                out.append(f"row {x['key']}: {k}: {x[k]!r} against {y.get(k)!r}")
    return out


class _Dead:
    """An episode whose replay diverged: its later rows are not compared again."""
