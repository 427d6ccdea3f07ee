"""Bolt Unscrew (``bolt_unscrew``): move screws between anchors until every wooden board
and pad has dropped off the frame. Rules: ../shared/reference/longpuzzlebench/RULES.md
section 2; level data converted from levels/bolt_unscrew.json.

The original runs Box2D. This module replaces the physics by a deterministic
QUASI-STATIC model that settles completely after every move, computed with integer
(fixed-point) arithmetic only, so compiled and pure-Python runs (NUMBA_DISABLE_JIT=1) give
bit-identical states.

Units
-----
* positions: Q8 fixed point, 1/256 design px (540 x 960 frame, origin top-left, y down);
* angles: integer units of 1/20 degree (``N_ANG = 7200`` per turn). A pose angle ``t``
  maps a piece's local point ``(lx, ly)`` (local y DOWN, i.e. ``ly = -hole_offset.y`` of the
  data) to ``centre + R(t) (lx, ly)`` with ``R`` the ordinary rotation matrix in the y-down
  frame (positive = clockwise on screen), which is exactly the data's local->world mapping;
* cos / sin come from a Q16 table stored in ``lv`` (``round(65536 cos(2 pi i / N_ANG))``);
  products are rounded with ``(v + 32768) >> 16``.

Model (the rules as this module plays them)
-----
* A MOVE ``a>b`` takes the screw out of occupied anchor a and puts it into empty anchor b,
  which must be usable (below). Then, as RULES 2.4 says: every pin at a is removed; every
  piece still on the board (attached, or released and resting) with a hole within 2.5 px
  of b is pinned at b; a piece that lost a pin at a and got none at b re-attaches each free
  hole lying within 2.5 px of another occupied anchor. Then the board SETTLES (below).
* A hole is USABLE when it is empty and passes the blocking test of RULES 2.3: samples at
  its centre and on rings of 12 / 24 / 32 points at 0.35 / 0.68 / 1.0 of r = 19.75 px; a
  sample is solid when it lies on the wood of a piece still on the board (board: its
  collision box with corner radius 11 px; pad: its full disc) outside that piece's own
  painted holes (radius 20.25 px). Pieces are tested top render order first, but a hole
  cuts only its own piece, so the order does not change the answer. Blocked if any centre /
  inner / middle sample is solid, or >= 5 outer samples are; on the outer ring only, a
  piece with a hole within 2.5 px of the anchor is ignored. So a hole stays usable after
  its screw left only while every piece over it still has a hole there: pieces held by two
  or more other screws keep theirs aligned, a piece that swings away uncovers it, and a
  piece that comes to rest over it (a swinging board stopped by a peg, a released pad
  sitting on the peg below) spends it.
* SETTLE (RULES 2.5; Box2D replaced by a deterministic quasi-static model, integers only),
  passes over the pieces in index order (boards in level order, then pads) until a pass
  changes nothing. Only the solid pegs (radius 16 px) of occupied anchors stop pieces;
  pieces never collide with each other.
    - a piece that has never had a pin removed or added is ASLEEP and keeps its authored
      pose whatever its pins (the original sleeps every pinned body after loading, so a
      level does not swing before the first move); the first move that removes or adds one
      of its pins wakes it for good.
    - >= 2 pins: the piece stays (its holes stay on their anchors).
    - 1 pin: it swings about the pin towards the angle at which its centre hangs straight
      below the pin, in steps of ``SWING_STEP`` (0.25 deg) along the shorter way (exactly
      upside down: clockwise, i.e. positive). Before each step every occupied peg that does
      not pin the piece is tested (disc of radius 16 px against the piece's collision shape,
      holes ignored); the swing stops at the last pose before a peg starts to overlap (a peg
      that already overlaps does not stop it until it has been left). A pin at the centre
      (hole within 1 px of the centre of mass) gives no torque: the piece stays. A board
      within 16 deg of vertical pinned within 48 px of its top end and above its centre
      hangs as it is (the original stops and sleeps it); one pinned below its centre
      topples to the side the original's one-off nudge picks (outward for a post more than
      30 px off the middle of the frame unless it clearly leans the other way, else the
      side its free top end leans to).
    - 0 pins: the piece is RELEASED (status 1) and FALLS (``_fall``): straight down in 1 px
      steps; a board tilted more than 3.5 deg (the friction angle of wood on a peg) slides
      down along its length when a peg stops it; otherwise it rests when its centre lies
      over its contacts (within
      0.25 px: across two pegs, or a pad exactly above a peg as the grid levels have them;
      Box2D keeps an exactly centred body balanced and rolls one a pixel off down),
      otherwise it slides sideways off to the side its centre overhangs, or tips about the
      contact peg on that side when a peg is in the way, and rests when wedged. A resting piece falls on when a peg under it is
      taken away (only then: it stays where it came to rest otherwise), is pinned again
      by a screw put into an anchor under one of its holes, and blocks holes like any
      other piece. Released pieces keep their angle while falling
      (Box2D would also spin them; a released strip that slides sideways may land on
      another horizontal strip in the original: not modelled).
* EXIT / WIN (RULES 2.6): a released piece leaves (status 2) once its bounding circle (half
  diagonal or disc radius) plus 20 px lies wholly outside x in [-160, 700], y in [-140,
  1080]; a piece still pinned never leaves. The level is solved when every piece has left.
* DEADLOCK (RULES 2.6): not solved and no usable hole (``is_dead_end``; every state is
  settled, so nothing is pending). The original harness ends the level there
  (``harness_deadlock``: ``no_available_hole_deadlock``); the game itself never says so.
* PROGRESS (RULES 2.7): (left + 0.5 released and still on the board) / pieces.
* The renderer gets the settle's intermediate poses from ``move_trace`` (the same ``_move``
  kernel that ``step_into`` runs, with a trace buffer) through ``BoltUnscrew.settle_frames``.
* Speed shortcuts of the kernels never change a result: the blocking test leaves out pieces
  whose wood misses the sample disc or whose hole contains it (``_disc_clear``); a swing
  tests only pegs within reach of the pin, skips a peg for the steps in which it cannot
  reach the piece, and without a trace jumps over steps where every peg is clear; a fall
  moves in whole steps over clearances a conservative distance proves (``_gap``); a settle
  does not swing or drop again a piece that did not move in an earlier pass (its pose,
  pins and the pegs are unchanged, so it would again not move).

Departures of the earlier model from RULES.md, fixed here: a released piece left the board
at once (so pads never came to rest on the peg below and holes were almost never spent);
resting released pieces were left out of the blocking test; near-vertical single-pin boards
always took the shorter way (the original hangs top-pinned posts as they are and topples
bottom-pinned posts outward).

Level vector ``lv`` (int32)::

    lv[0]  nA   anchors              lv[1]  nP   pieces (boards then pads)
    lv[2]  H    max holes per piece  lv[3]  N_ANG (7200)
    lv[4]  SWING_STEP (5 units)      lv[5]  OA  offset of the anchor table
    lv[6]  OP   offset of pieces     lv[7]  PL  length of a piece record (8 + 3 H)
    lv[8]  OS   offset of samples    lv[9]  NS  number of samples (69)
    lv[10] OC   offset of cos table  lv[11] SS  state stride per piece (5 + H)
    lv[12] PEG_R  (Q8)               lv[13] HOLE_R (Q8)
    lv[14] TOL    (Q8, 2.5 px)       lv[15] first outer-ring sample index (37)
    lv[16] outer-ring solid threshold (5)
    lv[17] FALL_STEP (Q8, 1 px)      lv[18] BALANCE_TOL (Q8, 0.25 px)
    lv[19..22] exit rectangle x0, y0, x1, y1 (Q8)   lv[23] EXIT_EXTRA (Q8, 20 px)
    lv[24] near-vertical band (angle units, 16 deg) lv[25] TOP_FREE_GAP (Q8, 48 px)
    lv[26] SLIP_ANGLE (angle units, 3.5 deg)
    lv[OA + 2a], lv[OA + 2a + 1]     anchor a centre x, y (Q8)
    lv[OP + p*PL + 0..7]             kind (0 board, 1 pad), half-width, half-height,
                                     corner radius (pad: radius), render order, n holes,
                                     bounding radius, 0      (lengths Q8)
    lv[OP + p*PL + 8 + 3k + 0..2]    hole k: local x, local y (Q8, y down), beta = angle
                                     units of the vector hole -> centre in the local frame
                                     (-1 when the hole is at the centre of mass)
    lv[OS + 2i], lv[OS + 2i + 1]     blocking-test sample i offset from the anchor (Q8)
    lv[OC + i]                       round(65536 cos(2 pi i / N_ANG)), i < N_ANG

State ``s`` (int32, length nA + nP * SS)::

    s[a]                     1 if anchor a holds a screw, else 0          (a < nA)
    s[nA + p*SS + 0]         status of piece p: 0 attached (pinned), 1 released (no pin,
                             resting on pegs), 2 left (out of the frame)
    s[nA + p*SS + 1], +2     centre x, y (Q8)
    s[nA + p*SS + 3]         angle (units, 0 .. N_ANG-1)
    s[nA + p*SS + 4 + k]     anchor index pinning hole k, or -1             (k < H)
    s[nA + p*SS + 4 + H]     1 once the piece is awake (a pin of it changed), else 0

    e.g. nA=3, H=2:  [o0 o1 o2 | p0: st cx cy t pin0 pin1 aw | p1: st cx cy t pin0 pin1 aw | ...]

Action ``a = src * nA + dst``; text ``src_id>dst_id`` with the level's anchor ids.
"""

from __future__ import annotations

import math
import re
import sys

import numpy as np
from longpuzzle.engine.jit import njit

from longpuzzle.engine.fields import Fields, level_fail
from longpuzzle.engine.errors import MoveSyntaxError
from longpuzzle.engine.protocol import BAD_ACTION, OK, Level, Puzzle, Rejection

