"""The runs and leaderboard page (``/``) and a run's episodes (``/run/{i}``).

The index is lazy: a run is read when a page asks for it, from its summary.json alone (one
file, whatever the number of episodes; no episode folder is opened to list them), and kept.
Whether a run verifies (agents/verify.py: its verification record, else a replay) is asked
separately (``/api/runs/{i}/verified``), after the list is on screen, since a replay takes time.
"""

from __future__ import annotations

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


def run_entry(ctx, i: int) -> dict:
    """Run ``i``'s row and its episodes' rows (read once, then kept). A run folder is read from
    its summary.json alone: no episode folder is opened or even looked up (eval's layout names
    each, <objective folder>/<episode folder>; the viewer checks the one opened)."""
    key = ("run", i)
    if key not in ctx.cache:
        folder = ctx.folder(i)
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
    if key not in ctx.cache:
        from longpuzzle.agents.verify import check_episode, check_run, is_run_folder     # (replay: lazily)

        folder = ctx.folder(i)
        try:
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
