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
}
# a game's own texts (its title, instructions, win text, hints and toasts) and what its
# screens say differently from this table (RULES.md: each game's button and header words;
# "Level {n}": its level header) are declared by the game (GameSpec.labels)

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
    ``lang``, on a screen of ``game`` (None: a menu): the game's own label, else this
    module's table, else any game's own label, else the patterns."""
    if lang == "en" or not text:
        return text
    if game is not None:
        own = _own(game, text, lang)
        if own is not None:
            return own
    zh = ZH.get(text)
    if zh is not None:
        return zh
    for s in specs():       # a game's own text shown elsewhere (its title on the menus)
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


def all_texts(lang: str, games=None) -> set[str]:
    """Every fixed text of the table and of the games' declared labels in ``lang`` (the
    shipped font must cover their glyphs); ``games``: the ids of the games whose labels count
    (default every registered game; the shipped font is made from the built-in games')."""
    own = [s.labels.get("zh", {}) for s in specs() if games is None or s.id in games]
    if lang == "en":
        return set(ZH) | {k for o in own for k in o if "{" not in k}
    return set(ZH.values()) | {v for o in own for k, v in o.items() if "{" not in k} | {
        "第关關 · 木条出界：「」道具暂未开放"}
