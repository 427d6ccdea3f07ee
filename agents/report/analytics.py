"""Trajectory analytics (the paper's sections 5.1 to 5.3, appendix A.3 and D.2), from the
evaluator's private records of an episode.

Level attempts
    An attempt runs from entering a level (or a restart of it) to a win, a restart, leaving
    the level, or the end of the episode. Per attempt: actions, moves (accepted, and those
    that changed the board), rejected moves, undos, progress P at the start, the end and its
    best, and dead ends: the first action after which the evaluator certified the board
    unsolvable (``certificate == "dead_end"``, Bolt Unscrew and Nut and Bolt), and the
    dead-end delay, the number of transfers (accepted moves that changed the board) from
    that first unsolvable board, the fatal transfer included, until an undo restores a
    solvable board or the attempt ends. Every later relapse in the same attempt is a spell
    of its own (``dead_spells``).
Bolt Unscrew (section 5.1, figure 4a)
    For every transfer: the usable free holes before and after it and what it did:
    ``dead_end`` (the transfer that made the board unsolvable), ``freed_board`` (P rose: a
    board was released or left), ``filled_hole`` (fewer usable holes), ``opened_hole``
    (more), or ``other`` (a screw moved between holes and nothing else changed).
Bolt capacity (section 5.1, figure 4b)
    The transfers binned by the usable free holes before them: those that free a board, fill
    a hole, or deadlock (the board after them carries the no-free-hole certificate); and the
    first transfers from one-hole starts (``bolt_capacity``).
Maze Paint (section 5.2)
    Valid moves (accepted swipes that moved the ball) binned by the board's coverage before
    the move (coverage = P = painted cells beyond the start cell / paintable cells beyond
    it): the share that painted new cells and the share that returned the board to an exact
    state seen earlier in the same attempt; for all attempts, unsolved attempts alone and
    solved attempts alone.
LC deficit (section 5.1)
    100 - LC of an episode, split into target levels never reached (100 - R) and levels
    reached but not solved (R - LC), in percent of the target levels; for a run, game-macro
    weighted as the completion metrics (``lc_deficit_split``).
Dead ends by game (Figure 2c)
    Per game that can dead-end: the attempts that reached a certified dead end and the moves
    they played on the already lost board (median and mean); Bolt Unscrew under both the
    paper's no-free-hole certificate and the exhaustive one (``dead_ends_by_game``).

``analyze_run`` and ``analyze_episode`` return plain JSON-able dicts; ``longpuzzle analyze``
prints them or writes them as JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from longpuzzle.agents.report.data import (
    RunData, episode_catalog, episode_trajectories, load_run, read_json, snapshot_state,
)

COVERAGE_BINS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)   # Maze Paint coverage bins (the last is closed)
DEAD = "dead_end"


@dataclass
class Attempt:
    level: str
    number: int                      # attempt number on this level within the episode (from 1)
    start_step: int                  # the action that began it (0: the episode's start)
    end_step: int = 0
    end: str = "end"                 # won | restart | left | end (the episode stopped)
    actions: int = 0                 # actions recorded during the attempt
    moves: int = 0                   # accepted moves
    transfers: int = 0               # accepted moves that changed the board
    rejected: int = 0
    undos: int = 0
    P_start: float = 0.0
    P_end: float = 0.0
    P_max: float = 0.0
    dead_end_step: int | None = None     # the action after which the board was first certified unsolvable
    dead_end_transfer: int | None = None  # that transfer's number within the attempt
    dead_end_delay: int | None = None    # transfers from that board (fatal one included) to recovery or the end
    dead_end_recovered: bool | None = None
    dead_spells: list[dict] = field(default_factory=list)
    # Figure 2c: moves played (accepted or rejected) on a board already certified unsolvable
    lost_moves: int = 0                  # ... by the exhaustive certificate
    no_free_hole_step: int | None = None  # Bolt Unscrew: the first action after which the paper's certificate held
    lost_moves_no_free_hole: int | None = None   # Bolt Unscrew: moves played on a board without a usable hole
    move_log: list[dict] = field(default_factory=list)   # per move: step, move, P before/after, game facts
    # working state (not reported)
    _lost: bool = field(default=False, repr=False)        # the board is certified unsolvable (exhaustive)
    _no_hole: bool = field(default=False, repr=False)     # the board has no usable free hole (Bolt Unscrew)
    _state: tuple | None = field(default=None, repr=False)
    _holes: int | None = field(default=None, repr=False)
    _seen: set = field(default_factory=set, repr=False)
    _spell: dict | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        d = asdict(self)
        for k in [k for k in d if k.startswith("_")]:
            del d[k]
        return d


def _holes(rec: dict) -> int | None:
    return (rec.get("diagnostics") or {}).get("usable_holes")


class _Walker:
    """Walks one trajectory's records and builds its attempts and P series."""

    def __init__(self, offset: int = 0, catalog=None):
        self.offset = offset             # actions of earlier trajectories of the same episode
        self.catalog = catalog           # the episode's levels (default: the built-in catalogue)
        self.attempts: list[Attempt] = []
        self.cur: Attempt | None = None
        self.count: dict[str, int] = {}
        self.series: list[tuple[int, str, float]] = []    # (action, level, P) on level screens
        self.restarts: list[tuple[int, str]] = []          # (action, level)
        self._levels: dict = {}

    def level(self, lid: str):
        if lid not in self._levels:
            from longpuzzle.engine.catalog import load_level
            from longpuzzle.engine.registry import get_puzzle

            lvl = load_level(lid, self.catalog)
            self._levels[lid] = (lvl, get_puzzle(lvl.game))
        return self._levels[lid]

    def open(self, lid: str, step: int, P: float, holes, state, cert: str | None = None):
        n = self.count[lid] = self.count.get(lid, 0) + 1
        a = Attempt(lid, n, step, P_start=P, P_end=P, P_max=P)
        a._state, a._holes = state, holes
        if lid.startswith("bolt_unscrew/"):
            a.lost_moves_no_free_hole = 0
        _mark_lost(a, step, cert, holes, P)
        if state is not None:
            a._seen.add(state)
        self.cur = a
        self.attempts.append(a)

    def close(self, step: int, end: str):
        a = self.cur
        if a is None:
            return
        a.end_step, a.end = step, end
        if a._spell is not None:
            a._spell["recovered"] = False
            a._spell = None
        self.cur = None

    def start_level(self, lid: str):
        """A level-protocol trajectory starts on its level (direct launch)."""
        lvl, p = self.level(lid)
        self.open(lid, self.offset, float(p.progress(lvl, lvl.initial)),
                  p.diagnostics(lvl, lvl.initial).get("usable_holes"), tuple(int(v) for v in lvl.initial))

    def step(self, step, rec: dict, snapshot: str | None):
        x = self.offset + step
        eff = rec.get("effects") or []
        lid, P = rec.get("level"), rec.get("P")
        restarted = any(e.get("effect") == "restart" for e in eff)
        if lid is not None and P is not None:
            self.series.append((x, lid, P))
        if restarted and lid is not None:
            self.restarts.append((x, lid))
        a = self.cur
        if a is not None and (lid != a.level or restarted):
            self.close(x, "restart" if restarted and lid == a.level else "left")
            a = None
        if a is None:
            if lid is not None and P is not None and (restarted or P < 1.0):
                self.open(lid, x, P, _holes(rec), snapshot_state(snapshot), rec.get("certificate"))
            return
        a.actions += 1
        self.moves(a, x, rec, eff, snapshot)
        a.P_end = P
        a.P_max = max(a.P_max, P)
        if rec.get("win") or P >= 1.0:
            self.close(x, "won")

    def moves(self, a: Attempt, x: int, rec: dict, eff: list[dict], snapshot):
        moves = [e for e in eff if e.get("effect") == "move"]
        rejected = sum(e.get("effect") == "rejected" for e in eff)
        a.rejected += rejected
        if a._lost:                                # played on a board the certificates call lost
            a.lost_moves += len(moves) + rejected
        if a._no_hole:
            a.lost_moves_no_free_hole += len(moves) + rejected
        undos = sum(e.get("effect") == "undo" for e in eff)
        a.undos += undos
        after = snapshot_state(snapshot)
        game = a.level.split("/")[0]
        # the states after each move of this action: one move (or an undo) per action is the
        # usual case; a batch of moves is re-applied through the rules from the state before
        states = [after] * len(moves)
        if len(moves) > 1 and not undos and a._state is not None:
            lvl, p = self.level(a.level)
            try:
                st = np.array(a._state, dtype=lvl.initial.dtype)
                seq = []
                for m in moves:
                    st = p.apply(lvl, st, m["move"])
                    seq.append(tuple(int(v) for v in st))
                if seq[-1] == after:
                    states = seq
            except Exception:                      # noqa: BLE001  (then the action is read as a whole)
                pass
        cert = rec.get("certificate")
        before_P, before_holes = a.P_end, a._holes
        for i, m in enumerate(moves):
            last = i == len(moves) - 1
            st = states[i]
            if last:
                P_after, holes_after = rec.get("P"), _holes(rec)
            elif st is not None:
                lvl, p = self.level(a.level)
                arr = np.array(st, dtype=lvl.initial.dtype)
                P_after = float(p.progress(lvl, arr))
                holes_after = p.diagnostics(lvl, arr).get("usable_holes")
            else:
                P_after, holes_after = None, None
            a.moves += 1
            changed = bool(m.get("changed", True))
            entry = {"step": x, "move": m.get("move"), "P_before": before_P, "P_after": P_after, "changed": changed}
            if changed:
                a.transfers += 1
            if before_holes is not None or holes_after is not None:
                entry["holes_before"], entry["holes_after"] = before_holes, holes_after
            if game == "maze_paint" and changed:
                entry["new_cells"] = P_after is not None and before_P is not None and P_after > before_P
                entry["revisit"] = st is not None and st in a._seen
            if st is not None:
                a._seen.add(st)
            fatal = last and changed and cert == DEAD and a._spell is None
            if fatal:
                a._spell = {"step": x, "transfer": a.transfers, "delay": 0, "recovered": None}
                a.dead_spells.append(a._spell)
                if a.dead_end_step is None:
                    a.dead_end_step, a.dead_end_transfer = x, a.transfers
            if a._spell is not None and changed:
                a._spell["delay"] += 1
            if "holes_before" in entry and changed:
                entry["did"] = _bolt_kind(fatal, before_P, P_after, before_holes, holes_after)
            a.move_log.append(entry)
            before_P, before_holes = P_after, holes_after
        # an undo that brought back a solvable board ends the dead-end spell
        if a._spell is not None and undos and cert == "solvable":
            a._spell["recovered"] = True
            a._spell["end_step"] = x
            a._spell = None
        if after is not None:
            a._state = after
            if undos:
                a._seen.add(after)
        a._holes = _holes(rec)
        _mark_lost(a, x, cert, a._holes, rec.get("P"))
        if a.dead_spells:
            first = a.dead_spells[0]
            a.dead_end_delay, a.dead_end_recovered = first["delay"], first["recovered"]

    def finish(self, end: str = "end"):
        if self.cur is not None:
            self.close(self.cur.end_step if self.cur.end_step else self.offset, end)
        for a in self.attempts:
            if a.dead_spells:
                a.dead_end_delay = a.dead_spells[0]["delay"]
                a.dead_end_recovered = a.dead_spells[0]["recovered"]


