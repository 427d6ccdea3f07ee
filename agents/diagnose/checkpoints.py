"""Checkpoints: the fixed, validated states every takeover, retry and branch experiment starts
from (PAPERS.md section 5, D.1 and D.3; SCOPES contract 1).

A checkpoints folder holds

    manifest.json       {"kind": "longpuzzle-checkpoints", "version": 1, "catalog": <hash>,
                         "catalog_ident": {name, version, hash}, "created": <UTC ISO time>,
                         "made_from": [how each part was made: a run folder, or a level and a
                         policy], "count": n}
    checkpoints.jsonl   one object per checkpoint (FIELDS): its id ("D01", "N01": dead end,
                        control), kind "dead_end" | "control", the objective and level, the
                        source (the bootstrap group: the source level), the episode folder it
                        is a step of (relative to the checkpoints folder), the step, and the
                        digests that pin it: events_sha256 (the episode's events.jsonl),
                        state_sha256 (the board: level id and puzzle state, ``board_digest``),
                        suite_sha256 (the whole app snapshot), frame_sha256 (SHA-256 of the
                        screenshot's pixels as the episode's settings draw it), frame (the
                        episode's own recorded hash of that screenshot); certificate (a dead
                        end's, ``certify_dead_end``) or null; distance d(s) (a control's) or
                        null; P, and the native restart's check (``restart``).
    episodes/           the episodes the checkpoints are steps of (copied or hard-linked from
                        the runs they were found in, or recorded from scratch): a checkpoints
                        folder is self-contained, and a continuation's ``continued_from``
                        names a folder that stays where it is.

The folder is written whole into a temporary sibling and renamed into place (``write_folder``):
it exists complete or not at all. ``load_checkpoints`` re-validates every checkpoint against
the folder and the rules as they are now (the episode's digest, an independent replay of it,
the restored board and screenshot, the certificate or the distance, the catalogue): the first
that fails raises CheckpointError, one line, and nothing is returned.

Validation (``validate``), as the paper does it:
    dead end   unfinished (a level on screen, not won, not failed), stable (no animation
               running, no timer, no selection pending), certified: Bolt Unscrew the paper's
               no-free-hole certificate (no usable free hole left), every other game the
               exhaustive one (solvers.core.certify: every reachable state visited; Nut and
               Bolt's transfer rule); and a native restart (a click on the screen's own
               restart button) restores a playable board (the level's start, solvable).
    control    unfinished, stable, solvable with d(s) exact, and a completion shorter than
               restart plus solution: d(s) < 1 + d(start) (the restart is one action).
    both       an independent replay of the episode (replay.replay_episode: every action
               dispatched again from the recorded start, every frame hash and suite state
               compared) reaches the step, and the exact state restored at the step
               (restore_step) gives the recorded board and, drawn again, the recorded
               screenshot hash.

Python:

    cps = load_checkpoints("ckpts")               # validated, or CheckpointError
    suite = cps[0].restore()                      # the exact app at the checkpoint
    res = cps[0].continue_with(agent, note="State information: ...", out="runs/x")
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from longpuzzle.agents.harness.episode_folder import copy_episode, recorded_frame_hash
from longpuzzle.agents.harness.replay import continue_episode, recorded_catalog, replay_episode, restore_step
from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.agents.harness.trajectory import read_events
from longpuzzle.engine.catalog import Catalog, builtin_catalog
from longpuzzle.engine.errors import LongPuzzleError

KIND = "longpuzzle-checkpoints"
VERSION = 1
MANIFEST = "manifest.json"
RECORDS = "checkpoints.jsonl"
EPISODES = "episodes"
KINDS = ("dead_end", "control")
ID_PREFIX = {"dead_end": "D", "control": "N"}      # the paper's names: D checkpoints, N controls
# every field of a checkpoint record, with its JSON type (None: may be null)
FIELDS: dict[str, tuple] = {
    "id": (str,), "kind": (str,), "objective": (str,), "level": (str,), "source": (str,), "episode": (str,),
    "step": (int,), "events_sha256": (str,), "state_sha256": (str,), "suite_sha256": (str,),
    "frame_sha256": (str,), "frame": (str,), "certificate": (dict, type(None)), "distance": (int, type(None)),
    "P": (float, int), "restart": (dict, type(None)), "origin": (dict,),
}
CERTIFY_BUDGET = 1_000_000       # states an exhaustive certificate may visit (deterministic: never time)


class CheckpointError(HarnessError):
    """A checkpoint that does not validate, or a checkpoints folder that is not one (one line)."""


# ---- digests -----------------------------------------------------------------------------------

def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def board_digest(suite) -> str:
    """SHA-256 of the board on screen: the level id, the state's dtype and shape, its bytes."""
    s = np.ascontiguousarray(suite.session.state)
    head = f"{suite.level.id}\n{s.dtype.str}\n{s.shape}\n".encode()
    return hashlib.sha256(head + s.tobytes()).hexdigest()


