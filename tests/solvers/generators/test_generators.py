"""Level generators: determinism, the sampler API, tier ranges (20 levels per game and tier),
the beyond tier, level files, and generated levels played through the real suite by gestures."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from longpuzzle.engine.catalog import BEYOND, Catalog, builtin_catalog, parse_level_file
from longpuzzle.engine.geometry import DESIGN_H, DESIGN_W, Rect
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import Suite
from longpuzzle.solvers.generators import GenerationError, LevelSampler, generate, generator, generators, level_file
from longpuzzle.solvers.generators.tiers import DEFINING, catalog_tiers, tier_data
from longpuzzle.render.frame import renderer
from longpuzzle.solvers.core import check_solution

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import generated_levels

GAMES = [g.game for g in generators()]
# tiers whose 20 levels take more than a second or two: the slow test below
SLOW = {("maze_paint", "hard"), ("rush_hour", "medium"), ("rush_hour", "hard"), ("nut_and_bolt", "hard"),
        ("nut_and_bolt", "extreme"), ("nut_and_bolt", "nightmare"), ("bolt_unscrew", "hard")}
TIERS = [(g, t) for g in GAMES for t in catalog_tiers(g)]
REMAKE_S = 1.0


def test_every_game_has_a_generator_and_tiers():
    have = set(GAMES)         # the built-in games' (and those of any other installed distribution)
    assert have >= {"bolt_unscrew", "maze_paint", "rush_hour", "nut_and_bolt", "truck_escape", "color_connect"}
    for g in GAMES:
        gen = generator(g)
        cat_tiers = [o.difficulty for o in builtin_catalog().objectives(g)]
        assert gen.tiers() == cat_tiers + [BEYOND]
        assert set(catalog_tiers(g)) == set(cat_tiers)


def test_generation_is_deterministic_in_game_tier_seed_and_index():
    a = [x.record for x in generate("maze_paint", "easy", seed=11, count=3)]
    b = [x.record for x in generate("maze_paint", "easy", seed=11, count=3)]
    assert a == b
    c = [x.record for x in generate("maze_paint", "easy", seed=12, count=3)]
    assert [r["layout"] for r in c] != [r["layout"] for r in a]
    # random access: level 2 alone is level 2 of the run
    alone = next(generate("maze_paint", "easy", seed=11, start=2, count=1))
    assert alone.record == a[2] and alone.level.id == "maze_paint/easy/3"
    assert a[0]["generator"] == {"name": "longpuzzle.solvers.generators.maze_paint", "version": generator("maze_paint").version,
                                 "tier": "easy", "seed": 11, "index": 0, "attempts": a[0]["generator"]["attempts"]}


def test_level_sampler_is_an_iterator_and_a_callable():
    s = LevelSampler("truck_escape", "default", seed=3)
    first = s()
    second = s()
    assert first.id == "truck_escape/default/1" and second.id == "truck_escape/default/2"
    assert s[0].record == next(iter(s)).record
    rng = np.random.default_rng(5)
    picks = [s(rng).data for _ in range(2)]
    rng = np.random.default_rng(5)
    again = [LevelSampler("truck_escape", "default", seed=3)(rng).data for _ in range(2)]
    assert picks == again
    with pytest.raises(GenerationError, match="no tier 'impossible'"):
        LevelSampler("truck_escape", "impossible")


def _check_in_tier(g, game, tier):
    spec = generator(game).tier_spec(tier)
    prof = g.profile
    assert prof.status == "solvable"
    figs = prof.figures()
    for fig, (lo, hi) in spec.accept.items():
        # proven inside: an optimum by both its bounds, a state count that is only a lower
        # bound against a lower end alone
        v_lo = v_hi = figs[fig]
        if fig == "optimal":
            v_lo, v_hi = prof.lower_bound, prof.upper_bound
            assert v_lo is not None and v_hi is not None and v_lo <= v_hi, (g.level.id, v_lo, v_hi)
            assert prof.optimal is None or v_lo == v_hi == prof.optimal
        assert v_lo is not None and (lo is None or v_lo >= lo), (g.level.id, fig, v_lo, lo)
        if fig == "states" and not prof.states_exact:
            assert hi is None, (g.level.id, "a lower bound on the states proves no upper end")
        else:
            assert hi is None or v_hi <= hi, (g.level.id, fig, v_hi, hi)
    # the record carries the certified figures, and its certified solution replays to a win
    assert g.record["profile"]["status"] == "solvable"
    assert g.record["profile"]["optimal"] == prof.optimal
    p = get_puzzle(game)
    acts = [a for t in prof.solution for a in p.actions(g.level, t)]
    assert check_solution(g.level, g.level.initial, acts)


def _made(game, tier, seed, count):
    """Levels 0..count-1 of (game, tier, seed), made once per version of the code that makes
    them (tests/generated_levels.py); levels read from that cache are checked like new ones,
    and the quickest of them to make, when it took under REMAKE_S, is made again and must be
    the same level (the cache's name already holds the code's digest: this only confirms)."""
    made, cached = generated_levels.levels(game, tier, seed=seed, count=count)
    assert [(g.game, g.tier, g.seed, g.index) for g in made] == [(game, tier, seed, i) for i in range(count)]
    k = min(range(count), key=lambda i: made[i].seconds)
    if cached and made[k].seconds < REMAKE_S:
        again = generator(game).make(tier, seed, k)
        assert again.record == made[k].record and again.level.sha256 == made[k].level.sha256
    return made


@pytest.mark.parametrize("game, tier", [pytest.param(g, t, marks=[pytest.mark.slow] if (g, t) in SLOW else [])
                                        for g, t in TIERS])
def test_twenty_generated_levels_fall_inside_the_catalogue_tier(game, tier):
    made = _made(game, tier, 2026, 20)
    for g in made:
        _check_in_tier(g, game, tier)
        assert g.level.id == f"{game}/{tier}/{g.index + 1}"


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_beyond_lies_above_the_catalogues_hardest_tier(game):
    gen = generator(game)
    hardest = tier_data()["games"][game]["tiers"][list(catalog_tiers(game))[-1]]["figures"]
    primary = DEFINING[game][0]
    for g in _made(game, BEYOND, 1, 1):
        _check_in_tier(g, game, BEYOND)
        assert g.profile.figures()[primary] > hardest[primary][1]
    assert gen.beyond.note


def test_defining_figures_of_the_tiers_are_the_catalogue_ranges():
    for _game, g in tier_data()["games"].items():
        for _tier, t in g["tiers"].items():
            for fig, rng in t["accept"].items():
                lo, hi = t["figures"][fig]
                if fig == "optimal":      # levels only bounded: up to the largest upper bound
                    hi = max(hi, t["figures"]["upper_bound"][1])
                # an open upper end: the tier's largest value is only a bound (a search cut off)
                assert rng[0] <= lo and ((rng[1] is None and fig == "states") or rng[1] >= hi)
                if rng[1] is None:
                    rng = [rng[0], hi]
                if t["levels"] >= 3:
                    assert rng == [lo, hi]
            if t["levels"] < 3:
                assert list(t["accept"]) == [g["defining"][0]]


def test_level_files_round_trip_through_the_catalogue_parser(tmp_path):
    made = list(generate("nut_and_bolt", "medium", seed=4, count=2)) + list(generate("nut_and_bolt", "easy", seed=4, count=1))
    doc = level_file(made)
    assert [o["difficulty"] for o in doc["objectives"]] == ["easy", "medium"]
    game, objs, levels = parse_level_file(json.dumps(doc), "gen.json")
    assert game == "nut_and_bolt" and [len(o.level_ids) for o in objs] == [1, 2]
    assert levels["nut_and_bolt/medium/2"].data == made[1].record
    with pytest.raises(GenerationError):
        level_file([])


def test_unknown_game_tier_and_generator_errors():
    from longpuzzle.engine.errors import UnknownGameError
    with pytest.raises(UnknownGameError):
        generator("chess")
    with pytest.raises(GenerationError, match="tiers: easy, medium, hard, beyond"):
        next(generate("maze_paint", "legendary"))


def _bounds(shape):
    if isinstance(shape, Rect):
        return shape.x0, shape.y0, shape.x1, shape.y1
    return shape.cx - shape.r, shape.cy - shape.r, shape.cx + shape.r, shape.cy + shape.r


def _fits_the_design_frame(suite):
    """Every widget inside the 540 x 960 frame; no board target under a HUD button."""
    lay = suite.layout()
    buttons = [w for w in lay.widgets if w.kind != "target"]
    for w in lay.widgets:
        x0, y0, x1, y1 = _bounds(w.shape)
        assert x0 >= 0 and x1 <= DESIGN_W and y0 >= 0 and y1 <= DESIGN_H, (w.id, (x0, y0, x1, y1))
        if w.kind == "target":
            for b in buttons:
                bx0, by0, bx1, by1 = _bounds(b.shape)
                assert x1 <= bx0 or bx1 <= x0 or y1 <= by0 or by1 <= y0, (w.id, b.id)


@pytest.mark.parametrize("tier", ["easy", "hard"])
def test_bolt_unscrew_boards_lie_in_the_play_zone_and_anchors_apart(tier):
    """Every board of a generated Bolt Unscrew level (a rotated rectangle) inside the screen's
    play zone, and no two anchors' touch boxes overlapping (a tap picks one anchor)."""
    import math
    from longpuzzle.puzzles.bolt_unscrew import PLAY_ZONE, TOUCH_BOX
    x0, y0, x1, y1 = PLAY_ZONE
    for g in _made("bolt_unscrew", tier, 2026, 20):          # the levels the tier test checks
        for b in g.record["boards"]:
            t = math.radians(b["rotation_degrees"])
            hw, hh = b["collision_width"] / 2, b["collision_height"] / 2
            for sx, sy in ((-1, -1), (-1, 1), (1, -1), (1, 1)):
                px = b["x"] + sx * hw * math.cos(t) - sy * hh * math.sin(t)
                py = b["y"] + sx * hw * math.sin(t) + sy * hh * math.cos(t)
                assert x0 <= px <= x1 and y0 <= py <= y1, (g.level.id, b["id"], px, py)
        pts = [(a["x"], a["y"]) for a in g.record["anchors"]]
        for i, (ax, ay) in enumerate(pts):
            for bx, by in pts[i + 1:]:
                assert max(abs(ax - bx), abs(ay - by)) >= TOUCH_BOX, (g.level.id, (ax, ay), (bx, by))


