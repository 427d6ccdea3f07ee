"""Tampered run folders (issue 35): a genuine run changed in one place must be refused by its
verification (verify.check_run: every episode replayed, run.json and summary.json
recomputed), never accepted and never crash.

The single-field tamperings of run A, each applied to a fresh copy of it: every field of an
episode header (changed, deleted) and one it never has; every field of each kind of record
(a dispatched action's public record, its private record, the end record); every field of
result.json, of summary.json (and of its metrics), of run.json (and of its settings); the
stored frames (a byte, a cut, a header claiming a huge frame); a truncation of the events, a
reordering, a record inserted; a duplicated episode with run.json's count raised; an episode
copied from another run (B) of the same settings.

    a, b = make_runs(folder)                    two genuine runs, quickly (the solver agent)
    for name, tamper in tamperings(a, b): ...   tamper(copy_of_a) changes the copy in place
    report = run_checks(folder)                 every tampering checked (``longpuzzle soak --results``)

Fields that only record real time and are read by nothing (RECORDED_TIMINGS) cannot be
recomputed; they are left out, and docs/guides/evaluating-agents.md ("What a replay proves") says so.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from collections.abc import Callable, Iterator

EPISODE = "maze_paint_easy/episode_001"
OTHER = "maze_paint_easy/episode_002"
# a dispatched action's own real time: checked for form only (a finite number of seconds),
# read by no report; the agent's time is checked against result.json's time, this is not
RECORDED_TIMINGS = ("t_dispatch",)
# run.json fields that say how to run the agent again, which no episode records: the seed of
# a random agent, a model agent's options and model, an agent file's sandbox
# (and, in an objective run, the level protocol's chain mode); how often an unscored episode
# is run again (an episode that ended unscored is checked against it, a run without one
# cannot state it)
RUN_ONLY = ("seed", "agent_options", "agent_file", "model", "mode", "infra_retries")


def make_runs(folder: str | Path, max_actions: int = 8) -> tuple[Path, Path]:
    """Two genuine runs of the solver on maze_paint/easy: A with two episodes, B with one."""
    from longpuzzle.agents.harness import Settings
    from longpuzzle.agents.runner import RunConfig, SequentialBackend, execute, start_run

    out = []
    for name, n in (("a", 2), ("b", 1)):
        d = Path(folder) / name
        run = RunConfig(agent="solver", objectives=["maze_paint/easy"], episodes=n,
                        settings=Settings(max_actions=max_actions, action_timeout=None).as_dict())
        start_run(d, run)
        execute(d, run, backend=SequentialBackend(), quiet=True)
        out.append(d)
    return out[0], out[1]


# ---- editing a folder ------------------------------------------------------------------------

def _lines(p: Path) -> list[dict]:
    return [json.loads(l) for l in p.read_text(encoding="utf-8").splitlines() if l.strip()]


def _write_lines(p: Path, recs: list[dict]) -> None:
    p.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs), encoding="utf-8")


def edit_events(ep: str, which: Callable[[list[dict]], int], change: Callable[[dict], None]):
    """A tampering: ``change`` the record at index ``which(records)`` of episode ``ep``."""
    def tamper(d: Path) -> None:
        p = d / ep / "events.jsonl"
        recs = _lines(p)
        change(recs[which(recs)])
        _write_lines(p, recs)
    return tamper


def edit_json(rel: str, change: Callable[[dict], None]):
    def tamper(d: Path) -> None:
        p = d / rel
        doc = json.loads(p.read_text(encoding="utf-8"))
        change(doc)
        p.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return tamper


def changed(v, key: str = ""):
    """A different value of the same kind as ``v`` (a plausible forgery)."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        # a coordinate moved far (one moved a pixel may do exactly the same: the record is
        # then still true of what was done)
        return v // 7 if key in ("x", "y") else v + 1
    if isinstance(v, float):
        return v + 0.5 if v < 1e6 else v / 2
    if isinstance(v, str):
        return {"format": "longpuzzle-episode/2", "protocol": "level", "objective": "maze_paint/medium",
                "frame_hash": "xxh3-128", "end": "infrastructure_error", "agent": "random",
                "style": "3d", "lang": "zh",
                "invalid_action_policy": "watchdog" if v == "dispatch_failed" else "dispatch_failed"}.get(key, v + "x")
    if v is None:
        return 1 if key != "viewport" else [1280, 900]
    if isinstance(v, list):
        return v[1:] if v else [0]
    if isinstance(v, dict):
        if not v:
            return {"x": 1}
        k = sorted(v)[0]
        return {**v, k: changed(v[k], k)}
    return v


