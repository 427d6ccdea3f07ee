"""The in-game failure limits of the original Maze Paint and Color Connect (RULES.md 6.3, 7.6;
their MazePaintEvaluator / ColorConnectEvaluator): the game itself ends a level as a failure.

    Maze Paint (per move, a wall bump included): 500 moves; 40 moves in a row that paint
    nothing; the last moves a zero-progress cycle (period 1..12, the same direction and the
    same states before and after) repeated 4 times; 10 minutes of game clock since the level
    was loaded. The failure card 挑戰結束 offers "Try again" (the level reloaded) and "Back".
    Color Connect (per gesture: a press to its release, a click-built chain being ONE gesture
    until it completes, is cancelled or discarded): a cycle in the states after each gesture
    (period 1..12) repeated 4 times with as many gestures (4 x the period) since the best
    count of completed pairs last rose; 500 gestures; 40 gestures without a new best; 10
    minutes. The original shows no card: the board simply takes no more input (the HUD's
    restart and back still work).

The originals apply them wherever the level is played: here the suite applies them on the hub
(the menus' suite, ``direct=False``: the paper's objective protocol) and, after
``Suite.enable_game_limits()``, in a direct launch (the level protocol does: a level they end is
``game_failure``). Restarting or reloading the level starts them afresh, as the originals do.

The state is plain data kept on the suite (``suite.limits``, in snapshots): the level's start
on the clock and the counts; for moves the tail of move records a cycle can be seen in (a
record is [action, state digest before, after, cells painted by it]); for gestures the digests
of the states after each gesture (the first: the level's start) and the gesture held open (the
digest and completed pairs before it). Time is the suite's virtual clock.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GameLimits:
    per: str = "move"             # "move" (Maze Paint) | "gesture" (Color Connect)
    card: bool = True             # a failure card (Maze Paint) or a board that just stops (Color Connect)
    max_steps: int = 500
    no_progress: int = 40
    cycle_repetitions: int = 4
    max_period: int = 12
    timeout_ms: int = 10 * 60 * 1000

    @property
    def tail(self) -> int:
        """Records a cycle check needs: every repetition of the longest period."""
        return self.cycle_repetitions * self.max_period


MAZE_LIMITS = GameLimits()
COLOR_LIMITS = GameLimits(per="gesture", card=False)

# the failure card's line for each reason (the original's words are in engine/labels.py)
REASON_TEXT = {
    "repeated_action_cycle": "The same moves keep repeating",
    "no_progress": "No new tiles painted for a long time",
    "max_steps": "The move limit of this level is reached",
    "timeout": "Time is up for this attempt",
}


def start(t: int, cfg: GameLimits = MAZE_LIMITS, state=None) -> dict:
    """The limits' state of a level loaded (or reloaded) at clock ``t`` (gestures: from its
    initial ``state``)."""
    if cfg.per == "move":
        return {"t0": int(t), "n": 0, "quiet": 0, "tail": []}
    return {"t0": int(t), "n": 0, "quiet": 0, "best": 0, "hist": [digest(state)], "open": None}


def check(lim, cfg: GameLimits) -> bool:
    """Whether ``lim`` (from a snapshot) is a state of these limits."""
    def whole(v, hi=2 ** 53):
        return type(v) is int and 0 <= v <= hi
    if type(lim) is not dict or not all(whole(lim.get(k)) for k in ("t0", "n", "quiet")):
        return False
    if cfg.per == "move":
        tail = lim.get("tail")
        return set(lim) == {"t0", "n", "quiet", "tail"} and type(tail) is list and len(tail) <= cfg.tail and all(
            type(r) is list and len(r) == 4 and all(whole(v, 2 ** 32) for v in r) for r in tail)
    hist, op = lim.get("hist"), lim.get("open")
    return (set(lim) == {"t0", "n", "quiet", "best", "hist", "open"} and whole(lim["best"], 10 ** 6)
            and type(hist) is list and 1 <= len(hist) <= cfg.max_steps + 1 and all(whole(v, 2 ** 32) for v in hist)
            and (op is None or (type(op) is list and len(op) == 2 and all(whole(v, 2 ** 32) for v in op))))


def copy(lim: dict) -> dict:
    """An independent copy of a limits' state (for Suite.clone)."""
    out = dict(lim)
    if "tail" in out:
        out["tail"] = [list(r) for r in out["tail"]]
    else:
        out["hist"] = list(out["hist"])
        out["open"] = None if out["open"] is None else list(out["open"])
    return out


