"""Mutated level records: every one must be refused by validation (LevelFormatError naming
the file, the level and the field) or work: open on its screen, draw in both styles, and
take GUI actions, without an exception or a hang.

    for rec, what in mutations("nut_and_bolt", n=50, seed=1): ...
    outcome = check_record("nut_and_bolt", rec)        # "refused: ..." | "ok" | raises

:func:`run_checks` runs the checks in a worker process and kills it when one check takes
longer than its timeout (a hang inside compiled or C code cannot be interrupted in-process),
so a hang is reported as a failure naming the mutation.
"""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any
from collections.abc import Iterator

from longpuzzle.engine import gui
from longpuzzle.engine.errors import LevelFormatError
from longpuzzle.engine.registry import get_puzzle
from importlib import resources

MUTANTS: tuple = (None, [], {}, "", "x", "#", 0, 1, 2, 3, -1, -7, 0.5, -0.5, 1e30, -1e30, 10 ** 30, -10 ** 30,
                  1e-300, 10 ** 6, float("nan"), float("inf"), float("-inf"), True, False, [None], [[]], [0, 0],
                  {"a": 1}, "red", [1e30, 1e30], ["x"], 2 ** 31, 2 ** 63)


def _paths(v: Any, path: tuple = ()) -> list[tuple]:
    out = [path] if path else []
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, path + (i,))
    return out


def _get(v, path):
    for p in path:
        v = v[p]
    return v


def mutate(record: dict, rng: random.Random) -> tuple[dict, str]:
    """One random mutation of a level record: a value replaced by an odd one (None, empty,
    NaN, 1e30, a wrong type ...), nudged by one, a key deleted, a list item dropped or
    duplicated. Returns (the mutated copy, what was done)."""
    rec = copy.deepcopy(record)
    paths = _paths(rec)
    path = rng.choice(paths)
    parent, key = _get(rec, path[:-1]), path[-1]
    where = "/".join(map(str, path))
    k = rng.random()
    old = parent[key]
    if k < 0.55:
        new = copy.deepcopy(rng.choice(MUTANTS))
        parent[key] = new
        return rec, f"{where} = {_short(new)}"
    if k < 0.7 and isinstance(old, (int, float)) and not isinstance(old, bool) and math.isfinite(old):
        d = rng.choice((-1, 1)) * (1 if isinstance(old, int) else rng.choice((0.5, 1.0, 100.0)))
        parent[key] = old + d
        return rec, f"{where} {'+' if d > 0 else '-'}= {abs(d)}"
    if k < 0.8:
        if isinstance(parent, dict):
            del parent[key]
            return rec, f"del {where}"
        parent.pop(key)
        return rec, f"drop {where}"
    if k < 0.9 and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(old))
        return rec, f"duplicate {where}"
    if isinstance(old, list) and old:
        rng.shuffle(old)
        return rec, f"shuffle {where}"
    parent[key] = copy.deepcopy(rng.choice(MUTANTS))
    return rec, f"{where} = {_short(parent[key])}"


def _short(v) -> str:
    s = repr(v)
    return s if len(s) < 40 else s[:37] + "..."


def level_records(game: str) -> list[tuple[str, dict]]:
    """(difficulty, record) of every level in the game's built-in level file."""
    doc = json.loads((resources.files("longpuzzle.puzzles") / "levels" / f"{game}.json").read_text(encoding="utf-8"))
    return [(o["difficulty"], r) for o in doc["objectives"] for r in o["levels"]]


def mutations(game: str, n: int, seed: int) -> Iterator[tuple[str, int, dict, str]]:
    """n mutated records of ``game``: (difficulty, number, record, what was done); seeded."""
    rng = random.Random(f"{game}:{seed}")
    recs = level_records(game)
    for _ in range(n):
        i = rng.randrange(len(recs))
        diff, rec = recs[i]
        number = 1 + sum(1 for d, _ in recs[:i] if d == diff)
        m, what = mutate(rec, rng)
        if rng.random() < 0.3:                  # sometimes two mutations at once
            m, w2 = mutate(m, rng)
            what += "; " + w2
        yield diff, number, m, what


