"""Live play through the browser (issue 40, "Responsive"): one action of a person, from the
pointer event on the canvas to the engine's next frame on screen, measured in the page itself
(play.js: ``performance.now()`` at pointerup, and at the first paint after the new frame was
drawn), in a real headless Chromium (Playwright, the system browser) against a real uvicorn
server on 127.0.0.1. A round is one swipe on Maze Paint easy/1 (up, then down: the ball moves
each time), sent as real pointer events.

What the time is made of is measured beside it: the server's share (the handler's time from the
request to the PNG ready: the action handed to the session's agent loop, validated, dispatched,
rendered, recorded, the frame encoded; X-Play-Server-Ms), of which the PNG encoding alone and the
harness step alone (submit without HTTP) are timed in this process; the rest is the browser
(the request, decoding the PNG, drawing, the next paint).

Run:  python -m pytest benchmarks/test_bench_play.py --benchmark-enable -s"""

import shutil
import statistics
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "agents" / "serve"))
from play_app import play_app, running

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
UP = {"type": "swipe", "x0": 144, "y0": 622, "x1": 144, "y1": 532}
ENTER = [{"type": "click", "x": 270, "y": 721}, {"type": "click", "x": 270, "y": 315}]
DOWN = {"type": "swipe", "x0": 144, "y0": 532, "x1": 144, "y1": 622}


@pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium")
def test_pointer_event_to_new_frame_on_screen(benchmark, tmp_path):
    from playwright.sync_api import sync_playwright

    app = play_app([], tmp_path / "humans")
    with running(app) as url, sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = b.new_page(viewport={"width": 1280, "height": 1100})
        page.goto(url + "/play")
        page.select_option("#lp-target", "maze_paint/easy")      # an objective: no cycle rule ends it
        page.click("#lp-start")
        page.wait_for_url("**/play/s/*")
        while not page.evaluate("!!window.lpPlay && window.lpPlay.frames >= 1"):
            time.sleep(0.01)
        box = page.locator("#lp-screen").bounding_box()
        scale = page.evaluate("document.getElementById('lp-screen').width") / box["width"]
        for a in ENTER:                               # home -> Maze Paint -> Easy: level 1
            n = page.evaluate("window.lpPlay.frames")
            page.mouse.click(box["x"] + a["x"] / scale, box["y"] + a["y"] / scale)
            _until(page, f"window.lpPlay.busy === 0 && window.lpPlay.frames > {n}")
        turn = [0]

        def one():
            a = (UP, DOWN)[turn[0] % 2]
            turn[0] += 1
            n = page.evaluate("window.lpPlay.latencies.length")
            page.mouse.move(box["x"] + a["x0"] / scale, box["y"] + a["y0"] / scale)
            page.mouse.down()
            page.mouse.move(box["x"] + a["x1"] / scale, box["y"] + a["y1"] / scale, steps=4)
            page.mouse.up()
            _until(page, f"window.lpPlay.latencies.length > {n}")

        benchmark.group = "play"
        benchmark.extra_info.update(ops=1, unit="actions (pointer event -> frame on screen)")
        benchmark.pedantic(one, rounds=60, iterations=1, warmup_rounds=5)
        lat = page.evaluate("window.lpPlay.latencies")[5:]
        state = page.evaluate("window.lpPlay.state")
        b.close()
    painted = sorted(x["painted"] for x in lat)
    drawn = [x["drawn"] for x in lat]
    server = [x["server"] for x in lat]
    heads = [x["headers"] for x in lat]
    bodies = [x["body"] for x in lat]
    parts = _server_parts(tmp_path)
    info = {"painted_median_ms": statistics.median(painted), "painted_p90_ms": painted[int(0.9 * len(painted))],
            "drawn_median_ms": statistics.median(drawn),
            "response_headers_median_ms": statistics.median(heads), "response_body_median_ms": statistics.median(bodies),
            "server_median_ms": statistics.median(server),
            **parts, "rounds": len(lat), "ended": state["ended"]}
    benchmark.extra_info.update({k: round(v, 2) if isinstance(v, float) else v for k, v in info.items()})
    print("\nplay latency (ms):", {k: round(v, 2) if isinstance(v, float) else v for k, v in info.items()})
    assert state["ended"] is None and len(lat) >= 50


def _until(page, expr: str, timeout: float = 20.0) -> None:
    t = time.monotonic() + timeout
    while not page.evaluate(expr):
        if time.monotonic() > t:
            raise AssertionError(f"not true in {timeout} s: {expr}")


def _server_parts(tmp: Path) -> dict:
    """The server's parts timed alone: one harness step of a live session (submit, no HTTP)
    and encoding its frame as PNG."""
    from longpuzzle.agents.serve.live import SessionPool, png_bytes

    pool = SessionPool(tmp / "parts", idle=60)
    s = pool.new("maze_paint/easy")
    s.start()
    for a in ENTER:
        s.submit(a)
    steps, pngs = [], []
    for i in range(60):
        t0 = time.perf_counter()
        up = s.submit((UP, DOWN)[i % 2])
        t1 = time.perf_counter()
        png_bytes(up.frame)
        t2 = time.perf_counter()
        if i >= 5:
            steps.append((t1 - t0) * 1000)
            pngs.append((t2 - t1) * 1000)
    s.close()
    return {"harness_step_median_ms": statistics.median(steps), "png_encode_median_ms": statistics.median(pngs)}