def digest(state: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(state).tobytes())


def record(lim: dict, cfg: GameLimits, action: int, before: np.ndarray, after: np.ndarray, gained: int,
           t: int) -> str | None:
    """Record one move (``gained`` cells painted by it) ending at clock ``t``; the failure it
    causes (a reason), or None. The order of the checks is the original's."""
    lim["n"] += 1
    lim["quiet"] = 0 if gained > 0 else lim["quiet"] + 1
    tail = lim["tail"]
    tail.append([int(action), digest(before), digest(after), int(gained)])
    if len(tail) > cfg.tail:
        del tail[0]
    if lim["n"] >= cfg.max_steps:
        return "max_steps"
    if lim["quiet"] >= cfg.no_progress:
        return "no_progress"
    if cycle_repetitions(tail, cfg.max_period) >= cfg.cycle_repetitions:
        return "repeated_action_cycle"
    if t - lim["t0"] >= cfg.timeout_ms:
        return "timeout"
    return None


def gesture(lim: dict, cfg: GameLimits, after: np.ndarray, completed: int) -> str | None:
    """Close the gesture held open: record the state after it (``completed`` pairs); the
    failure it causes, or None. The order of the checks is the original's."""
    lim["open"] = None
    lim["n"] += 1
    if completed > lim["best"]:
        lim["best"] = completed
        lim["quiet"] = 0
    else:
        lim["quiet"] += 1
    lim["hist"].append(digest(after))
    period, reps = state_cycle(lim["hist"], cfg.max_period)
    if reps >= cfg.cycle_repetitions and lim["quiet"] >= period * cfg.cycle_repetitions:
        return "repeated_action_cycle"
    if lim["n"] >= cfg.max_steps:
        return "max_steps"
    if lim["quiet"] >= cfg.no_progress:
        return "no_progress"
    return None


def state_cycle(history: list, max_period: int) -> tuple[int, int]:
    """(period, repetitions) of the cycle the history ends with, as the original's detectCycle
    finds it: for each period up to max_period (and half the history), how many times its
    last block repeats backwards; the most repetitions (two at least) win, ties to the shorter
    period. (0, 0): none."""
    n = len(history)
    best = (0, 0)
    for p in range(1, min(max_period, n // 2) + 1):
        reps = 1
        while (reps + 1) * p <= n:
            right = n - reps * p
            if history[right - p:right] != history[right:right + p]:
                break
            reps += 1
        if reps >= 2 and reps > best[1]:
            best = (p, reps)
    return best


def cycle_repetitions(records: list, max_period: int) -> int:
    """The repetitions of the shortest zero-progress cycle the records end with (0: none),
    as the original counts them: the shortest period p whose last 3 p records paint nothing
    and repeat with period p, then how many times its last block repeats backwards."""
    n = len(records)
    for p in range(1, min(max_period, n // 3) + 1):
        last = records[n - 3 * p:]
        if any(r[3] for r in last) or any(last[i][:3] != last[i - p][:3] for i in range(p, 3 * p)):
            continue
        reps = 3
        while (reps + 1) * p <= n:
            a, b = n - reps * p, n - (reps + 1) * p
            if any(records[b + i][3] or records[a + i][:3] != records[b + i][:3] for i in range(p)):
                break
            reps += 1
        return reps
    return 0