SOURCE_EMPTY, TARGET_OCCUPIED, TARGET_BLOCKED = 3, 4, 5
ATTACHED, RELEASED, LEFT = 0, 1, 2

Q = 256                      # position scale (1/256 px)
N_ANG = 7200                 # angle units per turn (1/20 degree)
SWING_STEP = 5               # 0.25 degree
PEG_RADIUS = 16.0            # 22 - 4 - 2
SOCKET_RADIUS = 19.75        # 22 - 0.25 - 2
HOLE_RADIUS = 20.25
ALIGN_TOL = 2.5
CORNER_RADIUS = 11.0
RINGS = ((0.35, 12), (0.68, 24), (1.0, 32))
OUTER_THRESHOLD = 5
FALL_STEP = 1.0              # px: a released piece falls / slides in steps of 1 px
BALANCE_TOL = 0.25           # px: a piece whose centre is within this of its support rests
SLIP_ANGLE = 3.5             # degrees: a released board tilted more slides down its length
                             # (atan of the mixed wood / peg friction sqrt(0.12 * 0.03))
EXIT_RECT = (20.0 - 180.0, 120.0 - 260.0, 520.0 + 180.0, 820.0 + 260.0)   # RULES 2.6
EXIT_EXTRA = 20.0            # px added to the bounding radius for the exit test
VERTICAL_BAND = 16.0         # degrees: "near vertical" for the single-pin rules of RULES 2.5
TOP_FREE_GAP = 48.0          # px: a pin this close to the top end of a vertical board hangs it
MAX_FALL_ITER = 8192         # bound of the steps of one fall (a guard; levels stay far below)
HEADER = 27
MAX_ANCHORS = 64
MAX_PIECES = 64
MAX_HOLES = 12
_ID_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")

# Speed-only constants of the kernels (they never change a result): the largest distance
# of an inner-ring / any blocking-test sample from the anchor (Q8, rounded up), and the
# safety margin (Q8) of the conservative shortcuts, far above the fixed-point rounding.
_RS_IN = int(math.ceil(SOCKET_RADIUS * RINGS[1][0] * Q)) + 2
_RS_OUT = int(math.ceil(SOCKET_RADIUS * RINGS[2][0] * Q)) + 2
_MARGIN = 48
# RULES 2.5 constants of the single-pin vertical-board rules (Q8): the frame centre x that
# decides "outward", the distance from it beyond which a post falls outward, the lean
# dead band, and the 2 px / 1 px thresholds of the original.
_CX = 270 * Q
_OUTWARD_BIAS = 30 * Q
_LEAN_DEADBAND = 18 * Q
_PX2 = 2 * Q
_PX1 = 1 * Q


# ---------------------------------------------------------------------------- kernels
@njit(cache=True)
def _cos(lv, t):
    return int(lv[int(lv[10]) + t])