def _set(path: list, value_of: Callable):
    def change(doc: dict) -> None:
        for k in path[:-1]:
            doc = doc[k]
        doc[path[-1]] = value_of(doc[path[-1]], path[-1])
    return change


def _delete(path: list):
    def change(doc: dict) -> None:
        for k in path[:-1]:
            doc = doc[k]
        del doc[path[-1]]
    return change


def _fields(doc: dict, prefix: list, deep: tuple[str, ...] = ()) -> Iterator[list]:
    """The paths of every field of ``doc``, and of the fields of its dict fields in ``deep``."""
    for k in doc:
        yield prefix + [k]
        if k in deep and isinstance(doc[k], dict):
            for kk in doc[k]:
                yield prefix + [k, kk]


# ---- the tamperings ------------------------------------------------------------------------------

def tamperings(a: Path, b: Path) -> Iterator[tuple[str, Callable[[Path], None]]]:
    """(name, tamper) for every single-field change of run A (module doc); tamper(d) changes
    a copy ``d`` of run A in place."""
    recs = _lines(a / EPISODE / "events.jsonl")
    # the header: every field changed and deleted, one added; the start swapped for a level's
    head = recs[0]
    for path in _fields(head, [], deep=("settings", "catalog", "evaluator_start", "planned")):
        if path[0] == "type":
            continue
        yield f"header {'.'.join(path)} changed", edit_events(EPISODE, lambda r: 0, _set(path, changed))
        if len(path) == 1 or path[0] == "settings":
            yield f"header {'.'.join(path)} deleted", edit_events(EPISODE, lambda r: 0, _delete(path))
    yield "header evaluator_start all won", edit_events(EPISODE, lambda r: 0, _all_won)
    yield "header start on a level", edit_events(EPISODE, lambda r: 0, _start_on_level)
    yield "header extra field", edit_events(EPISODE, lambda r: 0, _add("extra", 1))
    # each kind of record: every field changed, deleted, one added
    kinds = {
        "public": lambda r: next(i for i, x in enumerate(r) if x.get("stream") == "public" and x.get("step") == 3),
        "private": lambda r: next(i for i, x in enumerate(r) if x.get("stream") == "private" and x.get("step") == 3),
        "end": lambda r: next(i for i, x in enumerate(r) if x.get("type") == "end"),
    }
    for kind, which in kinds.items():
        rec = recs[which(recs)]
        for path in _fields(rec, [], deep=("feedback", "record", "action", "result", "suite")):
            if path[-1] in ("stream", "type") or path[-1] in RECORDED_TIMINGS:
                continue
            yield f"{kind} record {'.'.join(path)} changed", edit_events(EPISODE, which, _set(path, changed))
            if len(path) == 1 or (kind == "private" and path[0] == "record"):
                yield f"{kind} record {'.'.join(path)} deleted", edit_events(EPISODE, which, _delete(path))
        yield f"{kind} record extra field", edit_events(EPISODE, which, _add("extra", 1))
    yield "private record effects emptied (the analytics read them)", edit_events(
        EPISODE, _last_with_effects, lambda r: r["record"].__setitem__("effects", []))
    yield "end changed to infrastructure_error, result.json made to match", _end_unscored
    # result.json, summary.json, run.json: every field (and those of their parts)
    res = json.loads((a / EPISODE / "result.json").read_text(encoding="utf-8"))
    for path in _fields(res, [], deep=("time", "rules", "metrics", "catalog", "agent_isolation")):
        yield f"result.json {'.'.join(path)} changed", edit_json(f"{EPISODE}/result.json", _set(path, changed))
        if len(path) == 1:
            yield f"result.json {'.'.join(path)} deleted", edit_json(f"{EPISODE}/result.json", _delete(path))
    yield "result.json levels[0].moves changed", edit_json(f"{EPISODE}/result.json", _level_moves)
    yield "result.json extra field", edit_json(f"{EPISODE}/result.json", _add("extra", 1))
    summ = json.loads((a / "summary.json").read_text(encoding="utf-8"))
    for path in _fields(summ, [], deep=("metrics", "catalog", "settings")):
        yield f"summary.json {'.'.join(path)} changed", edit_json("summary.json", _set(path, changed))
    yield "summary.json OSR, LC, FGP 100", edit_json("summary.json", _all_100)
    runj = json.loads((a / "run.json").read_text(encoding="utf-8"))
    for path in _fields(runj["run"], ["run"], deep=("settings", "catalog")):
        if path[1] in RUN_ONLY:
            continue
        yield f"run.json {'.'.join(path)} changed", edit_json("run.json", _set(path, changed))
    yield "run.json agent renamed", edit_json("run.json", lambda d: d["run"].__setitem__("agent", "greedy"))
    yield "run.json plan changed", edit_json("run.json", lambda d: d["plan"].pop())
    yield "a duplicated episode, run.json's count raised", _duplicate
    yield "an episode copied from another run", lambda d: _copy_from(d, b)
    yield "an episode's copy filed as another, one real-time value changed", copy_as_other
    yield "an episode filed under another objective", _misfiled
    yield "a stray episode folder", lambda d: shutil.copytree(d / EPISODE, d / "maze_paint_easy" / "extra_001")
    # frames, truncation, reordering
    yield "a stored frame's byte flipped", _flip_frame_byte
    yield "the stored frames cut short", lambda d: _cut(d / EPISODE / "frames.lpf", 0.6)
    yield "the frame file claims 32768 x 32768", _huge_frames
    yield "events.jsonl truncated (result.json kept)", _truncate_events
    yield "two actions swapped", _swap_actions
    yield "a private record moved before its action", _move_private
    yield "a final answer inserted", _insert_final
    yield "an action inserted after the end", _append_after_end
    yield "a huge events line", _huge_line




