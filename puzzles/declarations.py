"""The built-in games' declarations (engine/declaration.py GameSpec), read by the registry.

One declaration per game. They sit together in this one light module (it imports no rules)
because a built-in game's parts already live in the layers the design gives them: rules and
screen in puzzles/<game>.py, its level file in puzzles/levels/, its drawing in
render/<game>.py, its solver knowledge and generator in solvers/; a declaration names them
and holds the game's facts. The tier data and the scoring facts of the six games are shared
files (solvers/generators/tiers.json, written by ``longpuzzle verify --profile --tiers-out``,
and agents/benchmark.json, converted from the original catalogue), each declaration naming
its entry there. A game of another distribution declares itself the same way in its own
package (README, "Adding a game").
"""

from longpuzzle.engine.declaration import GameSpec

TIERS = "longpuzzle.solvers.generators:tiers.json"
SCORING = "longpuzzle.agents:benchmark.json"
# the header of the games whose screens are in traditional characters
TRADITIONAL_LEVEL = {"Level {n}": "第 {n} 關"}


def _builtin(game: str, *, order: int, home: int, tier_figures: tuple[str, ...], easiest: str | None,
             zh: dict | None = None) -> GameSpec:
    """A built-in game's declaration: its parts are found where the package keeps them."""
    return GameSpec(
        id=game,
        rules=f"longpuzzle.puzzles.{game}:PUZZLE",
        order=order,
        home=home,
        levels=f"longpuzzle.puzzles:levels/{game}.json",
        drawing=f"longpuzzle.render.{game}:DRAWING",
        knowledge=f"longpuzzle.solvers.knowledge.{game}:KNOWLEDGE",
        generator=f"longpuzzle.solvers.generators.{game}:GENERATOR",
        tiers=TIERS,
        tier_figures=tier_figures,
        scoring=SCORING,
        easiest=easiest,
        labels={"zh": zh} if zh else {},
    )


BOLT_UNSCREW = _builtin("bolt_unscrew", order=1, home=0, tier_figures=("optimal",), easiest="easy",
                        zh={"Restart": "重开"})
RUSH_HOUR = _builtin("rush_hour", order=2, home=2, tier_figures=("optimal", "states"), easiest="easy",
                     zh={"Restart": "重来", "Replay": "再玩一次"})
NUT_AND_BOLT = _builtin("nut_and_bolt", order=3, home=3, tier_figures=("optimal", "dead_end_density"),
                        easiest="easy", zh={"Restart": "重开", "Replay": "再玩一次", **TRADITIONAL_LEVEL})
# Truck Escape has one tier only: LC_hard leaves it out
TRUCK_ESCAPE = _builtin("truck_escape", order=4, home=1, tier_figures=("optimal",), easiest=None)
MAZE_PAINT = _builtin("maze_paint", order=5, home=4, tier_figures=("optimal", "states"), easiest="easy",
                      zh={"Replay": "再玩一次", "Next level": "下一關", **TRADITIONAL_LEVEL})   # (Back on its cards: 返回)
COLOR_CONNECT = _builtin("color_connect", order=6, home=5, tier_figures=("cells", "pairs"), easiest="easy",
                         zh={"Replay": "再玩一次", "Easy": "簡單", "Hard": "困難", **TRADITIONAL_LEVEL})

BUILTIN = (BOLT_UNSCREW, RUSH_HOUR, NUT_AND_BOLT, TRUCK_ESCAPE, MAZE_PAINT, COLOR_CONNECT)
