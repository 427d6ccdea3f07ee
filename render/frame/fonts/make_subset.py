"""Rebuild the Chinese screens' font: Noto Sans CJK SC Bold (SIL Open Font License 1.1),
subset to the glyphs the screens use (every Chinese text of engine/labels.py, printable
ASCII, a few punctuation marks). A dev-time step, run after a label is added or changed
(tests/render/test_lang.py fails while a glyph is missing):

    apt-get install fonts-noto-cjk          # Debian's package of the upstream fonts
    python3 render/frame/fonts/make_subset.py

Needs fontTools (pip install fonttools). Writes NotoSansCJKsc-Bold.subset.otf beside this
file; OFL.txt beside it is the licence the font is distributed under.
"""

from __future__ import annotations

import sys
from pathlib import Path

SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc")
FACE = "Noto Sans CJK SC Bold"         # the collection's Simplified Chinese face
OUT = Path(__file__).with_name("NotoSansCJKsc-Bold.subset.otf")


def glyph_text() -> str:
    from longpuzzle.engine.labels import all_texts
    from longpuzzle.puzzles.declarations import BUILTIN
    # longpuzzle's own texts only: a game of another distribution brings its own font (GameSpec.fonts)
    chars = set("".join(all_texts("zh", games={s.id for s in BUILTIN})))
    chars |= {chr(c) for c in range(0x20, 0x7F)}          # printable ASCII (numbers, item names)
    chars |= set("\u00b7\u2026\u00d7")                    # middle dot, ellipsis, times
    return "".join(sorted(chars))


def main() -> None:
    from fontTools import subset
    from fontTools.ttLib import TTCollection

    fonts = TTCollection(str(SOURCE)).fonts
    face = next(f for f in fonts if f["name"].getDebugName(4) == FACE)
    opts = subset.Options()
    opts.layout_features = ["*"]
    opts.name_IDs = ["*"]
    opts.hinting = False
    sub = subset.Subsetter(opts)
    sub.populate(text=glyph_text())
    sub.subset(face)
    face.save(str(OUT))
    print(f"{OUT}: {OUT.stat().st_size} bytes, {len(glyph_text())} characters", file=sys.stderr)


if __name__ == "__main__":
    main()