def check_record(game: str, record: dict, difficulty: str = "easy", number: int = 1, actions: int = 12,
                 seed: int = 0) -> str:
    """"refused: <message>" when validation refuses the record with file, level and field
    named; "ok" when the level works (session, screen, both styles, GUI actions). Raises on
    anything else (an exception escaping, or a refusal that does not name its field)."""
    from longpuzzle.engine.session import Session

    p = get_puzzle(game)
    text = json.dumps(record)                    # what a level file would hold (NaN allowed, as json does)
    rec = json.loads(text)
    try:
        level = p.build_level(rec, difficulty=difficulty, number=number, where=f"{game}.json")
    except LevelFormatError as e:
        if not (e.file and e.level and e.field):
            raise AssertionError(f"refused without naming file, level and field: {e}") from None
        return f"refused: {e}"
    except Exception as e:
        raise AssertionError(f"validation raised {type(e).__name__}: {e}") from e
    try:
        s = Session(level)
        s.legal_moves()
        _ = s.progress                  # (a property: computed, so that it may fail)
        s.show()
    except Exception as e:
        raise AssertionError(f"the session failed: {type(e).__name__}: {e}") from e
    try:
        exercise_screen(level, actions, seed)
    except Exception as e:
        raise AssertionError(f"the screen failed: {type(e).__name__}: {e}") from e
    return "ok"


def exercise_screen(level, actions: int = 12, seed: int = 0) -> None:
    """Open ``level`` on its screen in both styles, draw it, and dispatch GUI actions (its own
    moves' gestures and random ones), drawing after each; raises on any failure."""
    from longpuzzle.engine.suite import Suite
    from longpuzzle.render.frame import renderer

    rng = random.Random(seed)
    for style in ("2d", "3d"):
        suite = Suite("home", style=style)
        eff = suite.open_level(level)
        if eff.get("effect") == "unavailable":
            return
        rend = renderer(style, 1.0)
        rend.render(suite)
        w, h = suite.frame_size
        for _i in range(actions):
            legal = suite.session.legal_moves() if suite.session is not None and not suite.complete else []
            if legal and rng.random() < 0.6:
                a = suite.gesture_for(rng.choice(legal))
            elif rng.random() < 0.5:
                a = {"type": "click", "x": rng.randrange(w), "y": rng.randrange(h)}
            else:
                a = {"type": "drag", "x0": rng.randrange(w), "y0": rng.randrange(h), "x1": rng.randrange(w),
                     "y1": rng.randrange(h), "steps": 6, "ms": 200}
            try:
                suite.dispatch(a)
            except gui.ActionError:
                pass
            rend.render(suite)
            if suite.screen.get("name") != "level":
                break


# ---- running checks in a worker process -------------------------------------------------------

def run_checks(games: list[str], n: int, seed: int, timeout: float = 60.0, actions: int = 12) -> dict:
    """Mutate ``n`` records per game and check each in a worker process; a check that takes
    longer than ``timeout`` seconds is a hang (the worker is killed and restarted after it).
    Returns {"checked", "refused", "ok", "failures": [{"game", "what", "error"}]}."""
    from longpuzzle.agents.testing.fuzz.worker import supervise
    return supervise("longpuzzle.agents.testing.fuzz.levels", [[g, i] for g in games for i in range(n)],
                     {"n": n, "seed": seed, "actions": actions}, timeout)


def worker_items(conf: dict, todo: set):
    """(key, what, check) for the worker (agents/testing/fuzz/worker.py): the mutations still to check."""
    for game in sorted({g for g, _ in todo}):
        diff, rec = level_records(game)[0]          # warm up (kernels loaded, screens drawn once)
        check_record(game, rec, diff, 1, 2)
        for i, (diff, number, rec, what) in enumerate(mutations(game, conf["n"], conf["seed"])):
            if (game, i) in todo:
                yield (game, i), what, (lambda game=game, rec=rec, diff=diff, number=number, i=i:
                                        check_record(game, rec, diff, number, conf["actions"], seed=i))


if __name__ == "__main__":
    from longpuzzle.agents.testing.fuzz.worker import serve
    serve(worker_items)