def suite_digest(suite) -> str:
    """SHA-256 of the whole app's exact snapshot text."""
    return hashlib.sha256(suite.snapshot().encode()).hexdigest()


def screenshot(suite) -> np.ndarray:
    """The screenshot of ``suite`` as its settings draw it (style, scale, page, language)."""
    from longpuzzle.render.frame.screens import renderer_for
    return renderer_for(suite).render(suite)


def pixels_digest(frame: np.ndarray) -> str:
    """SHA-256 of a screenshot's pixels (shape first, then every byte)."""
    f = np.ascontiguousarray(frame)
    return hashlib.sha256(f"{f.shape}\n".encode() + f.tobytes()).hexdigest()


# ---- the checkpoint -----------------------------------------------------------------------------

@dataclass
class Checkpoint:
    """One validated state: step ``step`` of the episode folder ``episode`` (relative to the
    checkpoints folder ``folder``). See the module docstring for the fields."""
    id: str
    kind: str
    objective: str
    level: str
    source: str
    episode: str
    step: int
    events_sha256: str
    state_sha256: str
    suite_sha256: str
    frame_sha256: str
    frame: str
    certificate: dict | None
    distance: int | None
    P: float
    restart: dict | None = None
    origin: dict = field(default_factory=dict)        # where it was found (run folder, episode, policy)
    folder: Path | None = field(default=None, repr=False, compare=False)
    catalog: Catalog | None = field(default=None, repr=False, compare=False)

    @property
    def episode_dir(self) -> Path:
        return Path(self.folder) / self.episode

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in FIELDS}

    def restore(self):
        """The exact app (engine Suite) at the checkpoint: restore_step of its episode."""
        return restore_step(self.episode_dir, self.step, self.catalog)

    def screenshot(self) -> np.ndarray:
        """The checkpoint's screenshot, drawn again from the restored state with the episode's
        screen settings (its pixels' SHA-256 is ``frame_sha256``)."""
        return screenshot(self.restore())

    def continue_with(self, agent, *, note: str = "", out: str | Path | None = None, settings=None,
                      takeover=True, stop_when: dict | None = None):
        """Continue the checkpoint's episode from its step with ``agent`` (replay.continue_episode):
        the continuation is an ordinary episode folder (``out``) whose header names this
        episode and step (``continued_from``), so ``replay`` derives its start. ``note`` is
        the intervention's text (added to the instruction); ``takeover`` the D.1 takeover
        context the agent is given after reset (agents/api.py Takeover: True builds it from the
        checkpoint's episode - its public action prefix, up to 4 screenshot-action pairs, the
        current screenshot; a Takeover is given as is; False or None: none); ``stop_when`` its
        stop condition (e.g. ``{"won": [self.level]}``: it ends once the level is won)."""
        return continue_episode(self.episode_dir, self.step, agent, note=note, settings=settings, out=out,
                                catalog=self.catalog, takeover=takeover, stop_when=stop_when)