def _add(k: str, v):
    return lambda doc: doc.__setitem__(k, v)


def _all_won(head: dict) -> None:
    for o in head["evaluator_start"].values():
        o.update(reached=True, won=True, max_P=1.0)


def _start_on_level(head: dict) -> None:
    from longpuzzle.engine.suite import Suite
    head["start"] = Suite("maze_paint/easy/1", direct=True).snapshot()


def _last_with_effects(recs: list[dict]) -> int:
    return max(i for i, r in enumerate(recs) if r.get("stream") == "private" and r["record"].get("effects"))


def _level_moves(res: dict) -> None:
    res["levels"][0]["moves"] = (res["levels"][0].get("moves") or 0) + 1


def _all_100(s: dict) -> None:
    s["metrics"].update(OSR=100.0, LC=100.0, FGP=100.0)


def _end_unscored(d: Path) -> None:
    """The end changed to infrastructure_error everywhere it is written, result.json made
    unscored to match."""
    p = d / EPISODE / "events.jsonl"
    recs = _lines(p)
    recs[-1]["end"] = recs[-1]["result"]["end"] = "infrastructure_error"
    recs[-1]["error"] = "ConnectionError: the provider went away"
    _write_lines(p, recs)
    rp = d / EPISODE / "result.json"
    res = json.loads(rp.read_text(encoding="utf-8"))
    res.update(end="infrastructure_error", scored=False, error=recs[-1]["error"])
    rp.write_text(json.dumps(res, indent=1), encoding="utf-8")


def _duplicate(d: Path) -> None:
    """A copy of an episode added as a third one, run.json's count (and plan) raised."""
    shutil.copytree(d / EPISODE, d / "maze_paint_easy" / "episode_003")
    res = json.loads((d / EPISODE / "result.json").read_text(encoding="utf-8"))
    res["folder"] = "maze_paint_easy/episode_003"
    (d / "maze_paint_easy" / "episode_003" / "result.json").write_text(json.dumps(res), encoding="utf-8")
    doc = json.loads((d / "run.json").read_text(encoding="utf-8"))
    doc["run"]["episodes"] = 3
    doc["plan"].append({"objective": "maze_paint/easy", "episode": 2, "folder": "maze_paint_easy/episode_003"})
    (d / "run.json").write_text(json.dumps(doc), encoding="utf-8")


def _copy_from(d: Path, b: Path) -> None:
    shutil.rmtree(d / OTHER)
    shutil.copytree(b / EPISODE, d / OTHER)
    res = json.loads((d / OTHER / "result.json").read_text(encoding="utf-8"))
    res["folder"] = OTHER
    (d / OTHER / "result.json").write_text(json.dumps(res, indent=1), encoding="utf-8")


