"""The Gymnasium environments (longpuzzle.agents.envs): Gymnasium's own checker over every
registered game in every mode, the rules and pixel semantics, level sources, seeding,
pickling, and the compiled vector env against Gymnasium's SyncVectorEnv step for step."""

import json
import os
import pickle
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AutoresetMode

import longpuzzle.agents.envs as lpe
from longpuzzle.engine import gui
from longpuzzle.engine.catalog import builtin_catalog, load_level
from longpuzzle.engine.registry import get_puzzle, puzzle_ids
from longpuzzle.agents.testing import random_walk
from longpuzzle.agents.envs import DiscreteGUIActions, LevelSourceError, env_id, from_gui, gui_action_space, to_gui

GAMES = puzzle_ids()
MODES = ["rules", "pixels"]
# the one warning check_env may give: its advice to normalise Box actions, which the GUI
# space's pixel coordinates deliberately are not (they are the benchmark's own units)
ALLOWED = ("symmetric and normalized space",)


def _checked(env):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    bad = [str(w.message) for w in caught if not any(a in str(w.message) for a in ALLOWED)]
    assert not bad, bad


def _solution(level_id):
    from longpuzzle.solvers import solve
    r = solve(load_level(level_id))
    assert r.actions, r.status
    return [int(a) for a in r.actions]


# ---- registration -----------------------------------------------------------------------

def test_every_registered_puzzle_and_the_suite_have_an_id():
    ids = lpe.registered_ids()
    assert set(ids) == {env_id(g) for g in GAMES} | {lpe.SUITE_ID}
    assert env_id("maze_paint") == "longpuzzle/MazePaint-v0"
    for g in GAMES:
        spec = gym.spec(env_id(g))
        assert spec.kwargs == {"game": g} and spec.vector_entry_point and spec.max_episode_steps > 0


def test_entry_point_declared_for_the_plugin_mechanism_registers_under_its_namespace():
    meta = tomllib.loads((Path(lpe.__file__).parents[2] / "pyproject.toml").read_text())
    eps = meta["project"]["entry-points"]["gymnasium.envs"]
    assert eps == {"longpuzzle": "longpuzzle.agents.envs.registration:register_envs"}
    module, attr = eps["longpuzzle"].split(":")
    fn = getattr(__import__(module, fromlist=[attr]), attr)
    for i in lpe.registered_ids():
        del gym.registry[i]
    with gym.envs.registration.namespace("longpuzzle"):      # as Gymnasium 0.26-0.29's loader calls it
        ids = fn()
    assert sorted(ids) == lpe.registered_ids() and env_id("rush_hour") in ids


