"""The documentation site (mkdocs.yml, docs/; issue 41), built strictly from this checkout and
opened in a real headless Chromium (tests/browser.py), served over HTTP on 127.0.0.1.

Each key page must render its main heading, raise no error in the browser (scripts, console,
failed loads), load nothing from another host, and every link of it that stays on the site must
answer HTTP 200 and, when it names an anchor, land on an element with that id.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from browser import Browser  # noqa: E402

# page -> its main heading (the <h1>), as the browser shows it in the title "heading - longpuzzle"
PAGES = {
    "": "longpuzzle",
    "reference/cli/": "CLI reference",
    "reference/api/": "Python API",
    "architecture/": "Architecture",
}


class _Links(HTMLParser):
    """The hrefs, srcs and element ids of one HTML page."""

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()
        self.h1: list[str] = []
        self._in_h1 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        for k in ("href", "src"):
            if a.get(k):
                self.refs.append(a[k])
        self._in_h1 = self._in_h1 or tag == "h1"

    def handle_endtag(self, tag):
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data):
        if self._in_h1:
            self.h1.append(data)


def _parse(html: str) -> _Links:
    p = _Links()
    p.feed(html)
    return p


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            body = r.read()
            return r.status, body.decode("utf-8", "replace") if "html" in r.headers.get("Content-Type", "") else ""
    except urllib.error.HTTPError as e:
        return e.code, ""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):          # no line per request on stderr
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built strictly into a temporary folder and served on 127.0.0.1 (a free port)."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip('mkdocs is not installed (the docs extra: python3 -m pip install -e ".[docs]")')
    out = tmp_path_factory.mktemp("site")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "SDL_VIDEODRIVER": "dummy"})
    assert r.returncode == 0, "mkdocs build --strict failed:\n" + r.stderr[-4000:]
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser():
    if Browser.find() is None:
        pytest.skip("no Chromium installed (.ci/run installs Debian's chromium)")
    with Browser() as b:
        yield b


@pytest.mark.parametrize("page", list(PAGES))
def test_a_key_page_renders_in_the_browser_with_no_broken_link(site, browser, page):
    url = site + page
    heading = PAGES[page]
    shown = browser.load(url)
    assert not shown.errors, (url, shown.errors)
    assert shown.title == heading or shown.title.startswith(heading + " - "), (url, shown.title)
    assert heading in shown.text, url
    assert all(w > 0 and h > 0 for _, w, h in shown.images), shown.images      # every image decoded

    status, html = _get(url)
    assert status == 200
    links = _parse(html)
    assert "".join(links.h1).strip().rstrip("¶").strip() == heading
    host = urlsplit(site).netloc
    targets = {}
    for ref in links.refs:
        absolute = urljoin(url, ref)
        where = urlsplit(absolute)
        if where.scheme not in ("http", "https") or where.netloc != host:
            continue          # another site's page (a reader may follow it; the page loads nothing from there)
        page_url, anchor = urldefrag(absolute)
        targets.setdefault(page_url, set()).add(anchor)
    assert len(targets) > 5, targets                   # the navigation at least
    broken = []
    for target, anchors in sorted(targets.items()):
        status, body = _get(target)
        if status != 200:
            broken.append((target, status))
            continue
        ids = _parse(body).ids if body else set()
        broken += [(target + "#" + a, "no such anchor") for a in anchors if a and body and a not in ids]
    assert not broken, (url, broken)


def test_the_site_loads_nothing_from_another_host(site):
    """No script, style sheet, font or image of the key pages comes from outside the site (a reader
    offline, or a test machine that may reach only 127.0.0.1, sees the whole site)."""
    for page in PAGES:
        status, html = _get(site + page)
        assert status == 200
        outside = [m for m in _Resources.of(html) if urlsplit(m).scheme in ("http", "https")]
        assert not outside, (page, outside)


class _Resources(HTMLParser):
    """What a page loads by itself: script src, link href of style sheets, icons and preloads,
    img src (not the <a> links a reader may follow)."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img") and a.get("src"):
            self.found.append(a["src"])
        if tag == "link" and a.get("href") and a.get("rel") in ("stylesheet", "preconnect", "preload", "icon"):
            self.found.append(a["href"])

    @classmethod
    def of(cls, html: str) -> list[str]:
        p = cls()
        p.feed(html)
        return p.found


