"""The fast paths of frame making give the bytes of the plain ones: level screens built over
a cached base (only what a level adds is drawn and smoothed) equal the static layer drawn
whole; a renderer that went through many states draws a state as a fresh one does; frames
are handed out read-only, never written again while anyone holds them."""

import numpy as np
import pygame
import pytest

from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer
from longpuzzle.render.frame.kernels import _smooth_into, enlarged_surface, fill_rects, halved_surface, outline_rects
from longpuzzle.render.frame.layers import _cover, draw_layer, layer_base, surface_to_array
from longpuzzle.render.frame.paint import Recorder

LEVELS = ["bolt_unscrew/hard/6", "rush_hour/easy/1", "nut_and_bolt/hard/1", "truck_escape/default/5",
          "maze_paint/hard/10", "maze_paint/easy/1", "color_connect/hard/10", "nut_and_bolt/nightmare/1"]


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 1.0), ("2d", 0.75), ("3d", 1.37), ("2d", 540.5 / 540)])
def test_layered_level_screens_equal_the_whole_drawing(style, scale):
    """(540.5 / 540: the supersampled size is not twice the frame's, the whole-drawing path)"""
    r = Renderer(style, scale)
    for lid in LEVELS:
        s = Suite(lid, style=style, scale=scale)
        fast = r.static_layer(s)
        whole = draw_layer(r.proj, lambda p: r._draw_level(p, s))
        assert np.array_equal(fast, whole), lid
    for lid in ("rush_hour/hard/10", "color_connect/easy/3"):      # direct: the HUD without a menu button
        s = Suite(lid, style=style, scale=scale, direct=True)
        assert np.array_equal(r.static_layer(s), draw_layer(r.proj, lambda p: r._draw_level(p, s))), lid
    s = Suite("maze_paint/hard/10", style=style, scale=scale)      # its masks either way
    rng = np.random.default_rng(2)
    for _ in range(6):
        s.dispatch(s.gesture_for(int(rng.choice(s.session.legal_moves()))))
    assert np.array_equal(r.render(s), Renderer(style, scale).render(s.clone()))


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_incremental_frames_equal_fresh_frames(style):
    for lid in ["maze_paint/hard/10", "rush_hour/hard/5", "color_connect/hard/10"]:
        s = Suite(lid, style=style)
        r = Renderer(style)
        rng = np.random.default_rng(4)
        for _ in range(15):
            legal = s.session.legal_moves()
            if not legal or s.complete:
                break
            s.dispatch(s.gesture_for(int(rng.choice(legal))))
            r.render(s)
        assert np.array_equal(r.render(s), Renderer(style).render(s.clone())), lid


def test_frames_are_read_only_and_never_reused_while_held():
    r = Renderer()
    s = Suite("maze_paint/hard/3")
    held = [r.render(s) for _ in range(3)]
    copies = [h.copy() for h in held]
    assert all(not h.flags.writeable for h in held) and len({id(h) for h in held}) == 3
    with pytest.raises(ValueError):
        held[0][0, 0, 0] = 1
    for g in s.session.legal_moves()[:3]:
        s.dispatch(s.gesture_for(int(g)))
        r.render(s)
    view = held[1][10:20]
    del held[1]                       # a view still holds it
    for _ in range(40):
        r.render(s)
    assert np.array_equal(view, copies[1][10:20]) and np.array_equal(held[0], copies[0])


def test_cover_and_recorder():
    rects = [(3, 5, 10, 10), (200, 7, 4, 4), (0, 600, 1080, 2), (1079, 1919, 1, 1)]
    cov = _cover(rects, (1080, 1920))
    grid = np.zeros((1920, 1080), bool)
    for x, y, w, h in cov:
        assert x % 2 == y % 2 == w % 2 == h % 2 == 0
        grid[y:y + h, x:x + w] = True
    for x, y, w, h in rects:
        assert grid[y:y + h, x:x + w].all()
    assert grid.mean() < 0.1
    proj = Renderer().proj
    tri = [(10, 10), (60, 12), (30, 70)]
    base = layer_base(proj, "black")
    rec = Recorder(base.big)                  # recorded at the supersampled projection it replays at
    rec.poly(tri, (200, 10, 10))
    with pytest.raises(TypeError):
        rec.text("x", 1, 1, 10)
    a = base.over(lambda p: p.poly(tri, (200, 10, 10)))
    b = base.over(lambda p: p.replay(rec.ops))
    c = base.over(lambda p: p.replay(rec.ops, {(200, 10, 10): (10, 200, 10)}))
    assert np.array_equal(a, b) and a.any() and np.array_equal(a[..., 0], c[..., 1])


def test_smoothing_rects_in_place_gives_pygames_smoothscale_bytes():
    import pygame
    rng = np.random.default_rng(4)
    surf = pygame.Surface((96, 70))
    pygame.surfarray.blit_array(surf, rng.integers(0, 256, (96, 70, 3), dtype=np.uint8))
    whole = surface_to_array(pygame.transform.smoothscale(surf, (48, 35)))
    out = np.zeros_like(whole)
    rects = [(0, 0, 96, 20), (10, 20, 40, 50), (50, 20, 46, 50), (0, 20, 10, 50)]
    _smooth_into(out, surf, rects)
    assert np.array_equal(out, whole)
    surf.blit(surf, (2, 2))                       # the surface is not left locked
    out2 = whole.copy()
    _smooth_into(out2, surf, [])
    assert np.array_equal(out2, whole)


@pytest.mark.parametrize("read_only", [False, True])
def test_an_enlarged_surface_is_pygames_scaled_surface_of_the_pixels(read_only):
    """draw_patch's start: every 32 bits of each pixel, the format and the size of the picture
    made a surface and scaled by pygame, for crops of any strides, read-only or not."""
    rng = np.random.default_rng(7)
    frame = rng.integers(0, 256, (240, 150, 3), dtype=np.uint8)
    frame.setflags(write=not read_only)
    before = frame.copy()
    for y0, y1, x0, x1, k in [(0, 240, 0, 150, 2), (17, 203, 9, 141, 2), (5, 6, 7, 8, 2), (30, 63, 0, 1, 3)]:
        crop = frame[y0:y1, x0:x1]
        old = pygame.transform.scale(pygame.surfarray.make_surface(np.ascontiguousarray(crop.transpose(1, 0, 2))),
                                     ((x1 - x0) * k, (y1 - y0) * k))
        new = enlarged_surface(crop, k)
        assert (new.get_size(), new.get_bitsize(), new.get_masks(), new.get_flags()) == \
            (old.get_size(), old.get_bitsize(), old.get_masks(), old.get_flags())
        assert np.array_equal(pygame.surfarray.pixels2d(new), pygame.surfarray.pixels2d(old))
        new.fill((1, 2, 3), (0, 0, 1, 1))                 # not left locked
    assert np.array_equal(frame, before)                  # the source as it was