# ---- validation ---------------------------------------------------------------------------------

def unfinished_and_stable(suite) -> str:
    """"" when the suite shows a level being played, not won, and nothing is pending (no
    animation running past the clock, no timer, no selection or press held); else why not."""
    if suite.session is None or suite.screen.get("name") != "level":
        return f"no level is on screen (screen {suite.screen.get('name')!r})"
    lvl, p = suite.level, suite.puzzle
    if suite.complete or p.is_solved(lvl, suite.session.state):
        return "the level is won (not unfinished)"
    if suite.failed is not None:
        return f"the game's own limits ended the level ({suite.failed})"
    if suite.timer is not None:
        return "a timer is pending (not stable)"
    if any(a.get("t1", 0) > suite.clock for a in suite.anims or []):
        return "an animation is still running (not stable)"
    ui = suite.ui or {}
    if ui.get("selected") is not None:
        return "a selection is pending (not stable)"
    return ""


def certify_dead_end(suite, budget: int = CERTIFY_BUDGET) -> dict:
    """The dead-end certificate of the board on screen (CheckpointError if it has none):
    Bolt Unscrew the paper's no-free-hole certificate (plus what the exhaustive search says,
    for information), every other game the exhaustive certificate (solvers.core.certify)."""
    from longpuzzle.solvers.core import certify

    why = unfinished_and_stable(suite)
    if why:
        raise CheckpointError(f"not a dead end: {why}")
    lvl, p, s = suite.level, suite.puzzle, suite.session.state
    if lvl.game == "bolt_unscrew":
        holes = p.diagnostics(lvl, s).get("usable_holes")
        if holes != 0:
            raise CheckpointError(f"not a certified dead end: {holes} usable free hole(s) left "
                                  "(the no-free-hole certificate does not hold)")
        return {"kind": "no_free_hole", "usable_holes": 0, "stable": True, "unfinished": True}
    r = certify(lvl, s.copy(), budget=budget, solution=False)
    if r.status != "unsolvable":
        raise CheckpointError(f"not a certified dead end: the exhaustive search finds the board {r.status}")
    return {"kind": "exhaustive", "method": r.method, "states": int(r.states or 0), "budget": budget,
            "stable": True, "unfinished": True}


def control_distance(suite, oracle=None) -> tuple[int, int]:
    """(d(s), d(start)) of a solvable control board (CheckpointError unless d(s) is exact and
    shorter than restart plus solution: d(s) < 1 + d(start))."""
    from longpuzzle.solvers.oracle import oracle_for

    why = unfinished_and_stable(suite)
    if why:
        raise CheckpointError(f"not a control: {why}")
    o = oracle or oracle_for(suite.level)
    here, start = o.at(suite.session.state), o.at(None)
    if here.dead_end or not here.exact or not start.exact:
        raise CheckpointError(f"not a control: d(s) is not known exactly ({here.status}, {here.method})")
    if not here.distance < 1 + start.distance:
        raise CheckpointError(f"not a control: its completion ({here.distance} moves) is not shorter than restart "
                              f"plus solution (1 + {start.distance})")
    return here.distance, start.distance


def native_restart(suite) -> dict:
    """Press the screen's own restart button on a copy of ``suite`` and check that it restores
    a playable board: the same level, its start state, stable, solvable (CheckpointError if not)."""
    from longpuzzle.solvers.core import certify

    c = suite.clone()
    w = next((w for w in c.layout().widgets if w.id == "restart"), None)
    if w is None:
        raise CheckpointError("the screen has no restart button")
    px, py = c.proj.to_px(*w.shape.center)
    action = {"type": "click", "x": int(round(px)), "y": int(round(py))}
    c.dispatch(action)
    lvl = suite.level
    if c.session is None or c.level.id != lvl.id:
        raise CheckpointError("a native restart does not stay on the level")
    if not np.array_equal(c.session.state, lvl.initial):
        raise CheckpointError("a native restart does not restore the level's start")
    why = unfinished_and_stable(c)
    if why:
        raise CheckpointError(f"a native restart leaves no playable board: {why}")
    r = certify(lvl, c.session.state.copy(), budget=CERTIFY_BUDGET, solution=False)
    if r.status != "solvable":
        raise CheckpointError(f"a native restart leaves a board that is {r.status}")
    return {"action": action, "state_sha256": board_digest(c), "playable": True}