def _mark_lost(a: Attempt, x: int, cert, holes, P) -> None:
    """Whether the board after action x is lost: certified unsolvable by the exhaustive
    search (the evaluator's certificate), and for Bolt Unscrew by the paper's certificate
    (stable, unsolved, no usable free hole; the records are of settled boards)."""
    a._lost = cert == DEAD
    a._no_hole = a.lost_moves_no_free_hole is not None and holes == 0 and P is not None and P < 1.0
    if a._no_hole and a.no_free_hole_step is None:
        a.no_free_hole_step = x


def _bolt_kind(fatal: bool, P0, P1, h0, h1) -> str:
    if fatal:
        return "dead_end"
    if P0 is not None and P1 is not None and P1 > P0:
        return "freed_board"
    if h0 is not None and h1 is not None:
        if h1 < h0:
            return "filled_hole"
        if h1 > h0:
            return "opened_hole"
    return "other"


# ---- episodes -------------------------------------------------------------------------

def lc_deficit(result: dict) -> dict | None:
    """100 - LC of one episode, split into unreached and reached-but-unsolved levels (percent)."""
    lv = result.get("levels_outcome") or []
    if not lv:
        return None
    n = len(lv)
    unreached = sum(not l.get("reached") for l in lv)
    unsolved = sum(bool(l.get("reached")) and not l.get("won") for l in lv)
    return {"LC": 100.0 * sum(bool(l.get("won")) for l in lv) / n, "R": 100.0 * (n - unreached) / n,
            "deficit": 100.0 * (unreached + unsolved) / n,
            "unreached": 100.0 * unreached / n, "reached_unsolved": 100.0 * unsolved / n,
            "levels": n, "unreached_levels": unreached, "reached_unsolved_levels": unsolved}


