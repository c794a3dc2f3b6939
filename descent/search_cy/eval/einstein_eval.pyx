# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""EinStein wurfelt nicht! heuristic: a race between expected numbers of turns.

A cube that is d steps from its corner and moves on m of the six die values needs about
6 d / m turns on its own. The cubes of a side race in parallel, so their rates m / (6 d)
add up; a side's expected number of turns is the inverse of that sum. The score compares
both sides on a log scale, with half a turn of tempo for the side that rolls next, a cube
that the opponent can capture on its coming turn discounted by the chance the opponent
rolls an attacker, and a small bonus per cube (cubes are the only defence against running
out of pieces, and each one is a capture threat of its own).
"""
from libc.math cimport tanh, log

from descent.search_cy.games.state cimport GameState
from descent.search_cy.games.einstein cimport EinsteinState
from descent.search_cy.eval.evaluator cimport HeuristicEvaluator

cdef enum:
    PH_SETUP_BLUE = 1   # phases as in einstein.pyx: 0/1 set-up, 2 roll, 3 move, 4 over
    PH_ROLL = 2
    PH_MOVE = 3

# The tunable weights (EinsteinEvaluator.WEIGHTS; an instance's own values in self.w):
# the chance that a threatened cube is really lost, high when the attacker moves next,
# lower when its owner moves first (it may run, or strike first); the same when the
# mover's die allows the capture (it may prefer a step); the roller's tempo in turns;
# the bonus per cube on the log-turns scale; the scale of the log-turns difference.
cdef enum:
    THREAT_NOW = 0
    THREAT_LATER = 1
    CAPTURE_NOW = 2
    TEMPO = 3
    CUBE_WEIGHT = 4
    SCALE = 5

cdef double WIN = 0.98             # a sure win next move, short of a real terminal
cdef double CLIP = 0.99

# ATTACKERS[side][cell][i]: cells from which the *other* side's cube reaches `cell` in one
# step (-1 off the board); e.g. Blue captures on (r, c) from (r+1, c), (r, c+1), (r+1, c+1).
cdef int ATTACKERS[2][25][3]
cdef int DIST[2][25]               # steps to the side's corner (Chebyshev distance)


def _init_tables():
    cdef int r, c, side, i, ar, ac, sign
    cdef int dr[3]
    cdef int dc[3]
    dr[:] = [0, 1, 1]
    dc[:] = [1, 0, 1]
    for r in range(5):
        for c in range(5):
            DIST[0][r * 5 + c] = max(4 - r, 4 - c)
            DIST[1][r * 5 + c] = max(r, c)
            for side in range(2):
                # Red's cubes are hit by Blue cubes that stand "after" them, and vice versa
                sign = 1 if side == 0 else -1
                for i in range(3):
                    ar = r + sign * dr[i]
                    ac = c + sign * dc[i]
                    ATTACKERS[side][r * 5 + c][i] = ar * 5 + ac if 0 <= ar < 5 and 0 <= ac < 5 \
                        else -1


_init_tables()


cdef inline int _movable(EinsteinState s, int side, int die) noexcept nogil:
    """Bit mask (bits 1..6) of the cubes that may move on `die`: the kernel's own rule."""
    return s._movable(side, die)


cdef class EinsteinEvaluator(HeuristicEvaluator):
    """Race evaluator for EinStein wurfelt nicht! (player 0 = Red, heading for e5).

    Set-up nodes (before both sides' cubes stand) are valued 0; at a move node the pending
    die is used: the mover's best step with a movable cube is taken into account and the
    opponent gets the tempo. Values lie within (-0.99, 0.99). Stateless between calls.
    """

    WEIGHTS = (
        ("threat_now", 0.6, 0.0, 1.0),
        ("threat_later", 0.25, 0.0, 1.0),
        ("capture_now", 0.8, 0.0, 1.0),
        ("tempo", 0.5, 0.0, 2.0),
        ("cube_weight", 0.05, 0.0, 0.5),
        ("scale", 1.0, 0.1, 4.0),
    )

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        return _value(<EinsteinState>s, self.w)


cdef double _value(EinsteinState s, const double* w) noexcept nogil:
    cdef int masks[2][7]           # movable cubes per side and die value
    cdef double rate[2][7]         # each cube's contribution to its side's rate
    cdef double total[2]
    cdef double turns[2]
    cdef double alpha, loss, best, r, x
    cdef int side, k, d, i, cell, att, code, attackers, hits, roller, mover, dist, m
    if s.phase <= PH_SETUP_BLUE or s.count[0] == 0 or s.count[1] == 0:
        return 0.0
    for side in range(2):
        for d in range(1, 7):
            masks[side][d] = _movable(s, side, d)
    mover = s.side if s.phase == PH_MOVE else -1
    roller = s.side if s.phase == PH_ROLL else s.side ^ 1
    for side in range(2):
        total[side] = 0.0
        # the roller's cubes are threatened only after its own move; the other side's
        # now (or, at a move node, right after the mover's step)
        alpha = w[THREAT_LATER] if side == roller else w[THREAT_NOW]
        for k in range(1, 7):
            rate[side][k] = 0.0
            cell = s.pos[side][k]
            if cell < 0:
                continue
            m = 0
            for d in range(1, 7):
                if masks[side][d] & (1 << k):
                    m += 1
            attackers = 0
            for i in range(3):
                att = ATTACKERS[side][cell][i]
                if att >= 0:
                    code = s.board[att]
                    # cube codes: 1..6 Red, 7..12 Blue; keep the opponent's
                    if code and (code > 6) != (side == 1):
                        attackers |= 1 << (code - 6 * (code > 6))
            loss = 0.0             # chance this cube is captured before it moves again
            if attackers:
                if mover == side ^ 1:
                    # the attacker's die is known: it captures or it does not
                    if masks[side ^ 1][s.die] & attackers:
                        loss = w[CAPTURE_NOW]
                else:
                    hits = 0
                    for d in range(1, 7):
                        if masks[side ^ 1][d] & attackers:
                            hits += 1
                    loss = alpha * hits / 6.0
            rate[side][k] = m / (6.0 * DIST[side][cell]) * (1.0 - loss)
            total[side] += rate[side][k]
    if mover >= 0:
        # the mover steps one of the cubes the die allows one cell nearer its corner (a
        # step that shortens the Chebyshev distance always exists); pick the best step
        best = total[mover]
        for k in range(1, 7):
            if masks[mover][s.die] & (1 << k):
                dist = DIST[mover][s.pos[mover][k]]
                if dist == 1:
                    return WIN if mover == 0 else -WIN
                r = total[mover] - rate[mover][k] + rate[mover][k] * dist / (dist - 1.0)
                if r > best:
                    best = r
        total[mover] = best
    for side in range(2):
        turns[side] = 1.0 / total[side] if total[side] > 0.0 else 1e6
    # the side that rolls next is half a turn ahead (and never below half its estimate)
    if turns[roller] > 2.0 * w[TEMPO]:
        turns[roller] -= w[TEMPO]
    else:
        turns[roller] *= 0.5
    x = log(turns[1]) - log(turns[0]) + w[CUBE_WEIGHT] * (s.count[0] - s.count[1])
    x = tanh(w[SCALE] * x)
    if x > CLIP:
        return CLIP
    if x < -CLIP:
        return -CLIP
    return x
