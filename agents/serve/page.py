"""The base page of every HTML route: a header with the app's navigation, the body the route
gives, its data as JSON and its script files.

Text from a run folder never enters the markup as markup: the server side escapes whatever it
writes (``esc``), and the pages' own data travel as JSON inside ``<script
type="application/json">`` (with ``<``, ``>`` and ``&`` written as \\u escapes, so no string can
close the element), which the scripts read and show through ``textContent``. The CSP
(security.py) runs only the app's script files besides.
"""

from __future__ import annotations

import html
import json

from starlette.responses import HTMLResponse


def esc(text) -> str:
    """Text for HTML (element content or a quoted attribute value)."""
    return html.escape(str(text), quote=True)


def json_for_html(data) -> str:
    """JSON that cannot end the <script> element holding it, nor open a comment in it."""
    return (json.dumps(data, ensure_ascii=False, default=str)
            .replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page(ctx, title: str, body: str, *, scripts: tuple[str, ...] = (), data=None, active: str = "") -> HTMLResponse:
    """An HTML page of the app: ``body`` is markup the route made (with ``esc`` for any text),
    ``data`` what its scripts read (``LP.data()`` in app.js), ``scripts`` file names in static/."""
    on = ' class="on"'
    nav = "".join(f'<a href="{esc(href)}"{on if label == active else ""}>{esc(label)}</a>' for label, href in ctx.nav)
    tags = "".join(f'<script src="/static/{esc(s)}" defer></script>' for s in ("app.js", *scripts))
    doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="lp-token" content="{esc(ctx.page_token)}">
<title>{esc(title)} - longpuzzle</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/app.css">
{tags}
</head><body>
<header class="top"><a class="brand" href="/">longpuzzle<span>serve</span></a><nav>{nav}</nav></header>
<main>{body}</main>
<script type="application/json" id="lp-data">{json_for_html(data if data is not None else {})}</script>
</body></html>"""
    return HTMLResponse(doc)