SPLIT = ("LC", "R", "deficit", "unreached", "reached_unsolved")


def lc_deficit_split(by_objective: dict[str, dict]) -> dict:
    """Section 5.1's split of the LC deficit, 1 - LC = (1 - R) + (R - LC) with R the share of
    target levels reached, game-macro weighted as the paper pools completion metrics: each
    objective's mean over its episodes (``by_objective``, in percent), averaged equally over
    each game's objectives, then over the games. ``unreached_share``: the part of the
    deficit that levels never reached make up (percent of the deficit; None without one)."""
    games: dict[str, list[dict]] = {}
    for o, d in by_objective.items():
        games.setdefault(o.split("/")[0], []).append(d)

    def mean(rows):
        out = {k: sum(r[k] for r in rows) / len(rows) for k in SPLIT}
        out["unreached_share"] = 100.0 * out["unreached"] / out["deficit"] if out["deficit"] > 1e-9 else None
        return out
    by_game = {g: {**mean(v), "objectives": len(v)} for g, v in games.items()}
    overall = {**mean(list(by_game.values())), "games": len(by_game)} if by_game else None
    return {"by_game": by_game, "overall": overall}


def analyze_episode(folder: str | Path, result: dict | None = None, name: str | None = None) -> dict:
    """Everything above for one episode folder (``result``: its result.json entry, read from
    the folder when not given)."""
    folder = Path(folder)
    if result is None:
        result = read_json(folder / "result.json", "episode result") if (folder / "result.json").is_file() else {}
    trajs = episode_trajectories(folder)
    w = _Walker(catalog=episode_catalog(trajs[0].header) if trajs else None)
    for traj in trajs:
        if traj.level:                       # level protocol: each level launched directly
            w.start_level(traj.level)
        last = w.offset
        for st in traj.steps:
            if st.final_answer is None:
                w.step(st.step, st.record, st.snapshot)
                last = w.offset + st.step
        if w.cur is not None:
            w.close(last, "end")
        w.offset = last
    w.finish()
    attempts = [a.as_dict() for a in w.attempts]
    out = {
        "episode": name or str(folder),
        "objective": result.get("objective"),
        "end": result.get("end"),
        "actions": w.offset,
        "lc_deficit": lc_deficit(result),
        "levels": _level_rows(attempts, result),
        "attempts": attempts,
        "progress": [[x, l, round(p, 6)] for x, l, p in w.series],
        "restarts": [[x, l] for x, l in w.restarts],
    }
    game = (result.get("objective") or "/").split("/")[0] or (attempts[0]["level"].split("/")[0] if attempts else "")
    if game == "maze_paint":
        out["maze_paint"] = maze_paint_bins(attempts)
    if game == "bolt_unscrew":
        out["bolt_unscrew"] = bolt_summary(attempts)
    if any(a["dead_spells"] for a in attempts) or (game and game in dead_end_games([{"level": game}])):
        out["dead_ends"] = dead_end_summary(attempts)
        out["dead_ends_by_game"] = dead_ends_by_game(attempts)
    return out


