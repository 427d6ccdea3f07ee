"""The episode viewer: ``/episode/{run}/{path}``.

A position p of the viewer is step p's moment of decision: the stored frame the agent acted on
(the last frame before the action) with the action drawn on it (agents/report/video.py's
``draw_action``: click rings, drag and swipe paths, typed keys), the feedback, what the action
did, its time and cost. The last position is the episode's last frame. Frames are decoded one
at a time, when the page asks for them (``/frame/{run}/{k}/{path}``; the store stays open,
nothing is decoded ahead); the steps' list is read once per episode and kept.

The oracle's annotation (agents/report/oracle_steps.py: d(s) after each step, the first fatal
move, the moves on a lost board) is asked for separately, after the page shows: it builds each
level's graph once (seconds on a hard level), so it is computed off the request path, by one
worker thread of the server, one annotation at a time (a large level never takes more than one
core from the other requests); until it is ready ``/api/oracle`` answers 202 {"computing": true}
and the page shows 'computing' and asks again.

Everything kept is bounded: the episode documents and the annotations by engine/lru.py (DOCS,
ANNOTATIONS entries), the open frame stores (OPEN_STORES) and the levels' graphs by their states
(GRAPH_STATES: the least recently used graphs dropped beyond it, the last one always kept). A model agent's conversation.jsonl gives each
step the model's text and tool calls: its call records in order, one a step, after the opening
wait the harness makes (the agents' calls answer each observation once); the VISTA notes are
the write_guide / write_working calls among them, as they evolved.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from longpuzzle.agents.harness import HarnessError, read_events
from longpuzzle.agents.media.images import encode_png
from longpuzzle.agents.models.conversation_log import read_records
from longpuzzle.agents.report.data import load_trajectory, stored_frames
from longpuzzle.agents.report.video import FrameSource, action_text, draw_action, effect_text, label_font
from longpuzzle.agents.serve.app import NotServed
from longpuzzle.agents.serve.page import esc, page
from longpuzzle.engine.lru import LRU

NAV: list = []
OPEN_STORES = 8                     # frame stores kept open (least recently used closed first)
DOCS = 64                           # episode documents kept (least recently used dropped first)
ANNOTATIONS = 64                    # oracle annotations kept
GRAPH_STATES = 2_000_000            # states of the levels' oracle graphs kept (a few hundred MB at most)
NOTE_TOOLS = {"write_guide": "GUIDE.md", "write_working": "WORKING.md"}


def episode_doc(folder: Path) -> dict:
    """Everything the viewer shows of an episode but its frames and the oracle."""
    traj = load_trajectory(folder)
    public = {r["step"]: r for r in read_events(folder)[1:] if r.get("stream") == "public" and "step" in r}
    positions, last_frame = [], 0
    lost = False
    for st in traj.steps:
        pub = public.get(st.step, {})
        rec = st.record
        eff = [e.get("effect") for e in rec.get("effects") or []]
        events = []
        if rec.get("win"):
            events.append("won")
        dead = rec.get("certificate") == "dead_end"
        if dead and not lost:
            events.append("dead_end")
        lost = dead
        if "restart" in eff:
            events.append("restart")
        if st.final_answer is None and (not st.feedback.get("executed", True) or "refused" in eff or "rejected" in eff):
            events.append("refusal")
        positions.append({
            "step": st.step, "frame": max(0, st.first_frame - 1) if st.frames else last_frame,
            "action": st.action, "action_text": action_text(st.action) if st.action else "final answer",
            "effect": effect_text(st), "message": st.feedback.get("message", ""),
            "executed": st.feedback.get("executed", True), "level": rec.get("level"), "screen": rec.get("screen"),
            "P": rec.get("P"), "events": events, "t_agent": pub.get("t_agent"), "sim_ms": pub.get("sim_ms"),
            "presses": pub.get("presses"), "final_answer": st.final_answer,
            "frame_hash": pub.get("frames", [None])[0] if pub.get("frames") else None})
        if st.frames:
            last_frame = st.first_frame + len(st.frames) - 1
    positions.append({"step": None, "frame": last_frame, "action": None, "action_text": "end of the episode",
                      "effect": f"ended by {traj.end.get('end')}" if traj.end else "cut short", "events": [],
                      "P": positions[-1]["P"] if positions else None, "level": positions[-1]["level"] if positions else None})
    res = {}
    if (folder / "result.json").is_file():
        try:
            res = json.loads((folder / "result.json").read_text())
        except ValueError:
            res = {}
    h = traj.header
    return {"objective": h.get("objective"), "level": h.get("level"), "agent": h.get("agent"),
            "instruction": h.get("instruction"), "protocol": h.get("protocol"),
            "settings": h.get("settings"), "end": traj.end, "positions": positions,
            "frames": stored_frames_count(folder), "model": model_steps(folder, [p["step"] for p in positions]),
            "result": {k: res.get(k) for k in ("success", "solved", "target_levels", "end", "actions", "seconds",
                                               "charged_seconds", "presses")}}


def stored_frames_count(folder: Path) -> int:
    fs = stored_frames(folder)
    if fs is None:
        return 0
    try:
        return len(fs)
    finally:
        fs.close()


def model_steps(folder: Path, steps: list) -> dict:
    """Per step number: the model's text, reasoning, tool calls and cost of the calls that
    decided it (conversation.jsonl's call records), and the notes as they stood after it. A
    call that records its ``turn`` (the tool agents': the last action before it) decides step
    turn + 1; the others are taken in order, one "step" call a step after the opening wait, a
    "follow-up" (the answer to a reply that did not parse) with the step before it. Summaries,
    probes and compactions are not a step's."""
    numbered = [s for s in steps if s is not None]
    out: dict[str, dict] = {}
    notes: dict[str, str] = {}
    k = -1                                     # index into ``numbered`` of the last step given a call
    for rec in read_records(folder):
        if rec.get("type") == "opening_wait":
            k = max(k, 0)                  # the harness's opening wait is step 1: no call of its own
            continue
        if rec.get("type") != "call" or rec.get("kind") not in ("step", "follow-up", "checkpoint", None):
            continue
        if isinstance(rec.get("turn"), int):
            step = rec["turn"] + 1
        else:
            if rec.get("kind") != "follow-up" or k < 0:
                k += 1
            if k >= len(numbered):
                continue
            step = numbered[k]
        reply = rec.get("reply") if isinstance(rec.get("reply"), dict) else {}
        tools = [c for c in reply.get("tool_calls") or [] if isinstance(c, dict)]
        for c in tools:
            if c.get("name") in NOTE_TOOLS:
                args = c.get("arguments")
                text = next(iter(args.values()), "") if isinstance(args, dict) and args else args
                notes[NOTE_TOOLS[c["name"]]] = str(text if text is not None else "")
        cur = out.setdefault(str(step), {"text": "", "reasoning": "", "tool_calls": [], "cost": None, "calls": 0})
        cur["text"] = "\n\n".join(t for t in (cur["text"], str(reply.get("text") or "")) if t)
        cur["reasoning"] = "\n\n".join(t for t in (cur["reasoning"], str(reply.get("reasoning") or "")) if t)
        cur["tool_calls"] += tools
        if isinstance(rec.get("cost"), (int, float)):
            cur["cost"] = round((cur["cost"] or 0) + rec["cost"], 8)
        cur["calls"] += 1
        cur["notes"] = dict(notes)
    return out


class _Stored:
    """An episode's stored frames, read one at a time (the frame source's ``frame`` / ``close``)."""

    def __init__(self, fs):
        self.fs = fs

    def frame(self, k: int):
        return self.fs.read(k) if k < len(self.fs) else None

    def close(self):
        self.fs.close()


class Episodes:
    """The viewer's caches, each bounded: each episode's document, its open frame store (a few,
    least recently used closed first), its oracle annotation, and the levels' oracle graphs; and
    the one worker that computes annotations."""

    def __init__(self, docs: int = DOCS, annotations: int = ANNOTATIONS, graph_states: int = GRAPH_STATES):
        self.docs = LRU(docs, threadsafe=True)
        self.stores: OrderedDict[Path, object] = OrderedDict()
        self.oracle = LRU(annotations, threadsafe=True)
        self.oracles: dict = {}                # {(catalogue, level): Oracle}: the worker's only
        self.graph_states = graph_states
        self.lock = threading.Lock()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="serve-oracle")
        self.pending: dict[Path, object] = {}  # folder -> its annotation's Future, queued or running

    def doc(self, folder: Path) -> dict:
        got = self.docs.get(folder)
        return got if got is not None else self.docs.put(folder, episode_doc(folder))

    def frame_png(self, folder: Path, k: int, step: int | None) -> bytes | None:
        """Stored frame ``k`` as PNG, with the action of step ``step`` drawn on it if given. An
        episode run with --no-frames has its frames drawn again from its recorded snapshots
        (video.py's frame source: exact, the engine is deterministic; the frames that end a step)."""
        with self.lock:
            src = self.stores.get(folder)
            if src is None:
                fs = stored_frames(folder)
                src = _Stored(fs) if fs is not None else FrameSource(load_trajectory(folder))
                self.stores[folder] = src
                while len(self.stores) > OPEN_STORES:
                    self.stores.popitem(last=False)[1].close()
            self.stores.move_to_end(folder)
            arr = src.frame(k) if k >= 0 else None
        if arr is None:
            return None
        if step is not None:
            pos = next((p for p in self.doc(folder)["positions"] if p["step"] == step), None)
            if pos and pos.get("action"):
                img = Image.fromarray(arr)
                draw_action(img, pos["action"], label_font(18))
                arr = np.asarray(img)
        return encode_png(arr)          # the models' PNG encoder: ISA-L deflate, ~10x Pillow's zlib

    def oracle_doc(self, folder: Path) -> dict | None:
        """The episode's oracle annotation if it is ready, else None: its computation queued on
        the worker (once; it runs after those asked for before it)."""
        got = self.oracle.get(folder)
        if got is not None:
            return got
        with self.lock:
            if folder not in self.pending:
                self.pending[folder] = self.worker.submit(self._annotate, folder)
        return None

    def _annotate(self, folder: Path) -> dict:
        """The worker's job: one episode's annotation, kept; the graphs trimmed to graph_states."""
        from longpuzzle.agents.report.oracle_steps import oracle_steps

        try:
            try:
                o = oracle_steps(folder, self.oracles)
            except HarnessError as e:
                o = {"error": str(e)}
            finally:
                self._trim_graphs()
            self.oracle.put(folder, o)
            return o
        finally:
            with self.lock:
                self.pending.pop(folder, None)

    def _trim_graphs(self) -> None:
        """Drop the least recently used graphs while those kept hold more than graph_states
        states (the most recent one stays: the next episode of a run plays the same levels)."""
        g = self.oracles
        while len(g) > 1 and sum(o.stored_states for o in g.values()) > self.graph_states:
            g.pop(next(iter(g)))

    def close(self) -> None:
        """The server stopping: the queued annotations dropped, the running one left to end."""
        self.worker.shutdown(wait=False, cancel_futures=True)


def shutdown(ctx) -> None:
    eps = ctx.cache.get("episodes")
    if eps is not None:
        eps.close()


def level_folders(ctx, run, rel: str) -> list[str]:
    """The level folders (level_01, ...) of a level-protocol episode served, else []."""
    try:
        p = ctx.inside(run, rel)
    except NotServed:
        return []
    if not p.is_dir():
        return []
    root = ctx.folder(run)
    return sorted(c.name for c in p.iterdir() if c.is_dir() and (c / "events.jsonl").is_file()
                  and c.resolve().is_relative_to(root))


def routes(ctx) -> list:
    eps = ctx.cache.setdefault("episodes", Episodes())

    def locate(request) -> Path:
        return ctx.episode(request.path_params["run"], request.path_params["path"])

    async def viewer(request):
        run = request.path_params["run"]
        rel = request.path_params["path"]
        try:
            locate(request)
        except NotServed as e:
            levels = level_folders(ctx, run, rel)
            if not levels:
                return JSONResponse({"error": str(e)}, 404)
            items = "".join(f"<li><a href='/episode/{run}/{esc(rel.rstrip('/') + '/' + name)}'>{esc(name)}</a></li>"
                            for name in levels)
            body = (f"<div class='crumbs'><a href='/run/{run}'>{esc(ctx.folder(run).name)}</a> / <span>{esc(rel)}</span></div>"
                    f"<h1>A level-protocol episode</h1><p class='sub'>One episode folder a level:</p><ul>{items}</ul>")
            return page(ctx, rel, body, data={"view": "levels"})
        body = (f"<div class='crumbs'><a href='/run/{run}'>{esc(ctx.folder(run).name)}</a> / <span>{esc(rel)}</span></div>"
                "<div id='viewer' class='viewer'></div>")
        return page(ctx, f"{rel} - viewer", body, scripts=("viewer.js",), data={"view": "episode", "run": run, "path": rel})

    async def api_episode(request):
        try:
            folder = locate(request)
        except NotServed as e:
            return JSONResponse({"error": str(e)}, 404)
        try:
            return JSONResponse(await run_in_threadpool(eps.doc, folder))
        except HarnessError as e:
            return JSONResponse({"error": str(e)}, 422)

    async def api_oracle(request):
        try:
            folder = locate(request)
        except NotServed as e:
            return JSONResponse({"error": str(e)}, 404)
        got = eps.oracle_doc(folder)            # never waits: queued on the worker if not ready
        if got is None:
            return JSONResponse({"computing": True}, 202, headers={"retry-after": "1"})
        return JSONResponse(got)

    async def frame(request):
        try:
            folder = locate(request)
        except NotServed as e:
            return JSONResponse({"error": str(e)}, 404)
        step = request.query_params.get("step")
        try:
            step = int(step) if step not in (None, "") else None
        except ValueError:
            return JSONResponse({"error": "step must be a number"}, 400)
        png = await run_in_threadpool(eps.frame_png, folder, request.path_params["k"], step)
        if png is None:
            return JSONResponse({"error": "no such frame"}, 404)
        return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=600"})

    return [Route("/episode/{run:int}/{path:path}", viewer),
            Route("/api/episode/{run:int}/{path:path}", api_episode),
            Route("/api/oracle/{run:int}/{path:path}", api_oracle),
            Route("/frame/{run:int}/{k:int}/{path:path}", frame)]