def test_module_qualified_id_needs_no_import_first():
    code = ("import gymnasium as g; e = g.make('longpuzzle.agents.envs:longpuzzle/MazePaint-v0', "
            "level='maze_paint/hard/3'); o, i = e.reset(seed=1); print(o.shape[0], i['level'])")
    env = dict(os.environ, PYTHONPATH=str(Path(lpe.__file__).parents[3]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == [str(load_level("maze_paint/hard/3").initial.shape[0]), "maze_paint/hard/3"]


@pytest.mark.parametrize("imports", [
    "import longpuzzle, gymnasium as gym",              # the convention of Gymnasium's plugin packages
    "import gymnasium as gym, longpuzzle",              # gymnasium already there: registered at once
    "import longpuzzle, longpuzzle.agents.envs, gymnasium as gym",
])
def test_importing_the_package_registers_the_ids_lazily(imports):
    """``import longpuzzle`` is enough for gymnasium.make, yet loads neither gymnasium nor the envs'
    kernels by itself (agents/gym_hook.py: registered when gymnasium is imported); warnings are errors."""
    code = ("import sys; import longpuzzle; lazy = 'gymnasium' not in sys.modules; "
            f"{imports}; gym.register_envs(longpuzzle); "
            "light = not {'numba', 'pygame'} & set(sys.modules); "
            "e = gym.make('longpuzzle/MazePaint-v0', level='maze_paint/hard/3'); o, i = e.reset(seed=1); "
            "print(lazy, light, i['level'], len([k for k in gym.registry if k.startswith('longpuzzle/')]))")
    if imports.startswith("import gymnasium"):
        code = "import gymnasium; " + code
    env = dict(os.environ, PYTHONPATH=str(Path(lpe.__file__).parents[3]))
    r = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    lazy, light, level, n = r.stdout.split()
    assert lazy == str(not imports.startswith("import gymnasium")) and light == "True"
    assert level == "maze_paint/hard/3" and int(n) == len(GAMES) + 1


# ---- Gymnasium's checker: every game, every mode --------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("game", GAMES)
def test_check_env(game, mode):
    _checked(gym.make(env_id(game), mode=mode))


@pytest.mark.parametrize("kwargs", [
    {"level": "maze_paint/medium", "obs_type": "dict", "reward": "sparse"},
    {"level": ["nut_and_bolt/easy/1", "nut_and_bolt/nightmare/1"], "order": "cycle"},
], ids=["dict-objective", "padded-list"])
def test_check_env_rules_variants(kwargs):
    game = kwargs["level"][0].split("/")[0] if isinstance(kwargs["level"], list) else kwargs["level"].split("/")[0]
    _checked(gym.make(env_id(game), **kwargs))


def test_check_env_suite_and_discrete_wrapper():
    _checked(gym.make(lpe.SUITE_ID, objective=["maze_paint/easy", "truck_escape/default"], style="3d", scale=0.5))
    _checked(DiscreteGUIActions(gym.make(env_id("rush_hour"), mode="pixels", scale=0.5), swipes="cells"))


# ---- rules mode ------------------------------------------------------------------------

@pytest.mark.parametrize("game", GAMES)
def test_rules_env_follows_the_rules(game):
    lvl = builtin_catalog().levels(game)[0]
    p = get_puzzle(game)
    env = gym.make(env_id(game), level=lvl.id)
    obs, info = env.reset(seed=0)
    assert np.array_equal(obs, lvl.initial) and info["code"] == -1 and info["level"] == lvl.id
    state, total = lvl.initial.copy(), 0.0
    for a in random_walk(lvl, 30, seed=4):
        obs, r, term, trunc, info = env.step(a)
        nxt, code = p.step(lvl, state, a)
        state = nxt if code <= 1 else state
        assert info["code"] == code and np.array_equal(obs, state) and obs in env.observation_space
        assert np.array_equal(info["action_mask"], p.legal_mask(lvl, state)) and info["action_mask"].dtype == np.int8
        assert info["P"] == p.progress(lvl, state) and term == p.is_solved(lvl, state)
        total += r
        if term or trunc:
            break
    assert total == pytest.approx(p.progress(lvl, state) - p.progress(lvl, lvl.initial))


def test_rules_env_sparse_reward_termination_and_time_limit():
    sol = _solution("maze_paint/easy/2")
    env = gym.make(env_id("maze_paint"), level="maze_paint/easy/2", reward="sparse")
    env.reset(seed=0)
    rewards = [env.step(a)[1:3] for a in sol]
    assert rewards[-1] == (1.0, True) and all(r == (0.0, False) for r in rewards[:-1])
    env = gym.make(env_id("maze_paint"), level="maze_paint/easy/2", max_episode_steps=3)
    env.reset()
    assert [env.step(0)[3] for _ in range(3)] == [False, False, True]
    assert gym.spec(env_id("maze_paint")).max_episode_steps == 150       # the benchmark's step limit
    # progress reward: solving collects everything up to 1
    env = gym.make(env_id("maze_paint"), level="maze_paint/easy/2")
    _, info = env.reset()
    assert sum(env.step(a)[1] for a in sol) == pytest.approx(1 - info["P"])


def test_rules_env_returns_fresh_data_and_refuses_bad_actions():
    env = gym.make(env_id("nut_and_bolt"), level="nut_and_bolt/easy/1")
    obs0, info0 = env.reset(seed=1)
    a = int(np.flatnonzero(info0["action_mask"])[0])
    obs1, _, _, _, info1 = env.step(a)
    obs0[:] = 0
    info1["action_mask"][:] = 0                     # what a user does with them changes nothing
    obs2, _, _, _, info2 = env.step(a)
    assert not np.shares_memory(obs1, obs2) and info2["action_mask"].any()
    assert np.array_equal(env.unwrapped.state, obs2)
    for bad in (-1, env.action_space.n, 1.5):
        with pytest.raises(ValueError, match="not in Discrete"):
            env.step(bad)
    assert env.unwrapped.describe(a) == "1>2" or ">" in env.unwrapped.describe(a)


def test_level_sources_and_seeds():
    objective = builtin_catalog().objective("maze_paint/medium")
    env = gym.make(env_id("maze_paint"), level="maze_paint/medium")
    assert [lvl.id for lvl in env.unwrapped.levels] == list(objective.level_ids)

    def draws(seed, n=8):
        out = [env.reset(seed=seed)[1]["level"]]
        return out + [env.reset()[1]["level"] for _ in range(n - 1)]
    assert draws(3) == draws(3) and draws(3) != draws(4)
    cyc = gym.make(env_id("maze_paint"), level="maze_paint/medium", order="cycle")
    assert [cyc.reset(seed=0 if i == 0 else None)[1]["level_index"] for i in range(12)] == [*range(10), 0, 1]
    _, info = env.reset(options={"level": "maze_paint/medium/7"})
    assert info["level"] == "maze_paint/medium/7" and info["level_index"] == 6

    # a sampler gets the env's np_random: seeded resets draw the same levels
    pool = builtin_catalog().level_ids("maze_paint")[:12]
    calls = []

    def sampler(rng):
        calls.append(type(rng))
        return pool[int(rng.integers(len(pool)))]
    s_env = gym.make(env_id("maze_paint"), level=sampler, space_levels=pool)
    seq = [s_env.reset(seed=9)[1]["level"]] + [s_env.reset()[1]["level"] for _ in range(5)]
    assert seq == [s_env.reset(seed=9)[1]["level"]] + [s_env.reset()[1]["level"] for _ in range(5)]
    assert set(calls) == {np.random.Generator} and s_env.reset()[1]["level_index"] == -1
    # an iterator is consumed in order; its end is a clear error
    class Made:                                      # a generator's item: the Level is its .level
        def __init__(self, lid):
            self.level = load_level(lid)
    it_env = gym.make(env_id("truck_escape"), level=iter([Made("truck_escape/default/2"), "truck_escape/default/1"]))
    assert [it_env.reset()[1]["level"] for _ in range(2)] == ["truck_escape/default/2", "truck_escape/default/1"]
    with pytest.raises(LevelSourceError, match="exhausted"):
        it_env.reset()
    with pytest.raises(LevelSourceError, match="is a rush_hour level"):
        gym.make(env_id("maze_paint"), level="rush_hour/easy/1")
    small = gym.make(env_id("maze_paint"), level=lambda rng: "maze_paint/hard/10", space_levels="maze_paint/easy/1")
    with pytest.raises(LevelSourceError, match="does not fit"):
        small.reset()


def test_padded_levels_reject_actions_a_level_does_not_have():
    ids = ["nut_and_bolt/easy/1", "nut_and_bolt/nightmare/1"]
    small, big = (load_level(i) for i in ids)
    env = gym.make(env_id("nut_and_bolt"), level=ids, obs_type="dict")
    assert env.action_space.n == big.n_actions > small.n_actions
    obs, info = env.reset(options={"level": ids[0]})
    assert obs["state"].shape == (max(small.initial.shape[0], big.initial.shape[0]),)
    assert np.array_equal(obs["state"][:small.initial.shape[0]], small.initial) and obs["level"] == 0
    assert not obs["state"][small.initial.shape[0]:].any() and not info["action_mask"][small.n_actions:].any()
    obs2, r, *_, info = env.step(big.n_actions - 1)
    assert info["code"] == 2 and r == 0 and np.array_equal(obs2["state"], obs["state"]) and obs2 in env.observation_space


def test_rules_env_pickles_mid_episode_and_renders():
    env = lpe.RulesEnv("color_connect/easy/3", render_mode="rgb_array", scale=0.5)
    env.reset(seed=2)
    for a in _solution("color_connect/easy/3")[:5]:
        env.step(a)
    twin = pickle.loads(pickle.dumps(env))
    assert np.array_equal(twin.render(), env.render()) and twin.render().shape == (480, 270, 3)
    for a in _solution("color_connect/easy/3")[5:]:
        r1, r2 = env.step(a), twin.step(a)
        assert data_equivalence(r1, r2, exact=True)
    assert r1[2] is True
    board = lpe.RulesEnv("maze_paint/easy/1", render_mode="ansi")
    board.reset()
    assert board.render() == get_puzzle("maze_paint").render_text(load_level("maze_paint/easy/1"),
                                                                   load_level("maze_paint/easy/1").initial)


def test_human_render_mode_runs_headless():
    env = gym.make(env_id("maze_paint"), mode="pixels", render_mode="human", scale=0.5)
    env.reset(seed=0)
    assert env.render() is None
    env.step({"type": "swipe", "direction": "left"})
    env.close()
    env.close()


def test_check_env_and_envs_check_work_with_no_display_and_no_sdl_driver():
    """A machine with no display and SDL_VIDEODRIVER unset (a server, a fresh CI image): the
    human mode check_env tries is drawn off screen, said once in a warning."""
    env = {k: v for k, v in os.environ.items() if k not in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = str(Path(lpe.__file__).parents[3])
    code = ("import warnings, gymnasium as gym, longpuzzle\n"
            "from gymnasium.utils.env_checker import check_env\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    for kw in ({}, {'mode': 'pixels', 'scale': 0.5}):\n"
            "        check_env(gym.make('longpuzzle/RushHour-v0', **kw).unwrapped)\n"
            "print(sorted({str(x.message) for x in w if 'display' in str(x.message)}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count("drawn off screen") == 1
    r = subprocess.run([sys.executable, "-m", "longpuzzle", "envs", "--check", "--json"], capture_output=True,
                       text=True, env=env, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    rows = json.loads(r.stdout)
    assert len(rows) == 2 * len(GAMES) + 1 and {row["check"] for row in rows} == {"ok"}


# ---- pixel mode --------------------------------------------------------------------------

@pytest.mark.parametrize("game", ["maze_paint", "rush_hour", "color_connect"])
def test_pixel_env_solves_a_level_through_gestures(game):
    lid = builtin_catalog().level_ids(game)[0]
    env = gym.make(env_id(game), mode="pixels", level=lid, style="3d", scale=0.5, frames_per_move=1)
    frame, info = env.reset(seed=0)
    assert frame.shape == (480, 270, 3) and frame.dtype == np.uint8 and info["screen"] == f"level:{lid}"
    total, term = 0.0, False
    for a in _solution(lid):
        g = env.unwrapped.suite.gesture_for(a)
        frame, r, term, trunc, info = env.step(g)
        total += r
        assert info["status"] in ("screen_changed", "returned_to_recent_screen") and info["effects"]
        assert frame in env.observation_space and all(f.shape == frame.shape for f in info["frames"])
    assert term and info["P"] == 1.0 and total == pytest.approx(1.0 - get_puzzle(game).progress(
        load_level(lid), load_level(lid).initial))
    with pytest.raises(gui.ActionError, match="outside"):
        env.step({"type": "click", "x": 9999, "y": 1})


@pytest.mark.parametrize("game", ["rush_hour", "maze_paint"])
def test_pixel_env_hashes_the_frame_after_animation_frames_from_their_deltas(game):
    # the frame after a move's intermediate frames is hashed from the bands that changed
    # since the frame hashed before (through every intermediate frame), and its hash is the
    # frame's own
    from longpuzzle.agents.harness.frames import frame_hash
    lid = builtin_catalog().level_ids(game)[2]
    env = lpe.PixelEnv(lid, scale=0.5, frames_per_move=2)
    env.reset(seed=0)
    hasher = env._hasher
    start = hasher.bands
    animated = 0
    for a in _solution(lid):
        frame, *_, info = env.step(env.suite.gesture_for(a))
        animated += bool(info["frames"])
        assert env._tracker.recent[-1] == frame_hash(frame)
    assert animated >= 2
    assert hasher.hashed - start < (hasher.bands - start) * 0.6


@pytest.mark.parametrize("game", ["rush_hour", "maze_paint", "bolt_unscrew"])
def test_pixel_envs_in_lockstep_on_one_renderer_hash_their_frames_from_their_own_deltas(game):
    # envs stepped in turn share the renderer of their style and scale: each frame's delta
    # is asked relative to the env's own frame before (Renderer.render_delta's ``since``),
    # not the other env's frame drawn in between; every hash is still the frame's own
    import random
    from longpuzzle.agents.harness.frames import frame_hash
    lids = builtin_catalog().level_ids(game)
    envs = [lpe.PixelEnv(lid, scale=0.5, frames_per_move=k) for lid, k in
            ((lids[2], 0), (lids[2], 1), (lids[3], 0), (lids[2], 0))]
    for e in envs:
        e.reset(seed=0)
    start = [(e._hasher.bands, e._hasher.hashed) for e in envs]
    rng = random.Random(4)
    for step in range(14):
        for e in envs:
            s = e.suite
            if s.complete:
                continue
            legal = list(s.session.legal_moves())
            frame, *_ = e.step(s.gesture_for(int(rng.choice(legal))))
            assert e._tracker.recent[-1] == frame_hash(frame), (game, step)
    bands = sum(e._hasher.bands - b0 for e, (b0, _) in zip(envs, start))
    hashed = sum(e._hasher.hashed - h0 for e, (_, h0) in zip(envs, start))
    assert hashed < bands * 0.75, (hashed, bands)          # (every band, when each is hashed in full)


def test_pixel_env_pickles_mid_episode_and_vectorises():
    sol = _solution("nut_and_bolt/easy/2")
    env = lpe.PixelEnv("nut_and_bolt/easy/2", scale=0.5)
    env.reset(seed=0)
    for a in sol[:2]:
        env.step(env.suite.gesture_for(a))
    twin = pickle.loads(pickle.dumps(env))
    for a in sol[2:]:
        g = env.suite.gesture_for(a)
        r1, r2 = env.step(g), twin.step(g)
        assert data_equivalence(r1, r2, exact=True)
    assert r1[2] is True
    vec = gym.make_vec(env_id("nut_and_bolt"), 2, mode="pixels", scale=0.25, level="nut_and_bolt/easy/2")
    assert isinstance(vec, gym.vector.SyncVectorEnv)          # no compiled batch of pixels
    frames, _ = vec.reset(seed=0)
    vec.action_space.seed(0)
    frames2, *_ = vec.step(vec.action_space.sample())
    assert frames.shape == frames2.shape == (2, 240, 135, 3)
    frames_list = gym.make(env_id("maze_paint"), mode="pixels", scale=0.25, render_mode="rgb_array_list")
    frames_list.reset(seed=0)
    frames_list.step({"type": "swipe", "direction": "left"})
    assert len(frames_list.render()) == 2


def test_pixel_env_feedback_and_sparse_reward():
    env = gym.make(env_id("maze_paint"), mode="pixels", level="maze_paint/easy/1", reward="sparse", scale=0.5)
    env.reset(seed=0)
    _, r, _, _, info = env.step({"type": "wait", "ms": 500})
    assert info["status"] == "wait_completed" and r == 0 and info["moves"] == 0
    _, _, _, _, info = env.step({"type": "click", "x": 1, "y": 1})
    assert info["status"] == "no_visible_effect"
    sol = _solution("maze_paint/easy/1")
    suite = env.unwrapped.suite
    first = {"type": "batch", "actions": [suite.gesture_for(sol[0]), {"type": "wait", "ms": 1000}]}
    _, r, _, _, info = env.step(first)                # an agent's batch goes through as it is
    assert info["moves"] == 1 and [e["effect"] for e in info["effects"]] == ["move"]
    rs = [r] + [env.step(env.unwrapped.suite.gesture_for(a))[1] for a in sol[1:]]
    assert rs[-1] == 1.0 and sum(rs) == 1.0


def test_gui_space_samples_are_valid_actions_and_round_trip():
    size = (270, 480)
    space = gui_action_space(size, seed=5)
    seen = set()
    for _ in range(400):
        s = space.sample()
        a = to_gui(s, size)
        assert gui.validate(a, size) == a
        seen.add(a["type"])
        back = to_gui(from_gui(a, size), size)
        assert back == a and from_gui(a, size) in space
    assert seen == set(lpe.GUI_TYPES)
    assert set(lpe.GUI_TYPES) == set(gui.ACTION_TYPES) - {"batch"}      # the whole schema is covered
    assert to_gui({"type": 0, "point": np.array([-5.0, 1e9])}, size) == {"type": "click", "x": 0.0, "y": 479.0}
    with pytest.raises(gui.ActionError):
        to_gui({"type": 99, "point": [1, 1]}, size)
    with pytest.raises(gui.ActionError, match="needs the part 'end'"):
        to_gui({"type": lpe.GUI_TYPES.index("drag"), "point": [1, 1]}, size)
    with pytest.raises(gui.ActionError, match="not part of the GUI action space"):
        from_gui({"type": "batch", "actions": [{"type": "click", "x": 1, "y": 1}]}, size)
    with pytest.raises(gui.ActionError, match="release without a point"):
        from_gui({"type": "release"}, size)
    path = {"type": "drag", "x0": 10, "y0": 10, "via": [[50, 10], [50, 90]], "x1": 90, "y1": 90, "steps": 3, "ms": 90}
    s = from_gui(path, size)
    assert s["n_via"] == 2 and s in space and to_gui(s, size) == gui.validate(path, size)
    assert to_gui(from_gui({"type": "doubleclick", "x": 3, "y": 4}, size), size)["type"] == "double_click"
    assert to_gui(from_gui({"type": "typetext", "text": "Ab 1"}, size), size) == {"type": "typetext", "text": "Ab 1"}


def test_discrete_wrapper_plays_maze_paint_with_centre_swipes():
    env = DiscreteGUIActions(gym.make(env_id("maze_paint"), mode="pixels", level="maze_paint/easy/1", scale=0.5),
                             grid=(3, 4))
    assert env.action_space.n == 12 + 4 and env.gui_action(0) == {"type": "click", "x": 45, "y": 60}
    assert env.describe(12) == "swipe up from the centre"
    env.reset(seed=0)
    term = False
    for a in _solution("maze_paint/easy/1"):        # actions 0..3 = U, D, L, R = swipe index 12 + a
        _, _, term, _, _ = env.step(12 + a)
    assert term
    with pytest.raises(TypeError, match="wraps a pixel env"):
        DiscreteGUIActions(gym.make(env_id("maze_paint")))


# ---- the suite ---------------------------------------------------------------------------

def _click(suite, wid):
    w = next(w for w in suite.layout().widgets if w.id == wid)
    x, y = suite.proj.to_px(*w.center)
    return {"type": "click", "x": round(x), "y": round(y)}


def test_suite_env_from_the_home_screen():
    env = gym.make(lpe.SUITE_ID, objective="nut_and_bolt/easy", reward="sparse", scale=0.5)
    frame, info = env.reset(seed=0)
    assert info["screen"] == "home" and info["instruction"].startswith("Complete all levels of Nut and Bolt")
    suite = env.unwrapped.suite
    env.step(_click(suite, "game:maze_paint"))              # the wrong game: no credit, flagged
    _, _, _, _, info = env.step(_click(suite, "difficulty:easy"))
    assert info["level"] == "maze_paint/easy/1" and info["mismatch"]
    env.step(_click(suite, "menu"))
    env.step(_click(suite, "back"))
    env.step(_click(suite, "game:nut_and_bolt"))
    _, _, _, _, info = env.step(_click(suite, "difficulty:easy"))
    assert info["level"] == "nut_and_bolt/easy/1"
    won = 0.0
    for lid in builtin_catalog().objective("nut_and_bolt/easy").level_ids:
        assert env.unwrapped.suite.level.id == lid
        for a in _solution(lid):
            _, r, term, _, info = env.step(env.unwrapped.suite.gesture_for(a))
            won += r
        assert info["levels_won"] == won
        if not term:                    # the hub opens Nut and Bolt's next level by itself, 1.35 s on
            assert not any(w.id == "next" for w in env.unwrapped.suite.layout().widgets)
            env.step({"type": "wait", "ms": 1350})
    assert term and won == 3 and info["fgp"] == 1.0


# ---- vector envs -------------------------------------------------------------------------

def _vec_pair(mode, **kw):
    v = gym.make_vec(env_id("maze_paint"), 6, vectorization_mode="vector_entry_point", autoreset_mode=mode, **kw)
    s = gym.make_vec(env_id("maze_paint"), 6, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kw)
    return v, s


@pytest.mark.parametrize("mode, extra", [
    (AutoresetMode.NEXT_STEP, {}),
    (AutoresetMode.SAME_STEP, {}),
    (AutoresetMode.NEXT_STEP, {"action_mask": False, "reward": "sparse", "order": "cycle"}),
], ids=["next-step", "same-step", "no-mask-sparse-cycle"])
def test_vector_env_equals_sync_vector_env_step_for_step(mode, extra):
    kw = dict(level=["maze_paint/easy/1", "maze_paint/easy/2", "maze_paint/hard/1"], max_episode_steps=9, **extra)
    v, s = _vec_pair(mode, **kw)
    assert isinstance(v, lpe.PuzzleVectorEnv) and isinstance(v, gym.vector.VectorEnv)
    assert v.metadata["autoreset_mode"] is mode and v.single_observation_space == s.single_observation_space
    assert v.action_space == s.action_space and v.observation_space == s.observation_space
    r1, r2 = v.reset(seed=11), s.reset(seed=11)
    assert data_equivalence(r1, r2, exact=True)
    assert ("action_mask" in r1[1]) == extra.get("action_mask", True)
    rng = np.random.default_rng(0)
    ended = 0
    for t in range(60):
        masks = r1[-1].get("action_mask", np.ones((6, 4), np.int8))
        acts = np.array([rng.choice(np.flatnonzero(m)) if rng.random() < 0.8 else rng.integers(4) for m in masks])
        r1, r2 = v.step(acts), s.step(acts)
        for x, y, name in zip(r1, r2, ("obs", "rewards", "terminated", "truncated", "info")):
            assert data_equivalence(x, y, exact=True), (t, name, x, y)
        ended += int(r1[2].sum() + r1[3].sum())
    assert ended > 6 and r1[0] in v.observation_space


def test_vector_env_returns_new_arrays_and_async_mode_works():
    env = gym.make_vec(env_id("nut_and_bolt"), 4, level="nut_and_bolt/easy/2")
    assert isinstance(env, lpe.PuzzleVectorEnv)            # the default for these ids
    obs, info = env.reset(seed=0)
    outs = [env.step(np.zeros(4, np.int64) + k) for k in (1, 2)]
    a, b = outs[0], outs[1]
    for x, y in zip(a[:4], b[:4]):
        assert x is not y and not np.shares_memory(x, y)
    assert not np.shares_memory(a[4]["action_mask"], b[4]["action_mask"]) and not np.shares_memory(obs, a[0])
    b[0][:] = 0                                        # the caller owns what it got
    assert env.step(np.zeros(4, np.int64))[0].any()
    asy = gym.make_vec(env_id("nut_and_bolt"), 2, vectorization_mode="async", level="nut_and_bolt/easy/2")
    o, _ = asy.reset(seed=0)
    assert o.shape == (2, load_level("nut_and_bolt/easy/2").initial.shape[0])
    o2, *_ = asy.step(np.array([1, 2]))
    assert o2.shape == o.shape
    asy.close()


def test_vector_env_disabled_autoreset_and_dict_observations():
    env = lpe.PuzzleVectorEnv(3, "maze_paint/easy/1", autoreset_mode="disabled", max_episode_steps=2,
                              obs_type="dict")
    obs, info = env.reset(seed=0)
    assert set(obs) == {"state", "action_mask"} and obs["state"].shape[0] == 3
    env.step(np.zeros(3, np.int64))
    *_, trunc, _ = env.step(np.zeros(3, np.int64))
    assert trunc.all()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(3, np.int64))
    obs, _ = env.reset(options={"reset_mask": np.array([True, True, True])})
    env.step(np.zeros(3, np.int64))
    with pytest.raises(LevelSourceError, match="finite"):
        lpe.PuzzleVectorEnv(2, lambda rng: "maze_paint/easy/1", game="maze_paint")
    with pytest.raises(ValueError, match="actions must be in"):
        env.step(np.full(3, 9))


# ---- config dicts and the command line -----------------------------------------------------

def test_envs_from_config_dicts_and_the_cli():
    env = lpe.make({"id": "longpuzzle/RushHour-v0", "level": "rush_hour/easy/2", "reward": "sparse"})
    assert env.unwrapped.reward_mode == "sparse" and env.reset(seed=0)[1]["level"] == "rush_hour/easy/2"
    vec = lpe.make({"id": "longpuzzle/RushHour-v0", "num_envs": 3, "level": "rush_hour/easy"})
    assert vec.num_envs == 3 and isinstance(vec, lpe.PuzzleVectorEnv)
    with pytest.raises(ValueError, match="needs an 'id'"):
        lpe.make({"level": "rush_hour/easy/2"})
    with pytest.raises(ValueError, match="mode must be one of"):
        gym.make(env_id("rush_hour"), mode="pixel")
    from click.testing import CliRunner
    from longpuzzle.cli import cli
    import json
    r = CliRunner().invoke(cli, ["envs", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert {(x["id"], x["mode"]) for x in rows} == {(env_id(g), m) for g in GAMES for m in MODES} | {
        (lpe.SUITE_ID, "suite")}
    assert next(x for x in rows if x["id"] == env_id("maze_paint") and x["mode"] == "pixels")[
        "observation_space"] == "Box(960, 540, 3) uint8"


# ---- catalogues and generated levels ---------------------------------------------------------
@pytest.fixture
def gen_store(tmp_path, monkeypatch):
    """A catalogue snapshot "gen" of two generated Maze Paint medium levels (ids
    maze_paint/medium/1..2, as the built-in catalogue's first two, with other boards)."""
    import json

    from longpuzzle.engine.catalog_store import snapshot
    from longpuzzle.solvers.generators import generate, level_file
    monkeypatch.setenv("LONGPUZZLE_CATALOG_DIR", str(tmp_path / "store"))
    monkeypatch.delenv("LONGPUZZLE_CATALOG", raising=False)
    made = list(generate("maze_paint", "medium", seed=3, count=2))
    path = tmp_path / "gen.json"
    path.write_text(json.dumps(level_file(made)), encoding="utf-8")
    snapshot("gen", [path])
    yield made


def test_envs_take_a_catalogue_and_keep_it_for_every_lookup(gen_store):
    made = gen_store
    builtin = [builtin_catalog().level(f"maze_paint/medium/{i}") for i in (1, 2)]
    assert builtin_catalog().name == "builtin" and builtin[0].data != made[0].record
    env = gym.make("longpuzzle/MazePaint-v0", catalog="gen", level="maze_paint/medium", order="cycle")
    assert [lvl.data for lvl in env.unwrapped.levels] == [g.record for g in made]
    _, info = env.reset(seed=0, options={"level": "maze_paint/medium/2"})
    assert env.unwrapped.level.data == made[1].record and info["level_index"] == 1
    # pickled (for a worker pool), it still looks its levels up in "gen"
    again = pickle.loads(pickle.dumps(env.unwrapped))
    again.reset(options={"level": "maze_paint/medium/1"})
    assert again.level.data == made[0].record
    # pixel mode: the level on screen, and after Replay on the completion card still the same level
    px = gym.make("longpuzzle/MazePaint-v0", mode="pixels", catalog="gen", level="maze_paint/medium/1").unwrapped
    px.reset(seed=0)
    s = px.suite
    assert s.level.data == made[0].record
    p = get_puzzle("maze_paint")
    for a in [a for t in made[0].profile.solution for a in p.actions(s.level, t)]:
        px.step(s.gesture_for(a))
    assert s.complete
    replay = next(w for w in s.layout().widgets if w.id == "replay")
    r = replay.shape
    px.step({"type": "click", "x": round((r.x0 + r.x1) / 2), "y": round((r.y0 + r.y1) / 2)})
    assert s.screen["name"] == "level" and s.level.data == made[0].record and not s.session.solved
    # the suite: the objective of "gen" has its two levels, and its menus show them
    su = gym.make("longpuzzle/Suite-v0", objective="maze_paint/medium", catalog="gen", render_mode="rgb_array").unwrapped
    assert list(su.objectives[0].level_ids) == ["maze_paint/medium/1", "maze_paint/medium/2"]
    su.reset(seed=0)
    assert len(su._best) == 2
    frame = su.render()
    assert su.suite.catalog is su.catalog              # the app's menus are the env's catalogue's
    games = su.suite.home_games()
    assert [g for g, _ in games] == ["maze_paint"] and frame.std() > 0     # "gen" holds one game
    su.step({"type": "click", "x": 270, "y": dict(games)["maze_paint"]})
    # its one objective opens at once: "gen"'s level, not the built-in one of that id
    assert su.suite.screen["name"] == "level" and su.suite.level.data == made[0].record
    vec = lpe.PuzzleVectorEnv(2, "maze_paint/medium", catalog="gen")
    assert [lvl.data for lvl in vec.source.levels] == [g.record for g in made]
    with pytest.raises(Exception, match="no catalogue 'ghost'"):
        gym.make("longpuzzle/MazePaint-v0", catalog="ghost")
    with pytest.raises(LevelSourceError, match="catalog must be"):
        gym.make("longpuzzle/MazePaint-v0", catalog=3)


def test_a_generator_sampler_is_a_level_source():
    from longpuzzle.solvers.generators import LevelSampler
    sample = LevelSampler("maze_paint", "easy", seed=4)
    env = gym.make("longpuzzle/MazePaint-v0", level=sample, space_levels="maze_paint/easy")
    env.reset(seed=9)
    first = env.unwrapped.level
    env.reset(seed=9)
    assert env.unwrapped.level.data == first.data           # seeded draws repeat
    assert first.data["generator"]["tier"] == "easy" and first.data["profile"]["status"] == "solvable"
    assert env.unwrapped.level_index == -1


@pytest.mark.parametrize("game", ["maze_paint", "nut_and_bolt"])
def test_masks_off_steps_as_masks_on_without_the_mask(game):
    """action_mask=False takes the same inlined step as masks on (it was the slower path):
    the same observations, rewards, ends and infos, less the mask."""
    lid = builtin_catalog().levels(game)[0].id
    on = gym.make(env_id(game), level=lid, max_episode_steps=60)
    off = gym.make(env_id(game), level=lid, max_episode_steps=60, action_mask=False)
    (o1, _), (o2, i2) = on.reset(seed=4), off.reset(seed=4)
    assert np.array_equal(o1, o2) and "action_mask" not in i2 and off.unwrapped._fast
    acts = np.random.default_rng(3).integers(0, on.action_space.n, 60).tolist()
    for a in acts:
        r1, r2 = on.step(a), off.step(a)
        assert np.array_equal(r1[0], r2[0]) and r1[1:4] == r2[1:4]
        assert {k: v for k, v in r1[4].items() if k != "action_mask"} == r2[4] and "action_mask" in r1[4]
        if r1[2] or r1[3]:
            break


def test_a_step_validates_its_action_once(monkeypatch):
    """Validate once (issue 37): a pixel env's step validates its action (a space sample or an
    action dict) once, with Suite.validate, and runs it with Suite.run."""
    from longpuzzle.engine import gui
    env = gym.make(env_id("maze_paint"), mode="pixels", scale=0.25, level="maze_paint/easy/1")
    env.reset(seed=0)
    size = env.unwrapped.frame_size
    sample = from_gui({"type": "click", "x": 10, "y": 10}, size)
    calls = []
    real = gui.validate

    def spy(action, size):
        calls.append(action)
        return real(action, size)

    monkeypatch.setattr(gui, "validate", spy)
    for action in (sample, {"type": "click", "x": 10, "y": 10}, {"type": "wait", "ms": 300}):
        calls.clear()
        env.step(action)
        assert len(calls) == 1
    calls.clear()
    with pytest.raises(gui.ActionError):
        env.step({"type": "click", "x": 10})
    assert len(calls) == 1
    env.close()