@pytest.mark.parametrize("game, tier", [("maze_paint", "medium"), ("nut_and_bolt", "medium"), ("rush_hour", "easy"),
                                        ("truck_escape", "default"), ("color_connect", "hard"),
                                        ("truck_escape", BEYOND), ("color_connect", BEYOND),
                                        ("bolt_unscrew", "easy"), ("bolt_unscrew", "hard")])
def test_generated_levels_are_played_through_the_suite_by_gestures(tmp_path, game, tier):
    """A generated level in a catalogue of its own: the suite opens it from its menus like a
    catalogue level, it fits the 540 x 960 frame, every legal first move has a gesture that
    makes exactly that move, and its certified solution played as gestures wins it."""
    # the first level of the run the tier test (seed 2026) or the beyond test (seed 1) checks:
    # in a whole run read from the cache they fill (any generated level of the tier shows it)
    g = _made(game, tier, 1 if tier == BEYOND else 2026, 1)[0]
    path = tmp_path / f"{game}.json"
    path.write_text(json.dumps(level_file([g])), encoding="utf-8")
    cat = Catalog([path])
    s = Suite("home", catalog=cat)
    fb = s.dispatch({"type": "click", "x": 270, "y": dict(s.home_games())[game]})
    if s.screen["name"] == "difficulty":
        card = next(w for w in s.layout().widgets if w.id == f"difficulty:{tier}")
        x0, y0, x1, y1 = card.shape.bounds()
        fb = s.dispatch({"type": "click", "x": round((x0 + x1) / 2), "y": round((y0 + y1) / 2)})
    assert s.screen == {"name": "level", "level": g.level.id}, fb.as_dict()
    assert s.level.data == g.record
    _fits_the_design_frame(s)
    frame = renderer("2d", 1.0).render(s)             # the game's screen draws it
    assert frame.shape == (960, 540, 3) and frame.std() > 0
    p = get_puzzle(game)
    for a in p.legal_moves(s.level, s.session.state):
        assert s.interpret(s.gesture_for(a)) == [a]
    acts = [a for t in g.profile.solution for a in p.actions(g.level, t)]
    for a in acts:
        fb = s.dispatch(s.gesture_for(a))
        assert fb.kind == "move", (a, fb.as_dict())
    assert s.session.solved and s.complete


