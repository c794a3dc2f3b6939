# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Local patterns of Hex cells and the move prior fitted on them.

A cell's pattern is the state of twelve points around it: its six neighbours and its six
bridge points (two rows or columns away, across a pair of neighbours), each empty, the
mover's or the opponent's. A point off the board counts as a stone of the player whose
edge it lies beyond (a point beyond two edges counts as the mover's), so the patterns
know the edges the way Hex players do: an edge is a row of its owner's stones.

The key is read in the mover's frame, so Black's and White's patterns share one table:
for White the board is read transposed (its left and right edges become top and bottom).
Hex keeps one symmetry after that, the half turn, and the key is the smaller of the two
readings. A cell also has a local code: 1 beside the last move, 2 at one of its bridge
points, else 0.

The prior of a move is gamma(pattern) * gamma(local), normalised over the moves: a
generalised Bradley-Terry model (Coulom 2007), the model MoHex 2.0 uses for its prior
knowledge. ``descent patterns fit`` fits the gammas on self-play records; unseen patterns
keep gamma 1. Patterns are local, so one table serves every board size.

A third factor sees the whole board: a cell's route code says how far the shortest
two-distance route of each player through it is from that player's shortest route
anywhere (0 on it, up to ROUTE_GAP, ROUTE_OFF without one), the mover's and the
opponent's together (Hex's evaluator computes it: ``Evaluator.c_move_codes``). It costs a
two-distance computation, so the search applies it only at nodes it has visited a few
times (``rave``'s ``route_at``): the pattern and local gammas are fitted alone, for the
prior a node starts with, and the route gammas on top of them.
"""
from libc.stdint cimport int8_t, int32_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from descent.search_cy.games.hex cimport HexState

import numpy as np

cdef enum:
    OFF_BLACK = -1             # beyond the top or bottom edge
    OFF_WHITE = -2             # beyond the left or right edge
    OFF_MOVER = -3             # beyond two edges

# neighbours in cyclic order, then bridge point k between neighbours k and k + 1
cdef int PDR[12]
cdef int PDC[12]
PDR[:] = [-1, -1, 0, 1, 1, 0, -2, -1, 1, 2, 1, -1]
PDC[:] = [0, 1, 1, 0, -1, -1, 1, 2, 1, -1, -2, -1]
# White reads the board transposed: neighbour k becomes 5 - k, bridge point k becomes 4 - k
cdef int TRANSPOSED[12]
TRANSPOSED[:] = [5, 4, 3, 2, 1, 0, 10, 9, 8, 7, 6, 11]
# the half turn: neighbour k becomes k + 3, bridge point k becomes k + 3
cdef int HALF_TURN[12]
HALF_TURN[:] = [3, 4, 5, 0, 1, 2, 9, 10, 11, 6, 7, 8]
cdef int POW3[12]
POW3[:] = [1, 3, 9, 27, 81, 243, 729, 2187, 6561, 19683, 59049, 177147]


PATTERN_COUNT = PATTERN_KEYS     # the enum constants, for Python
LOCAL_COUNT = LOCAL_CODES
ROUTE_COUNT = ROUTE_CODES
ROUTE_GAP_CAP = ROUTE_GAP
ROUTE_NONE = ROUTE_OFF
SHIPPED_FILE = "hex_prior.npz"
_shipped = None


def load_weights(path) -> tuple:
    """Pattern weights from an .npz file written by ``save_weights`` (ValueError, naming
    the file, when it is not one). A file without route gammas (written before them)
    gets every route gamma 1."""
    try:
        with np.load(path) as f:
            keys = np.asarray(f["keys"], np.int64)
            gammas = np.asarray(f["gammas"], np.float32)
            local = np.asarray(f["local"], np.float32)
            route = np.asarray(f["route"], np.float32) if "route" in f.files \
                else np.ones(ROUTE_CODES, np.float32)
    except (OSError, KeyError, ValueError) as e:
        raise ValueError(f"{path}: not a pattern weights file ({e})") from None
    gp = np.ones(PATTERN_KEYS, np.float32)
    if keys.shape != gammas.shape or keys.ndim != 1 or local.shape != (LOCAL_CODES,) \
            or route.shape != (ROUTE_CODES,) \
            or (keys.size and (keys.min() < 0 or keys.max() >= PATTERN_KEYS)):
        raise ValueError(f"{path}: pattern weights of the wrong shape")
    gp[keys] = gammas
    return gp, local, route


def save_weights(path, gp, gl, gr=None) -> None:
    """Writes pattern weights: the gammas that differ from 1, the local gammas and the
    route gammas (every one 1 when ``gr`` is None)."""
    gp = np.asarray(gp, np.float32)
    keys = np.flatnonzero(gp != 1.0)
    route = np.ones(ROUTE_CODES, np.float32) if gr is None else np.asarray(gr, np.float32)
    np.savez_compressed(path, keys=keys.astype(np.int32), gammas=gp[keys],
                        local=np.asarray(gl, np.float32), route=route)


def shipped_weights() -> tuple:
    """The weights shipped beside this module (loaded once)."""
    global _shipped
    if _shipped is None:
        from pathlib import Path
        _shipped = load_weights(Path(__file__).with_name(SHIPPED_FILE))
    return _shipped


def unit_weights() -> tuple:
    """Every gamma 1: the uniform prior."""
    return (np.ones(PATTERN_KEYS, np.float32), np.ones(LOCAL_CODES, np.float32),
            np.ones(ROUTE_CODES, np.float32))


cdef class HexPatterns:
    """The pattern keys of one board size, with a table of gammas."""

    def __cinit__(self, int n, weights=None):
        cdef int r, c, k, rr, cc, code
        cdef bint row_off, col_off
        if n < 1 or n > 25:
            raise ValueError(f"board size {n} is out of range 1..25")
        self.n = n
        self.pts = <int*>malloc(n * n * PATTERN_POINTS * sizeof(int))
        if not self.pts:
            raise MemoryError()
        for r in range(n):
            for c in range(n):
                for k in range(PATTERN_POINTS):
                    rr = r + PDR[k]
                    cc = c + PDC[k]
                    row_off = rr < 0 or rr >= n
                    col_off = cc < 0 or cc >= n
                    if row_off and col_off:
                        code = OFF_MOVER
                    elif row_off:
                        code = OFF_BLACK
                    elif col_off:
                        code = OFF_WHITE
                    else:
                        code = rr * n + cc
                    self.pts[(r * n + c) * PATTERN_POINTS + k] = code
        weights = unit_weights() if weights is None else tuple(weights)
        if len(weights) == 2:             # no route factor: every route gamma 1
            weights = weights + (np.ones(ROUTE_CODES, np.float32),)
        if len(weights) != 3:
            raise ValueError("pattern weights are (pattern, local[, route]) gammas")
        gp, gl, gr = (np.ascontiguousarray(w, dtype=np.float32) for w in weights)
        if gp.shape != (PATTERN_KEYS,) or gl.shape != (LOCAL_CODES,) \
                or gr.shape != (ROUTE_CODES,):
            raise ValueError(f"pattern weights must have shapes ({PATTERN_KEYS},), "
                             f"({LOCAL_CODES},) and ({ROUTE_CODES},), not {gp.shape}, "
                             f"{gl.shape} and {gr.shape}")
        if not all(np.all(np.isfinite(w)) and np.all(w > 0) for w in (gp, gl, gr)):
            raise ValueError("pattern gammas must be finite and positive")
        self.weights = (gp, gl, gr)
        self.gp = gp
        self.gl = gl
        self.gr = gr

    def __dealloc__(self):
        free(self.pts)

    cdef int c_key(self, const int8_t* board, int cell, int side) noexcept nogil:
        cdef int32_t ab[2]
        self.c_readings(board, cell, side, ab)
        return ab[0] if ab[0] < ab[1] else ab[1]

    cdef void c_readings(self, const int8_t* board, int cell, int side, int32_t* ab) noexcept nogil:
        """Both readings of the cell's pattern (``ab[0]`` as read, ``ab[1]`` after the half
        turn): the key is the smaller. Kept per cell, they follow the board stone by
        stone (``c_moved``) where a search would otherwise read twelve points again."""
        cdef int* p = self.pts + cell * PATTERN_POINTS
        cdef int d[12]
        cdef int k, x, v, own = side + 1, a = 0, b = 0
        for k in range(PATTERN_POINTS):
            x = p[TRANSPOSED[k] if side == 1 else k]
            if x >= 0:
                v = board[x]
            elif x == OFF_MOVER:
                v = own
            elif x == OFF_BLACK:
                v = 1
            else:
                v = 2
            d[k] = 0 if v == 0 else (1 if v == own else 2)
        for k in range(PATTERN_POINTS):
            a += d[k] * POW3[k]
            b += d[HALF_TURN[k]] * POW3[k]
        ab[0] = a
        ab[1] = b

    cdef void c_moved(self, int j, int side, int colour, int32_t* ab) noexcept nogil:
        """Updates the readings ``ab`` of the cell at pattern point j of a cell m that
        just got a stone of ``colour`` (1 Black, 2 White): m is that cell's point
        HALF_TURN[j] (the opposite offset), read by ``side``."""
        cdef int q = HALF_TURN[j]
        cdef int k = TRANSPOSED[q] if side == 1 else q
        cdef int v = 1 if colour == side + 1 else 2
        ab[0] += v * POW3[k]
        ab[1] += v * POW3[HALF_TURN[k]]

    cdef int c_local(self, int cell, int last) noexcept nogil:
        cdef int* p = self.pts + cell * PATTERN_POINTS
        cdef int k
        if last < 0:
            return 0
        for k in range(PATTERN_POINTS):
            if p[k] == last:
                return 1 if k < 6 else 2
        return 0

    cdef double c_gamma(self, const int8_t* board, int cell, int side, int last) noexcept nogil:
        return self.gp[self.c_key(board, cell, side)] * self.gl[self.c_local(cell, last)]

    cdef double c_route_gamma(self, int code) noexcept nogil:
        """The gamma of a route code (``Evaluator.c_move_codes`` of Hex's evaluator)."""
        return self.gr[code]

    # -- Python views, for the fitting tool and the tests --------------------------------
    def key(self, state, int cell) -> int:
        """The pattern key of ``cell`` for the player to move in ``state`` (a HexState)."""
        cdef int8_t* board = _board(state, self.n)
        try:
            return self.c_key(board, cell, state.current_player())
        finally:
            free(board)

    def features(self, state, int last=-1) -> tuple:
        """(cells, pattern keys, local codes) of every empty cell of ``state``, by the
        last move ``last`` (-1: none), as int32 arrays."""
        cdef int8_t* board = _board(state, self.n)
        cdef int i, m = 0, side = state.current_player()
        cells = np.zeros(self.n * self.n, np.int32)
        keys = np.zeros(self.n * self.n, np.int32)
        local = np.zeros(self.n * self.n, np.int32)
        cdef int[::1] cv = cells, kv = keys, lv = local
        try:
            for i in range(self.n * self.n):
                if board[i] == 0:
                    cv[m] = i
                    kv[m] = self.c_key(board, i, side)
                    lv[m] = self.c_local(i, last)
                    m += 1
        finally:
            free(board)
        return cells[:m], keys[:m], local[:m]

    def keys_after(self, state, moves) -> list:
        """The key of every cell for each player to move, (Black's, White's), after
        ``moves`` (cells, with alternating colours from the player to move in ``state``)
        are placed, followed stone by stone with ``c_moved`` from the keys of ``state``:
        for the tests that hold it equal to reading the final board."""
        cdef int8_t* board = _board(state, self.n)
        cdef int ncells = self.n * self.n
        cdef int32_t* ab = <int32_t*>malloc(ncells * 4 * sizeof(int32_t))
        cdef int c, s, j, m, p, colour = state.current_player() + 1
        try:
            if not ab:
                raise MemoryError()
            for c in range(ncells):
                for s in range(2):
                    self.c_readings(board, c, s, ab + (c * 2 + s) * 2)
            for m in moves:
                if not 0 <= m < ncells or board[m]:
                    raise ValueError(f"cell {m} is not an empty cell")
                board[m] = colour
                for j in range(PATTERN_POINTS):
                    p = self.pts[m * PATTERN_POINTS + j]
                    if p >= 0:
                        for s in range(2):
                            self.c_moved(j, s, colour, ab + (p * 2 + s) * 2)
                colour = 3 - colour
            return [tuple(min(ab[(c * 2 + s) * 2], ab[(c * 2 + s) * 2 + 1]) for s in range(2))
                    for c in range(ncells)]
        finally:
            free(board)
            free(ab)

    def prior(self, state, int last=-1) -> dict:
        """The prior probability of every empty cell of ``state``: {cell: p}."""
        cells, keys, local = self.features(state, last)
        gp, gl, _ = self.weights
        g = gp[keys].astype(np.float64) * gl[local]
        total = g.sum()
        return {int(c): float(x / total) for c, x in zip(cells, g)}


cdef int8_t* _board(state, int n) except NULL:
    cdef HexState s
    cdef int8_t* board
    if not isinstance(state, HexState):
        raise ValueError("patterns read Hex positions only")
    s = <HexState>state
    if s.n != n:
        raise ValueError(f"a {s.n}x{s.n} position for {n}x{n} patterns")
    board = <int8_t*>malloc(n * n)
    if not board:
        raise MemoryError()
    memcpy(board, s.cells, n * n)
    return board