def state_facts(suite, kind: str, oracle=None) -> dict:
    """What validates a state of ``kind`` now: certificate, distance, P and the restart check
    (CheckpointError with the reason when it does not validate)."""
    if kind == "dead_end":
        cert, dist = certify_dead_end(suite), None
    elif kind == "control":
        cert, (dist, _) = None, control_distance(suite, oracle)
    else:
        raise CheckpointError(f"unknown checkpoint kind {str(kind)[:40]!r} (one of {', '.join(KINDS)})")
    lvl = suite.level
    return {"certificate": cert, "distance": dist, "P": float(suite.puzzle.progress(lvl, suite.session.state)),
            "restart": native_restart(suite)}


_REPLAYS: dict = {}          # (episode path, events digest, catalogue hash) -> steps replayed, this process


def replayed_steps(episode: str | Path, events_sha256: str, catalog: Catalog) -> int:
    """The steps of ``episode`` an independent replay reproduces exactly (CheckpointError if it
    diverges; memoised per events digest within the process)."""
    key = (str(Path(episode).resolve()), events_sha256, catalog.content_hash)
    if key not in _REPLAYS:
        try:
            rep = replay_episode(episode, catalog)
        except LongPuzzleError as e:
            raise CheckpointError(f"{episode} does not replay: {e}") from None
        if not rep.ok:
            raise CheckpointError(f"{episode} does not replay: {rep.divergence}")
        _REPLAYS[key] = rep.steps
    return _REPLAYS[key]


def recorded_frame(lines: list[dict], step: int) -> str:
    """The recorded hash of the screenshot after step ``step`` (episode_folder.recorded_frame_hash)."""
    last = recorded_frame_hash(lines, step)
    if last is None:
        raise CheckpointError(f"the episode records no screenshot up to step {step}")
    return last


def pin(episode: str | Path, step: int, catalog: Catalog) -> dict:
    """The digests of step ``step`` of ``episode``, checked two independent ways: the replay
    of every action reproduces the recorded frames and states up to the step, and the state
    restored from the recorded snapshots, drawn again, gives the recorded screenshot hash."""
    from longpuzzle.agents.harness.frames import hasher, header_frame_hash

    events = file_sha256(Path(episode) / "events.jsonl")
    if replayed_steps(episode, events, catalog) < step:
        raise CheckpointError(f"{episode} replays fewer than {step} steps")
    suite = restore_step(episode, step, catalog)
    if suite.session is None:
        raise CheckpointError(f"step {step} of {episode} shows no level")
    lines = read_events(episode)
    frame = screenshot(suite)
    want = recorded_frame(lines, step)
    if hasher(header_frame_hash(lines[0]))(frame) != want:
        raise CheckpointError(f"step {step} of {episode}: the restored state does not draw the recorded screenshot")
    return {"suite": suite, "events_sha256": events, "state_sha256": board_digest(suite),
            "suite_sha256": suite_digest(suite), "frame_sha256": pixels_digest(frame), "frame": want}


