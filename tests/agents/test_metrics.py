"""Paper metrics and the v1.3 composite level score."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from longpuzzle.agents.metrics import (
    EpisodeOutcome, LevelOutcome, LevelRun, aggregate, benchmark_score, cell_score, horizon50,
    level_score, objective_metrics,
)


def ep(game, diff, wins, n, stop_p=0.0, **kw):
    """An episode that won the first `wins` of n levels and stopped on the next with P=stop_p."""
    levels = [LevelOutcome(True, True, 1.0) for _ in range(wins)]
    if wins < n:
        levels.append(LevelOutcome(True, False, stop_p))
    levels += [LevelOutcome() for _ in range(n - len(levels))]
    return EpisodeOutcome(game, diff, levels, **kw)


def test_objective_metrics_by_hand():
    m = objective_metrics([ep("maze_paint", "hard", 3, 10, 0.5), ep("maze_paint", "hard", 10, 10, end="completed")])
    assert m["OSR"] == 50.0
    assert m["LC"] == pytest.approx((30 + 100) / 2)
    assert m["FGP"] == pytest.approx((35 + 100) / 2)
    assert m["LPR"] == pytest.approx(100 * 13 / 14)       # pooled: 13 wins over 14 reached levels
    assert m["solved_counts"] == [3, 10]


def test_aggregation_is_per_objective_then_game_then_overall():
    eps = [ep("maze_paint", "easy", 10, 10), ep("maze_paint", "hard", 0, 10),     # maze: OSR (100+0)/2 = 50
           ep("truck_escape", "default", 0, 5)]                                   # truck: 0
    out = aggregate(eps)
    assert out["OSR"] == pytest.approx((50 + 0) / 2)
    assert out["LC_hard"] == pytest.approx(0.0)       # only maze/hard counts; truck is excluded
    lpr_undefined = aggregate([EpisodeOutcome("maze_paint", "easy", [LevelOutcome()] * 10)])
    assert math.isnan(lpr_undefined["LPR"])


def test_h50():
    def objs(counts_per_obj):
        return [{"levels": 10, "solved_counts": c} for c in counts_per_obj]
    assert horizon50(objs([[10, 10], [10, 0]])) == "10+"          # S(10) = (1 + .5)/2
    assert horizon50(objs([[3], [5]])) == 5                       # S(5) = (0 + 1)/2 = .5 counts
    assert horizon50(objs([[3], [3], [5]])) == 3                  # S(4) = 1/3
    assert horizon50(objs([[0, 0, 7]])) == 0                      # S(1) = 1/3; S(0) = 1 always
    assert horizon50([{"levels": 3, "solved_counts": [3]}]) is None


def test_per_and_smr():
    quit_early = ep("nut_and_bolt", "easy", 1, 3, end="final_answer", budget_remaining=True)
    timed_out = ep("nut_and_bolt", "easy", 1, 3, end="budget")
    wandered = ep("nut_and_bolt", "easy", 3, 3, end="completed", mismatch=True)
    m = objective_metrics([quit_early, timed_out, wandered])
    assert m["PER"] == pytest.approx(100 / 3) and m["SMR"] == pytest.approx(100 / 3)


levels_st = st.lists(st.tuples(st.booleans(), st.booleans(), st.floats(0, 1)), min_size=1, max_size=10)


@settings(max_examples=200, deadline=None)
@given(st.lists(levels_st, min_size=1, max_size=5))
def test_metric_orderings(raw):
    n = len(raw[0])
    eps = []
    for r in raw:
        r = (r * n)[:n]
        eps.append(EpisodeOutcome("maze_paint", "easy",
                                  [LevelOutcome(reached or won, won, p) for reached, won, p in r]))
    m = objective_metrics(eps)
    eps_ = 1e-9
    assert 0 <= m["OSR"] <= m["LC"] + eps_ and m["LC"] <= m["FGP"] + eps_ and m["FGP"] <= 100 + eps_
    if not math.isnan(m["LPR"]):
        assert m["LC"] <= m["LPR"] + 1e-9 <= 100 + 2e-9


def test_level_score_bands_and_penalties():
    win = LevelRun("maze_paint", True, 1.0, steps=12, elapsed=30, optimal_moves=10, moves=12)
    s = level_score(win)
    assert s == pytest.approx(60 + 20 * 10 / 12 + 10 * 1.0 + 10 * (1 - 30 / 300))
    lose = LevelRun("bolt_unscrew", False, 0.5, steps=10, elapsed=50, termination="no_available_hole_deadlock",
                    invalid=5)
    aq, se = 1 - 5 / 10, 1 - 10 / 150
    assert level_score(lose) == pytest.approx(45 * .5 + 8 * .5 * aq + 3 * .5 * se - 8)
    assert level_score(LevelRun("nut_and_bolt", False, 0.0, 3, 1.0, termination="timeout")) == 0.0
    assert level_score(LevelRun("nut_and_bolt", False, 1.0, 1, 1.0)) <= 59.0
    rush = LevelRun("rush_hour", True, 1.0, steps=8, elapsed=10, optimal_moves=4, moves=5,
                    rush={"acceptedMoves": 5, "immediateReversals": 1, "totalOperationAttempts": 6,
                          "totalRestarts": 0})
    assert level_score(rush) == pytest.approx(60 + 25 * 4 / 5 + 10 * (5 - 1) / 6 + 5 * (1 - 10 / 360))


def test_cells_and_macro_mean():
    assert cell_score([80, 70], 10) == 15.0            # unrun levels count 0
    assert benchmark_score({"a": 10, "b": 30}) == 20


def test_unscored_episodes_are_left_out_of_every_metric():
    good = ep("maze_paint", "easy", 10, 10, end="completed")
    bad = ep("maze_paint", "easy", 0, 10, end="final_answer", budget_remaining=True)
    lost = ep("maze_paint", "easy", 0, 10, end="infrastructure_error", budget_remaining=True)
    void = ep("maze_paint", "easy", 0, 10, end="infrastructure_error")
    # refused actions are the agent's own failure: an episode they end is scored (issue 35)
    refused = ep("maze_paint", "easy", 0, 10, end="invalid_action_limit", budget_remaining=True)
    assert not lost.scored and not void.scored and bad.scored and refused.scored
    with_unscored = aggregate([good, bad, lost, void])
    without = aggregate([good, bad])
    for k in ("OSR", "LC", "FGP", "LPR", "PER", "SMR"):
        assert with_unscored[k] == without[k]
    assert with_unscored["OSR"] == 50.0 and with_unscored["PER"] == 50.0
    assert with_unscored["unscored"] == 2 and without["unscored"] == 0
    assert aggregate([good, refused])["OSR"] == 50.0
    only_unscored = aggregate([lost])
    assert only_unscored["objectives"] == [] and only_unscored["unscored"] == 1 and math.isnan(only_unscored["OSR"])


def test_per_and_smr_pool_episodes_within_each_scope_while_completion_metrics_are_macro():
    # nut easy: 3 episodes, 1 premature exit, 1 mismatch; nut hard: 1 episode, a premature exit
    # with a mismatch; maze easy: 1 clean success
    quit_ = {"end": "final_answer", "budget_remaining": True}
    eps = [ep("nut_and_bolt", "easy", 1, 3, **quit_), ep("nut_and_bolt", "easy", 3, 3, end="completed"),
           ep("nut_and_bolt", "easy", 3, 3, end="completed", mismatch=True),
           ep("nut_and_bolt", "hard", 0, 3, mismatch=True, **quit_),
           ep("maze_paint", "easy", 10, 10, end="completed")]
    out = aggregate(eps)
    nut = out["games"]["nut_and_bolt"]
    assert nut["PER"] == pytest.approx(100 * 2 / 4) and nut["SMR"] == pytest.approx(100 * 2 / 4)   # pooled
    # (game-macro over objectives would give PER (33.3 + 100) / 2 = 66.7)
    assert out["PER"] == pytest.approx(100 * 2 / 5) and out["SMR"] == pytest.approx(100 * 2 / 5)
    # (macro over games would give (50 + 0) / 2 = 25)
    # completion metrics stay macro: OSR per objective 66.7 and 0 -> nut 33.3; maze 100
    assert nut["OSR"] == pytest.approx((200 / 3 + 0) / 2)
    assert out["OSR"] == pytest.approx(((200 / 3 + 0) / 2 + 100) / 2)
    by_obj = {o["objective"]: o for o in out["objectives"]}
    assert by_obj["nut_and_bolt/easy"]["PER"] == pytest.approx(100 / 3)
    unscored = ep("maze_paint", "easy", 0, 10, end="infrastructure_error")
    assert aggregate(eps + [unscored])["PER"] == pytest.approx(out["PER"])   # unscored: left out


def test_how_a_game_is_scored_is_a_fact_of_its_declaration():
    """Step efficiency against the optimal moves and action quality from an operation tracker
    are scoring facts (agents/benchmark.json "step_efficiency", "action_quality"), not game
    names: a game of another package that declares them is scored the same way, one that
    declares neither by its steps and its refused/repeated/idle share."""
    import dataclasses

    from longpuzzle.agents.metrics import action_quality, step_efficiency
    from longpuzzle.engine import registry

    facts = dict(registry.spec("rush_hour").scoring_facts())
    assert facts["step_efficiency"] == "optimal_moves" and facts["action_quality"] == "operations"
    assert registry.spec("maze_paint").scoring_facts()["step_efficiency"] == "optimal_moves"
    tracker = {"acceptedMoves": 5, "immediateReversals": 1, "totalOperationAttempts": 6, "totalRestarts": 0}
    try:
        for game, scoring in (("outside_like_rush", facts),
                              ("outside_plain", {k: v for k, v in facts.items()
                                                 if k not in ("step_efficiency", "action_quality")})):
            registry.register(dataclasses.replace(registry.spec("rush_hour"), id=game, scoring=scoring,
                                                  _loaded={}))
        for game in ("rush_hour", "outside_like_rush", "outside_plain"):
            r = LevelRun(game, True, 1.0, steps=8, elapsed=10, optimal_moves=4, moves=5, invalid=2, rush=tracker)
            declared = game != "outside_plain"
            assert step_efficiency(r) == pytest.approx(4 / 5 if declared else 1 - 8 / 200)
            assert action_quality(r) == pytest.approx((5 - 1) / 6 if declared else 1 - 2 / 8)
    finally:
        registry.unregister("outside_like_rush")
        registry.unregister("outside_plain")
