"""The browser app in a real headless browser (issue 40): Debian's chromium driven by
Playwright's Python client (``executable_path``: no browser download). Pages load with no
console error; the frame shown at step k is the stored frame of that step (by its recorded
hash); keyboard, event jumps and the oracle's first fatal move; compare aligned by step and by
progress; hostile strings from a run folder are shown as text and run nothing."""

from __future__ import annotations

import base64
import io
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from longpuzzle.agents.harness import read_events
from longpuzzle.agents.harness.frames import hasher, header_frame_hash
from longpuzzle.agents.report.oracle_steps import oracle_steps

sys.path.insert(0, str(Path(__file__).parent))
from waits import guarded

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the dev extra)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (.ci/run installs it)")

EPISODE = "bolt_unscrew_hard/episode_001"           # (conftest.py: greedy_run)
OTHER = "bolt_unscrew_hard/episode_002"
HOSTILE = '</script><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'

# the pixels the page shows in its frame image, as PNG (drawn onto a canvas, read back)
SHOWN_PNG = """img => { const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
  c.getContext('2d').drawImage(img, 0, 0); return c.toDataURL('image/png'); }"""


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def open_page(browser):
    """open_page(url) -> (page, errors): a fresh page loaded until the app says it is ready,
    ``errors`` collecting console errors and uncaught exceptions from then on."""
    pages = []

    def go(url):
        pg = guarded(browser.new_page(viewport={"width": 1400, "height": 950}))
        errors = []
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.on("dialog", lambda d: (errors.append("dialog: " + d.message), d.dismiss()))
        pages.append(pg)
        pg.goto(url)
        pg.wait_for_selector("body[data-ready='1']")
        return pg, errors

    yield go
    for pg in pages:
        pg.close()


def shown_frame(pg, selector=".stage img") -> np.ndarray:
    pg.wait_for_function(f"() => {{ const i = document.querySelector({json.dumps(selector)}); "
                         "return i && i.complete && i.naturalWidth > 0 && !i.dataset.pending; }")
    url = pg.eval_on_selector(selector, SHOWN_PNG)
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def recorded_hashes(folder) -> list[str]:
    """Each stored frame's hash as the episode recorded it (frame 0 in the header)."""
    ev = read_events(folder)
    return [ev[0]["frame"]] + [h for r in ev[1:] if r.get("stream") == "public" for h in r.get("frames", [])]


def test_every_page_loads_with_no_console_error(serve, greedy_run, open_page):
    s = serve([greedy_run])
    for path in ("/", "/run/0", f"/episode/0/{EPISODE}", f"/compare?a=0:{EPISODE}&b=0:{OTHER}", "/compare"):
        pg, errors = open_page(s.url + path)
        assert errors == [], (path, errors)
    pg, errors = open_page(s.url + "/")
    assert pg.inner_text("#runs tbody tr td:nth-child(3)") == "greedy"
    pg.wait_for_selector("#runs .pill.ok")                 # the run verifies (its record)
    pg.click("#runs tbody td a:has-text('bolt_unscrew/hard')")       # an objective: the run's episodes of it
    pg.wait_for_url("**/run/0?q=*")
    pg.wait_for_selector("body[data-ready='1']")
    assert pg.input_value("#filter") == "bolt_unscrew/hard"
    assert pg.locator("#episodes tbody tr").count() == 2 and errors == []


def test_the_frame_shown_at_step_k_is_the_stored_frame_of_step_k(serve, greedy_run, open_page):
    folder = greedy_run / EPISODE
    hashes = recorded_hashes(folder)
    hash_of = hasher(header_frame_hash(read_events(folder)[0]))
    s = serve([greedy_run])
    pg, errors = open_page(f"{s.url}/episode/0/{EPISODE}")
    pg.keyboard.press("a")                                 # the frame alone, no action drawn
    doc = pg.evaluate("() => window.lpViewer.doc")
    for k in (1, 5, 9):
        pg.fill("input[placeholder=step]", str(k))
        pg.press("input[placeholder=step]", "Enter")
        pos = next(p for p in doc["positions"] if p["step"] == k)
        pg.wait_for_function(f"() => document.querySelector('.stage img').dataset.frame === '{pos['frame']}'")
        assert hash_of(shown_frame(pg)) == hashes[pos["frame"]], k
    pg.keyboard.press("a")                                 # the action drawn: other pixels, same size
    drawn = shown_frame(pg)
    assert hash_of(drawn) != hashes[pos["frame"]]
    nxt = doc["positions"].index(pos) + 1
    pg.keyboard.press("ArrowRight")                        # the keyboard steps once the jump is made
    pg.wait_for_function(f"() => window.lpViewer.i === {nxt}")
    assert pg.text_content(".card.step .k") == f"step {doc['positions'][nxt]['step']} of {len(doc['positions']) - 1}"
    assert errors == []


