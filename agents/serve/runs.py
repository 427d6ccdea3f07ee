"""The runs and leaderboard page (``/``) and a run's episodes (``/run/{i}``).

The index is lazy: a run is read from its summary.json alone (one file, whatever the number of
episodes; no episode folder is opened to list them), once, and kept; a thread reads them when
the server starts (``startup``), so a page rarely waits for it. A folder of separate episodes
(serve --record's) is read again each time, since it grows.
Whether a run verifies (agents/verify.py: its verification record, else a replay) is asked
separately (``/api/runs/{i}/verified``), after the list is on screen, since a replay takes time.
"""

from __future__ import annotations

import threading

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.routing import Route

from longpuzzle.agents.harness import HarnessError
from longpuzzle.agents.report.data import catalog_label, harness_label, identity_label, load_run, run_identity
from longpuzzle.agents.serve.app import NotServed
from longpuzzle.agents.serve.page import esc, page
from longpuzzle.agents.verify import read_json

NAV = [("Runs", "/")]
METRICS = ("OSR", "LC", "FGP", "LPR", "PER", "SMR", "score")
REPLAY_AT_MOST = 200        # a run of more episodes without a verification record is not replayed by a page


def run_entry(ctx, i: int) -> dict:
    """Run ``i``'s row and its episodes' rows (read once, then kept). A run folder is read from
    its summary.json alone: no episode folder is opened or even looked up (eval's layout names
    each, <objective folder>/<episode folder>; the viewer checks the one opened)."""
    key = ("run", i)
    folder = ctx.folder(i)
    if not is_run(folder):
        return collection_entry(i, folder)             # read again each time: it may be growing
    with ctx.cache.setdefault(("lock", i), threading.Lock()):      # one reading of a run at a time
        return _run_entry(ctx, i, key, folder)


def _run_entry(ctx, i: int, key, folder) -> dict:
    if key not in ctx.cache:
        try:
            if (folder / "summary.json").is_file():
                summary = read_json(folder / "summary.json", "run summary")
                episodes = [dict(e, path=_layout_path(e, k)) for k, e in enumerate(summary.get("episodes", []))]
            else:                                          # a lone episode folder: load_run reads it
                run = load_run(folder)
                summary = run.summary
                episodes = [dict(e, path=".") for e in run.episodes]
        except (HarnessError, ValueError, TypeError) as e:
            ctx.cache[key] = {"id": i, "name": folder.name, "error": str(e), "episodes": []}
            return ctx.cache[key]
        ident = run_identity(summary)
        metrics = dict(summary.get("metrics") or {})
        objectives = sorted({str(e.get("objective")) for e in episodes if e.get("objective")})
        ctx.cache[key] = {
            "id": i, "name": folder.name, "agent": identity_label(ident), "preset": ident.get("preset") or "-",
            "catalog": catalog_label(ident), "harness": harness_label(ident), "protocol": ident.get("protocol") or "-",
            "objectives": objectives, "n_episodes": len(episodes),
            "metrics": {k: metrics.get(k) for k in METRICS},
            "episodes": [episode_row(e) for e in episodes],
        }
    return ctx.cache[key]


def startup(ctx) -> None:
    """When the server starts: read every run's summary in a background thread, so the first
    page opened finds the index made (still no episode folder is opened)."""
    def index():
        for i in range(len(ctx.folders)):
            try:
                run_entry(ctx, i)
            except Exception:                  # noqa: BLE001 - a page asking for it says what is wrong
                pass
    threading.Thread(target=index, name="serve-index", daemon=True).start()


def is_run(folder) -> bool:
    """An eval run folder (summary.json) or one episode folder (result.json or events.jsonl);
    anything else served is a collection of episode folders (e.g. serve --record's)."""
    return any((folder / f).is_file() for f in ("summary.json", "result.json", "events.jsonl"))


def collection_entry(i: int, folder) -> dict:
    """A folder of separate episodes (human sessions recorded by play, episodes gathered by
    hand): each episode's result.json, if it has one yet; no run metrics, no run verification."""
    from longpuzzle.agents.report.data import episode_folders

    episodes = []
    for p in episode_folders(folder):
        res = {}
        if (p / "result.json").is_file():
            try:
                res = read_json(p / "result.json", "episode result")
            except HarnessError:
                res = {}
        if not isinstance(res, dict):
            res = {}
        row = episode_row(dict(res, path=p.relative_to(folder).as_posix()))
        row["end"] = row["end"] or ("unfinished" if not res else None)
        episodes.append(row)
    agents = sorted({str(r) for r in (read_agent(folder / e["path"]) for e in episodes) if r})
    return {"id": i, "name": folder.name, "kind": "collection", "agent": ", ".join(agents) or "-", "preset": "-",
            "catalog": "-", "harness": "-", "protocol": "-",
            "objectives": sorted({str(e["objective"]) for e in episodes if e.get("objective")}),
            "n_episodes": len(episodes), "metrics": dict.fromkeys(METRICS), "episodes": episodes}


