"""The screens in Chinese (``lang="zh"``): every text translated and drawn with the shipped
font, the same geometry as in English (every button hit at its page px, in the 1280 x 900
page of the paper's preset), frames byte for byte as recorded in tests/data/render_digests_zh.json,
and the language carried by snapshots, settings and the command line.

A deliberate change of the Chinese drawing regenerates the digests (and says so in its commit):

    python3 tests/render/test_lang.py > tests/data/render_digests_zh.json
"""

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

from longpuzzle.engine.catalog import builtin_catalog, load_level
from longpuzzle.engine.errors import CheckpointError
from longpuzzle.engine.labels import LanguageError, all_texts, screen_text
from longpuzzle.engine.suite import Suite

DATA = Path(__file__).resolve().parents[1] / "data" / "render_digests_zh.json"
PAGE = (1280, 900)
# levels whose solution the solver finds at once: their completion cards are checked too
QUICK = ("nut_and_bolt/easy/1", "maze_paint/easy/1", "color_connect/easy/1")


def _screens(lang: str, viewport=PAGE):
    """(name, suite) of every kind of screen: home, each game's difficulty screen, the first
    level of every objective, and the completion cards of QUICK (not last, and last level)."""
    # the built-in games' screens (a game of another installed distribution is left out: the
    # home screen shows the built-in catalogue's six games)
    from longpuzzle.engine.catalog import Catalog, builtin_sources
    from longpuzzle.puzzles.declarations import BUILTIN
    six = [s.id for s in BUILTIN]
    s = Suite("home", viewport=viewport, lang=lang,
              catalog=Catalog(sources={g: t for g, t in builtin_sources().items() if g in six}))
    yield "home", s
    for g in [g for g in builtin_catalog().games() if g in six]:
        if len(builtin_catalog().objectives(g)) > 1:
            d = Suite("home", viewport=viewport, lang=lang)
            d.open_game(g)
            yield f"difficulty:{g}", d
    for o in [o for o in builtin_catalog().objectives() if o.game in six]:
        yield f"level:{o.level_ids[0]}", Suite(o.level_ids[0], viewport=viewport, lang=lang)
    from longpuzzle.solvers import solve
    for lid in QUICK:
        obj = builtin_catalog().objective("/".join(lid.split("/")[:2]))
        for target in (lid, obj.level_ids[-1]):
            c = Suite(target, viewport=viewport, lang=lang)
            c.play_moves(solve(load_level(target)).moves)
            yield f"complete:{target}", c


def _digests(lang: str = "zh") -> dict:
    from longpuzzle.render.frame import Renderer
    r = Renderer("2d", 1.0, PAGE, lang)
    return {name: hashlib.sha256(r.render(s).tobytes()).hexdigest()[:24] for name, s in _screens(lang)}


@pytest.mark.slow
def test_chinese_screens_at_1280x900_have_the_recorded_bytes():
    want = json.loads(DATA.read_text())
    got = _digests()
    assert set(got) == set(want), "the screens changed: regenerate the digests"
    differ = sorted(k for k in got if got[k] != want[k])
    assert not differ, f"Chinese frames differ from the recorded ones: {differ}"