def make_checkpoint(folder: str | Path, episode: str | Path, step: int, kind: str, *, catalog: Catalog,
                    origin: dict | None = None, oracle=None) -> Checkpoint:
    """Validate step ``step`` of ``episode`` (a folder inside the checkpoints folder ``folder``)
    as a checkpoint of ``kind`` and return it (its id is set by ``write_folder``)."""
    episode = Path(episode)
    head = read_events(episode)[0]
    if head.get("protocol") != "objective":
        raise CheckpointError(f"{episode} is a level-protocol episode: only objective episodes can be continued")
    got = pin(episode, step, catalog)
    suite = got.pop("suite")
    facts = state_facts(suite, kind, oracle)
    return Checkpoint(id="", kind=kind, objective=head["objective"], level=suite.level.id, source=suite.level.id,
                      episode=os.path.relpath(episode, folder), step=int(step), **got, **facts,
                      origin=dict(origin or {}), folder=Path(folder), catalog=catalog)


# ---- the folder ---------------------------------------------------------------------------------

def _manifest(catalog: Catalog, made_from: list, count: int) -> dict:
    return {"kind": KIND, "version": VERSION, "catalog": catalog.content_hash, "catalog_ident": catalog.identity(),
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "made_from": list(made_from), "count": count}


def staging(out: str | Path) -> Path:
    """A fresh temporary folder beside ``out`` to build a checkpoints folder in (``out`` must
    not exist yet, or be an empty folder: a checkpoints folder is never overwritten)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CheckpointError(f"{out} already exists: checkpoints are fixed, write them to a new folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))


def write_folder(tmp: Path, out: str | Path, checkpoints: list[Checkpoint], catalog: Catalog,
                 made_from: list) -> list[Checkpoint]:
    """Number the checkpoints (D01.., N01.. in order), write the manifest and records into the
    staging folder ``tmp`` (its episodes already there) and rename it to ``out`` at once."""
    out = Path(out)
    n = dict.fromkeys(KINDS, 0)
    for cp in checkpoints:
        n[cp.kind] += 1
        cp.id = f"{ID_PREFIX[cp.kind]}{n[cp.kind]:02d}"
    with open(tmp / RECORDS, "w", encoding="utf-8") as f:
        for cp in checkpoints:
            f.write(json.dumps(cp.as_dict(), sort_keys=True) + "\n")
    with open(tmp / MANIFEST, "w", encoding="utf-8") as f:
        json.dump(_manifest(catalog, made_from, len(checkpoints)), f, indent=1, sort_keys=True)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o777 & ~mask)         # (mkdtemp makes it private; the folder is the user's)
    if out.is_dir():
        out.rmdir()                      # an empty folder given (staging checked it is empty)
    os.replace(tmp, out)
    for cp in checkpoints:
        cp.folder = out
    return checkpoints


def discard(tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)


def read_manifest(folder: str | Path) -> dict:
    p = Path(folder) / MANIFEST
    if not Path(folder).is_dir():
        raise CheckpointError(f"{folder} is not a folder")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{folder} is not a checkpoints folder (no {MANIFEST})") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"{p} is not valid JSON: {str(e)[:80]}") from None
    if type(doc) is not dict or doc.get("kind") != KIND:
        raise CheckpointError(f"{p} is not a checkpoints manifest (kind {KIND!r})")
    if doc.get("version") != VERSION:
        raise CheckpointError(f"{p} is version {str(doc.get('version'))[:20]}; this longpuzzle reads version {VERSION}")
    if type(doc.get("catalog")) is not str:
        raise CheckpointError(f"{p} names no catalogue")
    return doc


def read_records(folder: str | Path) -> list[dict]:
    """The checkpoint records as written, each checked for its fields and their types."""
    p = Path(folder) / RECORDS
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CheckpointError(f"{folder} has no {RECORDS}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{p} cannot be read: {str(e)[:80]}") from None
    out, ids = [], set()
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise CheckpointError(f"{p}: line {i} is not JSON") from None
        if type(rec) is not dict:
            raise CheckpointError(f"{p}: line {i} is not a JSON object")
        for k, types in FIELDS.items():
            if k not in rec or type(rec[k]) not in types:
                raise CheckpointError(f"{p}: line {i} has no valid {k!r}")
        if rec["kind"] not in KINDS:
            raise CheckpointError(f"{p}: line {i}: unknown kind {rec['kind'][:40]!r}")
        if rec["id"] in ids:
            raise CheckpointError(f"{p}: line {i}: the id {rec['id'][:40]!r} is there twice")
        if Path(rec["episode"]).is_absolute() or ".." in Path(rec["episode"]).parts:
            raise CheckpointError(f"{p}: line {i}: the episode must be a folder inside the checkpoints folder")
        ids.add(rec["id"])
        out.append(rec)
    return out


def load_checkpoints(folder: str | Path, catalog: Catalog | None = None, *, validate: bool = True
                     ) -> list[Checkpoint]:
    """The checkpoints of ``folder``, each re-validated now (``validate``; see the module
    docstring): its episode unchanged (events digest) and replaying, its restored board and
    screenshot as recorded, its certificate or distance still holding, the native restart
    still restoring a playable board. ``catalog`` (default: the built-in one) must be the
    catalogue the folder was made on. CheckpointError (one line) at the first that fails."""
    folder = Path(folder)
    man = read_manifest(folder)
    have = catalog or builtin_catalog()
    if man["catalog"] != have.content_hash:
        ident = man.get("catalog_ident") or {}
        try:        # the recorded snapshot of that catalogue, when the caller did not name one
            cat = recorded_catalog(ident, have) if catalog is None else None
        except HarnessError:
            cat = None
        if cat is None or cat.content_hash != man["catalog"]:
            raise CheckpointError(f"{folder} was made on another catalogue (hash {man['catalog'][:16]}) than "
                                  f"{have.identity().get('name') or 'builtin'} (hash {have.content_hash[:16]})")
        have = cat
    out = []
    for rec in read_records(folder):
        # fields a later version may add are kept out of the object (FIELDS are all checked)
        cp = Checkpoint(**{k: rec[k] for k in FIELDS}, folder=folder, catalog=have)
        if validate:
            check(cp)
        out.append(cp)
    return out


def check(cp: Checkpoint) -> None:
    """Re-validate one loaded checkpoint (CheckpointError naming it and what fails)."""
    try:
        ep = cp.episode_dir
        if not (ep / "events.jsonl").is_file():
            raise CheckpointError(f"its episode {cp.episode} is not there")
        if file_sha256(ep / "events.jsonl") != cp.events_sha256:
            raise CheckpointError(f"its episode {cp.episode} has changed since (events digest)")
        got = pin(ep, cp.step, cp.catalog)
        suite = got.pop("suite")
        for k, v in got.items():
            if getattr(cp, k) != v:
                raise CheckpointError(f"the {k} differs from the restored state's")
        if suite.level.id != cp.level:
            raise CheckpointError(f"the state is on {suite.level.id}, not {cp.level}")
        facts = state_facts(suite, cp.kind)
        if cp.kind == "dead_end" and facts["certificate"]["kind"] != (cp.certificate or {}).get("kind"):
            raise CheckpointError("the state's certificate is not the recorded one")
        if cp.kind == "control" and facts["distance"] != cp.distance:
            raise CheckpointError(f"d(s) is {facts['distance']}, recorded {cp.distance}")
    except CheckpointError as e:
        raise CheckpointError(f"checkpoint {cp.id} ({cp.level}, step {cp.step}) no longer validates: {e}") from None
    except LongPuzzleError as e:
        raise CheckpointError(f"checkpoint {cp.id} ({cp.level}, step {cp.step}) cannot be restored: {e}") from None


__all__ = ["Checkpoint", "CheckpointError", "FIELDS", "KIND", "VERSION", "board_digest", "certify_dead_end",
           "check", "control_distance", "copy_episode", "load_checkpoints", "make_checkpoint", "native_restart",
           "pin", "read_manifest", "read_records", "staging", "state_facts", "write_folder"]
