"""The browser app (``longpuzzle serve``, issue 40), measured through a real browser (Debian's
chromium driven by Playwright) against the app served by uvicorn on 127.0.0.1.

list      a run of 10,000 episodes: from opening its page to its table on screen, the server
          (`longpuzzle serve`) started afresh each round in its own process: "first" opens the
          page at once, "again" a second time (the index kept).
step      the viewer's step change: → pressed (the Viewer's show) until the new frame is decoded
          and painted (the next animation frame); "step" steps through an episode in order
          (the neighbours are prefetched, as when one steps with the keyboard), "jump" goes to
          positions far apart (each frame fetched, decoded, drawn and encoded on demand).
frame     the server's part of one uncached frame, apart: reading the stored frame (zstd
          decode), drawing the action (video.draw_action), encoding the PNG (media.images.encode_png:
          ISA-L deflate).

Every figure is per operation (extra_info ops), the fastest and the median round printed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import socket
import threading
import time

import pytest
import uvicorn
from PIL import Image

from longpuzzle.agents.harness import Settings
from longpuzzle.agents.media.images import encode_png
from longpuzzle.agents.report.data import stored_frames
from longpuzzle.agents.report.video import draw_action, label_font
from longpuzzle.agents.runner import RunConfig, execute, start_run
from longpuzzle.agents.serve.app import make_app

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium")
EPISODE = "bolt_unscrew_hard/episode_001"
N_EPISODES = 10_000


class Server:
    def __init__(self, folders, lifespan="off"):        # (in this process: the viewer's benchmarks)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.app = make_app(folders)
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan=lifespan))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture(scope="module")
def episode_run(tmp_path_factory):
    """greedy on Bolt Unscrew hard, one episode of 60 actions, every frame stored."""
    out = tmp_path_factory.mktemp("serve") / "greedy"
    run = RunConfig(agent="greedy", objectives=["bolt_unscrew/hard"], episodes=1,
                    settings=Settings(budget=None, max_actions=60).as_dict())
    start_run(out, run)
    execute(out, run, quiet=True)
    return out


@pytest.fixture(scope="module")
def big_run(tmp_path_factory, episode_run):
    """A run folder whose summary lists 10,000 episodes (each folder on disk, empty: the list
    opens none of them)."""
    out = tmp_path_factory.mktemp("serve") / "big"
    summary = json.loads((episode_run / "summary.json").read_text())
    one = summary["episodes"][0]
    eps = []
    for k in range(N_EPISODES):
        folder = f"bolt_unscrew_hard/episode_{k + 1:05d}"
        (out / folder).mkdir(parents=True)
        eps.append(dict(one, folder=folder, actions=one["actions"] + k % 17, success=k % 3 == 0))
    summary["episodes"] = eps
    (out / "summary.json").write_text(json.dumps(summary))
    return out


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class ServeProcess:
    """``longpuzzle serve --port 0`` in its own process, as a user starts it (the benchmark's
    browser driver then shares no interpreter with the server)."""

    def __init__(self, folders):
        self.proc = subprocess.Popen([sys.executable, "-m", "longpuzzle", "serve", *map(str, folders), "--port", "0"],
                                     stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.url = re.search(r"http://127\.0\.0\.1:\d+", self.proc.stdout.readline()).group(0)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)


@pytest.mark.parametrize("index", ["first", "again"])
def test_list_a_run_of_10000_episodes(benchmark, browser, big_run, index):
    """first: the page opened as soon as serve says where it is (its start-up thread reading the
    summary meanwhile); again: the page opened once more (the index kept)."""
    page = browser.new_page(viewport={"width": 1400, "height": 950})
    srvs = []

    def setup():
        srv = ServeProcess([big_run])                    # a fresh server each round
        srvs.append(srv)
        if index == "again":
            page.goto(srv.url + "/run/0")
            page.wait_for_selector("body[data-ready='1']")
        return (srv,), {}

    def open_list(srv):
        page.goto(srv.url + "/run/0")
        page.wait_for_selector("body[data-ready='1']")

    benchmark.extra_info["ops"] = 1
    benchmark.pedantic(open_list, setup=setup, rounds=3)
    for srv in srvs:
        srv.stop()
    page.close()


STEP_JS = """async ([n, far]) => {
  const v = window.lpViewer, out = [];
  for (let k = 0; k < n; k++) {
    const i = far ? (v.i + Math.floor(v.pos.length / 2) + 7) % v.pos.length : (v.i + 1) % v.pos.length;
    const t0 = performance.now();
    await new Promise(res => { v.listeners = [() => res()]; v.show(i, true); });
    await new Promise(res => requestAnimationFrame(() => res()));
    out.push(performance.now() - t0);
  }
  return out;
}"""


@pytest.mark.parametrize("how", ["step", "jump"])
def test_viewer_step_change(benchmark, browser, episode_run, how):
    srv = Server([episode_run])
    page = browser.new_page(viewport={"width": 1400, "height": 950})
    page.goto(f"{srv.url}/episode/0/{EPISODE}")
    page.wait_for_selector("body[data-ready='1']")
    page.evaluate(STEP_JS, [5, how == "jump"])           # warm: the episode's document, the store open
    n = 20
    benchmark.extra_info["ops"] = n
    times = benchmark.pedantic(lambda: page.evaluate(STEP_JS, [n, how == "jump"]), rounds=3)
    benchmark.extra_info["last_round_ms"] = [round(t, 1) for t in times]
    page.close()
    srv.stop()


@pytest.mark.parametrize("part", ["read", "draw", "png"])
def test_frame_on_demand_parts(benchmark, episode_run, part):
    fs = stored_frames(episode_run / EPISODE)
    action = {"type": "click", "x": 200, "y": 400}
    arr = fs.read(5)
    font = label_font(18)

    frames = iter(range(10**9))

    def read():                    # another frame each time (the store keeps the last one read)
        return fs.read(1 + next(frames) % (len(fs) - 1))

    def draw():
        img = Image.fromarray(arr)
        draw_action(img, action, font)

    def png():
        encode_png(arr)

    benchmark.extra_info["ops"] = 1
    benchmark({"read": read, "draw": draw, "png": png}[part])
    fs.close()