@njit(cache=True)
def _sin(lv, t):
    n = int(lv[3])
    return int(lv[int(lv[10]) + (t - n // 4) % n])


@njit(cache=True)
def _rot(lv, x, y, t):
    """R(t) (x, y), Q8 in and out."""
    c = _cos(lv, t)
    s = _sin(lv, t)
    return (x * c - y * s + 32768) >> 16, (x * s + y * c + 32768) >> 16


@njit(cache=True)
def _unrot(lv, x, y, t):
    """R(-t) (x, y): world offset -> local frame."""
    c = _cos(lv, t)
    s = _sin(lv, t)
    return (x * c + y * s + 32768) >> 16, (y * c - x * s + 32768) >> 16


@njit(cache=True)
def _hole_world(lv, s, p, k):
    nA = int(lv[0])
    b = nA + p * int(lv[11])
    rb = int(lv[6]) + p * int(lv[7]) + 8 + 3 * k
    hx, hy = _rot(lv, int(lv[rb]), int(lv[rb + 1]), int(s[b + 3]))
    return int(s[b + 1]) + hx, int(s[b + 2]) + hy


@njit(cache=True)
def _near(lv, x, y, a):
    oa = int(lv[5])
    dx = x - int(lv[oa + 2 * a])
    dy = y - int(lv[oa + 2 * a + 1])
    tol = int(lv[14])
    return dx * dx + dy * dy <= tol * tol


@njit(cache=True)
def _peg_overlaps(lv, p, cx, cy, t, a):
    """Does the solid peg of anchor a overlap piece p posed at (cx, cy, t)?"""
    oa = int(lv[5])
    r = int(lv[6]) + p * int(lv[7])
    pr = int(lv[12])
    dx = int(lv[oa + 2 * a]) - cx
    dy = int(lv[oa + 2 * a + 1]) - cy
    bound = int(lv[r + 6]) + pr
    if dx * dx + dy * dy >= bound * bound:
        return False
    rc = int(lv[r + 3])
    if int(lv[r]) == 1:
        return dx * dx + dy * dy < (rc + pr) * (rc + pr)
    lx, ly = _unrot(lv, dx, dy, t)
    ex = abs(lx) - (int(lv[r + 1]) - rc)
    ey = abs(ly) - (int(lv[r + 2]) - rc)
    if ex < 0:
        ex = 0
    if ey < 0:
        ey = 0
    return ex * ex + ey * ey < (rc + pr) * (rc + pr)


@njit(cache=True)
def _solid_at(lv, s, p, x, y):
    """Is world point (x, y) on the wood of piece p (outside its holes)?"""
    nA = int(lv[0])
    b = nA + p * int(lv[11])
    r = int(lv[6]) + p * int(lv[7])
    dx = x - int(s[b + 1])
    dy = y - int(s[b + 2])
    bound = int(lv[r + 6])
    if dx * dx + dy * dy > bound * bound:
        return False
    rc = int(lv[r + 3])
    lx, ly = _unrot(lv, dx, dy, int(s[b + 3]))
    if int(lv[r]) == 1:
        if lx * lx + ly * ly > rc * rc:
            return False
    else:
        hw = int(lv[r + 1])
        hh = int(lv[r + 2])
        if abs(lx) > hw or abs(ly) > hh:
            return False
        qx = abs(lx) - (hw - rc)
        qy = abs(ly) - (hh - rc)
        if qx > 0 and qy > 0 and qx * qx + qy * qy > rc * rc:
            return False
    hr = int(lv[13])
    for k in range(int(lv[r + 5])):
        ex = lx - int(lv[r + 8 + 3 * k])
        ey = ly - int(lv[r + 9 + 3 * k])
        if ex * ex + ey * ey < hr * hr:
            return False
    return True


@njit(cache=True)
def _disc_clear(lv, p, lx, ly, rad):
    """Speed-up of the blocking test (never changes its answer): True when no point within
    ``rad`` of the local point (lx, ly) can be solid on piece p, i.e. the disc misses the
    wood or lies inside one of the holes. ``rad`` includes a margin far above the rounding
    difference between unrotating a sample and unrotating the anchor."""
    r = int(lv[6]) + p * int(lv[7])
    rc = int(lv[r + 3])
    if int(lv[r]) == 1:
        if lx * lx + ly * ly > (rc + rad) * (rc + rad):
            return True
    else:
        qx = abs(lx) - (int(lv[r + 1]) - rc)
        qy = abs(ly) - (int(lv[r + 2]) - rc)
        if qx < 0:
            qx = 0
        if qy < 0:
            qy = 0
        if qx * qx + qy * qy > (rc + rad) * (rc + rad):
            return True
    hr = int(lv[13])
    if hr > rad:
        lim = (hr - rad) * (hr - rad)
        for k in range(int(lv[r + 5])):
            ex = lx - int(lv[r + 8 + 3 * k])
            ey = ly - int(lv[r + 9 + 3 * k])
            if ex * ex + ey * ey < lim:
                return True
    return False


@njit(cache=True)
def _usable_s(lv, s, a, cand, aligned):
    """Empty anchor a passes the hole-blocking test against the pieces as they lie
    (cand, aligned: scratch arrays of nP entries)."""
    nA = int(lv[0])
    nP = int(lv[1])
    ss = int(lv[11])
    if s[a] != 0:
        return False
    oa = int(lv[5])
    ax = int(lv[oa + 2 * a])
    ay = int(lv[oa + 2 * a + 1])
    reach = int(lv[14]) + 21 * 256
    nc = 0
    for p in range(nP):
        b = nA + p * ss
        if int(s[b]) == LEFT:
            continue
        r = int(lv[6]) + p * int(lv[7])
        dx = ax - int(s[b + 1])
        dy = ay - int(s[b + 2])
        lim = int(lv[r + 6]) + reach
        if dx * dx + dy * dy > lim * lim:
            continue
        al = 0
        for k in range(int(lv[r + 5])):
            hx, hy = _hole_world(lv, s, p, k)
            if _near(lv, hx, hy, a):
                al = 1
        # a piece none of whose tested samples can be solid changes nothing: leave it out
        lx, ly = _unrot(lv, dx, dy, int(s[b + 3]))
        rad = (_RS_IN if al == 1 else _RS_OUT) + _MARGIN
        if _disc_clear(lv, p, lx, ly, rad):
            continue
        cand[nc] = p
        aligned[nc] = al
        nc += 1
    if nc == 0:
        return True
    os_ = int(lv[8])
    first_outer = int(lv[15])
    outer = 0
    for i in range(int(lv[9])):
        sx = ax + int(lv[os_ + 2 * i])
        sy = ay + int(lv[os_ + 2 * i + 1])
        is_outer = i >= first_outer
        for j in range(nc):
            if is_outer and aligned[j] == 1:
                continue
            if _solid_at(lv, s, cand[j], sx, sy):
                if not is_outer:
                    return False
                outer += 1
                if outer >= int(lv[16]):
                    return False
                break
    return True


@njit(cache=True)
def _usable(lv, s, a):
    """Empty anchor a passes the hole-blocking test against the pieces as they lie."""
    nP = int(lv[1])
    return _usable_s(lv, s, a, np.empty(nP, np.int64), np.zeros(nP, np.int64))


@njit(cache=True)
def _record(trace, tn, p, st, cx, cy, t):
    if tn < trace.shape[0]:
        trace[tn, 0] = p
        trace[tn, 1] = st
        trace[tn, 2] = cx
        trace[tn, 3] = cy
        trace[tn, 4] = t
        return tn + 1
    return tn


@njit(cache=True)
def _swing(lv, d, p, k, trace, tn, cand, prev, skip, arcj):
    """Swing piece p about its single pin (hole k). Returns (moved, tn). cand, prev, skip,
    arcj: scratch arrays of nA int64 entries (per candidate peg j < nc: anchor, overlapped at
    the last pose, steps it is known clear for, bound of its motion per step; all written here
    before being read)."""
    nA = int(lv[0])
    n = int(lv[3])
    step = int(lv[4])
    b = nA + p * int(lv[11])
    rb = int(lv[6]) + p * int(lv[7]) + 8 + 3 * k
    beta = int(lv[rb + 2])
    if beta < 0:
        return False, tn
    pin = int(d[b + 4 + k])
    t0 = int(d[b + 3])
    delta = (n // 4 - beta - t0) % n
    if delta > n // 2:
        delta -= n
    oa = int(lv[5])
    px = int(lv[oa + 2 * pin])
    py = int(lv[oa + 2 * pin + 1])
    lx = int(lv[rb])
    ly = int(lv[rb + 1])
    rp = int(lv[6]) + p * int(lv[7])
    if int(lv[rp]) == 0 and abs(t0 % (n // 2) - n // 4) <= int(lv[24]):
        # RULES 2.5, a near-vertical board on one pin: pinned near its top end and above its
        # centre it hangs as it is (the original stops and sleeps it); pinned below its
        # centre it topples to the side the original's nudge chooses (outward for posts off
        # the middle, else the side its free top end leans to), the long way round if needed.
        hw = int(lv[rp + 1])
        topx = hw if _sin(lv, t0) < 0 else -hw
        gap = abs(topx - lx)
        cy0 = int(d[b + 2])
        cx0 = int(d[b + 1])
        if gap <= int(lv[25]) and py <= cy0 - _PX2:
            return False, tn
        if gap >= int(lv[25]) and py > cy0 + _PX2:
            tx, _ = _rot(lv, topx, ly, t0)
            lean = cx0 + tx - px
            outward = -1 if cx0 < _CX else 1
            lsign = 1 if lean > 0 else (-1 if lean < 0 else 0)
            if abs(cx0 - _CX) >= _OUTWARD_BIAS and (abs(lean) < _LEAN_DEADBAND or lsign != outward):
                want = outward
            elif abs(lean) < _PX1:
                want = outward
            else:
                want = lsign
            if want * delta < 0:
                delta += want * n
    if delta == 0:
        return False, tn
    sgn = 1 if delta > 0 else -1
    mag = abs(delta)
    # Speed-up (no change of result): only pegs that can come within reach of the piece
    # during the swing are tested (the piece stays within |hole| + bounding radius of the
    # pin, and its hole is within TOL of the pin before the first step), and a peg found
    # clear by ``slack`` is not tested again for the steps in which it cannot get that much
    # closer (the centre moves at most ``arc`` a step along its circle about the pin, and in
    # the piece's frame a peg moves at most ``arcj`` a step along its circle about the
    # pinned hole); without a trace, steps in which every peg is known clear are jumped.
    pr = int(lv[12])
    bnd = int(lv[rp + 6]) + pr
    hn = int(math.sqrt(float(lx * lx + ly * ly))) + 2
    reach = hn + bnd + int(lv[14]) + _MARGIN
    arc = int(hn * 2.0 * math.pi * step / n) + 3
    nc = 0
    cx0 = int(d[b + 1])
    cy0 = int(d[b + 2])
    for a in range(nA):
        if a != pin and d[a] != 0:
            ex = int(lv[oa + 2 * a]) - px
            ey = int(lv[oa + 2 * a + 1]) - py
            if ex * ex + ey * ey >= reach * reach:
                continue
            cand[nc] = a
            arcj[nc] = int(math.sqrt(float(ex * ex + ey * ey)) * 2.0 * math.pi * step / n) + 3
            prev[nc] = 1 if _peg_overlaps(lv, p, cx0, cy0, t0, a) else 0
            skip[nc] = 0
            nc += 1
    done = 0
    bx = cx0
    by = cy0
    bt = t0
    fast = trace.shape[0] == 0
    while done < mag:
        if fast:
            # no trace wanted: jump over the steps in which every peg is known to be clear
            m = mag
            for j in range(nc):
                if skip[j] < m:
                    m = skip[j]
            if m > 0:
                nxt = done + m * step
                if nxt > mag:
                    nxt = mag
                adv = (nxt - done + step - 1) // step
                for j in range(nc):
                    skip[j] -= adv
                    prev[j] = 0
                t = (t0 + sgn * nxt) % n
                hx, hy = _rot(lv, lx, ly, t)
                bx = px - hx
                by = py - hy
                bt = t
                done = nxt
                continue
        nxt = done + step
        if nxt > mag:
            nxt = mag
        t = (t0 + sgn * nxt) % n
        hx, hy = _rot(lv, lx, ly, t)
        cx = px - hx
        cy = py - hy
        hit = False
        for j in range(nc):
            if skip[j] > 0:
                skip[j] -= 1
                prev[j] = 0
                continue
            a = cand[j]
            ex = int(lv[oa + 2 * a]) - cx
            ey = int(lv[oa + 2 * a + 1]) - cy
            e2 = ex * ex + ey * ey
            if e2 >= bnd * bnd:
                o = False
                slack = int(math.sqrt(float(e2))) - 1 - bnd - _MARGIN
                if slack > arc:
                    skip[j] = slack // arc - 1
            else:
                # the fine test of _peg_overlaps, keeping the clearance: in the piece's frame
                # the peg moves at most arcj a step (on its circle about the pinned hole)
                rc = int(lv[rp + 3])
                if int(lv[rp]) == 1:
                    q2 = e2
                else:
                    qx, qy = _unrot(lv, ex, ey, t)
                    qx = abs(qx) - (int(lv[rp + 1]) - rc)
                    qy = abs(qy) - (int(lv[rp + 2]) - rc)
                    if qx < 0:
                        qx = 0
                    if qy < 0:
                        qy = 0
                    q2 = qx * qx + qy * qy
                o = q2 < (rc + pr) * (rc + pr)
                if not o:
                    slack = int(math.sqrt(float(q2))) - 1 - rc - pr - _MARGIN
                    if slack > arcj[j]:
                        skip[j] = slack // arcj[j] - 1
            if o and prev[j] == 0:
                hit = True
            prev[j] = 1 if o else 0
        if hit:
            break
        done = nxt
        bx = cx
        by = cy
        bt = t
        tn = _record(trace, tn, p, ATTACHED, cx, cy, t)
    if done == 0:
        return False, tn
    d[b + 1] = bx
    d[b + 2] = by
    d[b + 3] = bt
    return True, tn


@njit(cache=True)
def _gap(lv, p, cx, cy, t, a):
    """Clearance (Q8) between the solid peg of anchor a and the wood of piece p posed at
    (cx, cy, t), holes ignored: at most the true distance (a safety margin far above the
    rounding is taken off), <= 0 when they may touch. Speed only: ``_fall`` moves a piece
    in whole steps over clearances this proves, so the result equals 1-step motion."""
    oa = int(lv[5])
    r = int(lv[6]) + p * int(lv[7])
    pr = int(lv[12])
    dx = int(lv[oa + 2 * a]) - cx
    dy = int(lv[oa + 2 * a + 1]) - cy
    rc = int(lv[r + 3])
    if int(lv[r]) == 1:
        q2 = dx * dx + dy * dy
    else:
        qx, qy = _unrot(lv, dx, dy, t)
        qx = abs(qx) - (int(lv[r + 1]) - rc)
        qy = abs(qy) - (int(lv[r + 2]) - rc)
        if qx < 0:
            qx = 0
        if qy < 0:
            qy = 0
        q2 = qx * qx + qy * qy
    return int(math.sqrt(float(q2))) - rc - pr - _MARGIN


@njit(cache=True)
def _blocking(lv, p, cx, cy, t, cand, ign, clr, nearj, nn, acc, reach):
    """(number, leftmost x, rightmost x) of the near candidate pegs (cand[nearj[q]], not
    ignored) that overlap piece p posed at (cx, cy, t); a peg whose known clearance
    clr[j] - acc is at least ``reach`` (the most any point of the piece moved from where
    it was known) cannot and is not tested."""
    oa = int(lv[5])
    cnt = 0
    lo = 0
    hi = 0
    for q in range(nn):
        j = nearj[q]
        if ign[j] != 0 or clr[j] - acc >= reach:
            continue
        a = cand[j]
        if _peg_overlaps(lv, p, cx, cy, t, a):
            ax = int(lv[oa + 2 * a])
            if cnt == 0 or ax < lo:
                lo = ax
            if cnt == 0 or ax > hi:
                hi = ax
            cnt += 1
    return cnt, lo, hi


@njit(cache=True)
def _glide(lv, p, cx, cy, t, sx, sy, cand, ign, clr, nearj, nn, acc, room, far_room,
           x0, y0, x1, y1, ex):
    """Speed only: how many slide steps (sx, sy) down the length of tilted board p, from a
    pose where one such step is free and the step straight down is blocked, give the same
    poses as that many single steps of ``_fall`` (at least 1). A translation along the
    board's length keeps its distance to a peg lying against its flat side, so while every
    peg stopping the step down stays against the flat side, the step down stays blocked
    and the slide free; every other peg must be farther than the whole glide can reach,
    and the glide stays inside the region the fall's peg scan vouches for (``room``,
    ``far_room``) and inside the exit rectangle."""
    oa = int(lv[5])
    r = int(lv[6]) + p * int(lv[7])
    step = int(lv[17])
    rc = int(lv[r + 3])
    flat = int(lv[r + 1]) - rc - _PX1          # local |x| of the flat side, with a margin
    per = step + 2
    k = 512
    lim = min(room, far_room) // per - 1
    if lim < k:
        k = lim
    for q in range(nn):
        j = nearj[q]
        if ign[j] != 0:
            continue
        a = cand[j]
        eff = clr[j] - acc
        if eff < 2 * per and _peg_overlaps(lv, p, cx, cy + step, t, a):
            # a peg stopping the step down: it must stay against the flat side all the way
            lx, _ = _unrot(lv, int(lv[oa + 2 * a]) - cx, int(lv[oa + 2 * a + 1]) - cy, t)
            if abs(lx) > flat:
                return 1
            # local x moves by about one step per slide step; keep the end within the flat side
            lo = 1
            hi = k
            while lo < hi:
                mid = (lo + hi + 1) // 2
                ex2, _ = _unrot(lv, int(lv[oa + 2 * a]) - (cx + mid * sx),
                                int(lv[oa + 2 * a + 1]) - (cy + mid * sy), t)
                if abs(ex2) <= flat:
                    lo = mid
                else:
                    hi = mid - 1
            k = lo
        else:
            # any other peg must stay out of reach of the glide and of its last step down
            g = eff // per - 2
            if g < k:
                k = g
    if k < 1:
        return 1
    # The steps are rounded, so the board also drifts a little across its length: its gap
    # to a contact peg changes linearly along the glide. So the last pose must still be
    # clear and its step down still blocked by every contact peg (each holds on an interval
    # of k that contains the start), and it must lie inside the exit rectangle (convex:
    # then so does every pose before it). Halve k until all hold.
    while k > 1:
        fx = cx + k * sx
        fy = cy + k * sy
        ok = not (fx + ex < x0 or fx - ex > x1 or fy + ex < y0 or fy - ex > y1)
        if ok:
            for q in range(nn):
                j = nearj[q]
                if ign[j] != 0 or clr[j] - acc >= 2 * per:
                    continue
                a = cand[j]
                if _peg_overlaps(lv, p, cx, cy + step, t, a):
                    if _peg_overlaps(lv, p, fx, fy, t, a) or not _peg_overlaps(lv, p, fx, fy + step, t, a):
                        ok = False
                        break
        if ok:
            break
        k //= 2
    return k


@njit(cache=True)
def _clearance(lv, p, cx, cy, t, a, ax, ay, radii, near):
    """The clearance (px, at least 0) between board p at (cx, cy, t) and peg a at (ax, ay):
    the centre distance less both radii (``radii``) and the margin, a lower bound, made exact
    by ``_gap`` when it is within ``near``."""
    ddx = ax - cx
    ddy = ay - cy
    g = int(math.sqrt(float(ddx * ddx + ddy * ddy))) - radii - _MARGIN
    if g <= near:
        g = _gap(lv, p, cx, cy, t, a)
    return g if g > 0 else 0


@njit(cache=True)
def _fall(lv, d, p, trace, tn, cand, ign, clr, nearj):
    """Let piece p, which no screw pins, fall (RULES 2.5: released pieces collide with the
    solid pegs of occupied anchors only). Quasi-static, in steps of ``FALL_STEP`` (lv[17]):
      1. move straight down if no peg is in the way;
      2. else a board tilted more than SLIP_ANGLE (lv[26]) from horizontal slides one step
         down along its length if it can; else, with the contacts' x range [lo, hi], the
         piece RESTS if its centre x lies in [lo - tol, hi + tol] (tol = BALANCE_TOL, lv[18])
         and it is a pad or a board within SLIP_ANGLE of horizontal: across two pegs, or
         balanced on one peg exactly below its centre;
      3. else it slides sideways towards the side its centre overhangs, or, when a peg is in
         the way of that, tips about the contact peg on that side (rotating by SWING_STEP,
         never lifting its centre); when neither is possible, or it would have to go back to
         the side it came from in this fall, it is wedged and rests.
    Pegs that already overlap the piece where the fall starts are ignored for this fall.
    The piece EXITS (status LEFT) once its bounding circle plus EXIT_EXTRA (lv[23]) lies
    outside the exit rectangle lv[19..22] (RULES 2.6). Returns (moved, tn); status is set
    to RELEASED while it is on the board. cand, ign, clr, nearj: scratch of nA int64
    entries (candidate peg; ignored; known clearance in Q8 plus the motion bound ``acc``
    at the time it was known; the candidates tested every step).
    Speed only: clearances (``_gap``) let it move several steps at once when no peg is
    near, and keep far pegs out of the fine tests (only pegs within NEARW are looked at
    each step; the rest are scanned again once the piece may have come near them); the
    poses are those of 1-step motion."""
    nA = int(lv[0])
    n = int(lv[3])
    b = nA + p * int(lv[11])
    r = int(lv[6]) + p * int(lv[7])
    oa = int(lv[5])
    pr = int(lv[12])
    step = int(lv[17])
    tol = int(lv[18])
    bnd = int(lv[r + 6])
    ex = bnd + int(lv[23])
    x0 = int(lv[19])
    y0 = int(lv[20])
    x1 = int(lv[21])
    y1 = int(lv[22])
    cx = int(d[b + 1])
    cy = int(d[b + 2])
    t = int(d[b + 3])
    d[b] = RELEASED
    moved = False
    # candidate pegs: occupied anchors not wholly above the piece (its centre never rises);
    # a peg overlapping at the start is ignored
    unk = -(1 << 40)
    nc = 0
    reach = bnd + pr + _MARGIN
    for a in range(nA):
        if d[a] != 0 and int(lv[oa + 2 * a + 1]) + reach > cy:
            cand[nc] = a
            ign[nc] = 1 if _peg_overlaps(lv, p, cx, cy, t, a) else 0
            clr[nc] = unk
            nc += 1
    # the most any point of the piece moves in one tip (about a peg it touches)
    tipd = int((2 * bnd + pr) * 2.0 * math.pi * int(lv[4]) / n) + 4
    near = 4 * step           # clearances below this are computed exactly before use
    nearw = 24 * step         # pegs nearer than this are looked at every step
    guard = 2 * tipd + 2 * step
    big = 1 << 50
    acc = 0                   # bound of the motion of any point of the piece so far
    scan_acc = 0
    far_all = big             # smallest clearance of a non-near peg at the last scan
    far_v = big               # the same over those a fall straight down can meet
    nn = 0
    rescan = True
    it = 0
    last = 0                  # the side it slid or tipped to in this fall (never reversed)
    while it < MAX_FALL_ITER:
        it += 1
        if cx + ex < x0 or cx - ex > x1 or cy + ex < y0 or cy - ex > y1:
            d[b] = LEFT
            d[b + 1] = cx
            d[b + 2] = cy
            d[b + 3] = t
            return True, _record(trace, tn, p, LEFT, cx, cy, t)
        if rescan or far_all - (acc - scan_acc) < guard or acc - scan_acc > nearw:
            rescan = False
            nn = 0
            far_all = big
            far_v = big
            for j in range(nc):
                if ign[j] != 0:
                    continue
                a = cand[j]
                ax = int(lv[oa + 2 * a])
                ay = int(lv[oa + 2 * a + 1])
                if ay + reach < cy:
                    ign[j] = 1    # passed for good
                    continue
                eff = clr[j] - acc
                if eff < nearw:
                    eff = _clearance(lv, p, cx, cy, t, a, ax, ay, bnd + pr, near)
                    clr[j] = eff + acc
                if eff < nearw:
                    nearj[nn] = j
                    nn += 1
                else:
                    if eff < far_all:
                        far_all = eff
                    if abs(ax - cx) <= reach + nearw and eff < far_v:
                        far_v = eff
            scan_acc = acc
        # the smallest clearance of a peg the piece can meet going straight down
        m = big
        for q in range(nn):
            j = nearj[q]
            if ign[j] != 0:
                continue
            a = cand[j]
            ax = int(lv[oa + 2 * a])
            ay = int(lv[oa + 2 * a + 1])
            if ay + reach < cy:
                ign[j] = 1        # passed for good
                continue
            eff = clr[j] - acc
            if eff < near:
                eff = _clearance(lv, p, cx, cy, t, a, ax, ay, bnd + pr, near)
                clr[j] = eff + acc
            if abs(ax - cx) > reach:
                continue          # out of reach of a fall straight down
            if eff < m:
                m = eff
        if far_v < big and far_v - (acc - scan_acc) < m:
            m = far_v - (acc - scan_acc)
        if m >= big:
            # nothing left to meet going down: it falls straight out of the frame (to the
            # first step at which the exit test holds, as a fall step by step would)
            if cy - ex <= y1:
                cy += ((y1 + ex - cy) // step + 1) * step
            moved = True
            continue
        if m >= 2 * step:
            k = m // step - 1
            cy += k * step
            acc += k * step
            moved = True
            tn = _record(trace, tn, p, RELEASED, cx, cy, t)
            continue
        cnt, lo, hi = _blocking(lv, p, cx, cy + step, t, cand, ign, clr, nearj, nn, acc, step)
        if cnt == 0:
            cy += step
            acc += step
            moved = True
            tn = _record(trace, tn, p, RELEASED, cx, cy, t)
            continue
        if int(lv[r]) == 0:
            # a board tilted beyond the friction angle slides down along its length
            ta = t % (n // 2)
            tilt = ta if ta <= n // 4 else n // 2 - ta
            if tilt > int(lv[26]):
                ux = _cos(lv, t)
                uy = _sin(lv, t)
                if uy < 0:
                    ux = -ux
                    uy = -uy
                sx = (step * ux + 32768) >> 16
                sy = (step * uy + 32768) >> 16
                c1, _, _ = _blocking(lv, p, cx + sx, cy + sy, t, cand, ign, clr, nearj, nn, acc, step + 2)
                if c1 == 0:
                    k = 1
                    if trace.shape[0] == 0:
                        k = _glide(lv, p, cx, cy, t, sx, sy, cand, ign, clr, nearj, nn, acc,
                                   nearw - (acc - scan_acc), far_all - (acc - scan_acc) - guard,
                                   x0, y0, x1, y1, ex)
                    cx += k * sx
                    cy += k * sy
                    acc += k * (step + 2)
                    moved = True
                    tn = _record(trace, tn, p, RELEASED, cx, cy, t)
                    continue
            elif lo - tol <= cx and cx <= hi + tol:
                break
        elif lo - tol <= cx and cx <= hi + tol:
            break
        side = 1 if cx > hi + tol else (-1 if cx < lo - tol else 0)
        if side == 0:
            break             # a tilted board over its contacts that cannot slide: wedged
        if side == -last:
            break             # it would go back the way it came: wedged between pegs
        last = side
        c2, _, _ = _blocking(lv, p, cx + side * step, cy, t, cand, ign, clr, nearj, nn, acc, step)
        if c2 == 0:
            cx += side * step
            acc += step
            moved = True
            tn = _record(trace, tn, p, RELEASED, cx, cy, t)
            continue
        # tip about the contact peg on the overhanging side (side > 0: clockwise)
        a = -1
        for q in range(nn):
            j = nearj[q]
            if ign[j] == 0 and clr[j] - acc < step:
                aa = cand[j]
                if int(lv[oa + 2 * aa]) == (hi if side > 0 else lo) and \
                        _peg_overlaps(lv, p, cx, cy + step, t, aa):
                    a = aa
                    break
        if a < 0:
            break
        ax = int(lv[oa + 2 * a])
        ay = int(lv[oa + 2 * a + 1])
        nt = (t + side * int(lv[4])) % n
        rx, ry = _rot(lv, cx - ax, cy - ay, (side * int(lv[4])) % n)
        nx = ax + rx
        ny = ay + ry
        c3, _, _ = _blocking(lv, p, nx, ny, nt, cand, ign, clr, nearj, nn, acc, tipd)
        if c3 != 0 or ny < cy:
            break
        cx = nx
        cy = ny
        t = nt
        acc += tipd
        moved = True
        tn = _record(trace, tn, p, RELEASED, cx, cy, t)
    d[b + 1] = cx
    d[b + 2] = cy
    d[b + 3] = t
    return moved, tn


@njit(cache=True)
def _settle(lv, d, trace, tn, freed):
    """Settle state d in place; returns the number of trace rows written. ``freed`` is the
    anchor whose screw the move took away (-1: none): a released piece resting on pegs
    falls on only when that peg was within its reach."""
    nA = int(lv[0])
    nP = int(lv[1])
    H = int(lv[2])
    ss = int(lv[11])
    # scratch of _swing (see there), allocated once per settle
    cand = np.empty(nA, np.int64)
    prev = np.empty(nA, np.int64)
    skip = np.empty(nA, np.int64)
    arcj = np.empty(nA, np.int64)
    # stuck[p] = 1: p's swing did not move it in an earlier pass of this settle. A swing
    # reads only the piece's own pose and pin and which anchors hold screws, none of which
    # a settle changes for a piece that did not move, so it would not move again: skipped.
    # The same holds for a fall: a piece at rest is not tried again in this settle.
    stuck = np.zeros(nP, np.uint8)
    ign = np.empty(nA, np.int64)
    clr = np.empty(nA, np.int64)
    nearj = np.empty(nA, np.int64)
    oa = int(lv[5])
    for p in range(nP):
        b = nA + p * ss
        if int(d[b]) == RELEASED:
            if freed < 0:
                stuck[p] = 1
            else:
                r = int(lv[6]) + p * int(lv[7])
                lim = int(lv[r + 6]) + int(lv[12]) + 2 * int(lv[17]) + _MARGIN   # touching: within a step
                dx = int(lv[oa + 2 * freed]) - int(d[b + 1])
                dy = int(lv[oa + 2 * freed + 1]) - int(d[b + 2])
                if dx * dx + dy * dy > lim * lim:
                    stuck[p] = 1
    for _ in range(16):
        changed = False
        for p in range(nP):
            b = nA + p * ss
            if int(d[b]) == LEFT:
                continue
            npin = 0
            k1 = -1
            for k in range(H):
                if int(d[b + 4 + k]) >= 0:
                    npin += 1
                    k1 = k
            if npin == 0:
                if stuck[p] == 0:
                    st0 = int(d[b])
                    moved, tn = _fall(lv, d, p, trace, tn, cand, ign, clr, nearj)
                    if moved or st0 != int(d[b]):
                        changed = True
                    else:
                        stuck[p] = 1
            elif npin == 1 and int(d[b + 4 + H]) != 0 and stuck[p] == 0:
                moved, tn = _swing(lv, d, p, k1, trace, tn, cand, prev, skip, arcj)
                if moved:
                    changed = True
                else:
                    stuck[p] = 1
        if not changed:
            break
    return tn


@njit(cache=True)
def _check(lv, s, f, t):
    if int(s[f]) == 0:
        return SOURCE_EMPTY
    if int(s[t]) != 0:
        return TARGET_OCCUPIED
    if not _usable(lv, s, t):
        return TARGET_BLOCKED
    return OK


@njit(cache=True)
def _move(lv, src, dst, action, trace):
    """The whole move (check, bookkeeping, settle). Returns (code, trace rows)."""
    nA = int(lv[0])
    nP = int(lv[1])
    H = int(lv[2])
    ss = int(lv[11])
    for i in range(src.shape[0]):
        dst[i] = src[i]
    if action < 0 or action >= nA * nA:
        return BAD_ACTION, 0
    f = int(action) // nA
    t = int(action) % nA
    code = _check(lv, src, f, t)
    if code != OK:
        return code, 0
    dst[f] = 0
    dst[t] = 1
    lost = np.zeros(nP, np.int64)
    for p in range(nP):
        b = nA + p * ss
        if int(dst[b]) == LEFT:
            continue
        for k in range(H):
            if int(dst[b + 4 + k]) == f:
                dst[b + 4 + k] = -1
                lost[p] = 1
                dst[b + 4 + H] = 1
        r = int(lv[6]) + p * int(lv[7])
        for k in range(int(lv[r + 5])):
            if int(dst[b + 4 + k]) < 0:
                hx, hy = _hole_world(lv, dst, p, k)
                if _near(lv, hx, hy, t):
                    dst[b + 4 + k] = t
                    lost[p] = 0
                    dst[b + 4 + H] = 1
                    dst[b] = ATTACHED         # a resting released piece is pinned again
    for p in range(nP):
        if lost[p] == 0:
            continue
        b = nA + p * ss
        r = int(lv[6]) + p * int(lv[7])
        for k in range(int(lv[r + 5])):
            if int(dst[b + 4 + k]) < 0:
                hx, hy = _hole_world(lv, dst, p, k)
                for a in range(nA):
                    if a != t and int(dst[a]) != 0 and _near(lv, hx, hy, a):
                        dst[b + 4 + k] = a
                        break
    tn = _settle(lv, dst, trace, 0, f)
    return OK, tn


@njit(cache=True)
def step_into(lv, src, dst, action):
    trace = np.zeros((0, 5), np.int32)
    code, _ = _move(lv, src, dst, action, trace)
    return code


@njit(cache=True)
def usable_into(lv, s, out):
    """out[a] = 1 iff anchor a is empty and usable; returns how many."""
    count = 0
    nP = int(lv[1])
    cand = np.empty(nP, np.int64)
    aligned = np.empty(nP, np.int64)
    for a in range(int(lv[0])):
        u = _usable_s(lv, s, a, cand, aligned)
        out[a] = 1 if u else 0
        if u:
            count += 1
    return count


@njit(cache=True)
def legal_into(lv, s, mask):
    nA = int(lv[0])
    nP = int(lv[1])
    usable = np.zeros(nA, np.int64)
    cand = np.empty(nP, np.int64)
    aligned = np.empty(nP, np.int64)
    for a in range(nA):
        if _usable_s(lv, s, a, cand, aligned):
            usable[a] = 1
    count = 0
    for f in range(nA):
        for t in range(nA):
            ok = int(s[f]) != 0 and usable[t] == 1
            mask[f * nA + t] = 1 if ok else 0
            if ok:
                count += 1
    return count


@njit(cache=True)
def is_solved(lv, s):
    nA = int(lv[0])
    ss = int(lv[11])
    for p in range(int(lv[1])):  # noqa: SIM110 - numba compiles no generator
        if int(s[nA + p * ss]) != LEFT:
            return False
    return True


@njit(cache=True)
def is_dead_end(lv, s):
    """No usable empty anchor and not solved (the rules' deadlock; never announced)."""
    if is_solved(lv, s):
        return False
    nP = int(lv[1])
    cand = np.empty(nP, np.int64)
    aligned = np.empty(nP, np.int64)
    for a in range(int(lv[0])):  # noqa: SIM110 - numba compiles no generator
        if _usable_s(lv, s, a, cand, aligned):
            return False
    return True


@njit(cache=True)
def progress(lv, s):
    """P = (left + 0.5 * released) / total pieces."""
    nA = int(lv[0])
    nP = int(lv[1])
    ss = int(lv[11])
    left = 0
    released = 0
    for p in range(nP):
        st = int(s[nA + p * ss])
        if st == LEFT:
            left += 1
        elif st == RELEASED:
            released += 1
    return (left + 0.5 * released) / nP


@njit(cache=True)
def settle_into(lv, src, dst, trace):
    """Copy src to dst and settle dst (used for initial states and checks); trace rows."""
    for i in range(src.shape[0]):
        dst[i] = src[i]
    return _settle(lv, dst, trace, 0, -1)


@njit(cache=True)
def move_trace(lv, src, dst, action, trace):
    """step_into with the settle's intermediate poses written to trace (rows of
    piece, status, cx, cy, angle); returns (code, rows)."""
    return _move(lv, src, dst, action, trace)


@njit(cache=True)
def move_summary(lv, before, after, src, dst):
    """Facts of one accepted move src -> dst for the screen's hint line and animation, over
    the pieces not yet gone before it: (released, partial, attached, detached, changed)
    released  pieces pinned at src that no screw holds any more (fallen out or resting)
    partial   pieces pinned at src that stay on the board, not pinned at dst
    attached  pieces pinned at dst after the move
    detached  pieces pinned at src before the move
    changed   1 if any piece's status, pose or pins differ (the boards move: settle time)."""
    nA = int(lv[0])
    nP = int(lv[1])
    H = int(lv[2])
    ss = int(lv[11])
    released = partial = attached = detached = 0
    for p in range(nP):
        b = nA + p * ss
        if int(before[b]) == LEFT:
            continue
        on_src = False
        at_dst = False
        for k in range(H):
            if int(before[b + 4 + k]) == src:
                on_src = True
            if int(after[b + 4 + k]) == dst:
                at_dst = True
        at_dst = at_dst and int(after[b]) != LEFT
        if at_dst:
            attached += 1
        if on_src:
            detached += 1
            if not at_dst:
                if int(after[b]) != ATTACHED:
                    released += 1
                else:
                    partial += 1
    changed = 0
    for i in range(nA, before.shape[0]):
        if before[i] != after[i]:
            changed = 1
            break
    return released, partial, attached, detached, changed


# ---------------------------------------------------------------------------- Python side
_COS = None


def _cos_cached() -> np.ndarray:
    global _COS
    if _COS is None:
        tab = []
        for k in range(N_ANG):
            tab.append(int(round(65536.0 * math.cos(2.0 * math.pi * k / N_ANG))))
        _COS = np.array(tab, np.int64)
    return _COS


def _samples() -> list[tuple[int, int]]:
    out = [(0, 0)]
    for frac, count in RINGS:
        rad = SOCKET_RADIUS * frac * Q
        for i in range(count):
            ang = 2.0 * math.pi * i / count
            out.append((int(round(rad * math.cos(ang))), int(round(rad * math.sin(ang)))))
    return out


def _q(v: float) -> int:
    return int(math.floor(v * Q + 0.5))


class BoltUnscrew(Puzzle):
    id = "bolt_unscrew"
    title = "Bolt Unscrew"
    difficulties = ("easy", "hard")
    catalog_order = 1
    undo_allowed = False
    dead_ends = True
    keeps_steps = True        # a step settles the boards (2 to 46 us a step on the levels), finding it ~1 us
    state_dtype = np.int32
    kernels = sys.modules[__name__]
    rejections = {
        SOURCE_EMPTY: Rejection("source_empty", "the source anchor holds no screw"),
        TARGET_OCCUPIED: Rejection("target_occupied", "the target anchor already holds a screw"),
        TARGET_BLOCKED: Rejection("target_blocked", "the target hole is covered by the solid part of a board or pad"),
    }
    move_syntax = "SRC>DST with anchor ids of the level, e.g. n_top_l>h_left"

    # ------------------------------------------------------------------ level
    def build_level(self, record, *, difficulty, number, where):
        fail = level_fail(self.id, difficulty, number, where)

        def num(obj, key, field, lo=None, hi=None, default=None):
            v = obj.get(key, default)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise fail("must be a number", f"{field}.{key}")
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                raise fail(f"must be between {lo} and {hi}", f"{field}.{key}")
            return float(v)

        anchors = record.get("anchors")
        if not isinstance(anchors, list) or not 1 <= len(anchors) <= MAX_ANCHORS:
            raise fail(f"must be a list of 1..{MAX_ANCHORS} anchors", "anchors")
        ids: list[str] = []
        axy: list[tuple[float, float]] = []
        occ: list[int] = []
        for i, a in enumerate(anchors):
            field = f"anchors[{i}]"
            if not isinstance(a, dict):
                raise fail("an anchor is an object {id, x, y, occupied}", field)
            aid = a.get("id")
            if not isinstance(aid, str) or not _ID_RE.match(aid):
                raise fail("anchor id must be letters, digits, '_', '.' or '-'", field + ".id")
            if aid in ids:
                raise fail(f"duplicate anchor id {aid!r}", field + ".id")
            ids.append(aid)
            axy.append((num(a, "x", field, -1000, 2000), num(a, "y", field, -1000, 2000)))
            o = a.get("occupied")
            if not isinstance(o, bool):
                raise fail("must be true or false", field + ".occupied")
            occ.append(1 if o else 0)
        index = {aid: i for i, aid in enumerate(ids)}

        pieces = []  # dicts: id, kind, x, y, rot, w, h, radius, holes [(hx, hy)], pins [anchor], order
        for key, kind in (("boards", 0), ("anchor_pads", 1)):
            lst = record.get(key, [])
            if not isinstance(lst, list):
                raise fail("must be a list", key)
            for i, b in enumerate(lst):
                field = f"{key}[{i}]"
                if not isinstance(b, dict):
                    raise fail("must be an object", field)
                pid = b.get("id", f"{key}{i}")
                if not isinstance(pid, str):
                    raise fail("must be text", field + ".id")
                fb = Fields(b, fail, field + ".")
                pc = {"id": pid, "kind": kind, "x": num(b, "x", field, -1000, 2000),
                      "y": num(b, "y", field, -1000, 2000),
                      "order": fb.integer("render_order", lo=-1000, hi=1000, default=5)}
                if kind == 0:
                    pc["rot"] = num(b, "rotation_degrees", field, -360, 360)
                    pc["w"] = num(b, "collision_width", field, 4, 2000)
                    pc["h"] = num(b, "collision_height", field, 4, 2000)
                    pc["texture_index"] = fb.integer("texture_index", lo=0, hi=1000, default=1)
                else:
                    pc["rot"] = 0.0
                    pc["radius"] = num(b, "radius", field, 4, 1000, default=70)
                holes = b.get("hole_offsets")
                if holes is None and kind == 1:
                    holes = [{"x": 0.0, "y": 0.0}]
                if not isinstance(holes, list) or not 1 <= len(holes) <= MAX_HOLES:
                    raise fail(f"must be a list of 1..{MAX_HOLES} [x, y] offsets", field + ".hole_offsets")
                pc["holes"] = []
                for k, h in enumerate(holes):
                    if isinstance(h, list) and len(h) == 2:
                        h = {"x": h[0], "y": h[1]}
                    if not isinstance(h, dict):
                        raise fail("must be [x, y] or {x, y}", f"{field}.hole_offsets[{k}]")
                    pc["holes"].append((num(h, "x", f"{field}.hole_offsets[{k}]", -2000, 2000),
                                        num(h, "y", f"{field}.hole_offsets[{k}]", -2000, 2000)))
                att = b.get("attached_anchors")
                if not isinstance(att, list) or len(att) != len(pc["holes"]):
                    raise fail("must list one anchor id per hole", field + ".attached_anchors")
                pins = []
                for k, aid in enumerate(att):
                    if aid is None:
                        pins.append(-1)
                        continue
                    if type(aid) is not str or aid not in index:
                        raise fail(f"unknown anchor {aid!r:.40}", f"{field}.attached_anchors[{k}]")
                    if not occ[index[aid]]:
                        raise fail(f"anchor {aid!r} holds no screw, so it cannot pin a piece",
                                   f"{field}.attached_anchors[{k}]")
                    pins.append(index[aid])
                pc["pins"] = pins
                pieces.append(pc)
        if not pieces:
            raise fail("the level has no boards or pads", "boards")
        if len(pieces) > MAX_PIECES:
            raise fail(f"at most {MAX_PIECES} pieces", "boards")
        if sum(occ) == 0 or sum(occ) == len(occ):
            raise fail("needs at least one screw and one empty anchor", "anchors")

        nA, nP = len(ids), len(pieces)
        H = max(len(pc["holes"]) for pc in pieces)
        PL = 8 + 3 * H
        SS = 5 + H
        samples = _samples()
        OA = HEADER
        OP = OA + 2 * nA
        OS = OP + PL * nP
        OC = OS + 2 * len(samples)
        lv = np.zeros(OC + N_ANG, np.int32)
        lv[:HEADER] = [nA, nP, H, N_ANG, SWING_STEP, OA, OP, PL, OS, len(samples), OC, SS,
                       _q(PEG_RADIUS), _q(HOLE_RADIUS), _q(ALIGN_TOL), 1 + RINGS[0][1] + RINGS[1][1],
                       OUTER_THRESHOLD, _q(FALL_STEP), _q(BALANCE_TOL), *[_q(v) for v in EXIT_RECT],
                       _q(EXIT_EXTRA), int(round(VERTICAL_BAND * N_ANG / 360.0)), _q(TOP_FREE_GAP),
                       int(round(SLIP_ANGLE * N_ANG / 360.0))]
        for a, (x, y) in enumerate(axy):
            lv[OA + 2 * a] = _q(x)
            lv[OA + 2 * a + 1] = _q(y)
        for i, (dx, dy) in enumerate(samples):
            lv[OS + 2 * i] = dx
            lv[OS + 2 * i + 1] = dy
        lv[OC:OC + N_ANG] = _cos_cached()
        state = np.zeros(nA + nP * SS, np.int32)
        state[:nA] = occ
        for p, pc in enumerate(pieces):
            r = OP + p * PL
            if pc["kind"] == 0:
                hw, hh = pc["w"] / 2, pc["h"] / 2
                rc = min(CORNER_RADIUS, hw, hh)
                bound = math.hypot(hw, hh)
                lv[r:r + 4] = [0, _q(hw), _q(hh), _q(rc)]
            else:
                rad = pc["radius"]
                bound = rad
                lv[r:r + 4] = [1, _q(rad), _q(rad), _q(rad)]
            lv[r + 4] = pc["order"]
            lv[r + 5] = len(pc["holes"])
            lv[r + 6] = _q(bound) + 2
            for k, (hx, hy) in enumerate(pc["holes"]):
                lx, ly = hx, -hy
                lv[r + 8 + 3 * k] = _q(lx)
                lv[r + 9 + 3 * k] = _q(ly)
                if math.hypot(lx, ly) < 1.0:
                    beta = -1
                else:
                    beta = int(round(math.degrees(math.atan2(-ly, -lx)) * N_ANG / 360.0)) % N_ANG
                lv[r + 10 + 3 * k] = beta
            b = nA + p * SS
            state[b] = ATTACHED
            state[b + 1] = _q(pc["x"])
            state[b + 2] = _q(pc["y"])
            state[b + 3] = int(round(pc["rot"] * N_ANG / 360.0)) % N_ANG
            state[b + 4:b + 4 + H] = -1
            for k, a in enumerate(pc["pins"]):
                state[b + 4 + k] = a
        # check that every pinned hole really sits on its anchor
        lv.setflags(write=False)
        for p, pc in enumerate(pieces):
            for k, a in enumerate(pc["pins"]):
                if a >= 0:
                    hx, hy = _hole_world(lv, state, p, k)
                    if not _near(lv, hx, hy, a):
                        raise fail(f"hole {k} of {pc['id']} is not within {ALIGN_TOL} px of anchor {ids[a]}",
                                   f"pieces.{pc['id']}.attached_anchors[{k}]")
        settled = np.empty_like(state)
        settle_into(lv, state, settled, np.zeros((0, 5), np.int32))
        extra = {"anchor_ids": ids, "anchors": axy, "pieces": pieces,
                 "piece_ids": [pc["id"] for pc in pieces], "n_anchors": nA, "n_pieces": nP}
        return Level(self.id, difficulty, number, lv, settled, nA * nA, record, extra, where,
                     Fields(record, fail).text("name", default=""))

    # ------------------------------------------------------------------ bounds
    def state_bounds(self, level):
        """Screws 0/1, status 0..2, angle 0..N_ANG-1, pins -1..nA-1, awake 0/1. A centre is
        where the level put it, or (once the piece has swung about a pin, or rests on a peg)
        within its bounding radius, plus the alignment tolerance, a fall step and rounding,
        of some anchor; a falling piece never rises and stops at most a step past the exit
        rectangle widened by its exit radius."""
        lv, init = level.lv, level.initial
        nA, nP, H, ss = int(lv[0]), int(lv[1]), int(lv[2]), int(lv[11])
        oa, op, pl, tol = int(lv[5]), int(lv[6]), int(lv[7]), int(lv[14])
        ax = np.asarray(lv[oa:oa + 2 * nA:2], np.int64)
        ay = np.asarray(lv[oa + 1:oa + 2 * nA:2], np.int64)
        low = np.zeros_like(init)
        high = np.zeros_like(init)
        high[:nA] = 1
        step = int(lv[17])
        x0, y0, x1, y1 = (int(v) for v in lv[19:23])
        for p in range(nP):
            b = nA + p * ss
            bnd = int(lv[op + p * pl + 6])
            reach = bnd + max(tol, int(lv[12]) + 2 * step) + 8   # Q8; 8 covers the rounding
            ex = bnd + int(lv[23]) + 2 * step                   # past the exit test by a step
            high[b] = LEFT
            for j, axis, lo_out, hi_out in ((1, ax, x0 - ex, x1 + ex), (2, ay, None, y1 + ex)):
                c0 = int(init[b + j])
                low[b + j] = min(c0, int(axis.min()) - reach, lo_out if lo_out is not None else c0)
                high[b + j] = max(c0, int(axis.max()) + reach, hi_out)
            high[b + 3] = int(lv[3]) - 1
            low[b + 4:b + 4 + H] = -1
            high[b + 4:b + 4 + H] = nA - 1
            high[b + 4 + H] = 1
        return low, high

    # ------------------------------------------------------------------ moves
    def format_move(self, level, action):
        nA = int(level.lv[0])
        ids = level.extra["anchor_ids"]
        return f"{ids[action // nA]}>{ids[action % nA]}"

    def parse_move(self, level, text):
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*>\s*([A-Za-z0-9_.\-]+)\s*$", text) if isinstance(text, str) else None
        if not m:
            raise MoveSyntaxError(f"{text!r} is not a Bolt Unscrew move; write {self.move_syntax}")
        ids = level.extra["anchor_ids"]
        index = {aid: i for i, aid in enumerate(ids)}
        for g in (m.group(1), m.group(2)):
            if g not in index:
                raise MoveSyntaxError(f"{text!r}: there is no anchor {g!r} in {level.id} "
                                      f"(anchors: {', '.join(ids)})")
        return index[m.group(1)] * len(ids) + index[m.group(2)]

    # ------------------------------------------------------------------ helpers
    def usable_anchors(self, level, state) -> list[int]:
        out = np.zeros(int(level.lv[0]), np.uint8)
        usable_into(level.lv, state, out)
        return [int(a) for a in np.flatnonzero(out)]

    def is_dead_end(self, level, state) -> bool:
        return bool(is_dead_end(level.lv, state))

    def harness_deadlock(self, level, state):
        """The original harness ends a Bolt Unscrew level when no usable hole is left."""
        return "no_available_hole_deadlock" if self.is_dead_end(level, state) else None

    def diagnostics(self, level, state) -> dict:
        return {"usable_holes": len(self.usable_anchors(level, state))}

    def piece_poses(self, level, state) -> list[dict]:
        """Per piece: id, status, centre x / y (px), angle (degrees), pinned anchor ids."""
        lv = level.lv
        nA, nP, H, SS = int(lv[0]), int(lv[1]), int(lv[2]), int(lv[11])
        out = []
        for p in range(nP):
            b = nA + p * SS
            out.append({"id": level.extra["piece_ids"][p], "status": ("attached", "released", "left")[int(state[b])],
                        "x": int(state[b + 1]) / Q, "y": int(state[b + 2]) / Q,
                        "angle": int(state[b + 3]) * 360.0 / N_ANG,
                        "pins": [level.extra["anchor_ids"][int(a)] for a in state[b + 4:b + 4 + H] if a >= 0],
                        "awake": bool(state[b + 4 + H])})
        return out

    def settle_frames(self, level, state, move) -> tuple[np.ndarray, list[dict]]:
        """Apply one move and return (new state, intermediate poses). Each pose is
        {piece, status, x, y, angle} in px / degrees, in the order the settle computed them
        (one entry per swing step of a piece, one when a piece leaves). Same kernel path
        as step_into. Raises IllegalMoveError if the rules reject the move."""
        a = self.actions(level, move)[0] if isinstance(move, str) else self.check_action(level, move)
        nP = int(level.lv[1])
        rows = nP * (N_ANG // 2 // SWING_STEP + 2) + 16
        dst = np.empty_like(state)
        while True:
            trace = np.zeros((rows, 5), np.int32)
            code, tn = move_trace(level.lv, state, dst, np.int64(a), trace)
            if code != OK:
                raise self.rejection_error(level, a, int(code))
            if tn < rows:          # the buffer was big enough for every pose
                break
            rows *= 4
        frames = [{"piece": level.extra["piece_ids"][int(r[0])], "status": ("attached", "released", "left")[int(r[1])],
                   "x": int(r[2]) / Q, "y": int(r[3]) / Q, "angle": int(r[4]) * 360.0 / N_ANG}
                  for r in trace[:tn]]
        return dst, frames

    def render_text(self, level, state):
        lv = level.lv
        nA = int(lv[0])
        ids = level.extra["anchor_ids"]
        usable = set(self.usable_anchors(level, state))
        lines = ["anchors:"]
        for a in range(nA):
            x, y = level.extra["anchors"][a]
            what = "screw" if state[a] else ("empty, usable" if a in usable else "empty, blocked")
            lines.append(f"  {ids[a]:<22} ({x:6.1f},{y:6.1f})  {what}")
        lines.append("pieces:")
        left = 0
        for pc in self.piece_poses(level, state):
            if pc["status"] == "left":
                left += 1
                lines.append(f"  {pc['id']:<22} left")
            elif pc["status"] == "released":
                lines.append(f"  {pc['id']:<22} ({pc['x']:6.1f},{pc['y']:6.1f}) {pc['angle']:6.2f} deg  "
                             f"released, resting on pegs")
            else:
                lines.append(f"  {pc['id']:<22} ({pc['x']:6.1f},{pc['y']:6.1f}) {pc['angle']:6.2f} deg  "
                             f"pins: {', '.join(pc['pins']) or '-'}")
        lines.append(f"left {left} / {int(lv[1])}" + ("   SOLVED" if self.is_solved(level, state) else
                                                     ("   (no usable hole: dead end)" if self.is_dead_end(level, state) else "")))
        return "\n".join(lines)


PUZZLE = BoltUnscrew()


# ---------------------------------------------------------------------------- screen (UI)
from longpuzzle.engine.geometry import Rect as _Rect, Widget as _Widget  # noqa: E402
from longpuzzle.engine.suite import GameUI  # noqa: E402
from longpuzzle.engine.suite.intents import Deselect, Move, Refuse, Select  # noqa: E402

def _underneath(a: np.ndarray) -> np.ndarray:
    """The array a read-only view (Board.state) shows, or ``a`` itself: the same move's
    arrays are then the same objects, and the kernel is given the arrays it is compiled for."""
    b = a.base
    return b if not a.flags.writeable and type(b) is np.ndarray and b.shape == a.shape else a


TOUCH_BOX = 64.0                      # BOLT_DIAMETER + 20, centred on every anchor
PLAY_ZONE = (20.0, 120.0, 520.0, 820.0)
HINT_DEFAULT = "Tap a screw, then tap an empty spot to move it there."
HINT_SELECT_FIRST = "First select an anchor with a screw."
HINT_SELECTED = "Screw selected: tap an empty spot to put it there."
HINT_SWITCHED = "Switched screw: choose an empty spot to continue."
HINT_UNSETTLED = "The boards near that hole are still moving; wait until they settle."
HINT_BLOCKED = "This spot is blocked by the solid part of a board or pad."
HINT_RELEASED_MANY = "The shared screw was moved: several boards came loose!"
HINT_RELEASED_ONE = "The board came loose; wait for it to drop out."
HINT_PARTIAL_SHARED = "That screw held several boards; deal with the remaining supports first."
HINT_PARTIAL_ONE = "The board still hangs; remove its next supporting screw."
HINT_PINNED_MANY = "The screw went through overlapping holes and pinned several boards."
HINT_PINNED_ONE = "Screw moved."
HINT_FREED = "A spot is free again; keep removing the remaining screws."
MOVE_MS = 300                         # the screw travels from its anchor to the target
SETTLE_MS = 550                       # then the pieces swing and fall


class BoltUnscrewUI(GameUI):
    """The Bolt Unscrew screen (RULES.md 2.1-2.2): design px of the level data directly.
    Every anchor has a 64 x 64 touch box centred on it (later anchors on top where boxes
    overlap); boards and the background take no taps. A tap acts on release (TOUCH_END)
    inside the box of the anchor that was pressed.

    UI state ``{"selected": anchor or None, "hint": text or None}`` (None = the default
    instruction). No selection: an empty anchor only changes the hint, a screw is selected.
    With a selection: the same screw deselects, another screw takes the selection, an empty
    anchor tries the move - accepted: the screw travels there and the selection clears;
    refused (the hole is blocked): the selection is KEPT and only the hint changes. No undo;
    dead ends are never announced."""
    pointer_up_only = True        # on_pointer acts on the release alone

    exit_to = "home"
    instructions = HINT_DEFAULT
    complete_title = "Level complete!"
    complete_text = "Every board has dropped out"
    header_y = 32
    instructions_y = 880

    def __init__(self, puzzle, level):
        super().__init__(puzzle, level)
        ex = level.extra
        self.n = int(level.lv[0])
        self.anchors = [(float(x), float(y)) for x, y in ex["anchors"]]
        self.ids = list(ex["anchor_ids"])
        self.boxes = [_Rect.centred(x, y, TOUCH_BOX, TOUCH_BOX) for x, y in self.anchors]
        self._targets = [_Widget(f"anchor:{i}", self.boxes[i], "target", self.ids[i], (i,)) for i in range(self.n)]
        self._index = {w.id: i for i, w in enumerate(self._targets)}
        self._wids = [w.id for w in self._targets]             # anchor index -> its widget id
        self._box_bounds = [(b.x0, b.y0, b.x1, b.y1) for b in self.boxes]   # anchor -> touch box
        # move_summary of the last accepted move seen here, as (before, after, src, dst, facts):
        # animation_ms and move_hint both ask for the same move (before / after arrays are
        # never modified, so their identity names the move; the handlers hold read-only views
        # of the arrays animation_ms is given, named by the array underneath). A cache only.
        self._last_summary = None
        self._buttons = {d: self._make_buttons(d) for d in (False, True)}
        # a point of every anchor's box that no later (topmost) box or button covers
        covers = [b.shape for b in self._buttons[False]]
        self.tap_points = []
        for i, (x, y) in enumerate(self.anchors):
            later = [self.boxes[j] for j in range(i + 1, self.n)] + covers
            self.tap_points.append(self._free_point(self.boxes[i], x, y, later))

    @staticmethod
    def _make_buttons(direct):
        ws = [_Widget("restart", _Rect.centred(470, 34, 80, 36), "pill_button", "Restart")]
        if not direct:
            ws.append(_Widget("menu", _Rect.centred(380, 34, 80, 36), "pill_button", "Menu"))
        return ws

    @staticmethod
    def _free_point(box, x, y, others, margin=4.0):
        """The point (x + 2i, y + 2j) of ``box`` nearest its anchor (x, y) that no rectangle of
        ``others`` covers, nor covers ``margin`` px to its left, right, top or bottom (pixel
        rounding); of equally near ones the first in the order i, then j, from -n up; (x, y)
        itself when every point is covered. Every candidate against every rectangle at once
        (numpy, the same float arithmetic as a scan point by point): a level's screen is
        built in milliseconds, not the seconds a Python scan takes over 30 anchors."""
        step = 2.0
        n = int((box.w / 2 - margin) // step)
        k = np.arange(-n, n + 1)
        i, j = np.repeat(k, k.size), np.tile(k, k.size)         # i outer, j inner
        px, py = x + i * step, y + j * step
        free = np.ones(px.size, bool)
        if others:
            r = np.array([(o.x0, o.y0, o.x1, o.y1) for o in others], np.float64)
            x0, y0, x1, y1 = (r[:, c][None, :] for c in range(4))
            for dx, dy in ((0.0, 0.0), (margin, 0.0), (-margin, 0.0), (0.0, margin), (0.0, -margin)):
                qx, qy = (px + dx)[:, None], (py + dy)[:, None]
                free &= ~((x0 <= qx) & (qx < x1) & (y0 <= qy) & (qy < y1)).any(axis=1)
        if not free.any():
            return (x, y)
        cand = np.flatnonzero(free)
        best = cand[np.argmin((i * i + j * j)[cand])]              # the first of the nearest
        return (float(px[best]), float(py[best]))

    # -- layout
    def buttons(self, direct):
        return self._buttons[bool(direct)]

    def targets(self):
        return self._targets

    def initial_state(self):
        return {"selected": None, "hint": None}

    def check_ui(self, ui):
        why = super().check_ui(ui)
        if why:
            return why
        sel, hint = ui["selected"], ui["hint"]
        if sel is not None and not (type(sel) is int and 0 <= sel < self.n):
            return f"selected must be an anchor index 0..{self.n - 1} or null"
        if hint is not None and not (type(hint) is str and len(hint) <= 300):
            return "hint must be a short text or null"
        return ""

    # -- input
    def on_pointer(self, board, kind, x, y, t):
        if kind != "up":
            return []
        a = self._index.get(board.pointer.get("target"))
        if a is None:
            return []
        x0, y0, x1, y1 = self._box_bounds[a]
        if not (x0 <= x < x1 and y0 <= y < y1):
            return []                 # released outside the pressed anchor: cancelled
        return self.tap(board, a)

    def tap(self, board, a: int):
        """A tap on anchor ``a`` (intents.py: a generator of intents)."""
        ui = board.ui
        sel = ui.get("selected")
        wid = self._wids[a]
        occupied = board.at(a) != 0
        if sel is None:
            if not occupied:
                ui["hint"] = HINT_SELECT_FIRST
                yield Refuse("no_screw", HINT_SELECT_FIRST, wid)
                return
            ui["selected"] = a
            ui["hint"] = HINT_SELECTED
            yield Select(wid)
            return
        if sel == a:
            ui["selected"] = None
            ui["hint"] = None
            yield Deselect(wid)
            return
        if occupied:
            ui["selected"] = a
            ui["hint"] = HINT_SWITCHED
            yield Select(wid, f"anchor:{sel}")
            return
        before = board.state
        o = yield Move(int(sel) * self.n + a)
        if o.accepted:
            ui["selected"] = None
            ui["hint"] = self.move_hint(before, board.state, int(sel), a)
        else:
            ui["hint"] = HINT_BLOCKED if o.reason == "target_blocked" else HINT_UNSETTLED

    def _summary(self, before, after, src: int, dst: int):
        """move_summary of the move src -> dst from before to after (cached for the last move)."""
        before, after = _underneath(before), _underneath(after)
        c = self._last_summary
        if c is not None and c[0] is before and c[1] is after and c[2] == src and c[3] == dst:
            return c[4]
        facts = move_summary(self.level.lv, before, after, src, dst)
        self._last_summary = (before, after, src, dst, facts)
        return facts

    def move_hint(self, before, after, src: int, dst: int) -> str:
        """The instruction line after an accepted move (as the original words it)."""
        released, partial, attached, detached, _ = self._summary(before, after, src, dst)
        if released:
            return HINT_RELEASED_MANY if released > 1 else HINT_RELEASED_ONE
        if partial:
            return HINT_PARTIAL_SHARED if detached > 1 else HINT_PARTIAL_ONE
        if attached:
            return HINT_PINNED_MANY if attached > 1 else HINT_PINNED_ONE
        return HINT_FREED

    def animation_ms(self, before, after, action, code):
        f, t = divmod(int(action), self.n)
        if self._summary(before, after, f, t)[4]:
            return MOVE_MS + SETTLE_MS
        return MOVE_MS

    def gesture_for(self, action, proj, suite=None):
        f, t = divmod(int(action), self.n)
        pts = [proj.to_px(*self.tap_points[a]) for a in (f, t)]
        return {"type": "batch", "actions": [{"type": "click", "x": int(round(px)), "y": int(round(py))}
                                             for px, py in pts]}


BoltUnscrew.ui = BoltUnscrewUI
