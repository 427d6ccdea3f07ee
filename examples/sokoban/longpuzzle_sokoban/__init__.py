"""Sokoban as a longpuzzle game, installed beside longpuzzle and found through its
``longpuzzle.puzzles`` entry point (see ../README.md for what each module is).

    rules.py      compiled rules (state machine over numpy arrays), level text form
    ui.py         screen geometry and GUI input (taps and swipes -> moves)
    puzzle.py     the Puzzle with its UI: what the entry point loads
    drawing.py    the board in both render styles (2d, 3d)
    knowledge.py  solver knowledge: packing, expansion, heuristic, dead-end certificate
    generator.py  seeded generator of certified levels, by tier
    levels/sokoban.json   the built-in levels
"""