def _level_rows(attempts: list[dict], result: dict) -> list[dict]:
    order = [l["level"] for l in result.get("levels") or [] if "level" in l]
    outcome = dict(zip(order, result.get("levels_outcome") or []))
    rows = {}
    for lid in order + [a["level"] for a in attempts]:
        rows.setdefault(lid, {"level": lid, "attempts": 0, "restarts": 0, "moves": 0, "dead_ends": 0,
                              **{k: outcome.get(lid, {}).get(k) for k in ("reached", "won", "max_P")}})
    for a in attempts:
        r = rows[a["level"]]
        r["attempts"] += 1
        r["restarts"] += a["end"] == "restart"
        r["moves"] += a["moves"]
        r["dead_ends"] += a["dead_end_step"] is not None
    return list(rows.values())


# ---- summaries over attempts ------------------------------------------------------------

def coverage_bin(P: float | None, bins=COVERAGE_BINS) -> int | None:
    """The index of the coverage bin holding P (the last bin closed), None outside them."""
    if P is None:
        return None
    for i, (lo, hi) in enumerate(zip(bins[:-1], bins[1:])):
        if lo <= P < hi or (hi == bins[-1] == P):
            return i
    return None


def maze_paint_bins(attempts: list[dict], bins=COVERAGE_BINS) -> dict:
    """Per coverage bin (of the board before the move): valid moves, share painting new
    cells, share returning to an exact earlier state (and the counts behind both shares:
    ``new_cell_moves``, ``revisit_moves``); for all attempts, the unsolved ones and the
    solved ones (section 5.1 compares the last two)."""
    def table(sel):
        rows = [{"coverage": [lo, hi], "valid_moves": 0, "new_cell_moves": 0, "revisit_moves": 0}
                for lo, hi in zip(bins[:-1], bins[1:])]
        for m in (m for a in sel for m in a["move_log"] if "new_cells" in m):
            i = coverage_bin(m["P_before"], bins)
            if i is not None:
                rows[i]["valid_moves"] += 1
                rows[i]["new_cell_moves"] += bool(m["new_cells"])
                rows[i]["revisit_moves"] += bool(m["revisit"])
        for r in rows:
            n = r["valid_moves"]
            r["new_cells"] = 100.0 * r["new_cell_moves"] / n if n else None
            r["revisits"] = 100.0 * r["revisit_moves"] / n if n else None
        return rows
    mp = [a for a in attempts if a["level"].startswith("maze_paint/")]
    return {"all": table(mp), "unsolved": table([a for a in mp if a["end"] != "won"]),
            "solved": table([a for a in mp if a["end"] == "won"])}


