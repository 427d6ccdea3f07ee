"""Bolt Unscrew levels: boards screwed onto a grid of anchors, certified by the solvers.

A level is drawn like the catalogue's: wooden boards (collision height 56 px, holes 36 px in
from each end, as every catalogue board) lie horizontally or vertically across anchors of a
grid (76 or 80 px apart, so no two touch boxes of 64 px overlap), each hole pinned by the screw of
the anchor under it; boards are stacked in drawing order, two boards may share an anchor (one
screw pins both, as easy/5's "shared screw"), and the wood of a board may cover empty anchors
(a covered hole is blocked until the board has gone: the puzzle's ordering). A few empty
anchors lie where no board covers them, so the first move has somewhere to go. No board's
wood covers a screw it is not pinned by (the screw would pass through it).

Reverse play does not help here: the quasi-static physics (released boards fall onto the
pegs below, resting pieces block holes) makes a move's inverse rarely a legal move, so every
draw is certified by search and unsolvable or out-of-tier draws are drawn again.

Certificates (``certify``):
  * tiers with an upper end on the optimum (easy): the whole state graph up to GRAPH_BUDGET
    states (solvers.profile.graph_profile: the optimum, states, exhaustive dead-end density,
    optimal first moves), or the optimum proven by its whole first layers past it (states
    then a lower bound, dead ends sampled); a draw neither proves is drawn again.
  * tiers defined by proven bounds (hard, beyond; the catalogue's hard levels are proven by
    bounds too): lower bound = the number of anchors whose screws pin a piece (each must be
    the source of a move: only moving a screw out of an anchor removes the pins there, and a
    move empties one anchor), upper bound = the length of a solution found by the solver's
    compiled best-first search and replayed through the rules; dead ends sampled by random
    play (solvers.profile.sampled_dead_end_density, SAMPLE_WALKS walks).

Shapes (from the catalogue tier): boards, screws and anchors of a catalogue level; a draw
takes up to that many boards (easy: at least one) so the tier's range of lengths is covered.
Layout: the grid spans x 110-430, y 200-760 (easy, 80 px apart) or x 80-460, y 165-773 (hard,
beyond, 76 px apart) of the 540 x 960 frame: every board inside the screen's play zone, every
touch box below the header buttons and above the instruction line.
"""

from __future__ import annotations

import random

from longpuzzle.solvers.generators.base import Generator, TierSpec

PITCH_SMALL, PITCH_LARGE = 80.0, 76.0   # px between grid anchors (touch boxes are 64 px)
BOARD_H = 56.0                 # collision height of every catalogue board
END = 36.0                     # px from a board's end to its end hole
COVER = 20.0                   # px: an anchor this close to a board's wood counts as covered
# cols, rows, x0, y0, pitch: every board (ends 36 px past its end holes, sides 28 px) lies
# inside the screen's play zone (puzzles.bolt_unscrew.PLAY_ZONE, x 20-520, y 120-820)
GRID_SMALL = (5, 8, 110.0, 200.0, PITCH_SMALL)
GRID_LARGE = (6, 9, 80.0, 165.0, PITCH_LARGE)
GRAPH_BUDGET = 12_000          # states of the whole-graph certificate (easy)
SEARCH_BUDGET = 20_000         # states of the best-first search for the upper bound (bounded tiers)
SAMPLE_WALKS = 50              # random-play walks of the sampled dead-end density (bounded tiers)
SAMPLE_BUDGET = 5_000          # states per certificate of a sampled state


def pinning_anchors(level, state) -> int:
    """Anchors whose screw pins a piece still attached: a proven lower bound on the moves
    left (every pin at an anchor goes only when its screw moves out, one anchor a move)."""
    lv = level.lv
    na, npc, holes, ss = int(lv[0]), int(lv[1]), int(lv[2]), int(lv[11])
    pins = set()
    for p in range(npc):
        b = na + p * ss
        if int(state[b]) == 0:
            pins.update(int(state[b + 4 + k]) for k in range(holes) if int(state[b + 4 + k]) >= 0)
    return len(pins)


