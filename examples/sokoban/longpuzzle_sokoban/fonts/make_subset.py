"""Rebuild Sokoban's Chinese font: Noto Sans CJK SC Bold (SIL Open Font License 1.1, the face
of longpuzzle's own CJK font), subset to the characters of the game's Chinese labels
(declaration.py). longpuzzle draws a text in it where its own font lacks a glyph
(GameSpec.fonts). A dev-time step, run after a label is added or changed (longpuzzle's
conformance check "labels" fails while a glyph is missing):

    apt-get install fonts-noto-cjk          # Debian's package of the upstream fonts
    python3 longpuzzle_sokoban/fonts/make_subset.py

Needs fontTools (pip install fonttools). Writes NotoSansCJKsc-Bold.sokoban.otf beside this
file; OFL.txt beside it is the licence the font is distributed under.
"""

from __future__ import annotations

import sys
from pathlib import Path

SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc")
FACE = "Noto Sans CJK SC Bold"         # the collection's Simplified Chinese face
OUT = Path(__file__).with_name("NotoSansCJKsc-Bold.sokoban.otf")


def glyph_text() -> str:
    from longpuzzle_sokoban.declaration import GAME
    return "".join(sorted({ch for text in GAME.labels["zh"].values() for ch in text}))


def main() -> None:
    from fontTools import subset
    from fontTools.ttLib import TTCollection

    face = next(f for f in TTCollection(str(SOURCE)).fonts if f["name"].getDebugName(4) == FACE)
    opts = subset.Options()
    opts.layout_features = ["*"]
    opts.name_IDs = ["*"]              # keeps the copyright and licence records
    opts.hinting = False
    sub = subset.Subsetter(opts)
    sub.populate(text=glyph_text())
    sub.subset(face)
    face.save(str(OUT))
    print(f"{OUT}: {OUT.stat().st_size} bytes, {len(glyph_text())} characters", file=sys.stderr)


if __name__ == "__main__":
    main()
