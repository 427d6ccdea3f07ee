"""The built-in games' declarations (engine/declaration.py GameSpec), read by the registry.

One declaration per game. They sit together in this one light module (it imports no rules)
because a built-in game's parts already live in the layers the design gives them: rules and
screen in puzzles/<game>.py, its level file in puzzles/levels/, its drawing in
render/<game>.py, its solver knowledge and generator in solvers/; a declaration names them
and holds the game's facts. The tier data and the scoring facts of the six games are shared
files (solvers/generators/tiers.json, written by ``longpuzzle verify --profile --tiers-out``,
and agents/benchmark.json, converted from the original catalogue), each declaration naming
its entry there. A game of another distribution declares itself the same way in its own
package (docs/guides/adding-a-game.md).
"""

from longpuzzle.engine.declaration import GameSpec

TIERS = "longpuzzle.solvers.generators:tiers.json"
SCORING = "longpuzzle.agents:benchmark.json"
# the six games' rule cards (diagnose rules, RQ4), one shared file like the tiers and scoring
RULE_CARDS = "longpuzzle.puzzles:rule_cards.json"
# the header of the games whose screens are in traditional characters
TRADITIONAL_LEVEL = {"Level {n}": "第 {n} 關"}


# what each game's screens show in Chinese (engine/labels.py: the texts every screen shares):
# its title, instructions, win text, hints and toasts, and the words its buttons say differently
ZH_BOLT_UNSCREW = {
    "Bolt Unscrew": "螺丝专家",
    "Every board has dropped out": "所有木条都已出界",
    "Tap a screw, then tap an empty spot to move it there.": "点击一颗螺丝，再点击一个空位把它移过去。",
    "First select an anchor with a screw.": "先选一颗有螺丝的锚点。",
    "Screw selected: tap an empty spot to put it there.": "已选中螺丝：点击一个空位把它放进去。",
    "Switched screw: choose an empty spot to continue.": "已切换螺丝：选择一个空位继续。",
    "The boards near that hole are still moving; wait until they settle.": "目标孔附近的木条还在移动，等它稳定后再插入。",
    "This spot is blocked by the solid part of a board or pad.": "这个空位被木条或圆盘的实体部分挡住了。",
    "The shared screw was moved: several boards came loose!": "共用的螺丝被移走：多块木条松脱了！",
    "The board came loose; wait for it to drop out.": "木条松脱了，等它掉出去。",
    "That screw held several boards; deal with the remaining supports first.": "这颗螺丝固定着多块木条，先处理剩下的支撑。",
    "The board still hangs; remove its next supporting screw.": "木条还挂着，移走下一颗支撑它的螺丝。",
    "The screw went through overlapping holes and pinned several boards.": "螺丝穿过重叠的孔，固定了多块木条。",
    "Screw moved.": "螺丝已移动。",
    "A spot is free again; keep removing the remaining screws.": "空出了一个位置，继续移走剩下的螺丝。",
    # its buttons' own words
    "Restart": "重开",
}
ZH_RUSH_HOUR = {
    "Rush Hour": "卡车出库 2",
    "The red car drove out safely": "红色车辆已安全驶出",
    "Drag a vehicle along its lane. Free the way and drive the red car out on the right.": "沿车道拖动车辆，让出道路，把红色车辆从右侧开出。",
    # its buttons' own words
    "Restart": "重来",
    "Replay": "再玩一次",
}
ZH_NUT_AND_BOLT = {
    "Nut and Bolt": "螺帽与螺栓",
    "Every bolt is sorted": "每根螺栓都已整理好",
    "Tap a bolt to lift its top nuts, then tap another bolt to move them there.": "点击螺栓拿起顶部的螺帽，再点击另一根螺栓放上去。",
    "This bolt is empty": "這根螺栓是空的",
    "This bolt has no room": "這根螺栓沒有空間了",
    "Nuts only stack on the same colour": "只能疊在相同顏色上",
    "You can't move that there": "不能這樣移動",
    # its buttons' own words
    "Restart": "重开",
    "Replay": "再玩一次",
    **TRADITIONAL_LEVEL,
}
ZH_TRUCK_ESCAPE = {
    "Truck Escape": "卡车出库",
    "Every truck has left the yard": "所有卡车都已出库",
    "Tap a truck with a clear road ahead to drive it away. Clear every truck!": "点击前方无阻挡的卡车把它开走，清空所有卡车！",
    "Blocked - move the trucks in front first": "前面被挡住了，先开走前面的车",
}
ZH_MAZE_PAINT = {
    "Maze Paint": "迷宫涂色",
    "Every tile is painted": "全部方格都已塗滿",
    "Swipe to roll the ball. It paints every tile it passes - paint them all!": "滑动让小球滚动，经过的方格都会被涂色，涂满全部方格！",
    # its buttons' own words
    "Replay": "再玩一次",
    "Next level": "下一關",
    **TRADITIONAL_LEVEL,
}
ZH_COLOR_CONNECT = {
    "Color Connect": "颜色连线",
    "Every pair is connected": "所有颜色都已连通",
    "Tap a dot, then tap cells in its row or column (or drag) to join each pair of colours.":
        "点击一个端点，再点击同行或同列的格子（或拖动），连接每一对颜色。",
    # its buttons' own words
    "Replay": "再玩一次",
    "Easy": "簡單",
    "Hard": "困難",
    **TRADITIONAL_LEVEL,
}


def _builtin(game: str, *, order: int, home: int, tier_figures: tuple[str, ...], easiest: str | None,
             zh: dict, **menus) -> GameSpec:
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
        labels={"zh": zh},
        milestones=f"longpuzzle.puzzles.milestones:{game.upper()}",
        rule_card=RULE_CARDS,
        **menus,          # difficulty_card_y, back_button: where its menu differs (RULES.md 1.2)
    )


BOLT_UNSCREW = _builtin("bolt_unscrew", order=1, home=0, tier_figures=("optimal",), easiest="easy",
                        zh=ZH_BOLT_UNSCREW, difficulty_card_y=(365, 515))
RUSH_HOUR = _builtin("rush_hour", order=2, home=2, tier_figures=("optimal", "states"), easiest="easy",
                     zh=ZH_RUSH_HOUR)
NUT_AND_BOLT = _builtin("nut_and_bolt", order=3, home=3, tier_figures=("optimal", "dead_end_density"),
                        easiest="easy", zh=ZH_NUT_AND_BOLT, difficulty_card_y=(260, 385, 510, 635, 760),
                        back_button=(75, 918, 110, 42))
# Truck Escape has one tier only: LC_hard leaves it out
TRUCK_ESCAPE = _builtin("truck_escape", order=4, home=1, tier_figures=("optimal",), easiest=None,
                        zh=ZH_TRUCK_ESCAPE)
MAZE_PAINT = _builtin("maze_paint", order=5, home=4, tier_figures=("optimal", "states"), easiest="easy",
                      zh=ZH_MAZE_PAINT)   # (Back on its cards: 返回)
COLOR_CONNECT = _builtin("color_connect", order=6, home=5, tier_figures=("cells", "pairs"), easiest="easy",
                         zh=ZH_COLOR_CONNECT)

BUILTIN = (BOLT_UNSCREW, RUSH_HOUR, NUT_AND_BOLT, TRUCK_ESCAPE, MAZE_PAINT, COLOR_CONNECT)
