"""longpuzzle.solvers: exhaustive solvers and dead-end certificates for every game.

    from longpuzzle.solvers import solve, certify
    r = solve("rush_hour/hard/3")          # Result: status, actions, moves, optimal, states, ...
    c = certify("nut_and_bolt/hard/1", state)   # solvable / unsolvable (dead end) / unknown
    p = profile("maze_paint/hard/3")       # certified difficulty figures (solvers/profile.py)

The generic compiled search is source in search_source.py, rendered per game by core.py
(which drives it; compiled and cached on disk); its visited set and contracts: template.py;
game-specific knowledge (canonical keys, heuristics, direct solvers) in knowledge/<game>.py.
"""

from longpuzzle.solvers.core import Result, certify, explore, solve

__all__ = ["Result", "certify", "explore", "profile", "solve", "verify_level"]


def profile(level, **kw):
    """The level's certified difficulty figures (solvers/profile.py): solvable, optimal length
    or bounds, reachable states, dead-end density, optimal first moves."""
    from longpuzzle.solvers.profile import profile as _p

    return _p(level, **kw)


def verify_level(level, *, budget=None):
    """Solve a catalogue level and check the result against the catalogue's recorded optimum."""
    from longpuzzle.solvers.verify import verify_level as _v

    return _v(level, budget=budget)