class BoltUnscrewGenerator(Generator):
    game = "bolt_unscrew"
    version = 1
    beyond = TierSpec("bolt_unscrew", "beyond", {"optimal": (32, None)},
                      tuple({"boards": b, "pads": 0, "screws": s, "anchors": a} for b, s, a in
                            ((19, 34, 42), (20, 36, 44), (21, 36, 44))),
                      "above hard (a proven 11-31 moves at least): at least 32 moves, proven by the "
                      "32 or more anchors whose screws pin a board")
    # easy: the profile is the whole state graph (an exhaustive search, or its whole first
    # layers past the optimum); bounded tiers: bounds, not an optimum, to compare with
    confirm_with_solver = False

    def shape(self, level):
        ex = level.extra
        pieces = ex["pieces"]
        return {"boards": sum(1 for p in pieces if p["kind"] == 0), "pads": sum(1 for p in pieces if p["kind"] == 1),
                "screws": int(level.initial[:int(level.lv[0])].sum()), "anchors": int(level.lv[0])}

    @staticmethod
    def bounded(tier) -> bool:
        """Whether a tier is certified by proven bounds (hard, beyond: spaces far past any
        whole-graph search) rather than the whole graph (easy)."""
        return tier.name != "easy"

    # ---- drawing -------------------------------------------------------------
    def propose(self, rng: random.Random, tier: TierSpec):
        sh = rng.choice(tier.shapes)
        bounded = self.bounded(tier)
        cols, rows, x0, y0, pitch = GRID_LARGE if bounded else GRID_SMALL
        want = int(sh["boards"]) if bounded else rng.randint(1, max(1, int(sh["boards"])))
        pos = lambda c, r: (x0 + c * pitch, y0 + r * pitch)     # noqa: E731
        pins: set = set()                  # grid cells holding a screw
        covered: dict = {}                 # cell -> boards whose wood covers it (not their holes)
        boards = []
        for i in range(want):
            for _ in range(60):
                vertical = rng.random() < 0.45
                span = rng.choice((1, 1, 2, 2, 3)) if not bounded else rng.choice((1, 2, 2, 3))
                if vertical:
                    c, r = rng.randrange(cols), rng.randrange(rows - span)
                    cells = [(c, r + k) for k in range(span + 1)]
                else:
                    c, r = rng.randrange(cols - span), rng.randrange(rows)
                    cells = [(c + k, r) for k in range(span + 1)]
                holes = [cells[0], cells[-1]]
                if span >= 2 and rng.random() < 0.25:
                    holes.insert(1, cells[len(cells) // 2])
                under = [x for x in cells if x not in holes]
                # no screw under its wood that does not pin it; no covered cell becomes a hole
                if any(x in pins for x in under) or any(x in covered for x in holes):
                    continue
                # a new board's holes: mostly fresh anchors, sometimes one shared with a board
                shared = sum(1 for x in holes if x in pins)
                if shared > 1 or (shared == 1 and rng.random() < 0.6):
                    continue
                break
            else:
                return None
            pins.update(holes)
            for x in under:
                covered.setdefault(x, []).append(i)
            (ax, ay), (bx, by) = pos(*cells[0]), pos(*cells[-1])
            cx, cy = (ax + bx) / 2, (ay + by) / 2
            half = span * pitch / 2
            offs = []
            for h in holes:
                hx, hy = pos(*h)
                d = (hy - cy) if vertical else (hx - cx)
                offs.append([round(d, 1), 0.0])
            boards.append({"id": f"b{i + 1}", "x": cx, "y": cy, "rotation_degrees": 90 if vertical else 0,
                           "collision_width": 2 * (half + END), "collision_height": BOARD_H,
                           "render_order": i + 1, "texture_index": 1 + rng.randrange(3),
                           "hole_offsets": offs, "attached_anchors": [f"a{h[0]}_{h[1]}" for h in holes]})
        # empty anchors: some under wood (blocked until it goes), at least one in the open
        free_cells = [(c, r) for c in range(cols) for r in range(rows) if (c, r) not in pins]
        open_cells = [x for x in free_cells if x not in covered]
        if not open_cells:
            return None
        n_open = min(len(open_cells), rng.randint(1, 2) if not bounded else rng.randint(3, 6))
        empties = set(rng.sample(open_cells, n_open))
        hidden = [x for x in covered if x not in pins]
        if hidden:
            empties.update(rng.sample(hidden, rng.randint(0, len(hidden) if not bounded else len(hidden) // 2)))
        anchors = [{"id": f"a{c}_{r}", "x": pos(c, r)[0], "y": pos(c, r)[1], "occupied": (c, r) in pins}
                   for c in range(cols) for r in range(rows) if (c, r) in pins or (c, r) in empties]
        return {"anchors": anchors, "boards": boards, "anchor_pads": []}

    # ---- certificates --------------------------------------------------------
    def certify(self, level, tier, context=None):
        from longpuzzle.solvers.profile import graph_profile
        if not self.bounded(tier):
            return graph_profile(level, budget=GRAPH_BUDGET, bounded=False)
        return self._bounds(level, tier)

    def _bounds(self, level, tier):
        """Proven bounds: pinning anchors below, a replayed best-first solution above."""
        import time

        from longpuzzle.engine.registry import get_puzzle
        from longpuzzle.solvers.core import check_solution
        from longpuzzle.solvers.knowledge.bolt_unscrew import KNOWLEDGE, best_first
        from longpuzzle.solvers.profile import Profile, sampled_dead_end_density

        t0 = time.perf_counter()
        p = get_puzzle(self.game)
        lb = pinning_anchors(level, level.initial)
        legal = p.legal_moves(level, level.initial)
        prof = Profile(level.id, level.game, "unknown", lower_bound=lb, states=0, first_moves=len(legal),
                       method="bounds: pinning anchors, best-first")
        lo = tier.accept.get("optimal", (None, None))[0]
        if lo is not None and lb < lo:
            return prof                      # cannot be proven long enough: drawn again
        st, acts, n, _ = best_first(level, level.initial, SEARCH_BUDGET, *KNOWLEDGE.order, prune_awake=True)
        prof.states = int(n)
        if st != 1 or not check_solution(level, level.initial, acts):
            return prof
        prof.status = "solvable"
        prof.upper_bound = len(acts)
        if prof.upper_bound == lb:
            prof.optimal = lb
        prof.solution = p.format_moves(level, acts)
        dens, k = sampled_dead_end_density(level, walks=SAMPLE_WALKS, certify_budget=SAMPLE_BUDGET)
        prof.dead_end_density, prof.dead_end_samples, prof.dead_end_method = dens, k, "sampled"
        prof.seconds = time.perf_counter() - t0
        return prof

    def finish(self, record, level, profile):
        record["reference_solution"] = list(profile.solution)
        return record


GENERATOR = BoltUnscrewGenerator()
