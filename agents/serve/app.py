"""The app factory of ``longpuzzle serve`` and its route table.

    app = make_app(["runs/a", "runs/b"])          # a Starlette app (ASGI), secured (security.py)

ROUTE_MODULES is the route table: each module listed there has ``routes(ctx) -> list`` of
Starlette routes (given the ServeContext: the folders served, the tokens, the page helper) and
may have ``NAV = [(label, path), ...]``, its entries in the header's navigation, and
``shutdown(ctx)``, called when the server stops (play ends its live sessions). A new part of
the app adds its module here with one line; the app mounts every listed module's routes, in
this order, under the same security.
"""

from __future__ import annotations

import contextlib
import importlib
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from longpuzzle.agents.serve.security import Security

ROUTE_MODULES: tuple[str, ...] = (
    "longpuzzle.agents.serve.runs",          # /  and /api/runs: the runs and the leaderboard
    "longpuzzle.agents.serve.viewer",        # /episode/...: the episode viewer
    "longpuzzle.agents.serve.compare",       # /compare: two episodes side by side
    "longpuzzle.agents.serve.play",          # /play, /branch, /baselines: live play, branch here, human baselines
)

STATIC = Path(__file__).parent / "static"


class NotServed(LookupError):
    """A path that is not inside the folders the app was given (or not what was asked for)."""


@dataclass
class ServeContext:
    """What every route module is given: the folders served (resolved; nothing outside them is
    ever read), the page token, the navigation, and a place for the modules' caches; ``record``
    the folder live sessions are recorded into (``serve --record``; one of ``folders``), or None."""
    folders: list[Path]
    page_token: str
    nav: list[tuple[str, str]] = field(default_factory=list)
    cache: dict = field(default_factory=dict)
    record: Path | None = None

    def folder(self, run: int | str) -> Path:
        """The served folder number ``run`` (its index on the command line)."""
        try:
            i = int(run)
        except (TypeError, ValueError):
            raise NotServed(f"no run {run!r}") from None
        if not 0 <= i < len(self.folders):
            raise NotServed(f"no run {run!r}")
        return self.folders[i]

    def inside(self, run: int | str, rel: str) -> Path:
        """``rel`` inside served folder ``run``, resolved (symbolic links followed), refused with
        NotServed where it leads out of that folder: ``..``, an absolute path, a link elsewhere."""
        root = self.folder(run)
        if "\x00" in rel or rel.startswith(("/", "\\")) or ":" in rel.split("/")[0]:
            raise NotServed("not a path inside the run")
        p = (root / rel).resolve()
        if p != root and not p.is_relative_to(root):
            raise NotServed("not a path inside the run")
        return p

    def episode(self, run: int | str, rel: str) -> Path:
        """An episode folder (events.jsonl in it) inside served folder ``run``."""
        p = self.inside(run, rel)
        if not (p / "events.jsonl").is_file():
            raise NotServed("not an episode folder of the run")
        return p


def make_app(folders, *, host: str = "127.0.0.1", access_token: str | None = None,
             page_token: str | None = None, route_modules: tuple = ROUTE_MODULES, record=None):
    """The ASGI app serving ``folders`` (run folders or episode folders), behind Security.
    Bound to another host than the loopback, ``access_token`` is required (ValueError).
    ``route_modules``: module names (or module-like objects with ``routes``) to mount.
    ``record``: a folder (made if missing) that live sessions are recorded into, served too."""
    roots = []
    for f in folders:
        p = Path(f).resolve()
        if not p.is_dir():
            raise NotServed(f"{f} is not a folder")
        roots.append(p)
    if record is not None:
        rec = Path(record)
        rec.mkdir(parents=True, exist_ok=True)
        rec = rec.resolve()
        if rec not in roots:
            roots.append(rec)
    ctx = ServeContext(roots, page_token or secrets.token_urlsafe(24), record=rec if record is not None else None)
    routes, starts, stops = [], [], []
    for name in route_modules:
        mod = importlib.import_module(name) if isinstance(name, str) else name
        ctx.nav.extend(getattr(mod, "NAV", ()))
        routes.extend(mod.routes(ctx))
        if callable(getattr(mod, "startup", None)):
            starts.append(mod.startup)
        if callable(getattr(mod, "shutdown", None)):
            stops.append(mod.shutdown)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        for start in starts:                   # the server started: e.g. the runs indexed in the background
            start(ctx)
        yield
        for stop in stops:                     # the server stopping: each module ends what it runs
            stop(ctx)

    routes.append(Mount("/static", app=StaticFiles(directory=STATIC), name="static"))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.ctx = ctx
    return Security(app, host, ctx.page_token, access_token)
