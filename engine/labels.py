"""The screens' texts in each language: English (this project's own wording) and Chinese
(the original suite's labels, RULES.md; where the original text is not known, our wording).

The screens are laid out and hit-tested in design px whatever the language (engine/geometry.py):
a language changes what the texts say, never where anything is. Code that draws keeps
writing the English text; ``screen_text(text, lang, game)`` gives what the screen shows in
``lang`` (the English text itself for "en", and for any text this table does not know, such
as a number or the item names Truck Escape shows in English in the original too).
"""

from __future__ import annotations

import re

from longpuzzle.engine.errors import LongPuzzleError, UnknownGameError
from longpuzzle.engine.registry import spec, specs

LANGS = ("en", "zh")


class LanguageError(LongPuzzleError, ValueError):
    """A screen language that does not exist."""


def check_lang(lang) -> str:
    if lang not in LANGS:
        raise LanguageError(f"lang must be one of {', '.join(LANGS)}, not {lang!r}")
    return lang


# English text -> the Chinese the original shows (RULES.md sections 1-7 quote them)
ZH = {
    # home and difficulty screens (1.1, 1.2)
    "Puzzle Workshop": "工地我最牛",
    "Choose a puzzle": "选择游戏",
    "Tap a card to play": "点击卡片开始游戏",
    "coming soon": "敬请期待",
    "Choose difficulty": "选择难度",
    "Bolt Unscrew": "螺丝专家",
    "Truck Escape": "卡车出库",
    "Rush Hour": "卡车出库 2",
    "Nut and Bolt": "螺帽与螺栓",
    "Maze Paint": "迷宫涂色",
    "Color Connect": "颜色连线",
    "Easy": "简单", "Medium": "中等", "Hard": "困难", "Extreme": "超难", "Nightmare": "极难", "Play": "开始",
    "Back": "返回",
    # HUD buttons
    "Restart": "重玩",
    "Menu": "主菜单",
    "Exit": "退出",
    "Undo": "撤销",
    "EXIT": "出口",
    # completion card
    "Next level": "下一关",
    "Replay": "重玩本关",
    "All complete!": "全部完成！",
    "Complete!": "完成！",
    "Level complete!": "关卡完成！",
    "Level cleared!": "通关成功",
    # the failure card of Maze Paint's own limits (RULES.md 6.3; the original's words)
    "Challenge over": "挑戰結束",
    "Try again": "重新挑戰",
    "The same moves keep repeating": "偵測到持續重複的操作",
    "No new tiles painted for a long time": "長時間沒有新的塗色進度",
    "The move limit of this level is reached": "已達本關操作次數上限",
    "Time is up for this attempt": "本次挑戰已逾時",
    "Every board has dropped out": "所有木条都已出界",
    "The red car drove out safely": "红色车辆已安全驶出",
    "Every bolt is sorted": "每根螺栓都已整理好",
    "Every truck has left the yard": "所有卡车都已出库",
    "Every tile is painted": "全部方格都已塗滿",
    "Every pair is connected": "所有颜色都已连通",
    # instructions (the line at the foot of a level)
    "Drag a vehicle along its lane. Free the way and drive the red car out on the right.":
        "沿车道拖动车辆，让出道路，把红色车辆从右侧开出。",
    "Tap a bolt to lift its top nuts, then tap another bolt to move them there.":
        "点击螺栓拿起顶部的螺帽，再点击另一根螺栓放上去。",
    "Tap a truck with a clear road ahead to drive it away. Clear every truck!":
        "点击前方无阻挡的卡车把它开走，清空所有卡车！",
    "Swipe to roll the ball. It paints every tile it passes - paint them all!":
        "滑动让小球滚动，经过的方格都会被涂色，涂满全部方格！",
    "Tap a dot, then tap cells in its row or column (or drag) to join each pair of colours.":
        "点击一个端点，再点击同行或同列的格子（或拖动），连接每一对颜色。",
    # Bolt Unscrew's hint line (2.2 quotes three of them)
    "Tap a screw, then tap an empty spot to move it there.": "点击一颗螺丝，再点击一个空位把它移过去。",
    "First select an anchor with a screw.": "先选一颗有螺丝的锚点。",
    "Screw selected: tap an empty spot to put it there.": "已选中螺丝：点击一个空位把它放进去。",
    "Switched screw: choose an empty spot to continue.": "已切换螺丝：选择一个空位继续。",
    "The boards near that hole are still moving; wait until they settle.":
        "目标孔附近的木条还在移动，等它稳定后再插入。",
    "This spot is blocked by the solid part of a board or pad.": "这个空位被木条或圆盘的实体部分挡住了。",
    "The shared screw was moved: several boards came loose!": "共用的螺丝被移走：多块木条松脱了！",
    "The board came loose; wait for it to drop out.": "木条松脱了，等它掉出去。",
    "That screw held several boards; deal with the remaining supports first.":
        "这颗螺丝固定着多块木条，先处理剩下的支撑。",
    "The board still hangs; remove its next supporting screw.": "木条还挂着，移走下一颗支撑它的螺丝。",
    "The screw went through overlapping holes and pinned several boards.": "螺丝穿过重叠的孔，固定了多块木条。",
    "Screw moved.": "螺丝已移动。",
    "A spot is free again; keep removing the remaining screws.": "空出了一个位置，继续移走剩下的螺丝。",
    # toasts (4.3, 5.2)
    "This bolt is empty": "這根螺栓是空的",
    "This bolt has no room": "這根螺栓沒有空間了",
    "Nuts only stack on the same colour": "只能疊在相同顏色上",
    "You can't move that there": "不能這樣移動",
    "Blocked - move the trucks in front first": "前面被挡住了，先开走前面的车",
}

