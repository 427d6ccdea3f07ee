"""Nut and Bolt levels: random deals in the catalogue's form, certified and graded.

Like every catalogue level: K colours of ``capacity`` nuts each, dealt at random onto K full
bolts, plus two empty bolts (see ``deal``: a drawn "clump" share spreads deals over the tiers).
Reverse play cannot guarantee solvability more cheaply than the
exhaustive search that grades the level anyway (a move's inverse is only sometimes a legal
move), so every deal is certified by the solvers; unsolvable deals are drawn again.

Shapes (from the catalogue tier): bolts, capacity and drawing sizes of a catalogue level.
Layout: rows of bolts centred in the 430 x 932 authoring frame (4, 5 or 6 to a row for
large, regular or compact nuts), rows spaced by the bolt's height, all inside the play area
between the header buttons and the undo button.
"""

from __future__ import annotations

import math
import random

from longpuzzle.solvers.generators.base import Generator, TierSpec
from longpuzzle.puzzles.nut_and_bolt import PALETTE

PER_ROW = {"large": 4, "regular": 5, "compact": 6}
PITCH = {"large": 100.0, "regular": 80.0, "compact": 70.0}       # authoring px between bolts of a row
CENTRE_X, CENTRE_Y = 214.5, 525.0
TOP, BOTTOM = 150.0, 790.0                                       # authoring y: room for the bolts' tap boxes


def layout(n: int, cap: int, size: str, nut_step: float, cap_base_offset: float) -> list[tuple[float, float]] | None:
    """(x, base_y) of n bolts in rows (authoring px), or None if they do not fit."""
    for sz in (size, "regular", "compact"):
        per = PER_ROW[sz]
        rows = math.ceil(n / per)
        height = cap_base_offset + cap * nut_step + 28          # base to the top of the lifted run
        gap = height + 40
        span = (rows - 1) * gap + height
        if span > BOTTOM - TOP:
            continue
        out = []
        counts = [n // rows + (1 if r < n % rows else 0) for r in range(rows)]
        for r, m in enumerate(counts):
            base = CENTRE_Y + height / 2 + (r - (rows - 1) / 2) * gap
            for i in range(m):
                out.append((round(CENTRE_X + (i - (m - 1) / 2) * PITCH[sz], 1), round(base, 1)))
        return out
    return None


def deal(rng: random.Random, colours: list[str], cap: int, clump: float) -> list[str]:
    """The nuts in dealing order (bolt by bolt, bottom to top): each nut is of the previous
    nut's colour with probability ``clump`` (while that colour has nuts left), else of a
    colour drawn in proportion to the nuts left. clump 0 is a uniform shuffle; larger values
    deal longer runs of one colour, which give shorter solutions and fewer dead ends, so a
    draw of clump spreads the deals over every tier's figures."""
    left = dict.fromkeys(colours, cap)
    out: list[str] = []
    while len(out) < cap * len(colours):
        prev = out[-1] if out else None
        if prev is not None and left[prev] and rng.random() < clump:
            c = prev
        else:
            pool = [c for c in colours for _ in range(left[c])]
            c = rng.choice(pool)
        left[c] -= 1
        out.append(c)
    return out


CLUMP_MAX = 0.6
# the clump shares that give each tier's figures most often (measured): the catalogue's hard
# levels have far fewer dead ends than uniform deals of their size
CLUMP = {"easy": (0.0, 0.2), "medium": (0.0, 0.1), "hard": (0.25, 0.6), "extreme": (0.0, 0.05),
         "nightmare": (0.0, 0.05), "beyond": (0.0, 0.0)}


class NutAndBoltGenerator(Generator):
    game = "nut_and_bolt"
    version = 1
    beyond = TierSpec("nut_and_bolt", "beyond", {"optimal": (64, 90), "states": (None, 3_000_000)},
                      tuple({"bolts": b, "capacity": c, "visual_size": "compact", "nut_step": 20, "cap_base_offset": 43}
                            for b, c in ((12, 8), (13, 7), (12, 7), (13, 8))),
                      "above nightmare (56 moves): 64-90 moves, 12-13 bolts of 7-8 nuts")

    def shape(self, level):
        ex = level.extra
        return {"bolts": int(level.lv[0]), "capacity": int(level.lv[1]), "visual_size": ex.get("visual_size", "regular"),
                "nut_step": ex.get("nut_step", 24), "cap_base_offset": ex.get("cap_base_offset", 45)}

    def propose(self, rng: random.Random, tier: TierSpec):
        sh = rng.choice(tier.shapes)
        n, cap = int(sh["bolts"]), int(sh["capacity"])
        k = n - 2
        if not 1 <= k <= len(PALETTE):
            return None
        names = [name for name, _, _ in PALETTE]
        colours = rng.sample(names, k)
        lo, hi = CLUMP.get(tier.name, (0.0, CLUMP_MAX))
        nuts = deal(rng, colours, cap, rng.uniform(lo, hi))
        pos = layout(n, cap, sh["visual_size"], float(sh["nut_step"]), float(sh["cap_base_offset"]))
        if pos is None:
            return None
        bolts = []
        for b in range(n):
            stack = nuts[b * cap:(b + 1) * cap] if b < k else []
            bolts.append({"x": pos[b][0], "base_y": pos[b][1], "nuts": stack})
        # no bolt may start sorted (a full bolt of one colour is no puzzle)
        if any(len(bl["nuts"]) == cap and len(set(bl["nuts"])) == 1 for bl in bolts):
            return None
        return {"capacity": cap, "visual_size": sh["visual_size"], "nut_step": sh["nut_step"],
                "cap_base_offset": sh["cap_base_offset"], "bolts": bolts}


GENERATOR = NutAndBoltGenerator()
