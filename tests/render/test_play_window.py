"""The play window's loop (mouse and keys -> GUI actions -> saved episode), driven with
posted pygame events on SDL's dummy video driver, and the replay of a saved episode."""

import json
import threading
import time

import pygame
from click.testing import CliRunner

from longpuzzle.cli import cli
from longpuzzle.engine.suite import Suite


def test_window_loop_saves_an_episode_that_replays(tmp_path, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":test")          # the loop needs a display; SDL stays on "dummy"
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    s = Suite("nut_and_bolt/easy/1")
    clicks = [(a["x"], a["y"]) for a in s.gesture_for(1 * 4 + 2)["actions"]]    # move 2>3

    def person():
        time.sleep(1.0)
        for x, y in clicks:
            pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(x, y)))
            pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(x, y)))
            time.sleep(0.3)
        # a drag that goes nowhere useful, then close the window
        pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(5, 5)))
        pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(60, 5)))
        time.sleep(0.3)
        pygame.event.post(pygame.event.Event(pygame.QUIT))
    threading.Thread(target=person, daemon=True).start()
    ep_file = tmp_path / "ep.json"
    r = CliRunner().invoke(cli, ["play", "nut_and_bolt/easy/1", "--save", str(ep_file)])
    assert r.exit_code == 0, r.output
    ep = json.loads(ep_file.read_text())
    assert ep["moves"] == ["2>3"] and [a["type"] for a in ep["actions"]] == ["click", "click", "drag"]
    r = CliRunner().invoke(cli, ["play", "--headless", "--actions", str(ep_file), "--save", str(tmp_path / "r.json")])
    assert r.exit_code == 0 and "gives the saved episode's moves" in r.output
    ep["moves"] = ["1>3"]
    ep_file.write_text(json.dumps(ep))
    r = CliRunner().invoke(cli, ["play", "--headless", "--actions", str(ep_file), "--save", str(tmp_path / "r.json")])
    assert r.exit_code == 2 and "differs" in r.output
