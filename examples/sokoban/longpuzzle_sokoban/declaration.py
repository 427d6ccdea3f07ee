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
    # its screens' texts in Chinese, where longpuzzle's font has the glyphs: the shipped CJK
    # font is a subset made from longpuzzle's own texts (render/frame/fonts/make_subset.py),
    # so "推箱子" and most of the instructions would draw as blanks; those stay in English
    labels={"zh": {"Undo": "撤销"}},
)