def _benchmark_page():
    spec = importlib.util.spec_from_file_location("benchmark_page", ROOT / "docs" / "scripts" / "benchmark_page.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_benchmark_page_tables_a_pytest_benchmark_run(tmp_path, capsys):
    """docs/scripts/benchmark_page.py: one table per group, throughput = ops / seconds of the
    fastest (median) round, the ratio to the run's reference where the group is a rules-step
    group, per CPU second and side by side where recorded; a file that is not such JSON is one
    error line and exit status 2."""
    import json

    def bench(name, group, ops, lo, med, **extra):
        return {"name": name, "group": group, "stats": {"min": lo, "median": med, "rounds": 9},
                "extra_info": {"ops": ops, **extra}}
    doc = {"datetime": "2026-12-06T10:00:00", "version": "5.2.3", "commit_info": {"id": "abcdef1234567890"},
           "machine_info": {"cpu": {"brand_raw": "CPU X", "count": 2}, "system": "Linux",
                            "python_implementation": "CPython", "python_version": "3.11.7"},
           "benchmarks": [bench("test_ref", "single", 1000, 0.01, 0.02, reference=True),
                          bench("test_fast", "single", 1000, 0.001, 0.004),
                          bench("test_hash", "frame hash", 50, 0.5, 1.0, cpu_min=0.25, unit="frames",
                                baseline_ops=50, baseline_min=2.0, baseline_median=2.0),
                          bench("test_no_ops", "single", 0, 1.0, 1.0)]}
    src = tmp_path / "bench.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "benchmarks.md"
    page = _benchmark_page()
    assert page.main([str(src), "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Benchmark results") and "## single" in text and "## frame hash" in text
    assert "| `test_fast` | 1,000 | 1 M/s (250 k/s) | 9 | 10.00x (5.00x) |" in text
    assert "| `test_ref` | 1,000 | 100 k/s (50 k/s) | 9 | 1.00x (1.00x) |" in text
    assert "| `test_hash` | 50 | 100/s (50/s) | 9 | 200/s | 4.00x (2.00x) of baseline | frames |" in text
    assert "test_no_ops" not in text and "`abcdef123456`" in text and "CPU X, 2 cores" in text
    (tmp_path / "bad.json").write_text("[1, 2]")
    assert page.main([str(tmp_path / "bad.json")]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_the_cli_reference_shows_every_command_and_its_help_as_written(site, browser):
    """The CLI reference is the commands' own: every command and subcommand of ``longpuzzle``
    has its section, and each one's help text reads in the browser as ``--help`` says it
    (``<level id>``, ``<Game>`` ... included, which Markdown would take for HTML tags)."""
    import click

    from longpuzzle.cli import cli

    shown = " ".join(browser.load(site + "reference/cli/").text.split())
    status, html = _get(site + "reference/cli/")
    ids = _parse(html).ids
    cli.list_commands(click.Context(cli))

    def walk(cmd, path):
        yield path, cmd
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            yield from walk(sub, path + [name])
    seen = 0
    for path, cmd in walk(cli, ["longpuzzle"]):
        assert "-".join(path) in ids, path                  # mkdocs-click's heading id
        # its first paragraph, as read on the page (``code`` marks show as code, not as marks)
        first = " ".join((cmd.help or "").split("\n\n")[0].replace("`", "").split())
        assert first and first in shown, (path, first)
        seen += 1
    assert seen > 20
    assert "longpuzzle/<Game>-v0" in shown


# the main public objects the API reference must document, by mkdocstrings' anchor (the path)
API_OBJECTS = [
    "longpuzzle.engine.session.Session", "longpuzzle.engine.registry.get_puzzle",
    "longpuzzle.engine.declaration.GameSpec", "longpuzzle.engine.catalog.Catalog",
    "longpuzzle.solvers.solve", "longpuzzle.solvers.oracle.Oracle", "longpuzzle.solvers.generators.generate",
    "longpuzzle.agents.testing.conformance.check_puzzle", "longpuzzle.agents.envs.rules.RulesEnv",
    "longpuzzle.agents.envs.vector.PuzzleVectorEnv", "longpuzzle.agents.jobs.rollouts",
    "longpuzzle.agents.api.BaseAgent", "longpuzzle.agents.harness.objective.ObjectiveEpisode",
    "longpuzzle.agents.harness.level.LevelEpisode", "longpuzzle.agents.harness.replay.replay_episode",
]


def test_the_api_reference_documents_the_main_public_objects(site):
    """Each main public object has its section, with the text of its docstring under it."""
    status, html = _get(site + "reference/api/")
    assert status == 200
    ids = _parse(html).ids
    missing = [o for o in API_OBJECTS if o not in ids]
    assert not missing, missing
    from longpuzzle.engine.session import Session
    first = " ".join(Session.__doc__.split())[:40]
    assert first in " ".join(html.split())


SETUP_LINES = ['python3 -m pip install -e . && python3 -m longpuzzle eval',
               'python3 -m pip install -e ".[dev]" && python3 -m pytest']


def test_the_readme_is_short_keeps_its_two_lines_and_every_link_of_it_resolves():
    """The README opens with the two set-up lines (the main job; the tests, which .ci/run runs as
    written there, after building the site strictly), stays short (the rest is on the site), and
    each of its relative links and pictures names a file of the checkout."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = text.split("```\n", 2)[1].strip().splitlines()
    assert first_block == SETUP_LINES
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert SETUP_LINES[1] in ci
    build = [i for i, l in enumerate(ci) if "mkdocs build --strict" in l]
    assert build and build[0] < ci.index(SETUP_LINES[1])
    assert len(text.splitlines()) < 200, "the README's details belong on the site (docs/)"
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert len(local) > 10 and any(t.endswith(".png") for t in local)
    missing = [t for t in local if not (ROOT / t).is_file()]
    assert not missing, missing
