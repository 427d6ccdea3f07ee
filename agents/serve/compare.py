"""The compare page: ``/compare?a=RUN:PATH&b=RUN:PATH``, two episodes of one level side by
side, stepped together, aligned by step (position k beside position k) or by progress (beside
each position of A, the first position of B that reached the same progress P). The episodes'
documents and frames are the viewer's (viewer.py); this page only places them."""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.routing import Route

from longpuzzle.agents.serve.app import NotServed
from longpuzzle.agents.serve.page import page

NAV = [("Compare", "/compare")]


def parse_ref(ctx, ref: str | None) -> tuple[int, str] | None:
    """``RUN:PATH`` -> (run, path) of an episode folder served, else None."""
    if not ref or ":" not in ref:
        return None
    run, _, path = ref.partition(":")
    try:
        ctx.episode(run, path)
    except NotServed:
        return None
    return int(run), path


def routes(ctx) -> list:
    async def compare(request):
        refs = [parse_ref(ctx, request.query_params.get(k)) for k in ("a", "b")]
        if any(request.query_params.get(k) for k in ("a", "b")) and None in refs:
            return JSONResponse({"error": "a and b must each be RUN:PATH of an episode served"}, 404)
        body = ("<h1>Compare</h1><p class='sub'>Two episodes of one level side by side. Pick them from a run's "
                "list (the ⇄ column), or step both here with ← →.</p><div id='compare' class='compare'></div>")
        data = {"view": "compare", "a": refs[0], "b": refs[1], "align": request.query_params.get("align", "step")}
        return page(ctx, "Compare", body, scripts=("viewer.js", "compare.js"), data=data, active="Compare")

    return [Route("/compare", compare)]
