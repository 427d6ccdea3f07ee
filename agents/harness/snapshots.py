"""The exact suite state in an episode's private records, and the state after any step.

Every private record of a dispatched action says exactly what the app was after it (its
screen, UI state, pointer, toast, animations, clock, and the session's state, move list, log
and counters), so any step can be restored and a replay can check the state after every
step. Format 3 (trajectory.EVENTS_FORMAT "longpuzzle-episode/3") records it in one of two
forms:

    "snapshot": TEXT      Suite.snapshot() (with checksums), every FULL_EVERY-th record
    "suite": {            every other record: what a snapshot holds, without the parts that
      "fields": {...},    grow with every move or never change written again -- fields:
      "session": null | { Suite.snapshot_fields() (screen, UI, pointer, toast, shake,
        "level",          animations, clock, ...) but the settings that did not change
        "level_sha256",   (CONSTANT), an animation's "before" state null when it is the
        "state",          previous record's state; the session's state and counters in
        "counters",       full, its level digest only when the level changed, and its move
        "moves": [keep, [text, ...]],       list and log as changes to the previous
        "log": [keep, [text, ...]]}}        record's: its first ``keep`` entries, then these

So a record costs what the app's state costs, not what the episode's history does (a full
snapshot in every record, as format 1 wrote, grows with each move and is encoded twice
over). The header's "start" is a full snapshot; a record's state is the last full snapshot
before it with the deltas after it applied, and ``StateRebuilder.snapshot()`` gives exactly
the text ``Suite.snapshot()`` gave then. A replay makes the same record from the suite it
replays (SuiteStates) and compares the two: equal records from equal previous states mean
equal states, step after step. Format 2 folders write every setting, level digest and
animation state in every delta, format 1 folders carry a full snapshot in every record: both
are read by the same code (a delta's parts that are present are taken as written).
"""

from __future__ import annotations

import json

from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.engine.protocol import canonical_json
from longpuzzle.engine.session import CHECKPOINT_FORMAT, encode_checkpoint
from longpuzzle.engine.suite import Suite, encode_snapshot

FULL_EVERY = 100          # a full snapshot every this many state records (restores stay short)
CONSTANT = ("format", "style", "scale", "direct", "action_gap_ms", "viewport", "lang")   # written when they change
# the order in which Suite.snapshot_fields writes its fields (a rebuilt snapshot's text is the suite's)
FIELD_ORDER = ("format", "style", "scale", "direct", "action_gap_ms", "clock", "screen", "complete", "ui", "pointer",
               "toast", "shake", "anims", "viewport", "lang", "timer", "limits", "failed")
_ABSENT = object()


def _kept(prev: list, cur: list) -> int:
    """How many leading entries ``cur`` shares with ``prev``."""
    n = len(prev)
    if len(cur) >= n and cur[:n] == prev:           # the usual case: entries were appended
        return n
    k, m = 0, min(n, len(cur))
    while k < m and prev[k] == cur[k]:
        k += 1
    return k


class SuiteStates:
    """Makes the state part of private records for one episode's suite, starting from its
    state in the header (the episode's writer and a replay call it alike)."""

    def __init__(self, suite: Suite, elide: bool = True):
        self.records = 0
        self.elide = elide        # False: format 2's deltas (every setting, digest and animation state)
        self._remember(suite)

    def _remember(self, suite: Suite) -> None:
        s = suite.session
        f = suite.snapshot_fields()
        self._consts = {k: f.get(k, _ABSENT) for k in CONSTANT}
        self._level = None if s is None else (s.level.id, s.level.sha256)
        self._moves = [] if s is None else list(s.moves)
        self._log = [] if s is None else list(s.log)
        self._state = None if s is None else s.state.tolist()

    def record(self, suite: Suite) -> dict:
        """{"snapshot": text} or {"suite": delta}: the state part of the next private record."""
        self.records += 1
        if self.records % FULL_EVERY != 0:
            d = self.delta(suite)
            if d is not None:
                return {"suite": d}
        return {"snapshot": self.full(suite)}

    def full(self, suite: Suite) -> str:
        text = suite.snapshot()
        self._remember(suite)
        return text

    def delta(self, suite: Suite) -> dict | None:
        """The delta record, or None when only a full snapshot can say it (a setting vanished)."""
        fields = suite.snapshot_fields()
        if not self.elide:
            return self._delta2(suite, fields)
        consts = self._consts
        for k in CONSTANT:
            v = fields.get(k, _ABSENT)
            if v is _ABSENT:
                if consts[k] is not _ABSENT:
                    return None
            elif v == consts[k]:
                del fields[k]
            else:
                consts[k] = v
        prev = self._state
        if prev is not None and fields["anims"]:
            fields["anims"] = [{**a, "before": None} if a["before"] == prev else a for a in fields["anims"]]
        out: dict = {"fields": fields, "session": None}
        s = suite.session
        if s is None:
            self._level, self._moves, self._log, self._state = None, [], [], None
            return out
        key = (s.level.id, s.level.sha256)
        moves, log = s.moves, s.log
        same = key == self._level               # move texts are the level's own
        km = _kept(self._moves, moves) if same else 0
        kl = _kept(self._log, log) if same else 0
        state = s.state.tolist()
        sess = out["session"] = {"level": key[0], "state": state, "counters": s.counters.as_dict(),
                                 "moves": [km, [s.move_text(a) for a in moves[km:]]], "log": [kl, log[kl:]]}
        if not same:
            sess["level_sha256"] = key[1]
        self._level, self._moves, self._log, self._state = key, list(moves), list(log), state
        return out

    def _delta2(self, suite: Suite, fields: dict) -> dict:
        """A delta record as format 2 wrote it."""
        out: dict = {"fields": fields, "session": None}
        s = suite.session
        if s is None:
            self._level, self._moves, self._log = None, [], []
            return out
        key = (s.level.id, s.level.sha256)
        moves, log = s.moves, s.log
        same = key == self._level
        km = _kept(self._moves, moves) if same else 0
        kl = _kept(self._log, log) if same else 0
        out["session"] = {"level": key[0], "level_sha256": key[1], "state": s.state.tolist(),
                          "counters": s.counters.as_dict(),
                          "moves": [km, [s.move_text(a) for a in moves[km:]]], "log": [kl, log[kl:]]}
        self._level, self._moves, self._log = key, list(moves), list(log)
        return out

    def check(self, suite: Suite, rec: dict) -> bool:
        """Whether a recorded private record's state is that of ``suite`` (the replayed app):
        the same record made from it, full or delta as recorded. Records without a state
        (refused actions) pass."""
        if "snapshot" in rec:
            return self.full(suite) == rec["snapshot"]
        if "suite" in rec:
            return canonical_json(self.delta(suite)) == canonical_json(rec["suite"])
        return True


