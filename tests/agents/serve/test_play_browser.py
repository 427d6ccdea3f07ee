"""Live play and "Branch here" in a real headless Chromium (Playwright driving the system
browser): a person enters Maze Paint from the home screen and wins a level with real pointer
events on the canvas; the recorded episode replays; a branch from one of its steps restores
that state exactly and plays on."""

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from play_actions import solver_actions
from play_app import play_app, running
from waits import HANG, guarded

from longpuzzle.agents.harness import read_events, replay_episode

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium")
playwright = pytest.importorskip("playwright.sync_api")


def _gesture(page, box, scale, a):
    """One solver action as real pointer events on the canvas (page coordinates)."""
    def at(x, y):
        return box["x"] + (x + 0.5) / scale, box["y"] + (y + 0.5) / scale

    if a["type"] == "click":
        page.mouse.click(*at(a["x"], a["y"]))
    elif a["type"] in ("swipe", "drag"):
        page.mouse.move(*at(a["x0"], a["y0"]))
        page.mouse.down()
        page.mouse.move(*at(a["x1"], a["y1"]), steps=6)
        page.mouse.up()
    else:
        raise AssertionError(f"no gesture for {a}")


# the SHA-256 of the canvas's pixels as RGB bytes (row by row, as a frame's numpy bytes)
CANVAS_SHA256 = """(async () => {
  const c = document.getElementById('lp-screen');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const rgb = new Uint8Array(c.width * c.height * 3);
  for (let i = 0, j = 0; i < d.length; i += 4) { rgb[j++] = d[i]; rgb[j++] = d[i + 1]; rgb[j++] = d[i + 2]; }
  const h = await crypto.subtle.digest('SHA-256', rgb);
  return Array.from(new Uint8Array(h)).map(b => b.toString(16).padStart(2, '0')).join('');
})()"""


def _until(page, expr: str, timeout: float = HANG):
    """Poll ``expr`` in the page until it is true (evaluated through the DevTools protocol:
    the app's CSP forbids the string evaluation wait_for_function uses)."""
    import time
    t = time.monotonic() + timeout
    while not page.evaluate(expr):
        if time.monotonic() > t:
            raise AssertionError(f"not true in {timeout} s: {expr}")
        page.wait_for_timeout(10)


def _wait_settled(page, frames_before):
    _until(page, f"window.lpPlay.busy === 0 && window.lpPlay.frames > {int(frames_before)}")


def _play(page, actions):
    box = page.locator("#lp-screen").bounding_box()
    width = page.evaluate("document.getElementById('lp-screen').width")
    scale = width / box["width"]
    for a in actions:
        n = page.evaluate("window.lpPlay.frames")
        _gesture(page, box, scale, a)
        _wait_settled(page, n)
    return page.evaluate("window.lpPlay.state")


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


def test_a_person_enters_maze_paint_and_wins_a_level_with_the_pointer(browser, tmp_path):
    record = tmp_path / "humans"
    app = play_app([], record)
    errors = []
    with running(app) as url:
        page = guarded(browser.new_page(viewport={"width": 1280, "height": 1100}))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/play")
        page.select_option("#lp-target", "maze_paint/easy")          # an objective: from the home screen
        page.click("#lp-start")
        page.wait_for_url("**/play/s/*")
        _until(page, "!!window.lpPlay && window.lpPlay.frames >= 1")
        state = page.evaluate("window.lpPlay.state")
        assert state["step"] == 1 and state["ended"] is None              # the protocol's first wait
        acts = solver_actions("maze_paint", "easy")        # home -> Maze Paint -> Easy -> level 1's swipes
        state = _play(page, acts)
        assert state["feedback"]["executed"] and state["step"] == len(acts) + 1
        shown = page.evaluate(CANVAS_SHA256)                 # the canvas holds the engine's frame, exactly
        n = page.evaluate("window.lpPlay.frames")
        page.keyboard.press("ArrowLeft")                  # a key: the key action agents send
        _wait_settled(page, n)
        n = page.evaluate("window.lpPlay.frames")
        page.click("#lp-leave")
        _wait_settled(page, n)
        state = page.evaluate("window.lpPlay.state")
        assert state["ended"] == "final_answer" and state["result"]["solved"] == 1
        assert page.locator("#lp-episode").is_visible()
        folder = Path(state["result"]["folder"])
        page.goto(url + page.locator("#lp-episode").get_attribute("href"))   # the viewer shows it
        page.wait_for_load_state("networkidle")
        page.close()
    assert errors == []
    head = read_events(folder)[0]
    assert head["agent"] == "human" and head["objective"] == "maze_paint/easy"
    pub = [r for r in read_events(folder) if r.get("stream") == "public" and "action" in r]
    kinds = [r["action"]["type"] for r in pub]
    assert kinds[0] == "wait" and kinds[1:3] == ["click", "click"] and set(kinds[3:-1]) == {"drag"}
    assert pub[-1]["action"] == {"type": "key", "name": "ArrowLeft"}
    rep = replay_episode(folder)
    assert rep.ok and rep.complete, rep.divergence
    res = json.loads((folder / "result.json").read_text())
    assert res["levels_outcome"][0]["won"] and res["presses"] == len(acts)
    from longpuzzle.agents.harness import open_frames
    with open_frames(folder) as store:
        assert shown == hashlib.sha256(store.read(len(store) - 1).tobytes()).hexdigest()


def test_branch_here_restores_the_state_and_plays_on(browser, tmp_path):
    from longpuzzle.agents.serve.live import SessionPool

    src_root = tmp_path / "src"
    pool = SessionPool(src_root, idle=60)
    s = pool.new("maze_paint/easy")
    s.start()
    acts = solver_actions("maze_paint", "easy")
    for a in acts[:4]:                            # entered, two swipes on level 1
        s.submit(a)
    s.leave()
    src = s.folder
    k = 5                                         # after the first wait and acts[:4]
    record = tmp_path / "humans"
    app = play_app([src_root], record)
    with running(app) as url:
        page = guarded(browser.new_page(viewport={"width": 1280, "height": 1100}))
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/episode/0/{src.name}")                  # the viewer: position of step k + 1
        page.wait_for_selector("#lp-branch-here")
        page.fill("input[placeholder=step]", str(k + 1))
        page.press("input[placeholder=step]", "Enter")
        assert page.get_attribute("#lp-branch-here", "href").endswith(f"?step={k}")
        page.click("#lp-branch-here")
        page.wait_for_url("**/branch/**")
        page.wait_for_load_state("load")
        assert page.evaluate("document.getElementById('lp-branch-frame').naturalWidth") == 540
        page.click("#lp-branch-play")
        page.wait_for_url("**/play/s/*")
        _until(page, "!!window.lpPlay && window.lpPlay.frames >= 1")
        state = _play(page, acts[4:])
        n = page.evaluate("window.lpPlay.frames")
        page.click("#lp-leave")
        _wait_settled(page, n)
        state = page.evaluate("window.lpPlay.state")
        page.close()
    assert errors == [] and state["result"]["solved"] == 1
    folder = Path(state["result"]["folder"])
    assert read_events(folder)[0]["continued_from"]["step"] == k
    rep = replay_episode(folder)
    assert rep.ok and rep.complete, rep.divergence