BOLT_OUTCOMES = ("frees", "fills", "deadlocks")


def bolt_move_outcomes(move: dict) -> dict | None:
    """What one Bolt Unscrew transfer did, as the paper's Figure 4b counts it (not exclusive):
    ``frees`` a board (progress rose: a board released or exited), ``fills`` a hole (fewer
    usable free holes and no board freed), ``deadlocks`` (the board after it carries the
    paper's certificate: unsolved, settled, no usable free hole); ``fatal``: the exhaustive
    certificate called this transfer the one that made the board unsolvable. None for a
    move that changed nothing or whose holes were not recorded."""
    if not move.get("changed", True) or move.get("holes_before") is None or move.get("holes_after") is None:
        return None
    P0, P1, h0, h1 = move["P_before"], move["P_after"], move["holes_before"], move["holes_after"]
    frees = P0 is not None and P1 is not None and P1 > P0
    return {"frees": frees, "fills": h1 < h0 and not frees,
            "deadlocks": h1 == 0 and P1 is not None and P1 < 1.0,
            "fatal": move.get("did") == DEAD}


def bolt_capacity(attempts: list[dict]) -> dict:
    """Section 5.1's Bolt capacity analysis (Figure 4b): the transfers binned by the usable
    free holes before them, each bin's moves that free a board, fill a hole, deadlock
    (bolt_move_outcomes); and the first transfers of attempts that started with one free hole
    (how many of them deadlock at once). Each move carries its level and step (``moves``),
    for the source-level intervals and the stated reasons of the diagnostics (RQ1)."""
    moves, firsts = [], []
    for a in attempts:
        if not a["level"].startswith("bolt_unscrew/"):
            continue
        first = True
        for m in a["move_log"]:
            o = bolt_move_outcomes(m)
            if o is None:
                continue
            row = {"level": a["level"], "attempt": a["number"], "step": m["step"],
                   "holes_before": m["holes_before"], "first": first, **o}
            if "episode" in a:               # attempts pooled over episodes name theirs
                row["episode"] = a["episode"]
            moves.append(row)
            if first and m["holes_before"] == 1:
                firsts.append(row)
            first = False
    bins: dict[int, dict] = {}
    for m in moves:
        b = bins.setdefault(m["holes_before"], {"holes_before": m["holes_before"], "moves": 0,
                                                **dict.fromkeys(BOLT_OUTCOMES, 0)})
        b["moves"] += 1
        for k in BOLT_OUTCOMES:
            b[k] += m[k]
    return {"by_holes_before": [bins[h] for h in sorted(bins, reverse=True)],
            "one_hole_starts": {"moves": len(firsts), "deadlocks": sum(m["deadlocks"] for m in firsts)},
            "moves": moves}