class StateRebuilder:
    """The exact state after each private record, rebuilt from the header's start snapshot
    and the records in order (``apply``); ``snapshot()`` is its Suite.snapshot() text."""

    def __init__(self, start: str):
        self._full(start)

    def _full(self, text: str) -> None:
        try:
            body = json.loads(text)
            sess = body["session"]
            self.fields = {k: v for k, v in body.items() if k not in ("session", "checksum")}
            self.session = None if sess is None else {k: v for k, v in json.loads(sess).items() if k != "checksum"}
        except (TypeError, ValueError, KeyError, AttributeError) as e:
            raise HarnessError(f"a recorded suite snapshot cannot be read: {type(e).__name__}: {e}") from None
        self.text = text

    def apply(self, rec: dict) -> None:
        """Take one private record's state (no state: a refused action changed nothing)."""
        if "snapshot" in rec:
            self._full(rec["snapshot"])
        elif "suite" in rec:
            try:
                self._delta(rec["suite"])
            except (TypeError, ValueError, KeyError, AttributeError) as e:
                raise HarnessError(f"step {rec.get('step')}: the recorded suite state is malformed: "
                                   f"{type(e).__name__}: {e}") from None

    def _delta(self, d: dict) -> None:
        fields, sd = d["fields"], d["session"]
        if type(fields) is not dict or not (sd is None or type(sd) is dict):
            raise TypeError("fields must be an object and session an object or null")
        prev = self.session
        # the settings not written again, in their places; every other field is written in each
        # delta when the suite has it (an optional one absent from a delta is gone)
        kept = {k: v for k, v in self.fields.items() if k in CONSTANT or k in fields}
        kept.update(fields)
        merged = {k: kept.pop(k) for k in FIELD_ORDER if k in kept}     # in the order snapshots write them
        merged.update(kept)
        if prev is not None and any(a.get("before") is None for a in merged["anims"]):
            merged["anims"] = [{**a, "before": prev["state"]} if a.get("before") is None else a
                               for a in merged["anims"]]
        self.fields = merged
        self.text = None
        if sd is None:
            self.session = None
            return
        sha = sd.get("level_sha256", None)
        if prev is None or prev.get("level") != sd["level"] or (sha is not None and prev.get("level_sha256") != sha):
            if sha is None:
                raise ValueError("a new level's session needs its level_sha256")
            prev = {"moves": [], "log": [], "level_sha256": sha}
        (km, tm), (kl, tl) = sd["moves"], sd["log"]
        if type(km) is not int or type(kl) is not int or type(tm) is not list or type(tl) is not list \
                or not 0 <= km <= len(prev["moves"]) or not 0 <= kl <= len(prev["log"]):
            raise ValueError("moves and log must be [kept entries, [new entries]] within the previous lists")
        self.session = {"format": CHECKPOINT_FORMAT, "level": sd["level"], "level_sha256": prev["level_sha256"],
                        "state": sd["state"], "moves": prev["moves"][:km] + tm, "log": prev["log"][:kl] + tl,
                        "counters": sd["counters"]}

    def snapshot(self) -> str:
        if self.text is None:
            self.text = encode_snapshot(self.fields, None if self.session is None else encode_checkpoint(self.session))
        return self.text