def test_the_test_level_cache_is_named_by_the_code_and_remade_when_torn(tmp_path, monkeypatch):
    monkeypatch.setattr(generated_levels, "cache_dir", lambda: tmp_path)   # (kernels stay where they are)
    made, cached = generated_levels.levels("maze_paint", "easy", seed=3, count=2)
    assert not cached and [g.index for g in made] == [0, 1]
    again, cached = generated_levels.levels("maze_paint", "easy", seed=3, count=2)
    assert cached and [g.record for g in again] == [g.record for g in made]
    (path,) = (tmp_path / "generated").glob("maze_paint-easy-s3-n2-*.pickle")
    path.write_bytes(b"torn")
    again, cached = generated_levels.levels("maze_paint", "easy", seed=3, count=2)
    assert not cached and [g.record for g in again] == [g.record for g in made]
    # the first level of the cached run of two serves a run of one (random access by index)
    first, cached = generated_levels.levels("maze_paint", "easy", seed=3, count=1)
    assert cached and [g.record for g in first] == [made[0].record]
    # other code: other levels' name; the newest KEEP files of other code stay (other worktrees
    # share the folder), older ones go
    os.utime(path, ns=(0, 0))
    files = [path.name]                                  # oldest first
    for k in range(1, generated_levels.KEEP + 3):
        monkeypatch.setattr(generated_levels, "source_digest", lambda k=k: f"{k:064d}")
        _, cached = generated_levels.levels("maze_paint", "easy", seed=3, count=2)
        assert not cached
        (new,) = set((tmp_path / "generated").glob("maze_paint-easy-s3-n2-*.pickle")) - \
            {tmp_path / "generated" / f for f in files}
        os.utime(new, ns=(k * 10**9, k * 10**9))
        files.append(new.name)
        names = {p.name for p in (tmp_path / "generated").glob("maze_paint-easy-s3-n2-*.pickle")}
        assert names == set(files[-generated_levels.KEEP - 1:]), (k, names)
    # a longer run of other code does not serve this code's shorter request
    monkeypatch.setattr(generated_levels, "source_digest", lambda: "f" * 64)
    assert not generated_levels.levels("maze_paint", "easy", seed=3, count=1)[1]