def test_every_text_on_every_screen_is_shown_in_chinese(monkeypatch):
    """What the painter draws in zh: no English word is left (but the item names Truck Escape
    shows in English in the original too), and the shipped font has every glyph."""
    from fontTools.ttLib import TTFont

    import longpuzzle.render.frame.layers as layers
    import longpuzzle.render.frame.paint as paint
    from longpuzzle.render.frame import Renderer

    shown: list[str] = []

    def record(text, lang="en", game=None):
        out = screen_text(text, lang, game)
        shown.append(out)
        return out

    monkeypatch.setattr(paint, "screen_text", record)
    monkeypatch.setattr(layers, "_BASES", {})          # nothing drawn before this test is reused
    r = Renderer("2d", 0.5, None, "zh")
    for name, s in _screens("zh", viewport=None):
        r.render(s)
        if name.startswith("level:"):                      # the toasts and hints of a refused tap
            for w in s.layout().widgets:
                if w.kind == "target":
                    x, y = s.proj.to_px(*w.center)
                    s.dispatch({"type": "click", "x": round(x), "y": round(y)})
                    r.render(s)
                    break
    assert len(shown) > 60
    english = sorted({t for t in shown if re.search(r"[A-Za-z]{2,}", t) and t not in ("Remove", "Shuffle", "Flip")})
    assert not english, f"drawn untranslated: {english}"
    cmap = TTFont(paint.CJK_FONT).getBestCmap()
    from longpuzzle.puzzles.declarations import BUILTIN
    ours = set(shown) | all_texts("zh", games={s.id for s in BUILTIN})
    missing = sorted({ch for t in ours for ch in t if ord(ch) not in cmap and ch != " "})
    assert not missing, f"the font lacks {missing}: run render/frame/fonts/make_subset.py"
    # a game of another distribution brings the glyphs longpuzzle's font lacks (GameSpec.fonts)
    assert not {t: g for t in all_texts("zh") if (g := paint.missing_glyphs(t, "zh"))}


def test_the_original_labels_are_used():
    assert screen_text("Back", "zh") == "返回"
    assert screen_text("Menu", "zh", "bolt_unscrew") == "主菜单"
    assert screen_text("Restart", "zh", "truck_escape") == "重玩"
    assert screen_text("Restart", "zh", "bolt_unscrew") == "重开"
    assert screen_text("Next level", "zh", "rush_hour") == "下一关"
    assert screen_text("Next level", "zh", "maze_paint") == "下一關"
    assert screen_text("Level 7", "zh", "nut_and_bolt") == "第 7 關"
    assert screen_text("Level 7", "zh", "bolt_unscrew") == "第 7 关"
    assert screen_text("Rush Hour", "zh") == "卡车出库 2"
    assert screen_text("Boards out: 3 / 24", "zh") == "木条出界：3 / 24"
    assert screen_text("Back", "en") == "Back"                 # English: the text itself


def _expected(s: Suite, wid: str) -> str:
    """The feedback kind a click on widget ``wid`` gives (on a fresh copy of the screen)."""
    if wid.startswith(("game:", "difficulty:")) or wid in ("back", "menu", "next", "replay"):
        return "navigate"
    return {"restart": "restart", "undo": "refused"}.get(wid, "refused")


@pytest.mark.parametrize("viewport", [PAGE, None], ids=["page", "own-frame"])
def test_every_button_is_hit_at_its_page_px_in_chinese_as_in_english(viewport):
    """The same widgets in both languages; a click at each button's centre in page px reaches
    it (the suite's geometry object maps page px to design px) and does what the button does."""
    from longpuzzle.render.frame import renderer

    n = 0
    for (name, zh), (_, en) in zip(_screens("zh", viewport), _screens("en", viewport)):
        assert zh.proj.lang == "zh" and en.proj.lang == "en"
        assert [(w.id, w.shape) for w in zh.layout().widgets] == [(w.id, w.shape) for w in en.layout().widgets]
        assert zh.proj.to_px(100, 200) == en.proj.to_px(100, 200)
        fz, fe = renderer("2d", 1.0, viewport, "zh").render(zh), renderer("2d", 1.0, viewport, "en").render(en)
        assert fz.shape == fe.shape == ((viewport[1], viewport[0], 3) if viewport else (960, 540, 3))
        assert (fz != fe).any(), f"{name}: the Chinese screen looks like the English one"
        for w in zh.layout().widgets:
            if w.kind == "target" or w.id.startswith("item:"):
                continue
            c = zh.clone()
            px, py = c.proj.to_px(*w.center)
            assert c.hit(*c.proj.from_px(round(px), round(py))) is w, f"{name}: {w.id} not hit at its centre"
            fb = c.dispatch({"type": "click", "x": round(px), "y": round(py)})
            want = _expected(c, w.id)
            if w.id == "undo":                   # nothing to undo yet: refused, or undone after a move
                assert fb.kind in ("refused", "undo"), f"{name}: {w.id} -> {fb.kind}"
            else:
                assert fb.kind == want, f"{name}: {w.id} -> {fb.kind}, expected {want}"
            n += 1
    assert n > 40