def read_agent(folder) -> str | None:
    """The agent an episode's header names."""
    from longpuzzle.agents.harness.trajectory import read_header

    try:
        return read_header(folder).get("agent")
    except (HarnessError, OSError, ValueError):
        return None


def _layout_path(e: dict, k: int) -> str | None:
    """Where eval put an episode inside its run: the last two parts of its recorded folder."""
    rec = e.get("folder")
    if not isinstance(rec, str) or not rec:
        return None
    parts = [p for p in rec.replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts[-2:]) if parts else None


def episode_row(e: dict) -> dict:
    """One episode of a run's summary, as the list shows it (``path``: its folder inside the run)."""
    lv = e.get("levels") or []
    scores = [l["score"] for l in lv if isinstance(l, dict) and isinstance(l.get("score"), (int, float))]
    return {"path": e.get("path"), "objective": e.get("objective"), "end": e.get("end"), "success": bool(e.get("success")),
            "solved": e.get("solved"), "levels": e.get("target_levels"), "actions": e.get("actions"),
            "presses": e.get("presses"), "seconds": e.get("charged_seconds", e.get("seconds")),
            "score": round(sum(scores) / len(scores), 2) if scores else None}


def verified_status(ctx, i: int) -> dict:
    """Whether run ``i`` verifies (kept once known)."""
    key = ("verified", i)
    folder = ctx.folder(i)
    if not is_run(folder):
        return {"ok": None, "how": "a folder of episodes", "why": "separate episodes, not one run: `longpuzzle replay` verifies each"}
    if key not in ctx.cache:
        from longpuzzle.agents.verify import check_episode, check_run, is_run_folder, read_record   # (replay: lazily)

        try:
            n = run_entry(ctx, i).get("n_episodes", 0)
            if is_run_folder(folder) and n > REPLAY_AT_MOST and read_record(folder) is None:
                return {"ok": None, "how": "no verification record",
                        "why": f"{n} episodes, not replayed here: `longpuzzle replay RUN_DIR` verifies the run and records it"}
            if is_run_folder(folder):
                chk = check_run(folder)
                ok, why = chk.ok, chk.first
                how = "verification record" if chk.source == "record" else "replayed"
            else:
                rep = check_episode(folder)
                ok, why, how = rep["ok"], rep.get("divergence") or rep.get("note") or "", "replayed"
        except HarnessError as e:
            ok, why, how = False, str(e), "unreadable"
        ctx.cache[key] = {"ok": bool(ok), "how": how, "why": "" if ok else str(why or "")}
    return ctx.cache[key]


def routes(ctx) -> list:
    async def home(request):
        body = ("<h1>Runs</h1><p class='sub'>Every run given to <code>longpuzzle serve</code>, with the verified "
                "status of its numbers. Click a column to sort; type to filter.</p>"
                "<div class='bar'><input id='filter' type='search' placeholder='filter: agent, preset, objective...'></div>"
                "<table id='runs' class='grid'></table>")
        return page(ctx, "Runs", body, scripts=("runs.js",), data={"view": "runs", "runs": len(ctx.folders)},
                    active="Runs")

    async def run_page(request):
        i = request.path_params["i"]
        try:
            folder = ctx.folder(i)
        except NotServed:
            return JSONResponse({"error": "no such run"}, 404)
        body = (f"<h1>{esc(folder.name)}</h1><div id='run-head'></div>"
                "<div class='bar'><input id='filter' type='search' placeholder='filter: objective, end...'>"
                "<label><input id='failed' type='checkbox'> failed only</label><span id='count'></span></div>"
                "<table id='episodes' class='grid'></table><button id='more' hidden>show more</button>")
        return page(ctx, folder.name, body, scripts=("runs.js",), data={"view": "run", "run": int(i)}, active="Runs")

    async def api_runs(request):
        rows = []
        for i in range(len(ctx.folders)):
            r = await run_in_threadpool(run_entry, ctx, i)
            rows.append({k: v for k, v in r.items() if k != "episodes"})
        return JSONResponse({"runs": rows})

    async def api_run(request):
        try:
            r = await run_in_threadpool(run_entry, ctx, request.path_params["i"])
        except NotServed:
            return JSONResponse({"error": "no such run"}, 404)
        return JSONResponse(r)

    async def api_verified(request):
        try:
            return JSONResponse(await run_in_threadpool(verified_status, ctx, request.path_params["i"]))
        except NotServed:
            return JSONResponse({"error": "no such run"}, 404)

    return [Route("/", home), Route("/run/{i:int}", run_page), Route("/api/runs", api_runs),
            Route("/api/runs/{i:int}", api_run), Route("/api/runs/{i:int}/verified", api_verified)]
