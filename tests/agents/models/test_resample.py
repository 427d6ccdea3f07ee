"""The model's resized screenshots are Pillow's BICUBIC resize to the bit (UI-TARS-1.5's own
preprocessing), however the resampler gets there: whole frames, frame-to-frame updates of
what changed, either order of the two passes, one pass, shrinking and enlarging."""

import numpy as np
import pytest

from longpuzzle.agents.media import resample
from longpuzzle.agents.media.images import decode_png, encode_png, make_view, smart_resize
from longpuzzle.agents.media.resample import Resampler, pillow_bicubic

RNG = np.random.default_rng(7)


def _screen(h, w):
    """A frame like a game screen: flat areas, edges, a few smooth (anti-aliased) ones."""
    f = np.empty((h, w, 3), np.uint8)
    f[:] = (24, 30, 46)
    for _ in range(12):
        y0, x0 = RNG.integers(0, h), RNG.integers(0, w)
        f[y0:y0 + RNG.integers(1, h // 3 + 2), x0:x0 + RNG.integers(1, w // 3 + 2)] = RNG.integers(0, 256, 3)
    y = RNG.integers(0, h)
    f[y, :] = np.linspace(0, 255, w)[:, None].astype(np.uint8)       # a gradient row
    return f


def _changes(f):
    """Frames after f: a small box, a band of rows, one pixel, nothing, a change at both
    ends of the same rows, a new screen, noise."""
    h, w = f.shape[:2]
    out = []
    g = f.copy()
    g[h // 3:h // 3 + 7, w // 4:w // 4 + 11] = (250, 10, 10)
    out.append(g.copy())
    g[h // 2:h // 2 + h // 5] = (0, 200, 90)
    out.append(g.copy())
    g[h - 1, w - 1] = (1, 2, 3)
    out.append(g.copy())
    out.append(g.copy())
    g[5:9, 0] = 255
    g[5:9, w - 1] = 0
    out.append(g.copy())
    out.append(_screen(h, w))
    out.append(RNG.integers(0, 256, (h, w, 3), dtype=np.uint8))
    out.append(out[-2].copy())
    return out


SIZES = [
    ((540, 960), smart_resize(960, 540)[::-1]),      # UI-TARS at 540 x 960: (532, 952), rows first
    ((120, 200), (110, 60)),                          # the height shrinks much more: columns first (Pillow 13)
    ((90, 70), (90, 33)),                             # one pass (columns)
    ((90, 70), (41, 70)),                             # one pass (rows)
    ((50, 36), (84, 56)),                             # enlarged (smart_resize's min_pixels)
    ((33, 17), (200, 9)),                             # wider, flatter
    ((7, 5), (3, 2)),
]


@pytest.mark.parametrize("frame_size,size", SIZES)
def test_resizing_is_pillows_bicubic_to_the_bit_whole_and_frame_to_frame(frame_size, size):
    W, H = frame_size
    r = Resampler(frame_size, size)
    assert r.exact and r.order in ("rows", "cols", "rows,cols", "cols,rows")
    f = _screen(H, W)
    for g in [f] + _changes(f):
        out = r.resize(g)
        assert out.shape == (size[1], size[0], 3) and not out.flags.writeable
        assert np.array_equal(out, pillow_bicubic(g, size))


@pytest.mark.parametrize("frame_size,size", [((540, 960), (532, 952)), ((120, 200), (110, 60))])
def test_the_pass_order_is_the_one_pillow_uses(frame_size, size):
    """Pillow up to 12 resamples rows first; Pillow 13 columns first when the height shrinks
    much more than the width. The resampler's order is whichever two single passes of
    Pillow's own compose to its resize (they differ in rounding)."""
    (W, H), (w, h) = frame_size, size
    f = RNG.integers(0, 256, (H, W, 3), dtype=np.uint8)
    want = pillow_bicubic(f, size)
    rows_first = np.array_equal(pillow_bicubic(pillow_bicubic(f, (w, H)), size), want)
    cols_first = np.array_equal(pillow_bicubic(pillow_bicubic(f, (W, h)), size), want)
    assert rows_first != cols_first
    assert Resampler(frame_size, size).order == ("rows,cols" if rows_first else "cols,rows")


def test_an_episodes_frames_resized_one_after_the_other_are_pillows(tmp_path):
    from longpuzzle.agents.scripted import SolverAgent
    from longpuzzle.agents.harness import Settings, open_frames, run_objective

    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(action_timeout=None), folder=tmp_path)
    v = make_view((540, 960), "smart_resize")
    with open_frames(tmp_path) as fs:
        assert len(fs) > 50
        for i in range(len(fs)):
            png = v.png(fs.read(i))                       # every frame, in order (updates)
            if i % 7 == 0 or i == len(fs) - 1:
                assert np.array_equal(decode_png(png), pillow_bicubic(fs.read(i), v.size)), i


def test_a_resampler_that_cannot_match_pillow_uses_pillow(monkeypatch):
    """If neither order reproduced Pillow (its arithmetic changed), every frame is Pillow's."""
    monkeypatch.setattr(resample, "_likely_orders", lambda *a: [])
    monkeypatch.setattr(resample, "_ORDERS", {})
    r = Resampler((64, 48), (30, 20))
    assert not r.exact
    f = _screen(48, 64)
    assert np.array_equal(r.resize(f), pillow_bicubic(f, (30, 20)))


def test_the_views_png_is_the_resized_frame_and_a_frame_seen_again_is_not_redone():
    v = make_view((540, 960), "smart_resize")
    f = _screen(960, 540)
    g = _changes(f)[0]
    a = v.png(f)
    assert np.array_equal(decode_png(a), pillow_bicubic(f, v.size))
    b = v.png(g)
    assert np.array_equal(decode_png(b), pillow_bicubic(g, v.size))
    assert v.png(f) is a                                  # kept by the frame's pixels
    assert np.array_equal(v.image(f), pillow_bicubic(f, v.size))
    other = v.image(np.zeros((100, 80, 3), np.uint8))      # not this view's frame size: Pillow's resize
    assert other.shape == (v.size[1], v.size[0], 3)
    # the PNG is compressed again only in the bands the resize redid, whatever resized in between
    later = _changes(g)
    v.image(later[1])
    for h in later[2:]:
        assert np.array_equal(decode_png(v.png(h)), pillow_bicubic(h, v.size))
    ident = make_view((540, 960))
    assert ident.png(f) == encode_png(f) and ident.image(f) is f
