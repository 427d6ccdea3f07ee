"""Drawing of Sokoban in both render styles: "2d" flat, "3d" with raised walls and boxes on
the tilted table (the Painter extrudes what is given a height only in 3d).

The floor, the goals and the walls never change: they are drawn once into the static layer.
Boxes and the keeper are small sprites, cached by what they show and where (a box on a goal
is drawn in the goal's colour), blitted back to front each frame; while a move animates, the
keeper (and the box it pushes) are drawn between their squares at the animation's phase.
All positions come from the level's SokobanUI (ui.py): the geometry the engine hit-tests
with.
"""

from __future__ import annotations

import numpy as np

from longpuzzle.engine.geometry import Rect
from longpuzzle.render.frame import GameDrawing, draw_sprite, px_box, trim_sprite

from longpuzzle_sokoban.rules import GOAL, HEADER, STEPS, WALL

FLOOR = (236, 229, 214)
FLOOR_LINE = (214, 204, 184)
GOAL_MARK = (76, 175, 80)
WALL_SIDE, WALL_TOP = (121, 85, 72), (161, 120, 100)
BOX, BOX_TOP, BOX_LINE = (196, 132, 52), (230, 170, 80), (140, 90, 30)
BOX_DONE, BOX_DONE_TOP = (56, 142, 60), (102, 187, 106)
KEEPER, KEEPER_TOP = (30, 90, 180), (66, 133, 244)
WALL_Z, BOX_Z, KEEPER_Z = 20.0, 16.0, 14.0


class SokobanDrawing(GameDrawing):
    background = ((250, 243, 230), (232, 218, 196))
    accent = (121, 85, 72)

    def __init__(self, ui, proj):
        super().__init__(ui, proj)
        lv = ui.level.lv
        self.kinds = np.asarray(lv[HEADER:HEADER + ui.rows * ui.cols])
        self._sprites: dict = {}

    # -- static: floor, goals, walls ----------------------------------------------------
    def draw_static(self, p):
        u = self.ui
        s = u.cell
        for cell in np.flatnonzero(self.kinds != WALL):
            r = u.cell_rect(int(cell))
            p.poly([(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], FLOOR)
            p.outline([(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1)], FLOOR_LINE, width=1.0)
            if self.kinds[cell] == GOAL:
                x, y = r.center
                p.circle(x, y, s * 0.18, GOAL_MARK, outline=GOAL_MARK, width=1.5)
        # walls back to front (top rows first), so nearer walls cover the ones behind in 3d
        for cell in np.flatnonzero(self.kinds == WALL):
            if not self._touches_floor(int(cell)):
                continue                   # void far from the floor: nothing to draw
            r = u.cell_rect(int(cell))
            p.rrect(Rect(r.x0 + 1, r.y0 + 1, r.x1 - 1, r.y1 - 1), s * 0.12, WALL_SIDE, height=WALL_Z, top=WALL_TOP)

    def _touches_floor(self, cell: int) -> bool:
        u = self.ui
        r0, c0 = divmod(cell, u.cols)
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                r, c = r0 + dr, c0 + dc
                if 0 <= r < u.rows and 0 <= c < u.cols and self.kinds[r * u.cols + c] != WALL:
                    return True
        return False

    # -- dynamic: boxes and the keeper ---------------------------------------------------
    def _piece(self, p, kind: str, r: float, c: float) -> None:
        u = self.ui
        x, y = u.cell_center(r, c)
        s = u.cell
        if kind == "keeper":
            p.circle(x, y, s * 0.32, KEEPER, height=KEEPER_Z, top=KEEPER_TOP, outline=(20, 50, 110), width=1.5)
            z = KEEPER_Z if p.is_3d else 0.0
            for ex in (-0.1, 0.1):
                p.circle(x + ex * s, y - 0.06 * s, s * 0.055, (255, 255, 255), z=z)
            return
        side, top = (BOX_DONE, BOX_DONE_TOP) if kind == "done" else (BOX, BOX_TOP)
        h = s * 0.4
        box = Rect(x - h, y - h, x + h, y + h)
        p.rrect(box, s * 0.08, side, height=BOX_Z, top=top, outline=BOX_LINE, width=1.5)
        z = BOX_Z if p.is_3d else 0.0
        p.line((box.x0 + 4, box.y0 + 4), (box.x1 - 4, box.y1 - 4), BOX_LINE, 1.5, z=z)
        p.line((box.x1 - 4, box.y0 + 4), (box.x0 + 4, box.y1 - 4), BOX_LINE, 1.5, z=z)

    def _sprite(self, kind: str, r: float, c: float):
        key = (kind, float(r), float(c))
        got = self._sprites.get(key)
        if got is None:
            u = self.ui
            x, y = u.cell_center(r, c)
            half = u.cell * 0.5
            z = max(BOX_Z, KEEPER_Z) * 1.3 if self.proj.is_3d else 0.0
            box = px_box(self.proj, [(x - half, y - half), (x + half + z, y - half),
                                     (x + half + z, y + half + z), (x - half, y + half + z)], zmax=z, margin=3)
            got = trim_sprite(draw_sprite(self.proj, box, lambda p: self._piece(p, kind, r, c)), box)
            if len(self._sprites) > 2048:
                self._sprites.clear()
            self._sprites[key] = got
        return got

    def pieces(self, state, anim, phase) -> list[tuple[str, float, float]]:
        """(kind, row, col) of what is drawn over the board: "box" / "done" (a box on its
        goal) and "keeper", fractional while a move animates."""
        u = self.ui
        cols = u.cols
        keeper = int(state[0])
        moving = {}
        if anim is not None and 0.0 < phase < 1.0:
            before = np.asarray(anim["before"])
            k0 = int(before[0])
            if k0 != keeper:
                dr, dc = STEPS[int(anim["action"])]
                back = 1.0 - phase
                moving[("keeper", keeper)] = (-dr * back, -dc * back)
                if before[2 + keeper] and not state[2 + keeper]:      # a push: the box left there
                    moving[("box", keeper + dr * cols + dc)] = (-dr * back, -dc * back)
        out = []
        for cell in np.flatnonzero(np.asarray(state[2:2 + u.rows * cols])):
            r, c = divmod(int(cell), cols)
            odr, odc = moving.get(("box", int(cell)), (0.0, 0.0))
            kind = "done" if self.kinds[cell] == GOAL and not (odr or odc) else "box"
            out.append((kind, r + odr, c + odc))
        r, c = divmod(keeper, cols)
        odr, odc = moving.get(("keeper", keeper), (0.0, 0.0))
        out.append(("keeper", r + odr, c + odc))
        out.sort(key=lambda k: (k[1], k[2]))          # back to front
        return out

    def draw_dynamic(self, f, suite, state, t, anim, phase):
        for kind, r, c in self.pieces(state, anim, phase):
            sprite, box = self._sprite(kind, r, c)
            f.blit(sprite, box[0], box[1])


DRAWING = SokobanDrawing
