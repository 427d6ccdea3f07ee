"""The controller: one per episode, the only thing that touches the episode. Every tool call
of every transport (MCP, a model's function calling, run_python's ``gui``) goes through
``Controller.call(name, args)``.

    c = Controller("maze_paint", "easy", setting="vista", folder="results/x")
    r = c.call("play", {"action": "wait", "ms": 0})             # ToolResult: text + PNG images
    r = c.call("play", {"action": "click", "x": 270, "y": 600})
    r = c.call("inspect", {"question": "the board", "views": [
        {"label": "corner", "turn": 1, "region": {"x": 0, "y": 0, "w": 100, "h": 100}}]})
    c.call("final_answer", {"text": "BENCHMARK COMPLETED ..."})
    c.result                                                    # the EpisodeResult, once ended

The episode is the harness's own (agents.harness.ObjectiveEpisode): the paper's objective
protocol, its budget clock and the private evaluator, writing the episode folder that
``replay`` and ``report`` read. The agent's time is the time between the result of one
``play`` and the next one (charged to the budget as the protocol says); a watchdog ends the
episode at the deadline (and after ``action_timeout`` seconds without a play, if set) when
no call comes, at that moment (it sleeps until then, and a play that brings the deadline
closer wakes it). A ``play`` sent while another is still running is refused: the agent must
have seen the previous result. While a checkpoint is due (``request_checkpoint``, or the
estimate of the client's context reaching ``checkpoint_tokens``) every tool but PAUSE_TOOLS
is refused until ``save_compact_checkpoint`` (VISTA's pause, for every transport). A call with bad arguments gets a ToolError message and
changes nothing (it is not passed to the episode, so the protocol's invalid-action rule
never sees it); every call is one NGAR step (tools.py).

Every call is logged in the episode's events as a ``"stream": "tools"`` record::

    {"stream": "tools", "call": 7, "tool": "inspect", "class": "other", "args": {...},
     "turn": 12, "turns": [], "t": 31.2, "seconds": 0.004, "ok": true,
     "result": {"bytes": 20931, "text": 211, "images": 2},
     "refs": [{"index": 40, "turn": 12, "frame": -1, "box": [0, 0, 100, 100], "zoom": 4,
               "hash": "<xxh3-128 of the returned pixels>"}, ...]}

``turn`` is the last turn before the call, ``turns`` the turns it made, ``t`` seconds since
the controller started, ``refs`` what each returned image or pixel grid was made from
(records.py reproduces them from the folder). WORKING.md being cleared is a record
``{"stream": "tools", "note": "working_cleared", "turn": T}``.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longpuzzle.agents.base import FinalAnswer
from longpuzzle.agents.harness import HarnessError, ObjectiveEpisode, Settings, frame_hash
from longpuzzle.agents.vista import tools as T
from longpuzzle.agents.vista.tools import ToolError, result_json as _json
from longpuzzle.agents.vista.archive import (ArchiveError, FrameArchive, crop_zoom, fit_zoom, pixel_samples,
                                             pixel_views, region_of, samples_hash, view_box)
from longpuzzle.agents.vista.history import History, level_key
from longpuzzle.agents.vista.notes import GUIDE, WORKING, Notes, NotesError
from longpuzzle.agents.media.png import PngStream
from longpuzzle.engine.lru import LRU

TOOLS_STREAM = "tools"
PAUSE_TOOLS = ("save_compact_checkpoint", "read_guide", "read_working", "final_answer")   # answered while paused
CHECKPOINT_DUE = ("paused: your context is nearly full. Call save_compact_checkpoint(guide, working_memory) now "
                  "(guide null keeps GUIDE.md); the other tools wait until you have (read_guide, read_working and "
                  "final_answer still answer)")
IMAGE_TOKEN_PIXELS = 750     # the context estimate: an image is w x h / this many tokens (as models bill them)
IMAGE_TOKENS_CAP = 1600      # and at most this many
PNG_CACHE = 64               # PNG images kept, by what they show (the same view is often sent again)
PNG_BANDS = 512              # compressed bands of rows kept (agents/media/png.PngStream: about 34 whole frames)


@dataclass
class Image:
    png: bytes
    width: int
    height: int
    ref: dict                    # what it was made from (the log record's refs)


@dataclass
class ToolResult:
    text: str
    images: list[Image] = field(default_factory=list)
    error: bool = False

    @property
    def bytes(self) -> int:
        return len(self.text.encode("utf-8")) + sum(len(i.png) for i in self.images)


def _jsonable(v):
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        return repr(v)


class Controller:
    """One episode's tools (see the module doc). ``setting`` names the tool set (tools.SETTINGS)
    unless ``tools`` lists them; ``guide`` seeds GUIDE.md; ``code_limits`` bounds run_python;
    ``on_finish(result)`` is called once the episode has ended and result.json is written."""

    def __init__(self, game: str, difficulty: str, *, setting: str = "vista", tools: tuple[str, ...] | None = None,
                 settings: Settings | None = None, folder: str | Path | None = None, agent_name: str = "mcp",
                 guide: str = "", instruction: str | None = None, action_timeout: float | None = None,
                 on_action=None, on_finish=None, code_limits=None, header: dict | None = None,
                 batch: bool | None = None, checkpoint_tokens: int | None = None, catalog=None):
        if setting not in T.SETTINGS:
            raise HarnessError(f"unknown setting {setting!r}: use one of {', '.join(T.SETTINGS)}")
        names = tuple(tools) if tools is not None else T.SETTINGS[setting]
        unknown = [n for n in names if n not in T.TOOLS]
        if unknown:
            raise HarnessError(f"unknown tool(s) {', '.join(unknown)}: tools are {', '.join(T.TOOLS)}")
        st = settings or Settings()
        needs_archive = any(n in names for n in ("inspect", "read_pixels", "run_python"))
        self._tmp = None
        if needs_archive and not st.save_frames:
            raise HarnessError(f"the {setting} setting reads archived frames: it needs stored frames (not --no-frames)")
        if folder is None and needs_archive:
            self._tmp = tempfile.TemporaryDirectory(prefix="longpuzzle-vista-")
            folder = self._tmp.name
        self.setting, self.names = setting, names
        # play takes batches where the setting's action set has them (native, code) unless told
        self.batch = setting != "vista" if batch is None else bool(batch)
        self.tools = T.tools_for(names, self.batch)
        self.folder = Path(folder) if folder is not None else None
        self.ep = ObjectiveEpisode(game, difficulty, settings=st, folder=self.folder, instruction=instruction,
                                   agent_name=agent_name, on_action=on_action, catalog=catalog,
                                   header={"driver": "vista", "setting": setting, "tools": list(names),
                                           **(header or {})})
        self.instruction = self.ep.instruction
        self.action_spec = self.ep.action_spec
        self.frame_size = tuple(self.ep.suite.frame_size)
        self.archive = FrameArchive(self.folder, self.ep.run.traj, self.frame_size)
        self.history = History()
        self.notes = Notes(self.folder, guide)
        self.action_timeout = action_timeout or None
        self.code_limits = code_limits
        self.on_finish = on_finish            # on_finish(EpisodeResult) once the episode has ended
        self.result = None
        self.calls = 0
        self.checkpoints = 0
        # the pause-until-checkpoint rule (VISTA): once due, tools other than PAUSE_TOOLS are
        # refused until save_compact_checkpoint; due when a model agent says its context is
        # nearly full (request_checkpoint) or, for a client whose context the harness does
        # not see (MCP), when the estimated tokens it was sent since the last checkpoint
        # reach checkpoint_tokens (None: never)
        self.checkpoint_tokens = checkpoint_tokens if "save_compact_checkpoint" in names else None
        self.checkpoint_due = False
        self.context_estimate = 0
        self.t_start = time.perf_counter()
        self.t_ready = self.t_start           # when the agent last got a play result
        self._lock = threading.RLock()        # one call at a time
        self._flight = threading.Lock()       # guards _playing
        self._counting = threading.Lock()     # guards calls and the NGAR step counts
        self._playing = False
        self._cond = threading.Condition()    # the watchdog sleeps on it until _wake_at
        self._wake_at: float | None = None
        self._code = None                     # the run_python process (code.py), started on first use
        # (frame digest, box or None, zoom) -> (PNG bytes, hash of its pixels), the latest: a
        # view of a frame equal to one sent before (frames repeat a lot) is not made again
        self._pngs = LRU(PNG_CACHE)
        # the PNGs' encoder: images are bands of rows compressed once, so the rows that views
        # of nearby turns share (most of a frame: a move changes a few places) are compressed
        # once; any PNG decoder reads them (agents/media/png.py)
        self._stream = PngStream(cache_bands=PNG_BANDS)
        self._watch = threading.Thread(target=self._watchdog, name="vista-watchdog", daemon=True)
        self._watch.start()

    # ---- state ------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.result is not None

    @property
    def turn(self) -> int:
        return self.ep.run.step

    def time_left(self) -> float | None:
        left = self.ep.clock.left()
        return None if left is None else round(max(0.0, left), 3)

    # ---- the one entry point ------------------------------------------------------------------
    def call(self, name: str, args: Any = None) -> ToolResult:
        """Run one tool call; a ToolError becomes an error result (nothing changed)."""
        args = {} if args is None else args
        is_play = name == "play"
        if is_play:
            with self._flight:
                busy = self._playing
                self._playing = True
            if busy:
                return self._refused_concurrent(args)
        try:
            with self._lock:
                return self._call(name, args)
        finally:
            if is_play:
                with self._flight:
                    self._playing = False

    def _call(self, name: str, args: Any) -> ToolResult:
        if self.done or self.ep.poll():
            self._finish()
            return ToolResult(f"the episode has ended ({self.ep.end}); no tool can be used any more", error=True)
        t0 = time.perf_counter()
        turn0 = self.turn
        kind = T.step_kind(name, args)
        n = self._count(kind)
        refs: list = []
        log: dict = {}
        try:
            if name not in self.names:
                raise ToolError(f"unknown tool {name!r}; the tools are: {', '.join(self.names)}")
            if self.checkpoint_due and name not in PAUSE_TOOLS:
                log["paused"] = True
                raise ToolError(CHECKPOINT_DUE)
            if not isinstance(args, dict):
                raise ToolError(f"the arguments of {name} must be a JSON object, not {type(args).__name__}")
            res = getattr(self, "_t_" + name)(args, refs, log)
        except (ToolError, ArchiveError, NotesError) as e:
            res = ToolResult(f"error: {e}", error=True)
        t1 = time.perf_counter()
        rec = {"stream": TOOLS_STREAM, "call": n, "tool": name, "class": kind, "args": _jsonable(args),
               "turn": turn0, "turns": list(range(turn0 + 1, self.turn + 1)), "t": round(t0 - self.t_start, 6),
               "seconds": round(t1 - t0, 6), "ok": not res.error,
               "result": {"bytes": res.bytes, "text": len(res.text), "images": len(res.images)}, **log}
        if res.error:
            rec["error"] = res.text
        if refs:
            rec["refs"] = refs
        self.ep.record(rec)
        self._estimate(args, res)
        if self.ep.poll():
            self._finish()
        return res

    # ---- the pause until a checkpoint ------------------------------------------------------------
    def request_checkpoint(self) -> bool:
        """The agent's context is nearly full: pause every tool but PAUSE_TOOLS until it has
        saved a checkpoint (True if the setting has the tool, so the pause applies)."""
        if "save_compact_checkpoint" not in self.names:
            return False
        self.checkpoint_due = True
        return True

    def _estimate(self, args, res: ToolResult) -> None:
        """Add a call's tokens to the estimate of what the client's context holds since the
        last checkpoint (its arguments and the result: about 4 characters a token, and an
        image as a model bills it, w x h / 750 capped at 1,600); due at checkpoint_tokens."""
        if self.checkpoint_tokens is None:
            return
        n = (len(_json(_jsonable(args))) + len(res.text)) // 4
        n += sum(min(IMAGE_TOKENS_CAP, i.width * i.height // IMAGE_TOKEN_PIXELS) for i in res.images)
        self.context_estimate += n
        if self.context_estimate >= self.checkpoint_tokens:
            self.checkpoint_due = True

    def _count(self, kind: str) -> int:
        """One more call (an NGAR step of class ``kind``); returns its number."""
        with self._counting:
            self.calls += 1
            self.ep.count_step(kind)
            return self.calls

    def _refused_concurrent(self, args) -> ToolResult:
        """A play sent while another is running (its result not returned yet): refused,
        counted and logged without waiting for the running one."""
        msg = "refused: the previous play has not returned its result yet; send the next play after it"
        if self.done:
            return ToolResult(msg, error=True)
        kind = T.step_kind("play", args)
        n = self._count(kind)
        res = ToolResult(msg, error=True)
        self.ep.record({"stream": TOOLS_STREAM, "call": n, "tool": "play", "class": kind, "args": _jsonable(args),
                        "turn": self.turn, "turns": [], "t": round(time.perf_counter() - self.t_start, 6),
                        "seconds": 0.0, "ok": False, "concurrent": True,
                        "result": {"bytes": res.bytes, "text": len(res.text), "images": 0}, "error": msg})
        return res

    # ---- play and screenshot -------------------------------------------------------------------
    def _t_play(self, args: dict, refs: list, log: dict) -> ToolResult:
        out = self.gui(self.play_action(args), refs)
        return ToolResult(_json(out["text"]), [out["image"]] if out.get("image") else [], error=out["error"])

    def play_action(self, args) -> dict:
        """The one GUI action play's arguments name (tools.play_action: the paper's form or an
        action object; a batch only when this episode takes batches), or ToolError."""
        try:
            return T.play_action(args, self.batch)
        except T.PlayArgsError as e:
            raise ToolError(str(e)) from None

    def available_actions(self) -> list[str]:
        """The action names play accepts now: only a wait before the first one, none once the
        episode has ended."""
        if self.done or self.ep.end:
            return []
        if self.ep.run.need_wait:
            return ["wait"]
        return list(T.SINGLE_ACTIONS) + (["batch"] if self.batch else [])

    def gui(self, action, refs: list | None = None, with_image: bool = True) -> dict:
        """Dispatch one GUI action through the episode (play, and run_python's gui()):
        {"text": {...}, "image": Image | None, "error": bool, "frames": [arrays]}. A bad
        action raises ToolError and is not dispatched."""
        ep = self.ep
        a, why = ep.run.check(action)
        if a is None:
            raise ToolError(why)
        t_agent = time.perf_counter() - self.t_ready
        step = ep.submit(action, t_agent, count=False, checked=a)   # (not validated again)
        if step.feedback is None:                       # returned after the deadline: not executed
            return {"text": {"ended": ep.end, "message": step.message}, "image": None, "error": True, "frames": []}
        turn = self.turn
        self.archive.add_turn(turn, step.first_frame, step.frames)
        screen = ep.public_screen()
        self.history.add(turn, step.action, step.feedback, len(step.frames), screen, step.controls)
        if self.notes.on_screen(level_key(screen)):
            ep.record({"stream": TOOLS_STREAM, "note": "working_cleared", "turn": turn})
        text = {"turn": turn, "feedback": step.feedback.status, "n_frames": len(step.frames),
                "time_left": self.time_left()}
        if step.ended:
            text["ended"] = step.ended
        text["available_actions"] = [] if step.ended else self.available_actions()
        img = None
        if with_image:
            last = step.frames[-1]
            i = step.first_frame + len(step.frames) - 1
            img = Image(self._png_of(i)[0], last.shape[1], last.shape[0],
                        {"index": i, "turn": turn, "frame": len(step.frames) - 1})
            if refs is not None:
                refs.append(img.ref)
        self.t_ready = time.perf_counter()
        self._rearm()
        return {"text": text, "image": img, "error": False, "frames": step.frames}

    def _png_of(self, i: int, box=None, zoom: int = 1) -> tuple[bytes, str]:
        """(PNG, frame_hash of its pixels) of stored frame i, or of a box of it zoomed
        ``zoom`` times (box None: the whole frame); made once per distinct picture: the
        cache is keyed by the frame's digest, so equal frames of other turns share it."""
        d = self.archive.digest(i)
        key = (d, box, zoom)
        hit = self._pngs.get(key)
        if hit is not None:
            return hit
        px = self.archive.read(i)
        if box is None and zoom == 1:
            out = (self._stream.encode(px), d)
        else:
            px = crop_zoom(px, box or (0, 0) + tuple(self.frame_size), zoom)
            out = (self._stream.encode(px), frame_hash(px))
        return self._pngs.put(key, out)

    def forget_images(self) -> None:
        """Drop every PNG and compressed band made so far (the next views are made anew;
        for measurements and tests)."""
        self._pngs.clear()
        self._stream = PngStream(cache_bands=PNG_BANDS)

    def _t_screenshot(self, args: dict, refs: list, log: dict) -> ToolResult:
        if args:
            raise ToolError("screenshot takes no arguments")
        if self.ep.run.need_wait:
            raise ToolError("there is no screenshot yet: the first action must be play with a wait, e.g. "
                            "{\"action\": {\"type\": \"wait\", \"ms\": 0}}")
        turn, k, i = self.archive.resolve(-1, -1)
        w, h = self.frame_size
        img = Image(self._png_of(i)[0], w, h, {"index": i, "turn": turn, "frame": k})
        refs.append(img.ref)
        return ToolResult(_json({"turn": turn, "time_left": self.time_left()}), [img])

    # ---- memory -----------------------------------------------------------------------------------
    def _views(self, args: dict, tool: str, fields: set) -> list[tuple]:
        """The views of an inspect or read_pixels call, checked: [(view, label, turn, frame,
        store index, box)] (a view's label defaults to "view K")."""
        views = args.get("views")
        if not isinstance(views, list) or not 1 <= len(views) <= T.MAX_VIEWS:
            raise ToolError(f"{tool} needs 'views': a list of 1 to {T.MAX_VIEWS} views like "
                            "{\"label\": \"board\", \"turn\": 3, \"frame\": -1, \"region\": {\"x\": 0, \"y\": 0, "
                            "\"w\": 100, \"h\": 100}}")
        out = []
        for k, v in enumerate(views, 1):
            where = f"view {k}: "
            if not isinstance(v, dict):
                raise ToolError(f"{where}a view is an object with 'turn' (and 'label', 'frame', 'region')")
            bad = set(v) - {"label", "turn", "frame", "region", "box"} - fields
            if bad:
                raise ToolError(f"{where}unknown field(s) {', '.join(sorted(map(str, bad)))}")
            label = v.get("label", f"view {k}")
            if not isinstance(label, str):
                raise ToolError(f"{where}label must be a text, not {label!r}")
            try:
                turn, frame, i = self.archive.resolve(v.get("turn"), v.get("frame", -1))
                box = view_box(v, self.frame_size)
            except ArchiveError as e:
                raise ToolError(where + str(e)) from None
            out.append((v, label, turn, frame, i, box))
        return out

    def _t_inspect(self, args: dict, refs: list, log: dict) -> ToolResult:
        _only(args, "inspect", {"views", "question"})
        plan = []
        for k, (v, label, turn, frame, i, box) in enumerate(self._views(args, "inspect", {"zoom"}), 1):
            z = v.get("zoom")
            if z is None:
                z = fit_zoom(box, self.frame_size, T.MAX_ZOOM)
            if isinstance(z, bool) or not isinstance(z, int) or not 1 <= z <= T.MAX_ZOOM:
                raise ToolError(f"view {k}: zoom must be an integer from 1 to {T.MAX_ZOOM}, not {z!r}")
            w, h = (box[2] - box[0]) * z, (box[3] - box[1]) * z
            if w * h > T.MAX_INSPECT_PIXELS:
                raise ToolError(f"view {k}: the view would be {w} x {h} pixels; at most {T.MAX_INSPECT_PIXELS} "
                                "(a smaller region or zoom)")
            plan.append((label, i, turn, frame, box, z))
        images, text = [], []
        full = (0, 0) + tuple(self.frame_size)
        for label, i, turn, frame, box, z in plan:
            png, hx = self._png_of(i, None if box == full else box, z)
            ref = {"index": i, "turn": turn, "frame": frame, "box": list(box), "zoom": z, "hash": hx}
            w, h = (box[2] - box[0]) * z, (box[3] - box[1]) * z
            images.append(Image(png, w, h, ref))
            refs.append(ref)
            text.append({"label": label, "turn": turn, "frame": frame, "region": region_of(box), "zoom": z,
                         "size": [w, h]})
        return ToolResult(_json({"views": text}), images)

    def _t_read_pixels(self, args: dict, refs: list, log: dict) -> ToolResult:
        _only(args, "read_pixels", {"views", "question", "rows", "cols"})
        plan, cells = [], 0
        for k, (v, label, turn, frame, i, box) in enumerate(self._views(args, "read_pixels", {"rows", "cols"}), 1):
            n = {}
            for what in ("rows", "cols"):
                x = v.get(what, args.get(what, T.PIXEL_GRID))
                if isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= T.MAX_SIDE:
                    raise ToolError(f"view {k}: {what} must be an integer from 1 to {T.MAX_SIDE}, not {x!r}")
                n[what] = x
            # a view that gives neither takes the default grid, but no more cells than pixels
            rows = min(n["rows"], box[3] - box[1]) if "rows" not in v and "rows" not in args else n["rows"]
            cols = min(n["cols"], box[2] - box[0]) if "cols" not in v and "cols" not in args else n["cols"]
            if rows > box[3] - box[1] or cols > box[2] - box[0]:
                raise ToolError(f"view {k}: a {box[2] - box[0]} x {box[3] - box[1]} region has fewer pixels than "
                                f"{rows} x {cols} cells")
            cells += rows * cols
            plan.append((label, turn, frame, i, box, rows, cols))
        if cells > T.MAX_SAMPLES:
            raise ToolError(f"{cells} cells in all; at most {T.MAX_SAMPLES} per call")
        grids, samples = [], []
        for label, turn, frame, i, box, rows, cols in plan:
            packed, xs, ys = pixel_samples(self.archive.read(i), box, rows, cols)
            grids.append(packed)
            samples.append({"label": label, "turn": turn, "frame": frame, "region": region_of(box), "rows": rows,
                            "cols": cols, "cell": [(box[2] - box[0]) / cols, (box[3] - box[1]) / rows],
                            "x": [int(x) for x in xs], "y": [int(y) for y in ys]})
            refs.append({"index": i, "turn": turn, "frame": frame, "region": list(box), "rows": rows, "cols": cols,
                         "samples": samples_hash(packed)})
        palette, codes = pixel_views(grids)
        for smp, g in zip(samples, codes):
            smp["grid"] = g
        return ToolResult(_json({"palette": palette, "samples": samples}))

    def _t_history(self, args: dict, refs: list, log: dict) -> ToolResult:
        _only(args, "history", {"view", "start_turn", "end_turn", "limit"})
        view = args.get("view", "events")
        if view not in ("events", "attempts"):
            raise ToolError(f"view must be 'events' or 'attempts', not {view!r}")
        lim = args.get("limit", T.HISTORY_LIMIT)
        for k in ("start_turn", "end_turn"):
            x = args.get(k)
            if x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < 1):
                raise ToolError(f"{k} must be a positive integer, not {x!r}")
        if isinstance(lim, bool) or not isinstance(lim, int) or not 1 <= lim <= T.MAX_HISTORY:
            raise ToolError(f"limit must be an integer from 1 to {T.MAX_HISTORY}, not {lim!r}")
        start, end = args.get("start_turn"), args.get("end_turn")
        if view == "events":
            ev = self.history.view_events(start, end, lim)
            return ToolResult(_json({"view": "events", "turns": self.turn, "events": ev}))
        lvl, at = self.history.view_attempts(start, end, lim)
        return ToolResult(_json({"view": "attempts", "level": lvl, "attempts": at}))

    # ---- notes ---------------------------------------------------------------------------------------
    def _note_read(self, name: str, args: dict) -> ToolResult:
        if args:
            raise ToolError(f"reading {name} takes no arguments")
        t = self.notes.read(name)
        return ToolResult(_json({"file": name, "chars": len(t), "content": t}))

    def _note_write(self, name: str, tool: str, args: dict) -> ToolResult:
        # 'content' is VISTA's name; 'text' (the name before) is kept as an option
        _only(args, tool, {"content", "text"})
        if len(args) != 1:
            raise ToolError(f"{tool} needs 'content': the new text of {name}")
        n = self.notes.write(name, next(iter(args.values())))
        return ToolResult(_json({"file": name, "chars": n, "saved": True}))

    def _t_read_guide(self, args, refs, log):
        return self._note_read(GUIDE, args)

    def _t_write_guide(self, args, refs, log):
        return self._note_write(GUIDE, "write_guide", args)

    def _t_read_working(self, args, refs, log):
        return self._note_read(WORKING, args)

    def _t_write_working(self, args, refs, log):
        return self._note_write(WORKING, "write_working", args)

    def _t_save_compact_checkpoint(self, args: dict, refs: list, log: dict) -> ToolResult:
        """WORKING.md := working_memory, and GUIDE.md := guide unless guide is None (left
        out or null: GUIDE.md unchanged); both checked before either is written. Ends a pause."""
        _only(args, "save_compact_checkpoint", {"guide", "working_memory"})
        g, w = args.get("guide"), args.get("working_memory")
        if not isinstance(w, str) or not (g is None or isinstance(g, str)):
            raise ToolError("save_compact_checkpoint needs 'working_memory' (a text) and takes 'guide' (a text, or "
                            "null to keep GUIDE.md)")
        for name, t in ((GUIDE, g), (WORKING, w)):
            if t is not None and len(t) > self.notes.cap:
                raise NotesError(f"{name} holds at most {self.notes.cap} characters; this text has {len(t)} "
                                 "(nothing was written)")
        if g is not None:
            self.notes.write(GUIDE, g)
        self.notes.write(WORKING, w)
        self.checkpoints += 1
        self.checkpoint_due = False
        self.context_estimate = 0
        log["checkpoint"] = self.checkpoints
        return ToolResult(_json({"checkpoint": self.checkpoints, "guide_chars": None if g is None else len(g),
                                 "guide": "unchanged" if g is None else "saved", "working_chars": len(w)}))

    # ---- code -------------------------------------------------------------------------------------------
    def _t_run_python(self, args: dict, refs: list, log: dict) -> ToolResult:
        _only(args, "run_python", {"code"})
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            raise ToolError("run_python needs 'code': Python source text")
        if len(code) > T.MAX_CODE:
            raise ToolError(f"a cell holds at most {T.MAX_CODE} characters, not {len(code)}")
        if self._code is None:
            from longpuzzle.agents.vista.code import CodeRunner
            self._code = CodeRunner(self, self.code_limits)
        out = self._code.run(code, refs)
        log["output"] = out["output"]
        log["code_status"] = out["status"]
        return ToolResult(_json(out), error=out["status"] != "ok")

    # ---- the end -------------------------------------------------------------------------------------------
    def _t_final_answer(self, args: dict, refs: list, log: dict) -> ToolResult:
        _only(args, "final_answer", {"text"})
        text = args.get("text", "")
        if not isinstance(text, str):
            raise ToolError("final_answer needs 'text': your final message")
        self.ep.submit(FinalAnswer(text), time.perf_counter() - self.t_ready, count=False)
        return ToolResult(_json({"ended": self.ep.end}))

    def stop(self, end: str, error: str = "") -> None:
        """End the episode from outside (the transport closed, the server was stopped)."""
        with self._lock:
            if not self.done:
                self.ep.stop(end, error, agent_seconds=time.perf_counter() - self.t_ready)
                self._finish()

    def close(self, end: str = "agent_stop", error: str = "the agent stopped without a final answer"):
        """Finish the episode if it is still running (``end`` / ``error`` say why) and free
        everything; returns the EpisodeResult."""
        self.stop(end, error)
        with self._cond:
            self._cond.notify_all()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        return self.result

    def _finish(self) -> None:
        if self.result is not None:
            return
        self.history.end()
        if self._code is not None:
            self._code.close()
        from longpuzzle.agents.vista.records import tool_use
        ep = self.ep
        ep.run.traj.flush()
        summary = tool_use(self.folder, setting=self.setting, tools=self.names) if self.folder else None
        self.archive.close()
        self.result = ep.finish(extra={"tools": summary} if summary is not None else None)
        with self._cond:
            self._cond.notify_all()               # the watchdog's work is done
        if self.on_finish is not None:
            self.on_finish(self.result)

    def _watchdog(self) -> None:
        """End the episode at the deadline (or after action_timeout without a play) when the
        agent is thinking and no call comes. It sleeps until the earlier of the two (no
        polling); a play that brings the deadline closer than that (every executed action
        charges its simulated time) wakes it to sleep again until the new time (_rearm).
        When it wakes while a call runs, it waits for the call (which checks the clock itself)."""
        while True:
            with self._cond:
                if self.result is not None:
                    return
                due = self._due()
                self._wake_at = None if due is None else time.perf_counter() + due
                if due is None or due > 0:
                    self._cond.wait(due)              # None: until the clock starts (a play) or the end
                self._wake_at = None
            with self._lock:                          # after a running call
                if self.result is not None:
                    return
                now = time.perf_counter()
                if self.ep.clock.expired():
                    self.ep.stop("budget", agent_seconds=now - self.t_ready)
                    self._finish()
                elif self.action_timeout and self.ep.clock.started and now - self.t_ready >= self.action_timeout:
                    self.ep.stop("agent_error", f"agent timeout: no play within {self.action_timeout:g} s of the "
                                 "last result", agent_seconds=now - self.t_ready)
                    self._finish()

    def _rearm(self) -> None:
        """After a play: wake the watchdog if the deadline is now before the time it sleeps
        until (or it sleeps without one: the clock has just started)."""
        with self._cond:
            due = self._due()
            if due is not None and (self._wake_at is None or time.perf_counter() + due < self._wake_at):
                self._cond.notify_all()

    def _due(self) -> float | None:
        """Seconds until the deadline or the action timeout (None: neither applies yet)."""
        clock, out = self.ep.clock, []
        if clock.started and clock.budget is not None and clock.charge_agent_time:
            out.append(clock.left())
        if self.action_timeout and clock.started:
            out.append(self.t_ready + self.action_timeout - time.perf_counter())
        return min(out) if out else None


def _only(args: dict, tool: str, allowed: set) -> None:
    bad = set(args) - allowed
    if bad:
        raise ToolError(f"{tool} takes {', '.join(sorted(allowed)) or 'no arguments'}; not {', '.join(sorted(bad))}")

