"""Live play, "Branch here" and the human baselines page of ``longpuzzle serve``.

    /play                          choose an objective (from the home screen) or a level
                                   (launched directly) of the catalogue, the style, scale and
                                   language; the live sessions
    POST /play/new                 start a live session (live.py) -> {"url"}
    /play/s/{sid}                  the session's page: a canvas the person plays on (play.js
                                   turns pointer events and keys into GUI actions)
    GET /play/s/{sid}/frame        the screen now (raw RGB bytes, its size and the session's state
                                   in headers)
    POST /play/s/{sid}/act         {"action": a GUI action} -> the next frame, as /frame
    POST /play/s/{sid}/leave       end the session (a final answer, recorded)
    /branch/{run}/{path}?step=k    the exact state after recorded step k of an episode, to play
                                   on from (POST .../play) or to hand to an agent (POST .../agent)
    /branch-frame/{run}/{path}?step=k   that state's screen, drawn again from the restored suite
    /baselines                     the human baselines (baselines.py) of the human episodes in
                                   the folders served, Table 4 beside them, the agents' RHAE

Every session is recorded into the record folder (``serve --record DIR``, served like the
others, so its episodes open in the viewer); without one, play and branch say how to start
the app with one. State-changing requests go through the app's security (page token, same
origin); the blocking work (a session's next frame, a restore) runs off the event loop.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.agents.serve.app import NotServed
from longpuzzle.agents.serve.live import PlayError, SessionPool, dispatched_step, png_bytes
from longpuzzle.agents.serve.page import esc, page
from longpuzzle.engine.errors import LongPuzzleError

NAV = [("Play", "/play"), ("Human baselines", "/baselines")]
HAND_OFF_MAX_ACTIONS = 600            # an agent continuing a branch stops here at the latest (the lab's ceiling)
SCRIPTS = ("play.js",)
# the screen a session is drawn on: the game's own frame, or the paper's 1280 x 900 page (the
# suite letterboxed into it, as the paper preset's agents saw it)
SCREENS = [("", "the game's (540 x 960 x scale)"), ("1280x900", "the paper's page, 1280 x 900")]
SESSIONS_TABLE = ('<table class="grid lp-table"><thead><tr><th>target</th><th>kind</th><th>player</th><th>state</th>'
                  '<th>step</th></tr></thead><tbody>{rows}</tbody></table>')
NOT_OBJECTIVE = "Only objective episodes can be branched (a level-protocol episode is one level)."


def _pool(ctx) -> SessionPool | None:
    """The app's live sessions, recording into ``ctx.record`` (None: the app records nothing)."""
    rec = ctx.record
    if rec is None:
        return None
    pool = ctx.cache.get("play_pool")
    if pool is None:
        pool = ctx.cache["play_pool"] = SessionPool(rec)
    return pool


def shutdown(ctx) -> None:
    """The app's route-table hook when the server stops: close_sessions."""
    close_sessions(ctx)


def close_sessions(ctx) -> None:
    """End every live session (the app shutting down): each episode folder is finished."""
    pool = ctx.cache.get("play_pool")
    if pool is not None:
        pool.close()


