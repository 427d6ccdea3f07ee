"""Snapshots of the suite, a part without state of its own: the exact app as JSON text
(snapshot, snapshot_fields) and back (restore), the checks a restored snapshot passes
(_check_*), encode_snapshot, and the pointer's JSON form (_jsonable / _unjson: NaN as null).
Suite.snapshot / snapshot_fields / restore are these functions."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from longpuzzle.engine.catalog import Catalog
from longpuzzle.engine.errors import CheckpointError, LongPuzzleError
from longpuzzle.engine.protocol import canonical_json
from longpuzzle.engine.session import Session
from longpuzzle.engine.textio import loads

if TYPE_CHECKING:
    from longpuzzle.engine.suite.app import Suite

SNAPSHOT_FORMAT = "longpuzzle-suite/1"


def snapshot(suite: Suite) -> str:
    """The exact app as JSON text."""
    return encode_snapshot(snapshot_fields(suite), suite.session.checkpoint() if suite.session else None)


def snapshot_fields(suite: Suite) -> dict:
    """The snapshot's body but its session and checksum, as plain data (the app's screen,
    UI state, pointer, transient feedback, animations and clock; containers are the
    suite's own, to be encoded at once): ``encode_snapshot(fields, checkpoint)`` is
    ``snapshot()``."""
    body = {
        "format": SNAPSHOT_FORMAT,
        "style": suite.style, "scale": suite.scale, "direct": suite.direct, "action_gap_ms": suite.action_gap_ms,
        "clock": suite.clock, "screen": suite.screen, "complete": suite.complete,
        "ui": suite.ui, "pointer": _jsonable(suite.pointer), "toast": suite.toast, "shake": suite.shake,
        "anims": [{**a, "before": [int(v) for v in a["before"]]} for a in suite.anims],
    }
    if suite.viewport is not None:
        body["viewport"] = list(suite.viewport)
    if suite.lang != "en":               # (absent: English, as every snapshot before languages)
        body["lang"] = suite.lang
    # the clock's own next step and the game's limits, where a level has them (absent: none,
    # as in every snapshot before them)
    if suite.timer is not None:
        body["timer"] = suite.timer
    if suite.limits is not None:
        body["limits"] = suite.limits
    if suite.failed is not None:
        body["failed"] = suite.failed
    return body


def restore(cls: type, text: str, catalog: Catalog | None = None) -> Suite:
    """The Suite (of class ``cls``) a snapshot() text describes, its level ids those of
    ``catalog`` (default: the built-in catalogue); CheckpointError for anything that is not
    exactly a snapshot this suite could have written."""
    try:
        body = loads(text, CheckpointError, "the suite snapshot")
    except (json.JSONDecodeError, TypeError) as e:
        raise CheckpointError(f"suite snapshot is not valid JSON: {e}") from None
    if not isinstance(body, dict) or body.get("format") != SNAPSHOT_FORMAT:
        raise CheckpointError(f"not a suite snapshot (expected format {SNAPSHOT_FORMAT!r})")
    chk = body.pop("checksum", None)
    if chk != hashlib.sha256(canonical_json(body).encode()).hexdigest():
        raise CheckpointError("suite snapshot checksum does not match its content")
    try:
        missing = [k for k in ("style", "scale", "direct", "action_gap_ms", "clock", "screen", "complete",
                               "session", "ui", "pointer", "toast", "shake", "anims") if k not in body]
        if missing:
            raise CheckpointError(f"suite snapshot is missing {', '.join(missing)}")
        vp = body.get("viewport")
        if type(body["direct"]) is not bool or not _int_in(body["action_gap_ms"], 0, 60_000) \
                or (vp is not None and type(vp) is not list):
            raise CheckpointError("suite snapshot: direct, action_gap_ms or viewport has the wrong type")
        s = cls("home", style=body["style"], scale=body["scale"], direct=body["direct"],
                action_gap_ms=body["action_gap_ms"], viewport=None if vp is None else tuple(vp),
                lang=body.get("lang", "en"), catalog=catalog)
        s.screen = _check_screen(body["screen"], s.catalog)
        if body["session"] is not None:
            if type(body["session"]) is not str:
                raise CheckpointError("suite snapshot: the session is not a checkpoint text")
            s.session = Session.from_checkpoint(body["session"], catalog=s.catalog)
        if (s.screen["name"] == "level") != (s.session is not None) or (
                s.session is not None and s.session.level.id != s.screen.get("level")):
            raise CheckpointError("suite snapshot: screen and session disagree")
        if not _int_in(body["clock"], 0, MAX_CLOCK):
            raise CheckpointError(f"suite snapshot: clock must be whole ms from 0 to {MAX_CLOCK}")
        s.clock = body["clock"]
        if type(body["complete"]) is not bool or (body["complete"] and not (s.session is not None
                                                                           and s.session.solved)):
            raise CheckpointError("suite snapshot: 'complete' says the level is won, but its board is not "
                                  "solved")
        s.complete = body["complete"]
        u = s.game_ui() if s.session is not None else None
        why = u.check_ui(body["ui"]) if u is not None else ("" if body["ui"] == {} else "the UI state of a "
                                                            "menu screen must be empty")
        if why:
            raise CheckpointError(f"suite snapshot: {why}")
        s.ui = body["ui"]
        s.input.state = _check_pointer(body["pointer"])
        s.toast = _check_transient(body["toast"], "toast", "text")
        s.shake = _check_transient(body["shake"], "shake", "target")
        s.anims = _check_anims(body["anims"], s)
        s.timer, s.limits, s.failed = _check_clocked(body, s)
        s.game_limits_on = not s.direct or s.limits is not None     # (a direct launch that runs them)
    except CheckpointError:
        raise
    except LongPuzzleError as e:          # a style, scale or viewport that cannot be used
        raise CheckpointError(f"suite snapshot: {e}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
        raise CheckpointError(f"suite snapshot is malformed: {type(e).__name__}: {str(e)[:200]}") from None
    return s


MAX_CLOCK = 2 ** 53                 # ms on the virtual clock a snapshot may claim


def _check_clocked(body: dict, s) -> tuple:
    """(timer, limits, failed) of a snapshot: each absent, or what the screen can have."""
    timer, limits, failed = body.get("timer"), body.get("limits"), body.get("failed")
    level = s.screen["name"] == "level"
    if timer is not None and not (type(timer) is dict and set(timer) == {"at", "then"} and timer["then"] == "next"
                                  and _int_in(timer["at"], 0, MAX_CLOCK) and level and s.complete):
        raise CheckpointError("suite snapshot: the timer is not an auto-advance of a won level")
    if limits is not None:
        from longpuzzle.engine.suite.game_limits import check
        cfg = s.game_ui().limits if level else None
        if cfg is None or not check(limits, cfg):
            raise CheckpointError("suite snapshot: the game limits' state is malformed or the level has none")
    if failed is not None and not (isinstance(failed, str) and len(failed) < 64 and level and limits is not None
                                   and not s.complete):
        raise CheckpointError("suite snapshot: 'failed' is not a failure of a level with limits")
    return timer, limits, failed


def _int_in(v: Any, lo: int, hi: int) -> bool:
    return type(v) is int and lo <= v <= hi


def _num_or_nan(v: Any) -> bool:
    return v is None or (type(v) in (int, float) and (v != v or -1e9 < v < 1e9))


def _check_screen(screen: Any, catalog: Catalog) -> dict:
    if type(screen) is not dict:
        raise CheckpointError("suite snapshot: the screen is not an object")
    name = screen.get("name")
    keys = {"home": {"name"}, "difficulty": {"name", "game"}, "level": {"name", "level"}}.get(name)
    if keys is None or set(screen) != keys:
        raise CheckpointError(f"suite snapshot: unknown screen {str(screen)[:80]}")
    if name == "difficulty":
        g = screen["game"]
        if type(g) is not str or g not in catalog.games() or len(catalog.objectives(g)) < 2:
            raise CheckpointError(f"suite snapshot: no difficulty screen for game {str(g)[:40]!r}")
    if name == "level" and type(screen["level"]) is not str:
        raise CheckpointError("suite snapshot: the level of the screen is not a level id")
    return dict(screen)


POINTER_KEYS = {"down": bool, "x": "num", "y": "num", "x0": "num", "y0": "num", "t0": int, "target": "text",
                "button": bool, "locked": bool}


def _check_pointer(p: Any) -> dict:
    """The pointer of a snapshot: released ({"down": false[, "x", "y"]}) or pressed with
    every field of _down(); values of the right types (NaN as null)."""
    bad = CheckpointError("suite snapshot: the pointer is malformed")
    if type(p) is not dict or type(p.get("down")) is not bool or not set(p) <= set(POINTER_KEYS):
        raise bad
    need = set(POINTER_KEYS) if p["down"] else {"down"}
    if not need <= set(p) or (not p["down"] and set(p) - {"down", "x", "y"}):
        raise bad
    for k, v in p.items():
        t = POINTER_KEYS[k]
        ok = (_num_or_nan(v) if t == "num" else v is None or (type(v) is str and len(v) <= 200) if t == "text"
              else _int_in(v, -MAX_CLOCK, MAX_CLOCK) if t is int else type(v) is t)
        if not ok:
            raise CheckpointError(f"suite snapshot: pointer field {k!r} has the wrong type or value")
    return _unjson(p)


def _check_transient(v: Any, what: str, text_key: str) -> dict | None:
    if v is None:
        return None
    if type(v) is not dict or set(v) != {text_key, "t0", "until"} or type(v[text_key]) is not str \
            or len(v[text_key]) > 500 or not _int_in(v["t0"], 0, MAX_CLOCK) or not _int_in(v["until"], 0, MAX_CLOCK):
        raise CheckpointError(f"suite snapshot: the {what} is malformed")
    return dict(v)


def _check_anims(anims: Any, s: Suite) -> list[dict]:
    if type(anims) is not list or len(anims) > 1000:
        raise CheckpointError("suite snapshot: anims must be a list")
    if s.session is None:
        return []                      # (older snapshots kept those of a level left; none are shown)
    out = []
    lvl, p = s.session.level, s.session.puzzle
    for a in anims:
        if type(a) is not dict or set(a) != {"kind", "t0", "t1", "action", "code", "before"} or a["kind"] != "move" \
                or not _int_in(a["t0"], 0, MAX_CLOCK) or not _int_in(a["t1"], a["t0"], MAX_CLOCK) \
                or not _int_in(a["action"], 0, lvl.n_actions - 1) or not _int_in(a["code"], 0, 2 ** 31):
            raise CheckpointError("suite snapshot: an animation record is malformed")
        try:
            before = p.validate_state(lvl, a["before"])
        except ValueError as e:
            raise CheckpointError(f"suite snapshot: an animation's state is malformed: {e}") from None
        out.append({**a, "before": before})
    return out


def encode_snapshot(fields: dict, session: str | None) -> str:
    """The snapshot text of ``fields`` (Suite.snapshot_fields) and the session's checkpoint
    text (None: no session), exactly as Suite.snapshot writes it."""
    body = {}
    for k, v in fields.items():
        if k != "checksum":
            body[k] = v
        if k == "complete":
            body["session"] = session
    body["checksum"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
    return json.dumps(body)


def _jsonable(d: dict) -> dict:
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in d.items()}


def _unjson(d: dict) -> dict:
    return {k: (float("nan") if v is None and k in ("x", "y") else v) for k, v in d.items()}