def test_the_first_fatal_move_of_a_failed_bolt_episode_is_marked_and_jumped_to(serve, greedy_run, open_page):
    folder = greedy_run / EPISODE
    truth = oracle_steps(folder)
    assert truth["first_fatal"] is not None                # greedy plays hard 1 into a dead end
    fatal = truth["first_fatal"][0]
    s = serve([greedy_run])
    pg, errors = open_page(f"{s.url}/episode/0/{EPISODE}")
    pg.wait_for_selector("#viewer[data-oracle='1']")
    assert f"first fatal move: step {fatal}" in pg.inner_text(".legend")
    pg.select_option("select", "fatal")
    pg.keyboard.press("n")
    pg.wait_for_function(f"() => window.lpViewer.pos[window.lpViewer.i].step === {fatal}")
    assert pg.inner_text(".card.step .ev.fatal") == "fatal move"
    assert "∞ (fatal)" in pg.inner_text(".card.step")
    pg.select_option("select", "dead_end")                 # the dead end the evaluator certified after it
    pg.keyboard.press("n")
    dead = pg.evaluate("() => window.lpViewer.pos[window.lpViewer.i]")
    assert "dead_end" in dead["events"] and dead["step"] >= fatal
    assert errors == []


def test_compare_steps_two_episodes_by_step_and_by_progress(serve, greedy_run, open_page):
    s = serve([greedy_run])
    pg, errors = open_page(f"{s.url}/compare?a=0:{EPISODE}&b=0:{OTHER}")
    for _ in range(4):
        pg.keyboard.press("ArrowRight")
    pg.wait_for_function("() => lpCompare.A().i === 4 && lpCompare.B().i === 4")
    imgs = pg.locator(".stage img")
    assert imgs.count() == 2
    pg.select_option(".pick select", "progress")
    for _ in range(4):
        pg.keyboard.press("ArrowRight")
    state = pg.evaluate("""() => { const A = lpCompare.A(), B = lpCompare.B(), P = (v, i) => i > 0 ? (v.pos[i-1].P ?? 0) : 0;
        return {a: A.i, b: B.i, pa: P(A, A.i), pb: P(B, B.i), pb_before: B.i > 0 ? P(B, B.i - 1) : -1, nb: B.pos.length}; }""")
    assert state["a"] == 8
    # B shows the first position that reached A's progress (or its last one)
    assert state["pb"] >= state["pa"] - 1e-9 or state["b"] == state["nb"] - 1
    assert state["b"] == 0 or state["pb_before"] < state["pa"] - 1e-9 or state["pb"] < state["pa"]
    assert errors == []


def test_hostile_strings_in_a_run_folder_are_shown_as_text_and_run_nothing(serve, greedy_run, open_page, tmp_path):
    bad = tmp_path / "<svg onload=window.__pwned=3>"
    shutil.copytree(greedy_run, bad)
    summary = json.loads((bad / "summary.json").read_text())
    summary["agent"] = HOSTILE
    summary["episodes"][0]["objective"] = HOSTILE
    (bad / "summary.json").write_text(json.dumps(summary))
    ep = bad / EPISODE
    calls = [{"type": "header", "format": "longpuzzle-conversation/1"}] + [
        {"type": "call", "n": n, "kind": "step", "cost": 0.001,
         "reply": {"text": f"step {n}: {HOSTILE}", "reasoning": "<b>bold?</b>",
                   "tool_calls": [{"name": "write_guide", "arguments": {"text": HOSTILE}}]}} for n in range(1, 15)]
    (ep / "conversation.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    s = serve([bad])
    for path in ("/", "/run/0", f"/episode/0/{EPISODE}"):
        pg, errors = open_page(s.url + path)
        pg.wait_for_timeout(200)
        assert pg.evaluate("() => window.__pwned") is None, path
        assert pg.locator("main img:not(.frame)").count() == 0 and pg.locator("main svg, main script").count() == 0, path
        assert errors == [], (path, errors)
        if path != f"/episode/0/{EPISODE}":
            assert HOSTILE in pg.inner_text("main"), path
    pg.keyboard.press("ArrowRight")
    pg.wait_for_selector(".card.model")
    assert HOSTILE in pg.inner_text(".card.model pre.text")
    assert pg.inner_text(".card.notes pre") == HOSTILE