# what a game's own screen says differently (RULES.md: each game's button and header words;
# "Level {n}": its level header) is declared by the game (GameSpec.labels)


# texts with a number in them: English pattern -> a function of the match giving the Chinese
_PATTERNS = (
    (re.compile(r"Level (\d+) \u00b7 (.+)"), lambda m, g: f"第 {m[1]} 关 \u00b7 {screen_text(m[2], 'zh', g)}"),
    (re.compile(r"Level (\d+)"), lambda m, g: (_own(g, "Level {n}") or "第 {n} 关").format(n=m[1])),
    (re.compile(r"(\d+) levels?"), lambda m, g: f"{m[1]} 关"),
    (re.compile(r"Boards out: (\d+) / (\d+)"), lambda m, g: f"木条出界：{m[1]} / {m[2]}"),
    (re.compile(r"(\w+) is not available yet"), lambda m, g: f"「{m[1]}」道具暂未开放"),
)


def screen_text(text: str, lang: str = "en", game: str | None = None) -> str:
    """What the screen shows for ``text`` (written in English by the drawing code) in
    ``lang``, on a screen of ``game`` (None: a menu)."""
    if lang == "en" or not text:
        return text
    if game is not None:
        own = _own(game, text, lang)
        if own is not None:
            return own
    zh = ZH.get(text)
    if zh is not None:
        return zh
    if game is None:        # a menu: a game's own name, as its declaration gives it
        for s in specs():
            own = s.label(text, lang)
            if own is not None:
                return own
    for pat, make in _PATTERNS:
        m = pat.fullmatch(text)
        if m is not None:
            return make(m, game)
    return text


def _own(game: str | None, text: str, lang: str = "zh") -> str | None:
    """What ``game``'s own screens show for ``text`` (its declared labels), or None."""
    if game is None:
        return None
    try:
        return spec(game).label(text, lang)
    except UnknownGameError:
        return None


def all_texts(lang: str) -> set[str]:
    """Every fixed text of the table and of the games' declared labels in ``lang`` (the
    shipped font must cover their glyphs)."""
    own = [s.labels.get("zh", {}) for s in specs()]
    if lang == "en":
        return set(ZH) | {k for o in own for k in o if "{" not in k}
    return set(ZH.values()) | {v for o in own for k, v in o.items() if "{" not in k} | {
        "第关關 · 木条出界：「」道具暂未开放"}