def bolt_summary(attempts: list[dict]) -> dict:
    """Bolt Unscrew transfers by what they did, and by the usable holes before them."""
    bu = [a for a in attempts if a["level"].startswith("bolt_unscrew/")]
    moves = [m for a in bu for m in a["move_log"] if "did" in m]
    kinds = ("freed_board", "filled_hole", "opened_hole", "dead_end", "other")
    by_holes: dict[int, dict] = {}
    for m in moves:
        h = m.get("holes_before")
        if h is None:
            continue
        row = by_holes.setdefault(h, {"holes_before": h, "transfers": 0, **dict.fromkeys(kinds, 0)})
        row["transfers"] += 1
        row[m["did"]] += 1
    return {"transfers": len(moves), "by_kind": {k: sum(m["did"] == k for m in moves) for k in kinds},
            "by_holes_before": [by_holes[h] for h in sorted(by_holes)]}


def dead_end_games(attempts: list[dict]) -> list[str]:
    """The games of these attempts whose boards can become unsolvable (their rules say so:
    Puzzle.dead_ends), in the benchmark's game order."""
    from longpuzzle.engine.errors import UnknownGameError
    from longpuzzle.engine.registry import get_puzzle, puzzle_ids

    games = {a["level"].split("/")[0] for a in attempts}
    out = []
    for g in sorted(games, key=lambda g: (puzzle_ids().index(g) if g in puzzle_ids() else len(games), g)):
        try:
            if get_puzzle(g).dead_ends:
                out.append(g)
        except UnknownGameError:          # a game no longer installed: no certificate to read
            pass
    return out


