"""Tampered suite snapshots and session checkpoints: each one must be refused with a
CheckpointError, or restore into a suite (session) that keeps working: the next GUI actions
dispatch and draw, the next moves, undo and restart play, and its own snapshot (checkpoint)
restores again. Snapshots are taken along seeded random play (mid-drag, with a selection,
after a win ...); a tampered body gets a fresh checksum, so validation, not the checksum,
is what must stop it.

    for text, what in tampered_snapshots("rush_hour", n=20, seed=1): ...
    outcome = check_snapshot(text)      # "refused: ..." | "ok" | raises
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator

from longpuzzle.agents.testing.fuzz.levels import mutate
from longpuzzle.engine import gui
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.errors import CheckpointError, IllegalMoveError
from longpuzzle.engine.protocol import canonical_json

SPECIAL = ("[" * 100_000 + "]" * 100_000, "\ufeff{}", "null", "[]", "{}", "9" * 5000, '{"format": 1}')


def _levels(game: str) -> list[str]:
    return builtin_catalog().level_ids(game)


def play_snapshots(game: str, seed: int, k: int = 6, style: str = "2d") -> list[str]:
    """``k`` snapshots of a suite playing ``game`` with random gestures (some left pressed)."""
    from longpuzzle.engine.suite import Suite

    rng = random.Random(f"{game}:{seed}")
    lid = rng.choice(_levels(game))
    s = Suite(lid, style=style)
    w, h = s.frame_size
    out = []
    for i in range(k * 3):
        if s.session is None or s.screen.get("name") != "level":
            s = Suite(lid, style=style)
        legal = s.session.legal_moves() if not s.complete else []
        r = rng.random()
        if legal and r < 0.5:
            a = s.gesture_for(rng.choice(legal))
        elif r < 0.65:
            a = {"type": "press", "x": rng.randrange(w), "y": rng.randrange(h)}      # left pressed
        elif r < 0.8:
            a = {"type": "click", "x": rng.randrange(w), "y": rng.randrange(h)}
        else:
            a = {"type": "drag", "x0": rng.randrange(w), "y0": rng.randrange(h), "x1": rng.randrange(w),
                 "y1": rng.randrange(h), "steps": 5, "ms": 150}
        try:
            s.dispatch(a)
        except gui.ActionError:
            pass
        if i % 3 == 2:
            out.append(s.snapshot())
    return out


def _rechecksum(body: dict, key: str = "checksum", canonical=None) -> dict:
    body = {k: v for k, v in body.items() if k != key}
    body[key] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
    return body


def tampered_snapshots(game: str, n: int, seed: int) -> Iterator[tuple[str, str]]:
    """n tampered snapshot texts of ``game`` (with what was done), seeded."""
    rng = random.Random(f"snap:{game}:{seed}")
    snaps = play_snapshots(game, seed)
    for _i in range(n):
        text = rng.choice(snaps)
        r = rng.random()
        if r < 0.05:
            yield rng.choice(SPECIAL), "special text"
            continue
        if r < 0.1:
            yield text.encode("utf-16").decode("latin-1"), "UTF-16 bytes read as text"
            continue
        body = json.loads(text)
        if r < 0.35 and body.get("session"):               # tamper with the embedded checkpoint
            cp = json.loads(body["session"])
            m, what = mutate({k: v for k, v in cp.items() if k != "checksum"}, rng)
            body["session"] = json.dumps(_rechecksum(m))
            what = "session: " + what
        else:
            m, what = mutate({k: v for k, v in body.items() if k != "checksum"}, rng)
            body = m
        yield json.dumps(_rechecksum(body)), what


def check_snapshot(text: str, actions: int = 8, seed: int = 0) -> str:
    """"refused: ..." (CheckpointError), or "ok" after the restored suite dispatched and drew
    ``actions`` random actions and its own snapshot restored. Raises on anything else."""
    from longpuzzle.engine.suite import Suite
    from longpuzzle.render.frame import renderer

    try:
        s = Suite.restore(text)
    except CheckpointError as e:
        return f"refused: {e}"
    except Exception as e:
        raise AssertionError(f"restore raised {type(e).__name__}: {e}") from e
    rng = random.Random(seed)
    try:
        rend = renderer(s.style, s.scale, s.viewport, s.lang)
        rend.render(s)
        w, h = s.frame_size
        for _ in range(actions):
            kind = rng.random()
            if s.session is not None and not s.complete and kind < 0.4:
                legal = s.session.legal_moves()
                a = s.gesture_for(rng.choice(legal)) if legal else {"type": "release"}
            elif kind < 0.6:
                a = {"type": "release", "x": rng.randrange(w), "y": rng.randrange(h)}
            elif kind < 0.8:
                a = {"type": "click", "x": rng.randrange(w), "y": rng.randrange(h)}
            else:
                a = {"type": "drag", "x0": rng.randrange(w), "y0": rng.randrange(h), "x1": rng.randrange(w),
                     "y1": rng.randrange(h), "steps": 4, "ms": 100}
            try:
                s.dispatch(a)
            except gui.ActionError:
                pass
            rend.render(s)
            for an in s.anims:
                rend.render(s, (an["t0"] + an["t1"]) // 2)
        Suite.restore(s.snapshot())
    except Exception as e:
        raise AssertionError(f"the restored suite failed: {type(e).__name__}: {e}") from e
    return "ok"


def tampered_checkpoints(game: str, n: int, seed: int) -> Iterator[tuple[str, str]]:
    """n tampered session checkpoints of ``game`` (with what was done), seeded."""
    rng = random.Random(f"cp:{game}:{seed}")
    texts = [json.loads(t)["session"] for t in play_snapshots(game, seed)]
    texts = [t for t in texts if t]
    for _ in range(n):
        if rng.random() < 0.08:
            yield rng.choice(SPECIAL), "special text"
            continue
        cp = json.loads(rng.choice(texts))
        m, what = mutate({k: v for k, v in cp.items() if k != "checksum"}, rng)
        yield json.dumps(_rechecksum(m)), what


def check_checkpoint(text: str, seed: int = 0) -> str:
    """"refused: ..." or "ok" after the restored session played, undid, restarted and
    checkpointed again; raises on anything else."""
    from longpuzzle.engine.session import Session, replay

    try:
        s = Session.from_checkpoint(text)
    except CheckpointError as e:
        return f"refused: {e}"
    except Exception as e:
        raise AssertionError(f"from_checkpoint raised {type(e).__name__}: {e}") from e
    rng = random.Random(seed)
    try:
        for _ in range(5):
            legal = s.legal_moves()
            if legal:
                s.play(rng.choice(legal))
            try:
                s.undo()
            except IllegalMoveError:
                pass
        s.restart()
        Session.from_checkpoint(s.checkpoint())
        replay(s.episode_text())
    except Exception as e:
        raise AssertionError(f"the restored session failed: {type(e).__name__}: {e}") from e
    return "ok"


def worker_items(conf: dict, todo: set):
    for game in sorted({g for g, _, _ in todo}):
        for kind, gen, check in (("snapshot", tampered_snapshots, check_snapshot),
                                 ("checkpoint", tampered_checkpoints, check_checkpoint)):
            for i, (text, what) in enumerate(gen(game, conf["n"], conf["seed"])):
                if (game, kind, i) in todo:
                    yield (game, kind, i), f"{kind}: {what}", (lambda text=text, i=i, check=check: check(text, seed=i))


def run_checks(games: list[str], n: int, seed: int, timeout: float = 60.0) -> dict:
    """``n`` tampered snapshots and ``n`` tampered checkpoints per game, checked in a worker
    process (agents/testing/fuzz/worker.py); the report as levels.run_checks."""
    from longpuzzle.agents.testing.fuzz.worker import supervise
    keys = [[g, k, i] for g in games for k in ("snapshot", "checkpoint") for i in range(n)]
    return supervise("longpuzzle.agents.testing.fuzz.snapshots", keys, {"n": n, "seed": seed}, timeout)


if __name__ == "__main__":
    from longpuzzle.agents.testing.fuzz.worker import serve
    serve(worker_items)