def test_a_halved_sprite_is_pygames_smoothscale_of_it():
    """draw_sprite's end: all four bytes of every pixel, the format and the size of
    smoothscale to half size, for surfaces with per-pixel alpha; others are smoothscale's."""
    rng = np.random.default_rng(3)
    for w, h in [(2, 2), (64, 38), (300, 402), (1080, 200)]:
        big = pygame.Surface((w, h), pygame.SRCALPHA)
        px = pygame.surfarray.pixels2d(big)
        px[...] = rng.integers(0, 1 << 32, (w, h), dtype=np.uint64).astype(np.uint32)
        del px
        old, new = pygame.transform.smoothscale(big, (w // 2, h // 2)), halved_surface(big)
        assert (new.get_size(), new.get_bitsize(), new.get_masks(), new.get_flags()) == \
            (old.get_size(), old.get_bitsize(), old.get_masks(), old.get_flags())
        assert np.array_equal(pygame.surfarray.pixels2d(new), pygame.surfarray.pixels2d(old)), (w, h)
        big.fill((0, 0, 0, 0), (0, 0, 1, 1))             # neither is left locked
        new.fill((0, 0, 0, 0), (0, 0, 1, 1))
    opaque = pygame.Surface((10, 6))                      # no alpha: smoothscale itself
    opaque.fill((9, 200, 31))
    assert np.array_equal(pygame.surfarray.pixels3d(halved_surface(opaque)),
                          pygame.surfarray.pixels3d(pygame.transform.smoothscale(opaque, (5, 3))))


def test_smoothing_and_restoring_in_one_pass_gives_the_two_steps_bytes():
    import pygame

    from longpuzzle.render.frame.kernels import _smooth_restore

    rng = np.random.default_rng(5)
    work, base = pygame.Surface((96, 70)), pygame.Surface((96, 70))
    pygame.surfarray.blit_array(base, rng.integers(0, 256, (96, 70, 3), dtype=np.uint8))
    drawn = rng.integers(0, 256, (96, 70, 3), dtype=np.uint8)
    rects = [(0, 0, 96, 20), (10, 20, 40, 50), (50, 20, 46, 50), (0, 64, 10, 6)]
    pygame.surfarray.blit_array(work, drawn)
    want = surface_to_array(base)
    out = want.copy()
    _smooth_into(out, work, rects)                # the two steps
    for r in rects:
        work.blit(base, r[:2], r)
    two, restored = out, surface_to_array(work)
    pygame.surfarray.blit_array(work, drawn)
    out = want.copy()
    _smooth_restore(out, work, base, rects)       # in one pass
    assert np.array_equal(out, two) and np.array_equal(surface_to_array(work), restored)
    assert not np.array_equal(restored, surface_to_array(base))      # (0, 20, 10, 44) was left drawn
    work.blit(work, (2, 2))                       # the surfaces are not left locked
    base.blit(base, (2, 2))


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 1.0), ("2d", 1.37)])
def test_maze_paint_cells_painted_from_their_neighbourhood_equal_the_whole_board(style, scale):
    """Cells painted lazily (each from its neighbourhood, when first shown painted) give the
    frames of the masks cut from both boards drawn whole, over a whole solution."""
    from longpuzzle.solvers import solve
    for lid in ("maze_paint/hard/10", "maze_paint/medium/4"):
        lazy, eager = Renderer(style, scale), Renderer(style, scale)
        s = Suite(lid, style=style, scale=scale)
        lazy.render(s)
        eager.static_layer(s)
        d = eager.drawing(s)
        d._lazy, d._masks = None, None          # the whole-board path (_prepare from both boards drawn whole)
        assert np.array_equal(lazy.render(s), eager.render(s))
        assert lazy.drawing(s)._lazy is not None
        for a in solve(lid).actions:
            s.dispatch(s.gesture_for(a))
            for an in s.anims:
                t = (an["t0"] + an["t1"]) // 2
                assert np.array_equal(lazy.render(s, t), eager.render(s, t)), (lid, a)
            assert np.array_equal(lazy.render(s), eager.render(s)), (lid, a)
        assert s.complete
        # the level started again: many cells at once lay the board again (RESET_CELLS)
        s = Suite(lid, style=style, scale=scale)
        fresh = Renderer(style, scale).render(s)
        assert np.array_equal(lazy.render(s), fresh) and np.array_equal(eager.render(s), fresh)


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_frames_reusing_a_pooled_array_copy_only_what_changed_and_equal_whole_copies(style):
    """A frame started in a pooled array that held an earlier frame copies only the boxes
    drawn since and the base's changes: the same bytes as copying the whole base, whatever
    earlier frame the array held (frames kept alive at random), on every game."""
    from longpuzzle.engine.catalog import builtin_catalog
    rng = np.random.default_rng(7)
    for g in builtin_catalog().games():
        lid = builtin_catalog().objectives(g)[-1].level_ids[0]
        s = Suite(lid, style=style)
        tracked, whole = Renderer(style), Renderer(style)
        whole.frame.track = False
        held = []
        for i in range(14):
            legal = s.session.legal_moves()
            if not legal or s.complete:
                s = Suite(lid, style=style)
                continue
            s.dispatch(s.gesture_for(int(rng.choice(legal))))
            for t in [None] + [(a["t0"] + a["t1"]) // 2 for a in s.anims]:
                f = tracked.render(s, t)
                assert np.array_equal(f, whole.render(s, t)), (lid, i, t)
                held.append(f)
                while len(held) > int(rng.integers(1, 5)):
                    held.pop(int(rng.integers(len(held))))


def test_a_renderer_holds_no_frame_before_the_last_it_handed_out():
    """render_delta's frame before is its caller's to keep: once a new frame is started,
    the renderer no longer holds it, so a caller that keeps only the frame on screen has
    the renderer alternate between two arrays (each one more is a whole-frame copy when a
    level's board comes on screen)."""
    from longpuzzle.engine.catalog import builtin_catalog, load_level
    from longpuzzle.solvers import solve
    lid = builtin_catalog().objective("maze_paint/medium").level_ids[0]
    s = Suite(lid)
    r = Renderer()
    f, d = r.render_delta(s)
    addresses = set()
    # moves of its solution, short of the winning one: each paints, so the game's own limits
    # (four swipes into one wall end the level) never end it under the test
    for a in solve(load_level(lid)).actions[:6]:
        s.dispatch(s.gesture_for(int(a)))
        f, d = r.render_delta(s)
        assert d is not None and d[0] is not f
        d = None                                    # the caller keeps only the frame on screen
        addresses.add(f.__array_interface__["data"][0])
    assert len(addresses) == 2 and len(r.frame._pool) == 2, (addresses, len(r.frame._pool))


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_completion_cards_are_their_cached_layer_and_the_frames_after_them_equal_whole_copies(style):
    """A completion card covers the whole screen: the frame handed out is the card's cached
    layer itself (read-only, no copy), and the frame's array keeps the board drawn under it,
    from which the next frames start: the same bytes as copying whole bases, through two
    levels completed, a wait on the card and the level after it."""
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.solvers import solve
    ids = builtin_catalog().objective("maze_paint/easy").level_ids[:2]
    s = Suite(ids[0], style=style)
    tracked, whole = Renderer(style), Renderer(style)
    whole.frame.track = False
    held, cards = [], []
    for lid in ids:
        assert s.level.id == lid
        for a in solve(s.level, state=s.session.state.copy()).actions:
            s.dispatch(s.gesture_for(int(a)))
            f = tracked.render(s)
            assert np.array_equal(f, whole.render(s)), (lid, a)
            held = (held + [f])[-2:]                   # as the harness and the writer hold frames
        assert s.complete
        for _ in range(2):                             # the card, then the card again after a wait
            s.dispatch({"type": "wait", "ms": 500})
            f = tracked.render(s)
            assert np.array_equal(f, whole.render(s)) and not f.flags.writeable
            cards.append(f)
            held = (held + [f])[-2:]
        w = next(w for w in s.layout().widgets if w.id == "next")
        x, y = s.proj.to_px(*w.shape.center)
        s.dispatch({"type": "click", "x": int(round(x)), "y": int(round(y))})
        f = tracked.render(s)
        assert np.array_equal(f, whole.render(s))
        held = (held + [f])[-2:]
    assert cards[0] is cards[1] and cards[2] is cards[3] and cards[0] is not cards[2]
    assert not any(c is a for c in cards for a in tracked.frame._pool)


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 1.0), ("3d", 1.37), ("2d", 0.75)])
def test_completion_cards_drawn_over_their_box_equal_the_card_drawn_over_the_whole_frame(style, scale, monkeypatch):
    """The card is drawn (supersampled) only over its own box (screens.card_box), the dimmed
    frame around it kept as it is: the bytes of drawing it over the whole frame, for a
    level's card and an objective's last one ("All complete!"), after random moves and
    after a solution (the board under the card differs), at scales whose supersampled
    canvas is and is not twice the frame."""
    import longpuzzle.render.frame.screens as screens
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.solvers import solve
    whole = lambda proj: (0, 0, proj.width, proj.height)         # noqa: E731
    for lid in ("bolt_unscrew/easy/1", "bolt_unscrew/hard/1", builtin_catalog().objective("maze_paint/easy").level_ids[-1]):
        s = Suite(lid, style=style, scale=scale)
        for a in solve(s.level).actions:
            s.dispatch(s.gesture_for(int(a)))
        s.dispatch({"type": "wait", "ms": 2000})
        assert s.complete
        card = Renderer(style, scale).render(s)
        with monkeypatch.context() as m:
            m.setattr(screens, "card_box", whole)
            assert np.array_equal(card, Renderer(style, scale).render(s)), lid


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_sprites_blended_before_over_the_same_pixels_are_put_back_as_they_were(style):
    """Frame.blit keeps a sprite blended over the pixels under it: the same sprite over the
    same pixels (a ball back on a cell, a HUD line over its header) is put back instead of
    blended again - the same frames as blending every time (BLITS = 0), through plays that
    come back to earlier positions, on every game."""
    from longpuzzle.engine.catalog import builtin_catalog
    rng = np.random.default_rng(5)
    kept, blended = Renderer(style), Renderer(style)
    blended.frame.BLITS = 0
    for g in builtin_catalog().games():
        lid = builtin_catalog().objectives(g)[0].level_ids[0]
        for _ in range(2):                                   # the same play twice: positions come back
            s = Suite(lid, style=style)
            r2 = np.random.default_rng(int(rng.integers(3)))
            for i in range(8):
                legal = s.session.legal_moves() if s.session is not None else []
                if not legal or s.complete:
                    break
                s.dispatch(s.gesture_for(int(r2.choice(legal))))
                for t in [(a["t0"] + a["t1"]) // 2 for a in s.anims] + [None]:
                    assert np.array_equal(kept.render(s, t), blended.render(s, t)), (lid, i, t)
    assert kept.frame.blits_reused > 20 and blended.frame.blits_reused == 0 and not blended.frame._blits
    assert 0 < kept.frame._blits_size <= kept.frame.BLITS
    assert kept.frame._blits_size == sum(a.nbytes for a in kept.frame._blits.values())


def _assert_delta_holds(f, d, prev, where):
    """render_delta's delta ``d`` of frame ``f``: relative to ``prev``, which has f's pixels
    everywhere outside the box."""
    assert d[0] is prev, where
    x0, y0, x1, y1 = d[1]
    outside = np.ones(f.shape[:2], bool)
    outside[y0:y1, x0:x1] = False
    assert np.array_equal(f[outside], prev[outside]), where
    if len(d) > 2:                  # and its row spans: disjoint, top to bottom, inside the box
        spans = d[2]
        assert (not spans) == (x1 <= x0 or y1 <= y0), where
        assert all(a < z for a, z in spans) and all(z < a for (_, z), (a, _) in zip(spans, spans[1:])), where
        assert not spans or (spans[0][0] == y0 and spans[-1][1] == y1), where
        rows = np.ones(f.shape[0], bool)
        for a, z in spans:
            rows[a:z] = False
        assert np.array_equal(f[rows], prev[rows]), where


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_render_delta_boxes_hold_every_changed_pixel(style):
    """Renderer.render_delta: the frame handed out before and the box outside which the two
    frames are the same pixels, on every game through plays with animations, menus, level
    changes and completion cards; known for most frames of a play (the frame store keeps
    only the box)."""
    from longpuzzle.engine.catalog import builtin_catalog
    rng = np.random.default_rng(3)
    r = Renderer(style)
    known = total = 0
    prev = None
    for g in builtin_catalog().games():
        lid = builtin_catalog().objectives(g)[0].level_ids[0]
        s = Suite(lid, style=style)
        for i in range(12):
            legal = s.session.legal_moves() if s.session is not None else []
            if not legal or s.complete:
                s = Suite(lid, style=style)
                legal = s.session.legal_moves()
            s.dispatch(s.gesture_for(int(rng.choice(legal))))
            for t in [(a["t0"] + a["t1"]) // 2 for a in s.anims] + [None]:
                f, d = r.render_delta(s, t)
                total += 1
                if d is not None:
                    known += 1
                    _assert_delta_holds(f, d, prev, (lid, i, t))
                    x0, y0, x1, y1 = d[1]
                    assert (x1 - x0) * (y1 - y0) < f.shape[0] * f.shape[1]
                prev = f
    assert known > 0.7 * total, (known, total)


def test_maze_paint_cell_masks_as_rectangles_copy_the_masked_pixels():
    """mask_rects: a cell's mask as a few rectangles (its box less strips its neighbours
    own; in 3d up to about 10), whose slices copy exactly the pixels np.copyto(where=mask) copies; None for masks
    it does not take (channels that differ, too many rectangles); on every mask of a Maze
    Paint level's cells, and on made-up ones."""
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.render.maze_paint import MASK_RECTS, mask_rects
    rng = np.random.default_rng(11)

    def check(mask):
        rects = mask_rects(mask)
        if rects is None:
            return None
        src = rng.integers(0, 256, mask.shape, dtype=np.uint8)
        want, got = np.zeros_like(src), np.zeros_like(src)
        np.copyto(want, src, where=mask)
        for y0, y1, x0, x1 in rects:
            assert not got[y0:y1, x0:x1].any()           # no pixel in two rectangles
            got[y0:y1, x0:x1] = src[y0:y1, x0:x1]
        assert np.array_equal(got, want)
        return rects
    box = np.ones((40, 30), bool)
    box[:3, :] = False
    box[10:, 27:] = False
    assert len(check(np.repeat(box[:, :, None], 3, axis=2))) == 2
    assert check(np.repeat((rng.random((20, 20)) > 0.5)[:, :, None], 3, axis=2)) is None    # too many
    odd = np.ones((5, 5, 3), bool)
    odd[2, 2, 1] = False
    assert mask_rects(odd) is None                                                          # channels differ
    masked = []
    for style in ("2d", "3d"):
        r = Renderer(style)
        for lid in builtin_catalog().objective("maze_paint/easy").level_ids[:4]:
            s = Suite(lid, style=style)
            r.render(s)
            d = r.drawing(s)
            masks = [d._cell_mask(c) for c in range(len(d.floor))]
            masked += [m[4] for m in masks if m is not None and m[4] is not True]
    assert len(masked) > 10 and all(len(check(m)) <= MASK_RECTS for m in masked)


def test_maze_paint_board_recorded_at_once_equals_the_recorder():
    """The 2d board's polygons computed for all cells at once are the Recorder's, point for
    point, on every Maze Paint level, at scales and offsets of sprites and patches."""
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.engine.geometry import projection, supersampled_projection
    from longpuzzle.render.maze_paint import MazePaintDrawing, _op_bounds

    checked = []
    for lid in [lid for lid in builtin_catalog().level_ids() if lid.startswith("maze_paint/")]:
        for scale, offset in [(1.0, (0.0, 0.0)), (0.75, (13.0, 7.5)), (1.37, (0.0, 0.0)), (0.31, (2.0, 0.0))]:
            big = supersampled_projection("2d", scale, 2)
            d = MazePaintDrawing(Suite(lid, scale=scale).game_ui(), projection("2d", scale))
            rec = Recorder(big, offset)
            d._draw_board(rec, False)
            ops, bounds, outlines = d._record_flat(big, *offset)
            # (the points as tuples, the Recorder's as lists: the same floats)
            assert [(c, [tuple(q) for q in pts], w) for c, pts, w in ops] == \
                [(c, [tuple(q) for q in pts], w) for c, pts, w in rec.ops], (lid, scale, offset)
            assert np.array_equal(bounds, _op_bounds(ops)), (lid, scale, offset)
            if outlines is not None:          # the outlines' rects draw the outline polygons' pixels
                size, i0, i1, rects = outlines
                assert size == big.size and all(ops[i][2] > 0 for i in range(i0, i1))
                a, b = pygame.Surface(size), pygame.Surface(size)
                for c, pts, w in ops[i0:i1]:
                    pygame.draw.polygon(a, c, pts, w)
                fill_rects(b, ops[i0][0], rects)
                assert np.array_equal(pygame.surfarray.pixels2d(a), pygame.surfarray.pixels2d(b)), (lid, scale)
                checked.append((lid, scale))
    levels = [lid for lid in builtin_catalog().level_ids() if lid.startswith("maze_paint/")]
    assert {lid for lid, scale in checked if scale == 1.0} == set(levels)     # every level at scale 1


def test_outline_rects_are_the_pixels_pygame_outlines_and_fill_rects_fills_them():
    """outline_rects against pygame.draw.polygon on thousands of random rectangles 1 and 2 px
    wide (and None where the rule does not hold); fill_rects (compiled, and pygame's fills
    on a surface with padded rows) against pygame's fill."""
    import random

    rng = random.Random(7)
    size = (240, 200)
    a, b = pygame.Surface(size), pygame.Surface(size)
    for width in (1, 2):
        quads = []
        for i in range(1500):
            x0, y0 = rng.randint(0, 170), rng.randint(0, 130)
            x1, y1 = x0 + rng.randint(2, 67), y0 + rng.randint(2, 67)
            if i % 2:                         # fractional corners (pygame truncates them)
                x0, y0, x1, y1 = x0 + rng.random(), y0 + rng.random(), x1 + rng.random(), y1 + rng.random()
            quads.append([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        rects = outline_rects(np.array(quads, float), width, size)
        assert rects is not None and rects.shape[:2] == (1500, 4 if width == 1 else 5)
        for q, r in zip(quads, rects):
            a.fill(0)
            b.fill(0)
            pygame.draw.polygon(a, (200, 30, 90), [[float(x), float(y)] for x, y in q], width)
            box = fill_rects(b, (200, 30, 90), r)
            assert np.array_equal(pygame.surfarray.pixels2d(a), pygame.surfarray.pixels2d(b)), (q, width)
            xs, ys = np.nonzero(pygame.surfarray.pixels2d(a))
            assert box == pygame.Rect(xs.min(), ys.min(), xs.max() + 1 - xs.min(), ys.max() + 1 - ys.min())
    sq = [[10.0, 10.0], [50.0, 10.0], [50.0, 40.0], [10.0, 40.0]]
    assert outline_rects(np.array([sq]), 0, size) is None                       # a fill
    assert outline_rects(np.array([sq]), 3, size) is None                       # wider
    assert outline_rects(np.array([[[10.5, 10.0], *sq[1:]]]), 1, size) is None   # not a rectangle
    assert outline_rects(np.array([[[-0.5, 10.0], [50.0, 10.0], [50.0, 40.0], [-0.5, 40.0]]]), 1, size) is None
    assert outline_rects(np.array([[sq[0], sq[1], [50.0, 41.0], sq[3]]]), 1, size) is None   # not a rectangle
    assert outline_rects(np.array([[[10.0, 10.0], [11.0, 10.0], [11.0, 40.0], [10.0, 40.0]]]), 2, size) is None
    assert outline_rects(np.array([[[200.0, 10.0], [239.0, 10.0], [239.0, 40.0], [200.0, 40.0]]]), 1, size) is None
    padded = pygame.Surface((size[0] + 1, size[1]), 0, 24)                      # rows with padding: pygame's fills
    for surf in (a, padded):
        ref = surf.copy()
        rects = np.array([[3, 4, 50, 1], [3, 4, 1, 60], [100, 7, 2, 2]])
        for r in rects.tolist():
            ref.fill((1, 2, 3), r)
        assert fill_rects(surf, (1, 2, 3), rects) == pygame.Rect(3, 4, 99, 60)
        assert np.array_equal(pygame.surfarray.array3d(surf), pygame.surfarray.array3d(ref))
    assert fill_rects(a, (1, 2, 3), np.zeros((0, 4), np.int64)) is None


def test_maze_paint_point_lists_are_tolists_floats():
    from longpuzzle.render.maze_paint import _point_lists

    pts = np.random.default_rng(3).normal(size=(7, 24, 2)) * 1000
    assert [[tuple(q) for q in p] for p in pts.tolist()] == _point_lists(pts)
    assert all(type(q) is tuple and type(q[0]) is float for p in _point_lists(pts) for q in p)


def test_maze_paint_pixel_owners_compiled_equal_numpy():
    """The compiled owner of a pixel is the numpy one's, on every Maze Paint level, for
    points over the board, its frame and beyond, exactly on cell edges and centres too."""
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.engine.geometry import projection
    from longpuzzle.render.maze_paint import MazePaintDrawing

    rng = np.random.default_rng(3)
    for lid in [lid for lid in builtin_catalog().level_ids() if lid.startswith("maze_paint/")]:
        d = MazePaintDrawing(Suite(lid).game_ui(), projection("2d", 1.0))
        br, size = d.board_rect(), d.ui.cell
        gx = np.concatenate([rng.uniform(br.x0 - 30, br.x1 + 30, 4000), br.x0 + size * rng.integers(0, d.cols + 1, 500),
                             br.x0 + size * (rng.integers(0, d.cols, 500) + 0.5)])
        gy = np.concatenate([rng.uniform(br.y0 - 30, br.y1 + 30, 4000), br.y0 + size * (rng.integers(0, d.rows, 500) + 0.5),
                             br.y0 + size * rng.integers(0, d.rows + 1, 500)])
        got, want = d._owners(gx, gy), d._owners_numpy(gx, gy)
        assert np.array_equal(got, want), lid
        assert (got >= 0).any() and (got < 0).any()


def test_a_layer_base_starts_with_its_working_copy_and_smoothed_copy_of_its_base():
    import pygame

    from longpuzzle.engine.geometry import projection
    from longpuzzle.render.frame.layers import LayerBase

    rng = np.random.default_rng(9)
    noise = rng.integers(0, 256, (216, 384, 3), dtype=np.uint8)
    proj = projection("2d", 0.2)
    lb = LayerBase(proj, lambda p: pygame.surfarray.blit_array(p.surf, noise))
    assert lb.exact and lb.big.size == (216, 384)
    assert pygame.image.tobytes(lb.work, "RGB") == pygame.image.tobytes(lb.pristine, "RGB")
    assert np.array_equal(lb.small, surface_to_array(pygame.transform.smoothscale(lb.pristine, proj.size)))
    assert lb.work.get_locked() is False and lb.pristine.get_locked() is False


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 1.0), ("2d", 1.37)])
def test_maze_paint_start_cells_painted_from_the_drawn_board_equal_their_neighbourhood_drawn(style, scale):
    """A level's starting cells painted from the unpainted board just drawn (its colours
    replaced) are the neighbourhoods drawn painted, on every Maze Paint level."""
    from longpuzzle.engine.catalog import builtin_catalog

    used = 0
    for lid in [lid for lid in builtin_catalog().level_ids() if lid.startswith("maze_paint/")]:
        s = Suite(lid, style=style, scale=scale)
        r = Renderer(style, scale)
        r.static_layer(s)                              # draws the board: the start cells made
        d = r.drawing(s)
        for cell, paint in d._lazy["pre"].items():
            assert np.array_equal(paint, d._paint_region(*d._cell_region(cell))), (lid, cell)
            used += 1
    assert used >= 20                                  # (every level: the ball's first cell)


def test_maze_paint_cells_paint_while_the_base_under_the_board_is_locked():
    """The picture under a 2d board is the layer base's pristine surface, which the base
    locks (pixel views) while it smooths a level screen for another thread: painting a cell
    then reads it all the same, with the same pixels."""
    import pygame

    s = Suite("maze_paint/hard/4")
    r = Renderer()
    r.static_layer(s)
    d = r.drawing(s)
    under = d._lazy["under"]
    region = d._cell_region(int(np.flatnonzero(d.floor)[-1]))
    free = d._paint_region(*region)
    held = pygame.surfarray.pixels2d(under)       # as LayerBase._over holds it
    try:
        assert under.get_locked()
        assert np.array_equal(d._paint_region(*region), free)
    finally:
        del held


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_a_menu_frame_is_its_cached_layer_and_the_frames_around_it_keep_their_deltas(style):
    """Frame.present: a menu's frame is its read-only cached layer itself (no frame array
    taken, nothing copied), the same pixels as a fresh renderer's; shown again, its delta
    says nothing changed; the level started from the menu is a whole frame (delta not
    known), and the menus and levels after it match a fresh renderer's pixels."""
    from longpuzzle.engine.catalog import builtin_catalog
    lid = builtin_catalog().objective("maze_paint/easy").level_ids[0]
    s = Suite("home", style=style)
    r = Renderer(style)
    f, d = r.render_delta(s)
    assert f is r.static_layer(s) and not f.flags.writeable and d is None
    assert len(r.frame._pool) == 0                   # no frame array was taken
    assert np.array_equal(f, Renderer(style).render(Suite("home", style=style)))
    g, d = r.render_delta(s)
    assert g is f and d is not None and d[0] is f and d[1] == (0, 0, 0, 0)
    s.open_level(lid)
    lv, d = r.render_delta(s)
    assert d is None and lv.flags.writeable is False and lv is not r.static_layer(s)
    fresh = Suite(lid, style=style)
    assert np.array_equal(lv, Renderer(style).render(fresh))
    s.dispatch(s.gesture_for(int(s.session.legal_moves()[0])))
    fresh.dispatch(fresh.gesture_for(int(fresh.session.legal_moves()[0])))
    after, d = r.render_delta(s)
    assert d is not None and d[0] is lv
    assert np.array_equal(after, Renderer(style).render(fresh))


def _color_connect_board_whole(d, static, state) -> np.ndarray:
    """Color Connect's completed paths composed over the whole board at once, as they were
    before the base layer was kept in step: the reference for the boxes composed alone."""
    u = d.ui
    x0, y0, x1, y1 = d.board_box
    surf = pygame.surfarray.make_surface(np.ascontiguousarray(static[y0:y1, x0:x1].transpose(1, 0, 2)))
    routes = d.completed_routes(state)
    routes.sort(key=lambda rc: max(c // u.cols for c in rc[1]))
    for ci, cells in routes:
        sp, box = d.path_sprite(ci, cells, True)
        surf.blit(sp, (box[0] - x0, box[1] - y0))
    return np.ascontiguousarray(pygame.surfarray.array3d(surf).transpose(1, 0, 2))


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_color_connect_base_kept_in_step_equals_the_board_composed_whole(style):
    """Color Connect's base layer (the completed paths, composed again only in the boxes of
    the paths that came or went, in place): the board composed whole from its sprites,
    through solutions with paths removed and drawn again, and the frames' deltas hold
    every changed pixel."""
    from longpuzzle.solvers import solve
    rng = np.random.default_rng(11)
    r = Renderer(style)
    known = 0
    for lid in ("color_connect/hard/1",) if style == "2d" else ("color_connect/easy/4",):
        s = Suite(lid, style=style)
        prev, _ = r.render_delta(s)
        n = s.game_ui().n + 1 + 2 * s.game_ui().k          # the first remove action
        for rnd in range(3):
            acts = solve(s.level, state=s.session.state.copy()).actions
            steps = list(acts) if rnd == 2 else list(acts[:int(rng.integers(1, len(acts) + 1))])
            done = [a for a in s.session.legal_moves() if a >= n]
            steps += [int(a) for a in rng.permutation(done)[:2]]      # remove a path or two (when done)
            for a in steps:
                if a not in s.session.legal_moves():
                    continue
                s.dispatch(s.gesture_for(int(a)))
                for t in [(an["t0"] + an["t1"]) // 2 for an in s.anims] + [None]:
                    f, delta = r.render_delta(s, t)
                    d = r.drawing(s)
                    x0, y0, x1, y1 = d.board_box
                    want = _color_connect_board_whole(d, r.static_layer(s), np.asarray(s.session.state))
                    assert np.array_equal(d._base[y0:y1, x0:x1], want), (lid, rnd, a)
                    assert delta is not None or (s.complete and t is None), (lid, a)   # (the card: not known)
                    if delta is not None:
                        _assert_delta_holds(f, delta, prev, (lid, rnd, a, t))
                        known += 1
                    prev = f
                if s.complete:
                    break
        assert np.array_equal(prev, Renderer(style).render(s.clone()))
        d = r.drawing(s)
        assert d._shown                                    # paths shown, then the level again from its start
        s = Suite(lid, style=style)                        # (a dataset's next episode): every path goes at once
        f, delta = r.render_delta(s)
        x0, y0, x1, y1 = d.board_box
        want = _color_connect_board_whole(d, r.static_layer(s), np.asarray(s.session.state))
        assert not d._shown and np.array_equal(d._base[y0:y1, x0:x1], want), lid
        assert np.array_equal(f, Renderer(style).render(s.clone())), lid
        if delta is not None:
            _assert_delta_holds(f, delta, prev, (lid, "again"))
        # the first two routes again: the changes of the paths are the ones made before
        reused = d.changes_reused
        for a in solve(s.level, state=s.session.state.copy()).actions:
            if len(d._shown) >= 2:
                break
            s.dispatch(s.gesture_for(int(a)))
            f = r.render(s)
            want = _color_connect_board_whole(d, r.static_layer(s), np.asarray(s.session.state))
            assert np.array_equal(d._base[y0:y1, x0:x1], want), (lid, "again", a)
            assert np.array_equal(f, Renderer(style).render(s.clone())), (lid, "again", a)
        assert d.changes_reused > reused, lid
    assert known > 20


@pytest.mark.parametrize("style", ["2d", "3d"])
@pytest.mark.parametrize("lid", ["rush_hour/easy/5", "truck_escape/default/3", "nut_and_bolt/easy/2",
                                 "nut_and_bolt/extreme/1"])
def test_incremental_frames_of_a_solved_play_equal_fresh_renders_and_keep_their_deltas(style, lid):
    """Games whose at-rest frame is a base layer kept up to date in place: every frame of a
    play (the solver's moves, frames in the middle of a drag, in-between frames of each
    animation, a vehicle driving out) equals a fresh renderer's frame of that moment, and
    render_delta's box holds every pixel changed from the frame before."""
    from longpuzzle.solvers import solve
    s = Suite(lid, style=style)
    r = Renderer(style)
    prev = None
    known = total = 0

    def check(suite, t=None):
        nonlocal prev, known, total
        f, d = r.render_delta(suite, t)
        assert np.array_equal(f, Renderer(style).render(suite.clone(), t)), (lid, t)
        total += 1
        if d is not None:
            known += 1
            _assert_delta_holds(f, d, prev, (lid, t))
        prev = f

    check(s)
    actions = solve(s.level, state=s.session.state.copy()).actions
    for k, a in enumerate(actions):
        g = s.gesture_for(int(a))
        for click in _refused_clicks(s) if k < 3 else []:     # a refused move: something shakes
            c = s.clone()
            c.dispatch(click)
            for dt in (10, 45, 120) if c.shake else (0,):
                check(c, c.shake["t0"] + dt if c.shake else None)
        if g.get("type") == "drag" and k % 2 == 0:       # the drag cut halfway: dragged
            c = s.clone()
            c.dispatch(g, until=c.clock + c.action_gap_ms + g["ms"] // 2)
            check(c)
        s.dispatch(g)
        if k < 4 or k == len(actions) - 1:
            for an in s.anims:
                for q in (0.2, 0.6, 0.95):
                    check(s, int(an["t0"] + q * (an["t1"] - an["t0"])))
        check(s)
    assert s.complete and known > 0.6 * total, (known, total)
    s = Suite(lid, style=style)            # played again: boards composed before are put back
    for a in actions[:5]:
        s.dispatch(s.gesture_for(int(a)))
        check(s)


def _refused_clicks(s):
    """Clicks on a piece that cannot move now (a blocked truck; each bolt pressed in turn,
    selecting and trying moves, some refused)."""
    u, st = s.game_ui(), s.session.state
    if s.level.game == "truck_escape":
        legal = {int(x) for x in s.session.legal_moves()}
        pts = [u.centers[i] for i in range(u.n) if st[1 + i] and i not in legal][:1]
    elif s.level.game == "nut_and_bolt":
        pts = [(u.cx[b], u.base[b] - 20) for b in range(u.n)]
    else:
        return []
    out = []
    for x, y in pts:
        px, py = s.proj.to_px(x, y)
        out.append({"type": "batch", "actions": [{"type": "click", "x": int(round(px)), "y": int(round(py))}]})
    return out[:1] if s.level.game == "truck_escape" else [{"type": "batch", "actions": [a for c in out for a in c["actions"]]}]


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_bolt_unscrew_base_kept_in_step_equals_the_region_composed_whole(style):
    """Bolt Unscrew's base layer (the board region, composed again only in the boxes of what
    came, went or moved, in place, or put back as composed before): the region composed
    whole from the static layer, through a solution played twice (the second time from the
    boxes kept) with its animations' in-between frames, and the frames' deltas hold every
    changed pixel. Each move's screw is also shown selected first (its hint line with it),
    and the second play comes back to every state shown at rest (the region's items kept
    for them, and the boxes to compose between two of them)."""
    from longpuzzle.solvers import solve
    r, ref = Renderer(style), Renderer(style)
    lid = "bolt_unscrew/hard/1"
    known = 0
    prev = None

    def check(s, t, what):
        nonlocal known, prev
        f, delta = r.render_delta(s, t)
        ref.drawing(s)._base_of = None                # composed whole, from the static layer
        assert np.array_equal(f, ref.render(s, t)), what
        if delta is not None:
            _assert_delta_holds(f, delta, prev, what)
            known += 1
        prev = f

    for _ in range(2):
        s = Suite(lid, style=style)
        for a in [None] + list(solve(s.level).actions):
            if a is not None:
                g = s.gesture_for(int(a))
                picked = s.clone()
                picked.dispatch(g["actions"][0])          # the screw selected, the hint shown
                assert picked.ui["selected"] is not None and picked.ui["hint"]
                check(picked, None, (a, "selected"))
                s.dispatch(g)
            for t in [(an["t0"] + an["t1"]) // 2 for an in s.anims] + [None]:
                check(s, t, (a, t))
        assert s.complete
    d = r.drawing(s)
    n = len(solve(s.level).actions)
    assert known > 20 and d._composed and len(d._at_rest) > 2 * n
    # from each state at rest to the next move's screw selected: the second play finds the
    # boxes to compose kept from the first
    assert d.changes_reused >= n - 1, (d.changes_reused, n)


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_color_connect_path_sprites_trimmed_blend_as_drawn(style):
    """Color Connect's path sprites are cut down to the box of the pixels they do not leave
    fully transparent: blended over any pixels (here noise, on a 32-bit surface and the
    frame's 24-bit kind) they give what the sprite drawn in its whole cell box gives, and
    the box is smaller (so a path that comes or goes changes a smaller box of the frame)."""
    from longpuzzle.render.frame import draw_sprite
    from longpuzzle.solvers import solve
    rng = np.random.default_rng(5)
    r = Renderer(style)
    s = Suite("color_connect/hard/1", style=style)
    r.render(s)
    d = r.drawing(s)
    u = s.game_ui()
    for a in solve(s.level, state=s.session.state.copy()).actions:
        s.session.apply_action(int(a))
    routes = d.completed_routes(np.asarray(s.session.state))
    assert len(routes) == u.k
    shrunk = 0
    for ci, cells in routes:
        for completed, part in ((True, cells), (False, cells[:max(2, len(cells) // 2)])):
            sp, box = d.path_sprite(ci, part, completed)
            whole = d._cells_box(part, u.pitch * 0.75)
            ref = draw_sprite(r.proj, whole, lambda p: d.draw_path_piece(p, ci, part, completed))
            shrunk += _trimmed_blends_as_drawn(sp, box, ref, whole, rng, (ci, completed))
    assert shrunk >= u.k


def _trimmed_blends_as_drawn(sp, box, ref, whole, rng, what) -> bool:
    """Asserts that sprite ``sp`` at px ``box`` (trimmed) lies inside ``whole``, the box
    sprite ``ref`` was drawn in, and blended over noise on a 32-bit and a 24-bit surface
    gives the pixels ``ref`` gives; whether its box is smaller."""
    bx0, by0, bx1, by1 = whole
    assert bx0 <= box[0] and by0 <= box[1] and box[2] <= bx1 and box[3] <= by1, what
    noise = rng.integers(0, 256, (by1 - by0, bx1 - bx0, 3), dtype=np.uint8)    # (h, w, RGB)
    for depth in (32, 24):
        got, want = (pygame.Surface((bx1 - bx0, by1 - by0), 0, depth) for _ in range(2))
        for surf in (got, want):
            pygame.surfarray.blit_array(surf, noise.transpose(1, 0, 2))
        want.blit(ref, (0, 0))
        got.blit(sp, (box[0] - bx0, box[1] - by0))
        assert np.array_equal(pygame.surfarray.array3d(got), pygame.surfarray.array3d(want)), (what, depth)
    return (box[2] - box[0]) * (box[3] - box[1]) < (bx1 - bx0) * (by1 - by0)


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_rush_hour_vehicle_sprites_trimmed_blend_as_drawn(style):
    """Rush Hour's vehicle sprites are cut down to the box of the pixels they do not leave
    fully transparent: blended over any pixels (noise, on a 32-bit surface and the frame's
    24-bit kind) they give what the sprite drawn in its whole box (room for the 3d body and
    its shadow) gives, at rest and at a fractional position, and their boxes are smaller
    (so a vehicle that moves changes a smaller box of the frame)."""
    from longpuzzle.render.frame import draw_sprite
    rng = np.random.default_rng(7)
    r = Renderer(style)
    s = Suite("rush_hour/easy/1", style=style)
    r.render(s)
    d = r.drawing(s)
    shrunk = total = 0
    for v, at in enumerate(np.asarray(s.session.state)):
        for pos in (float(at), float(at) + 0.37):
            sp, box = d._sprite(v, pos)
            whole = d.sprite_box(v, pos)
            assert sp.get_bounding_rect().size == sp.get_size() == (box[2] - box[0], box[3] - box[1])
            ref = draw_sprite(r.proj, whole, lambda p: d.draw_vehicle(p, v, pos), d.colour[v])
            shrunk += _trimmed_blends_as_drawn(sp, box, ref, whole, rng, (v, pos))
            total += 1
    assert total >= 4 and shrunk == total


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_bolt_unscrew_sprites_trimmed_blend_as_drawn(style):
    """Bolt Unscrew's board and screw sprites are cut down to the box of the pixels they do
    not leave fully transparent: run-length encoded as the frames blend them, over any pixels
    (noise, on a 32-bit surface - the region's - and the frame's 24-bit kind) they give what
    the sprite drawn in its whole box (piece_box, screw_box: room for a turned board, the 3d
    shadow, a screw's ring and lift) gives, and the screws' boxes are smaller (so a screw
    that comes or goes changes a smaller box of the frame)."""
    from longpuzzle.puzzles.bolt_unscrew import N_ANG, Q
    from longpuzzle.render.frame import draw_sprite
    r, s = Renderer(style), Suite("bolt_unscrew/hard/1", style=style)
    r.render(s)
    d, u, st = r.drawing(s), s.game_ui(), np.asarray(s.session.state)
    rng = np.random.default_rng(11)
    shrunk = total = 0
    for p in range(d.nP):
        b = d.nA + p * d.ss
        qx, qy, qt = int(st[b + 1]), int(st[b + 2]), int(st[b + 3])
        for turn in (0, N_ANG // 7):                       # as laid out, and turned
            sp, x0, y0, x1, y1 = d._piece_sprite(p, qx, qy, qt + turn, keep=False)
            cx, cy, deg = qx / Q, qy / Q, (qt + turn) * 360.0 / N_ANG
            whole = d.piece_box(p, cx, cy, deg)
            ref = draw_sprite(r.proj, whole, lambda pt: d.draw_piece(pt, p, cx, cy, deg), key_colour=(60, 40, 20))
            ref.set_alpha(255, pygame.RLEACCEL)
            _trimmed_blends_as_drawn(sp, (x0, y0, x1, y1), ref, whole, rng, (p, turn))
            total += 1
    zs = d._screw_heights(st)
    screws = 0
    for a, (x, y) in enumerate(u.anchors[:3]):
        for lifted in (False, True):
            sp, x0, y0, x1, y1 = d._screw_sprite(x, y, zs[a], lifted, lifted, keep=False)
            whole = d.screw_box(x, y, zs[a], lifted)
            ref = draw_sprite(r.proj, whole, lambda pt: d.draw_screw(pt, x, y, zs[a], lifted, lifted),
                              key_colour=(62, 66, 72))
            ref.set_alpha(255, pygame.RLEACCEL)
            shrunk += _trimmed_blends_as_drawn(sp, (x0, y0, x1, y1), ref, whole, rng, (a, lifted))
            screws += 1
    assert total >= 4 and screws == 6 and shrunk == screws


@pytest.mark.parametrize("style", ["2d", "3d"])
def test_render_delta_since_a_suites_own_frame_holds_with_other_suites_between(style):
    """Two suites on one renderer, drawn in turn (one on the same level a move behind, then
    on another level): render_delta(since=) gives each frame's delta relative to its own
    suite's frame before, and it holds every changed pixel; known for most frames."""
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.solvers import solve
    known = total = 0
    for game in builtin_catalog().games():
        lids = builtin_catalog().level_ids(game)
        r = Renderer(style)
        pairs = [(lids[0], lids[0]), (lids[0], lids[1])]
        for la, lb in pairs:
            a, b = Suite(la, style=style), Suite(lb, style=style)
            prev = {}
            plans = {id(s): list(solve(s.level, state=s.session.state.copy()).actions) for s in (a, b)}
            for k in range(8):
                for s in (a, b) if k % 3 else (a, b, a):
                    if plans[id(s)] and not s.complete:
                        s.dispatch(s.gesture_for(int(plans[id(s)].pop(0))))
                    for t in [(an["t0"] + an["t1"]) // 2 for an in s.anims] + [None]:
                        f, d = r.render_delta(s, t, since=prev.get(id(s)))
                        if id(s) not in prev:              # (its first frame: relative to the renderer's last)
                            prev[id(s)] = f
                            continue
                        total += 1
                        if d is not None:
                            known += 1
                            _assert_delta_holds(f, d, prev[id(s)], (game, la, lb, k, t))
                        prev[id(s)] = f
    assert known > total // 2, (known, total)