def test_snapshots_and_settings_carry_the_language():
    from longpuzzle.agents.harness import HarnessError, Settings

    s = Suite("maze_paint/easy/1", viewport=PAGE, lang="zh")
    r = Suite.restore(s.snapshot())
    assert r.lang == "zh" and r.viewport == PAGE
    assert "lang" not in json.loads(Suite("maze_paint/easy/1").snapshot())       # English: as before
    body = json.loads(s.snapshot())
    body["lang"] = "fr"
    body.pop("checksum")
    from longpuzzle.engine.protocol import canonical_json
    body["checksum"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
    with pytest.raises(CheckpointError, match="lang"):
        Suite.restore(json.dumps(body))
    with pytest.raises(LanguageError):
        Suite("home", lang="fr")
    with pytest.raises(HarnessError, match="lang"):
        Settings(lang="de")
    assert Settings(lang="zh").as_dict()["lang"] == "zh"


def test_screenshot_and_play_take_lang(tmp_path):
    from click.testing import CliRunner
    from PIL import Image

    from longpuzzle.cli import cli as main

    run = CliRunner()
    res = run.invoke(main, ["screenshot", "home", "--out", str(tmp_path / "zh.png"), "--lang", "zh"])
    assert res.exit_code == 0, res.output
    res = run.invoke(main, ["screenshot", "home", "--out", str(tmp_path / "en.png")])
    assert res.exit_code == 0, res.output
    a, b = Image.open(tmp_path / "zh.png"), Image.open(tmp_path / "en.png")
    assert a.size == b.size == (540, 960) and a.tobytes() != b.tobytes()
    res = run.invoke(main, ["screenshot", "home", "--out", str(tmp_path / "x.png"), "--lang", "fr"])
    assert res.exit_code == 2 and "fr" in res.output
    actions = tmp_path / "a.json"
    maze = dict(Suite("home").home_games())["maze_paint"]       # (721 with the six games)
    actions.write_text(json.dumps([{"type": "click", "x": 270, "y": maze}]))
    res = run.invoke(main, ["play", "--headless", "--actions", str(actions), "--lang", "zh",
                            "--save", str(tmp_path / "ep.json")])
    assert res.exit_code == 0, res.output
    ep = json.loads((tmp_path / "ep.json").read_text())
    assert ep["lang"] == "zh" and "difficulty:maze_paint" in res.output


def test_the_envs_take_lang():
    """The pixel and suite envs draw their observations in the language asked for (check_env
    passes), with the same action space: coordinates do not depend on the language."""
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    import longpuzzle.agents.envs  # noqa: F401
    for env_id, kw in (("longpuzzle/MazePaint-v0", {"mode": "pixels", "scale": 0.5}), ("longpuzzle/Suite-v0", {"scale": 0.5})):
        zh = gymnasium.make(env_id, lang="zh", **kw)
        en = gymnasium.make(env_id, **kw)
        check_env(zh.unwrapped, skip_render_check=True)
        oz, _ = zh.reset(seed=3)
        oe, _ = en.reset(seed=3)
        assert oz.shape == oe.shape and (oz != oe).any()
        assert zh.action_space == en.action_space
        with pytest.raises(LanguageError):
            gymnasium.make(env_id, lang="xx", **kw)


if __name__ == "__main__":
    json.dump(_digests(), sys.stdout, indent=1, sort_keys=True)
    print()
