"""Sokoban's declaration: the one place that names every part of the game for longpuzzle
(engine/declaration.py GameSpec), read through this package's ``longpuzzle.puzzles`` entry
point. Parts are named by strings and loaded only when asked for, so reading this module
imports no rules, kernels or pygame."""

from longpuzzle.engine.declaration import GameSpec

PACKAGE = "longpuzzle_sokoban"

GAME = GameSpec(
    id="sokoban",
    rules=f"{PACKAGE}.puzzle:PUZZLE",                # rules.py + its screen (ui.py)
    order=7,                                         # after the benchmark's six games
    home=6,                                          # the seventh card on the home screen
    levels=f"{PACKAGE}:levels/sokoban.json",
    drawing=f"{PACKAGE}.drawing:DRAWING",            # both styles, 2d and 3d
    knowledge=f"{PACKAGE}.knowledge:KNOWLEDGE",      # heuristic + dead-end certificate
    generator=f"{PACKAGE}.generator:GENERATOR",
    tiers=f"{PACKAGE}:tiers.json",
    tier_figures=("optimal", "states"),
    scoring=f"{PACKAGE}:scoring.json",
    easiest="easy",
    # its screens' texts in Chinese; longpuzzle's own CJK font is a subset of longpuzzle's
    # texts, so the glyphs it lacks ("推箱子", ...) come from the game's own subset of the same
    # face (fonts/make_subset.py makes it from these labels; fonts/OFL.txt is its licence)
    labels={"zh": {
        "Sokoban": "推箱子",
        "Push every box onto a goal. Tap a square next to the keeper, or swipe.":
            "把每个箱子推到目标上。点击小人旁边的格子，或者滑动。",
        "Every box is on a goal": "每个箱子都在目标上",
        "Undo": "撤销",
    }},
    fonts={"zh": f"{PACKAGE}:fonts/NotoSansCJKsc-Bold.sokoban.otf"},
    milestones=f"{PACKAGE}.milestones:MILESTONES",   # boxes on goals (diagnose judge)
    # its rule card for the rule-card diagnostic (longpuzzle diagnose rules, RQ4): the legal
    # moves and constraints, numbered, each with a false counterpart for the rule probes
    rule_card=f"{PACKAGE}:rule_card.json",
)
