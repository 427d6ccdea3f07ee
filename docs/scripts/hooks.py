"""mkdocs hook of the site (mkdocs.yml ``hooks:``): the checkout being built is what the API and
CLI references document, and the home page is the README.

The repository's top level *is* the package ``longpuzzle`` (pyproject's ``package-dir``), so no
folder of the checkout is named ``longpuzzle``; griffe (the API reference) and the import of
``longpuzzle.cli`` (the CLI reference) would otherwise find whatever install of longpuzzle the
environment holds. A temporary folder holding a link ``longpuzzle`` -> the checkout goes first on
``sys.path`` as mkdocs starts.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]          # docs/scripts/hooks.py -> the checkout


def _link_checkout() -> str:
    where = tempfile.mkdtemp(prefix="longpuzzle-docs-")
    os.symlink(ROOT, os.path.join(where, "longpuzzle"), target_is_directory=True)
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    return where


def on_startup(command, dirty, **kwargs):
    """Before any plugin starts (mkdocstrings makes its search path from ``sys.path`` when it
    first renders) and before any page (mkdocs restores ``sys.path`` after importing a hook, so
    this cannot happen at import)."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")        # importing commands never opens a window
    sys.path.insert(0, _link_checkout())
    for name in [m for m in sys.modules if m == "longpuzzle" or m.startswith("longpuzzle.")]:
        del sys.modules[name]          # an installed longpuzzle imported earlier gives way to the checkout
    # The command table loads each subpackage's commands on first use (cli.py, COMMAND_MODULES);
    # mkdocs-click reads the group's loaded commands, so list them once: every command is then in
    # the CLI reference.
    import click
    from longpuzzle.cli import cli
    cli.list_commands(click.Context(cli))
    _escape_angle_brackets(cli)


def _escape_angle_brackets(command) -> None:
    """The help texts say ``<level id>``, ``<Game>``, ``<time>`` ...; mkdocs-click passes them to
    Markdown as they are, where ``<Game>`` is an HTML tag and vanishes. In this build process only
    (the commands' real --help is untouched), each ``<`` of a help text becomes ``&lt;``: none of
    them is inside a code span."""
    if command.help:
        command.help = command.help.replace("<", "&lt;")
    if command.short_help:
        command.short_help = command.short_help.replace("<", "&lt;")
    for param in command.params:
        if getattr(param, "help", None):
            param.help = param.help.replace("<", "&lt;")
    for sub in getattr(command, "commands", {}).values():
        _escape_angle_brackets(sub)


def on_page_markdown(markdown, page, **kwargs):
    """The home page (docs/index.md, a placeholder) is README.md, so the two never drift apart:
    its links into ``docs/`` become the site's own (the strict build then checks each of them)."""
    if page.file.src_uri != "index.md":
        return markdown
    return (ROOT / "README.md").read_text(encoding="utf-8").replace("](docs/", "](")