def _err(msg: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": msg}, status_code=status)


def _viewer_url(ctx, folder: Path) -> str | None:
    """The viewer's address of an episode folder inside a served folder."""
    folder = Path(folder).resolve()
    for i, root in enumerate(ctx.folders):
        if folder == root or folder.is_relative_to(root):
            rel = folder.relative_to(root).as_posix()
            return f"/episode/{i}/{rel}" if rel != "." else f"/episode/{i}/"
    return None


def _frame_response(ctx, s, up, t0: float, have: int | None = None) -> Response:
    """The page's next frame: raw RGB bytes, row by row, of the box that changed since the
    frame the page has (``have``: the version it drew last, when it is the one this session
    sent last), else of the whole frame; the box and the session's state in headers. Encoding
    a PNG cost more than the whole harness step, and most actions change a small part of the
    screen: the bytes of that part are what crosses the loopback."""
    state = up.state()
    if up.ended:
        state["episode_url"] = _viewer_url(ctx, s.folder)
    f = up.frame
    if f is None:
        box, body = (0, 0, 0, 0), b""
    else:
        prev = getattr(s, "sent", None)
        box = _changed_box(prev[1], f) if prev is not None and have == prev[0] and prev[1].shape == f.shape \
            else (0, 0, f.shape[1], f.shape[0])
        x, y, w, h = box
        body = np.ascontiguousarray(f[y:y + h, x:x + w]).tobytes()
        s.sent = (up.version, f)
    return Response(body, media_type="application/octet-stream",
                    headers={"X-Play-State": json.dumps(state, ensure_ascii=True, default=str),
                             "X-Frame-Size": "" if f is None else f"{f.shape[1]},{f.shape[0]}",
                             "X-Frame-Box": ",".join(map(str, box)),
                             "X-Play-Server-Ms": f"{(time.perf_counter() - t0) * 1000:.2f}",
                             "Cache-Control": "no-store"})


def _changed_box(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, int]:
    """(x, y, w, h) of the smallest box holding every pixel where frames ``a`` and ``b`` differ
    ((0, 0, 0, 0): none). Compared as rows of bytes (H, W * 3): a reduction over the colour
    axis of (H, W, 3) costs sixty times as much."""
    hgt = a.shape[0]
    diff = a.reshape(hgt, -1) != b.reshape(hgt, -1)
    rows = np.flatnonzero(diff.any(axis=1))
    if not len(rows):
        return 0, 0, 0, 0
    cols = np.flatnonzero(diff[rows[0]:rows[-1] + 1].any(axis=0))
    x0, x1 = int(cols[0]) // 3, int(cols[-1]) // 3
    return x0, int(rows[0]), x1 - x0 + 1, int(rows[-1] - rows[0] + 1)


async def _json_body(request) -> dict:
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        raise PlayError("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise PlayError("the request body is a JSON object")
    return body


# ---- the play page and its sessions ---------------------------------------------------------

def _options(items, selected=None) -> str:
    return "".join(f'<option value="{esc(v)}"{" selected" if v == selected else ""}>{esc(label)}</option>'
                   for v, label in items)


def routes(ctx) -> list:
    def no_record():
        return page(ctx, "Play", '<h1>Play</h1><p class="sub">Live play records every session as an episode '
                    'folder: start the app with a folder to record into, e.g. <code>longpuzzle serve RUN_DIR '
                    '--record humans/</code>.</p>', active="Play")

    async def play_home(request):
        pool = _pool(ctx)
        if pool is None:
            return no_record()
        cat = pool.catalog
        objs = [(o.id, f"{o.id} - the whole objective from the home screen") for o in cat.objectives()]
        levels = [(lid, lid) for o in cat.objectives() for lid in o.level_ids]
        live = list(pool.sessions.values())
        rows = "".join(f'<tr><td><a href="/play/s/{esc(s.id)}">{esc(s.target)}</a></td><td>{esc(s.kind)}</td>'
                       f'<td>{esc(s.agent_name)}</td><td>{esc(s.update.ended or "live")}</td>'
                       f'<td class="num">{s.update.step}</td></tr>' for s in live)
        body = f"""<h1>Play</h1>
<p class="sub">Play any objective or level of catalogue <code>{esc(cat.name)}</code>
with the same GUI actions an agent sends (clicks, drags, swipes and keys on the canvas, validated and dispatched by
the harness). Each session is recorded as an episode folder in <code>{esc(pool.out)}</code> that
<code>longpuzzle replay</code> verifies. Your time is the agent's time: the clock runs while you look.</p>
<form class="lp-post card play-form" data-action="/play/new">
<label>Objective or level <select name="target" id="lp-target">
<optgroup label="Objectives (from the home screen)">{_options(objs, "maze_paint/easy")}</optgroup>
<optgroup label="Levels (launched directly, the level protocol)">{_options(levels)}</optgroup></select></label>
<label>Style <select name="style">{_options([("2d", "2D"), ("3d", "3D")])}</select></label>
<label>Scale <select name="scale">{_options([("0.75", "0.75"), ("1", "1"), ("1.25", "1.25")], "1")}</select></label>
<label>Language <select name="lang">{_options([("en", "English"), ("zh", "中文")])}</select></label>
<label>Screen <select name="screen">{_options(SCREENS)}</select></label>
<label>Player <input name="player" maxlength="32" placeholder="(optional)" pattern="[A-Za-z0-9_\\-]{{1,32}}"></label>
<label>Budget (s) <input name="budget" type="number" min="0" step="60" placeholder="none"></label>
<button type="submit" id="lp-start">Start</button> <span class="lp-error"></span>
</form>
<h2>Sessions of this server</h2>
{SESSIONS_TABLE.format(rows=rows) if rows else '<p class="sub">None yet.</p>'}
<link rel="stylesheet" href="/static/play.css">"""
        return page(ctx, "Play", body, scripts=SCRIPTS, active="Play")

    async def play_new(request):
        pool = _pool(ctx)
        if pool is None:
            return _err("this app records nothing: start it with --record DIR", 409)
        try:
            b = await _json_body(request)
            budget = str(b.get("budget") or "").strip()
            s = pool.new(str(b.get("target", "")), player=(str(b.get("player") or "").strip() or None),
                         style=str(b.get("style", "2d")), scale=float(b.get("scale", 1) or 1),
                         lang=str(b.get("lang", "en")), viewport=_viewport(b.get("screen")),
                         budget=float(budget) if budget and float(budget) > 0 else None)
            await run_in_threadpool(s.start)
        except (PlayError, LongPuzzleError, ValueError) as e:
            return _err(str(e))
        return JSONResponse({"url": f"/play/s/{s.id}"})

    def _session(request):
        pool = _pool(ctx)
        if pool is None:
            raise PlayError("this app records nothing: start it with --record DIR")
        return pool.get(request.path_params["sid"])

    async def play_page(request):
        try:
            s = _session(request)
        except PlayError as e:
            return page(ctx, "Play", f'<h1>Play</h1><p class="sub">{esc(e)}</p>', active="Play")
        w, h = (s.update.frame.shape[1], s.update.frame.shape[0]) if s.update.frame is not None else (540, 960)
        what = "objective from the home screen" if s.kind == "objective" else \
            "level launched directly" if s.kind == "level" else \
            f"continuing {s.source[0].name} after step {s.source[1]}"
        body = f"""<div class="play">
<div class="stage play-stage"><canvas id="lp-screen" width="{w}" height="{h}" data-session="{esc(s.id)}"
 data-base="/play/s/{esc(s.id)}" tabindex="0"></canvas></div>
<div class="side">
<h1>{esc(s.target)}</h1><p class="sub">{esc(what)} &middot; {esc(s.agent_name)} &middot; recorded in
<code>{esc(s.folder.name)}</code></p>
<div class="card"><div class="k">status</div><div class="big" id="lp-status">starting</div></div>
<div class="card legend">Click, drag or swipe on the screen; keys: arrows, Enter, Escape, Space, Backspace, Tab,
letters and digits. Every action is what an agent would send (a long press: hold still for 0.6 s).</div>
<p><button id="lp-leave">End session</button> <a id="lp-episode" hidden>open the recorded episode</a></p>
</div></div>
<link rel="stylesheet" href="/static/play.css">"""
        return page(ctx, f"Play {s.target}", body, scripts=SCRIPTS, active="Play")

    async def play_frame(request):
        t0 = time.perf_counter()
        try:
            s = _session(request)
        except PlayError as e:
            return _err(str(e), 404)
        if s.update.frame is None:
            return _err("the session has not started", 409)
        return await run_in_threadpool(_frame_response, ctx, s, s.update, t0)

    async def play_act(request):
        t0 = time.perf_counter()
        try:
            s = _session(request)
            b = await _json_body(request)
            if "action" not in b:
                raise PlayError("no action given")
            up = await run_in_threadpool(s.submit, b["action"])
        except PlayError as e:
            return _err(str(e), 409 if "ended" in str(e) else 400)
        return await run_in_threadpool(_frame_response, ctx, s, up, t0, _have(b))

    async def play_leave(request):
        t0 = time.perf_counter()
        try:
            s = _session(request)
            b = await _json_body(request)
            up = await run_in_threadpool(s.leave)
        except PlayError as e:
            return _err(str(e), 404)
        return await run_in_threadpool(_frame_response, ctx, s, up, t0, _have(b))

    # ---- branch here ---------------------------------------------------------------------
    def _branch_source(request) -> tuple[Path, int]:
        folder = ctx.episode(request.path_params["run"], request.path_params["path"])
        try:
            step = int(request.query_params.get("step", "0"))
        except ValueError:
            raise PlayError("step is a whole number") from None
        if step < 0:
            raise PlayError("step is a whole number")
        return folder, step

    async def branch_page(request):
        try:
            folder, step = _branch_source(request)
            head = await run_in_threadpool(_head, folder)
        except (NotServed, PlayError, HarnessError) as e:
            return page(ctx, "Branch", f'<h1>Branch</h1><p class="sub">{esc(e)}</p>')
        run, rel = request.path_params["run"], request.path_params["path"]
        q = f"/branch-frame/{run}/{esc(rel)}?step={step}"
        from longpuzzle.agents.registry import SCRIPTED_AGENTS
        agents = _options([(a, a) for a in SCRIPTED_AGENTS], "solver")
        can = head.get("protocol") == "objective"
        record = _pool(ctx) is not None
        forms = (f"""<form class="lp-post card" data-action="/branch/{run}/{esc(rel)}/play">
<input type="hidden" name="step" value="{step}">
<label>Player <input name="player" maxlength="32" placeholder="(optional)"></label>
<button type="submit" id="lp-branch-play">Play on from here</button></form>
<form class="lp-post card" data-action="/branch/{run}/{esc(rel)}/agent">
<input type="hidden" name="step" value="{step}">
<label>Agent <select name="agent">{agents}</select></label>
<button type="submit" id="lp-branch-agent">Hand to the agent</button>
<span class="legend">continues through the harness (continue_episode), at most {HAND_OFF_MAX_ACTIONS} actions</span>
</form><p class="lp-error"></p>""" if can and record else
                 f'<p class="sub">{"Start the app with --record DIR to branch." if can else NOT_OBJECTIVE}</p>')
        viewer = f"/episode/{run}/{esc(rel)}"
        body = f"""<div class="play"><div class="stage"><img src="{q}" alt="the restored state" id="lp-branch-frame"></div>
<div class="side"><h1>Branch here</h1>
<p class="sub"><a href="{viewer}">{esc(rel)}</a> after step {step} of {esc(head.get('objective') or head.get('level'))}
(agent {esc(head.get('agent'))}): the exact state, restored from the episode's records
(restore_step). The new episode records where it continues from and replays only while its source does.</p>
{forms}</div></div>
<link rel="stylesheet" href="/static/play.css">"""
        return page(ctx, "Branch here", body, scripts=SCRIPTS)

    async def branch_frame(request):
        try:
            folder, step = _branch_source(request)
            png = await run_in_threadpool(_restored_png, folder, step)
        except (NotServed, PlayError, HarnessError) as e:
            return _err(str(e), 404)
        return Response(png, media_type="image/png")

    async def branch_play(request):
        pool = _pool(ctx)
        if pool is None:
            return _err("this app records nothing: start it with --record DIR", 409)
        try:
            folder = ctx.episode(request.path_params["run"], request.path_params["path"])
            b = await _json_body(request)
            s = await run_in_threadpool(pool.branch, folder, _whole(b.get("step")),
                                        player=(str(b.get("player") or "").strip() or None))
            await run_in_threadpool(s.start)
        except (NotServed, PlayError, LongPuzzleError) as e:
            return _err(str(e))
        return JSONResponse({"url": f"/play/s/{s.id}"})

    async def branch_agent(request):
        pool = _pool(ctx)
        if pool is None:
            return _err("this app records nothing: start it with --record DIR", 409)
        try:
            folder = ctx.episode(request.path_params["run"], request.path_params["path"])
            b = await _json_body(request)
            out = await run_in_threadpool(hand_off, pool, folder, _whole(b.get("step")), str(b.get("agent", "")))
        except (NotServed, PlayError, LongPuzzleError) as e:
            return _err(str(e))
        return JSONResponse({"url": _viewer_url(ctx, out) or "/"})

    # ---- human baselines -----------------------------------------------------------------
    async def baselines(request):
        doc = await run_in_threadpool(_baselines_doc, ctx)
        return page(ctx, "Human baselines", doc, active="Human baselines")

    return [Route("/play", play_home), Route("/play/new", play_new, methods=["POST"]),
            Route("/play/s/{sid}", play_page), Route("/play/s/{sid}/frame", play_frame),
            Route("/play/s/{sid}/act", play_act, methods=["POST"]),
            Route("/play/s/{sid}/leave", play_leave, methods=["POST"]),
            Route("/branch/{run:int}/{path:path}/play", branch_play, methods=["POST"]),
            Route("/branch/{run:int}/{path:path}/agent", branch_agent, methods=["POST"]),
            Route("/branch/{run:int}/{path:path}", branch_page),
            Route("/branch-frame/{run:int}/{path:path}", branch_frame),
            Route("/baselines", baselines)]


def _viewport(v) -> tuple[int, int] | None:
    if not v:
        return None
    if v not in dict(SCREENS):
        raise PlayError(f"a screen is one of: {', '.join(k for k, _ in SCREENS if k)} (or the game's own)")
    w, h = v.split("x")
    return int(w), int(h)


def _have(body: dict) -> int | None:
    """The version of the frame the page has drawn (it gets the changed box alone), or None."""
    v = body.get("have")
    return v if type(v) is int else None


def _whole(v) -> int:
    try:
        k = int(v)
    except (TypeError, ValueError):
        raise PlayError("step is a whole number") from None
    if k < 0:
        raise PlayError("step is a whole number")
    return k


def _head(folder: Path) -> dict:
    from longpuzzle.agents.harness import read_events
    return read_events(folder)[0]


def _restored_png(folder: Path, step: int) -> bytes:
    """The screen after recorded step ``step``, drawn again from the restored suite."""
    from longpuzzle.agents.harness.replay import restore_step
    from longpuzzle.render.frame import renderer

    suite = restore_step(folder, dispatched_step(folder, step))
    return png_bytes(renderer(suite.style, suite.scale, suite.viewport, suite.lang).render(suite))


def hand_off(pool: SessionPool, folder: Path, step: int, agent: str) -> Path:
    """Continue recorded episode ``folder`` after step ``step`` with scripted agent ``agent``
    (continue_episode with the D.1 takeover context, as the diagnostics lab continues a
    checkpoint; at most HAND_OFF_MAX_ACTIONS actions), into the record folder; the new
    episode's folder."""
    import dataclasses

    from longpuzzle.agents.harness.recompute import recorded_settings
    from longpuzzle.agents.harness.replay import continue_episode, recorded_catalog, restore_step
    from longpuzzle.agents.harness.trajectory import read_events
    from longpuzzle.agents.registry import SCRIPTED_AGENTS, load_agent

    if agent not in SCRIPTED_AGENTS:
        raise PlayError(f"hand to one of {', '.join(SCRIPTED_AGENTS)}")
    head = read_events(folder)[0]
    if head.get("protocol") != "objective":
        raise PlayError("only objective episodes can be branched (a level-protocol episode is one level)")
    cat = recorded_catalog(head.get("catalog"), pool.catalog)
    step = dispatched_step(folder, step)
    restore_step(folder, step, cat)
    st = dataclasses.replace(recorded_settings(head), max_actions=HAND_OFF_MAX_ACTIONS, save_frames=True)
    out = pool._folder(f"branch-{agent}-{head['objective']}")
    continue_episode(folder, step, load_agent(agent, catalog=cat), settings=st, out=out, catalog=cat, takeover=True)
    return out


def _table(cols, rows) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f'<td class="{"num" if isinstance(r.get(c), (int, float)) else ""}">'
                                    f'{esc("–" if r.get(c) is None else r.get(c))}</td>' for c in cols) + "</tr>"
                   for r in rows)
    return f'<table class="grid lp-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _baselines_doc(ctx) -> str:
    """The baselines page's markup (every value escaped)."""
    from longpuzzle.agents.report.data import load_verified_run
    from longpuzzle.agents.serve.baselines import (
        AGENT_COLUMNS, LEVEL_COLUMNS, OBJECTIVE_COLUMNS, PAPER_HUMAN_RESTARTS, PAPER_HUMAN_UNDOS, agent_scores,
        baseline_table, human_episodes,
    )

    eps, skipped = human_episodes(ctx.folders, ctx.cache.setdefault("baselines_humans", {}))
    table = baseline_table(eps)
    runs, memo = [], ctx.cache.setdefault("baselines_runs", {})
    for f in ctx.folders:
        if not (f / "summary.json").is_file():           # a run folder of eval (agents' runs)
            continue
        key = (str(f), (f / "summary.json").stat().st_mtime_ns)
        if key not in memo:                              # verified once while it stays the same
            try:
                memo[key] = load_verified_run(f)
            except HarnessError:
                memo[key] = None
        if memo[key] is not None:
            runs.append(memo[key])
    scores = agent_scores(runs, table)
    left = "".join(f"<li><code>{esc(f)}</code>: {esc(w)}</li>" for f, w in skipped)
    return f"""<h1>Human baselines</h1>
<p class="sub">{len(eps)} verified human episode(s) in the folders served (each replayed; recorded with
<a href="/play">Play</a>). Presses are pointer presses (one per click, drag or swipe), the paper's unit; time is the
person's own (the agent time the harness charged). <code>longpuzzle baseline FOLDER... --runs RUN...</code> exports
these tables as CSV or JSON.</p>
{f'<p class="sub">Left out: <ul>{left}</ul></p>' if left else ''}
<h2>Per objective, with the paper's Table 4 (one person; {PAPER_HUMAN_RESTARTS} restarts and {PAPER_HUMAN_UNDOS} undos
over all objectives)</h2>
{_table(OBJECTIVE_COLUMNS, table["objectives"])}
<h2>Per level</h2>
{_table(LEVEL_COLUMNS, table["levels"]) if table["levels"] else '<p class="sub">No human episode yet.</p>'}
<h2>Agents against the human baseline (RHAE)</h2>
<div class="card legend"><b>Formula</b> (after ARC-AGI-3's Relative Human Action Efficiency). For each level the
agent won with m presses, s = min(1, (b / m)<sup>2</sup>), with b the human baseline: the upper median of the presses
of the human episodes that won it (of n sorted winners, entry n div 2); s = 0 for a level not won or beyond
m &gt; 5 b. An objective's RHAE = &sum; k s<sub>k</sub> / &sum; k over its levels that have a baseline, k the level's
position (later levels weigh more); mean over the agent's scored episodes. RHAE<sub>paper</sub> = min(1,
(T / M)<sup>2</sup>) for an episode that completed the objective with M presses against Table 4's T, else 0.</div>
{_table(AGENT_COLUMNS, scores) if scores else '<p class="sub">No agent run among the folders served.</p>'}
<link rel="stylesheet" href="/static/play.css">"""