def copy_as_other(d: Path) -> None:
    """What a forger does to file episode 1 again as episode 2: its folder copied over, the
    folder result.json names edited, one real-time value (unverifiable) changed so that no
    file is a byte copy."""
    shutil.rmtree(d / OTHER)
    shutil.copytree(d / EPISODE, d / OTHER)
    res = json.loads((d / OTHER / "result.json").read_text(encoding="utf-8"))
    res["folder"] = OTHER
    (d / OTHER / "result.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    recs = _lines(d / OTHER / "events.jsonl")
    i = next(i for i, r in enumerate(recs) if "t_dispatch" in r)
    recs[i]["t_dispatch"] += 0.001
    _write_lines(d / OTHER / "events.jsonl", recs)


def _misfiled(d: Path) -> None:
    """The run's episode 2 moved under another objective's folder name."""
    (d / "maze_paint_hard").mkdir()
    shutil.move(d / OTHER, d / "maze_paint_hard" / "episode_002")


def _flip_frame_byte(d: Path) -> None:
    p = d / EPISODE / "frames.lpf"
    b = bytearray(p.read_bytes())
    b[len(b) // 2] ^= 0x55
    p.write_bytes(bytes(b))


def _cut(p: Path, share: float) -> None:
    data = p.read_bytes()
    p.write_bytes(data[:int(len(data) * share)])


def _huge_frames(d: Path) -> None:
    """The frame file's header made to claim 32768 x 32768 (its records left as they are)."""
    from longpuzzle.agents.harness.frames import FILE_HEAD
    p = d / EPISODE / "frames.lpf"
    data = bytearray(p.read_bytes())
    magic, version, h, w, c = FILE_HEAD.unpack(bytes(data[:FILE_HEAD.size]))
    data[:FILE_HEAD.size] = FILE_HEAD.pack(magic, version, 32768, 32768, c)
    p.write_bytes(bytes(data))


def _truncate_events(d: Path) -> None:
    p = d / EPISODE / "events.jsonl"
    recs = _lines(p)
    _write_lines(p, recs[:5] + recs[-1:])


def _swap_actions(d: Path) -> None:
    p = d / EPISODE / "events.jsonl"
    recs = _lines(p)
    pub = [i for i, r in enumerate(recs) if r.get("stream") == "public"]
    i, j = pub[2], pub[3]
    recs[i]["action"], recs[j]["action"] = recs[j]["action"], recs[i]["action"]
    _write_lines(p, recs)


def _move_private(d: Path) -> None:
    p = d / EPISODE / "events.jsonl"
    recs = _lines(p)
    i = next(k for k, r in enumerate(recs) if r.get("stream") == "private" and r.get("step") == 3)
    recs.insert(i - 1, recs.pop(i))
    _write_lines(p, recs)


def _insert_final(d: Path) -> None:
    p = d / EPISODE / "events.jsonl"
    recs = _lines(p)
    n = sum(1 for r in recs if r.get("stream") == "public")
    recs.insert(len(recs) - 1, {"stream": "public", "step": n + 1, "final_answer": "done"})
    _write_lines(p, recs)


def _append_after_end(d: Path) -> None:
    p = d / EPISODE / "events.jsonl"
    recs = _lines(p)
    _write_lines(p, recs + [recs[1]])


def _huge_line(d: Path) -> None:
    """A line of 40 MB in the events (a forged action's text)."""
    p = d / EPISODE / "events.jsonl"
    recs = _lines(p)
    with open(p, "w", encoding="utf-8") as f:
        f.write(json.dumps(recs[0]) + "\n")
        f.write('{"stream":"tools","note":"' + "x" * 40_000_000 + '"}\n')
        for r in recs[1:]:
            f.write(json.dumps(r) + "\n")


# ---- checking them ---------------------------------------------------------------------------------

def check_tampering(a: Path, work: Path, name: str, tamper: Callable[[Path], None]) -> str:
    """Apply one tampering to a fresh copy of run A in ``work``; "" when the verification
    refuses it, else what went wrong (accepted, or a crash)."""
    from longpuzzle.agents.harness import HarnessError
    from longpuzzle.agents.verify import check_run

    d = work / "t"
    if d.exists():
        shutil.rmtree(d)
    shutil.copytree(a, d)
    (d / "verified.json").unlink(missing_ok=True)
    try:
        tamper(d)
    except Exception as e:  # noqa: BLE001 - a tampering that does not apply is the battery's own bug
        return f"the tampering could not be applied: {type(e).__name__}: {e}"
    try:
        chk = check_run(d, use_record=False)
    except HarnessError:
        return ""
    except Exception as e:  # noqa: BLE001 - anything else is a crash
        return f"crashed: {type(e).__name__}: {e}"
    return "" if not chk.ok else "accepted"


def run_checks(folder: str | Path, seed: int = 0, sample: int | None = None) -> dict:
    """Make runs A and B in ``folder`` and check every tampering of A (``sample``: that many,
    drawn with ``seed``); {"checked", "refused", "failures": [{"what", "error"}]}."""
    folder = Path(folder)
    a, b = make_runs(folder / "genuine")
    items = list(tamperings(a, b))
    if sample is not None and sample < len(items):
        items = random.Random(seed).sample(items, sample)
    out = {"checked": 0, "refused": 0, "failures": []}
    for name, tamper in items:
        why = check_tampering(a, folder, name, tamper)
        out["checked"] += 1
        if why:
            out["failures"].append({"what": name, "error": why})
        else:
            out["refused"] += 1
    return out
