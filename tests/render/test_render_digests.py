"""Frames byte for byte as recorded: the digest of every catalogue level's first screen and of
frames after seeded moves (with an animation's in-between frame), in both styles and at
scales whose supersampled canvas is and is not exactly twice the frame, against
tests/data/render_digests.json.

Replay checks every stored frame's hash, and stored episodes and datasets depend on the
pixels: a drawing speed-up must give the same bytes. A deliberate change of the drawing
regenerates the file (and says so in its commit):

    python3 tests/render/test_render_digests.py > tests/data/render_digests.json
"""

import hashlib
import json
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "render_digests.json"
# (style, scale, moves played after the first screen)
CONFIGS = [("2d", 1.0, 2), ("3d", 1.0, 2), ("2d", 0.75, 0), ("3d", 1.37, 0), ("2d", 540.5 / 540, 0)]


def _digests(style: str, scale: float, moves: int) -> dict:
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.engine.suite import Suite
    from longpuzzle.render.frame import Renderer

    out = {}
    r = Renderer(style, scale)
    for lid in builtin_catalog().level_ids():
        s = Suite(lid, style=style, scale=scale)
        h = hashlib.sha256(r.render(s).tobytes())
        rng = np.random.default_rng(zlib.crc32(lid.encode()))
        for k in range(moves):
            legal = s.session.legal_moves()
            if not legal or s.complete:
                break
            s.dispatch(s.gesture_for(int(rng.choice(legal))))
            if k == 0:
                for a in s.anims:
                    if a["t1"] > a["t0"]:
                        h.update(r.render(s, (a["t0"] + a["t1"]) // 2).tobytes())
            h.update(r.render(s).tobytes())
        out[lid] = h.hexdigest()[:24]
    return out


def _key(style, scale, moves) -> str:
    return f"{style} {scale!r} {moves}"


@pytest.mark.slow
@pytest.mark.parametrize("style, scale, moves", CONFIGS)
def test_frames_have_the_recorded_bytes(style, scale, moves):
    want = json.loads(DATA.read_text())[_key(style, scale, moves)]
    got = _digests(style, scale, moves)
    assert set(got) == set(want), "the catalogue changed: regenerate the digests"
    differ = sorted(lid for lid in got if got[lid] != want[lid])
    assert not differ, f"frames differ from the recorded ones for {len(differ)} levels: {differ[:8]}"


if __name__ == "__main__":
    json.dump({_key(*c): _digests(*c) for c in CONFIGS}, sys.stdout, indent=1, sort_keys=True)
    print()