def _spread(xs: list) -> dict:
    return {"attempts": len(xs), "median": float(np.median(xs)) if xs else None,
            "mean": sum(xs) / len(xs) if xs else None, "max": max(xs) if xs else None, "total": sum(xs)}


def dead_ends_by_game(attempts: list[dict]) -> list[dict]:
    """The paper's Figure 2c, one row per game whose boards can become unsolvable: the level
    attempts, those that reached a certified dead end and the moves they then played on the
    already lost board (median, mean). Bolt Unscrew has two certificates, each its own
    column: the paper's (no usable free hole) and the exhaustive search's (which also
    catches boards that still have a hole but no way out); Nut and Bolt has the exhaustive
    one, which is the paper's."""
    rows = []
    for game in dead_end_games(attempts):
        at = [a for a in attempts if a["level"].split("/")[0] == game]
        if not at:
            continue
        dead = [a for a in at if a["dead_end_step"] is not None]
        row = {"game": game, "attempts": len(at),
               "exhaustive": {"dead_end_attempts": len(dead), "share": 100.0 * len(dead) / len(at),
                              "lost_moves": _spread([a["lost_moves"] for a in dead])},
               "no_free_hole": None}
        if game == "bolt_unscrew":
            nfh = [a for a in at if a.get("no_free_hole_step") is not None]
            row["no_free_hole"] = {"dead_end_attempts": len(nfh), "share": 100.0 * len(nfh) / len(at),
                                   "lost_moves": _spread([a["lost_moves_no_free_hole"] for a in nfh])}
        rows.append(row)
    return rows


def dead_end_summary(attempts: list[dict]) -> dict:
    dead = [a for a in attempts if a["dead_end_step"] is not None]
    delays = [a["dead_end_delay"] for a in dead if a["dead_end_delay"] is not None]
    return {"attempts": len(attempts), "dead_end_attempts": len(dead),
            "share": 100.0 * len(dead) / len(attempts) if attempts else None,
            "recovered": sum(bool(a["dead_end_recovered"]) for a in dead),
            "mean_delay": sum(delays) / len(delays) if delays else None,
            "max_delay": max(delays) if delays else None}


# ---- runs ---------------------------------------------------------------------------

def analyze_run(run: RunData | str | Path) -> dict:
    """Analytics of every episode of a run, with pooled summaries."""
    if not isinstance(run, RunData):
        run = load_run(run)
    eps = []
    for e in run.episodes:
        d = e.get("dir")
        if d is None:
            continue
        name = str(Path(d).relative_to(run.folder)) if Path(d).is_relative_to(run.folder) else str(d)
        eps.append(analyze_episode(d, e, name))
    attempts = [a for e in eps for a in e["attempts"]]
    deficits = [e["lc_deficit"] for e in eps if e["lc_deficit"]]
    by_obj: dict[str, list[dict]] = {}
    for e in eps:
        if e["lc_deficit"]:
            by_obj.setdefault(e["objective"], []).append(e["lc_deficit"])
    out = {
        "run": str(run.folder),
        "identity": run.identity,
        "episodes": eps,
        "lc_deficit": {o: {k: sum(d[k] for d in v) / len(v) for k in SPLIT} for o, v in by_obj.items()},
        "attempts": len(attempts),
    }
    if any(a["level"].startswith("maze_paint/") for a in attempts):
        out["maze_paint"] = maze_paint_bins(attempts)
    if any(a["level"].startswith("bolt_unscrew/") for a in attempts):
        out["bolt_unscrew"] = bolt_summary(attempts)
    dead_games = dead_end_games(attempts)
    if dead_games:
        out["dead_ends"] = dead_end_summary([a for a in attempts if a["level"].split("/")[0] in dead_games])
        out["dead_ends_by_game"] = dead_ends_by_game(attempts)
    if not deficits:
        out["lc_deficit"] = {}
    out["lc_deficit_split"] = lc_deficit_split(out["lc_deficit"])
    return out
