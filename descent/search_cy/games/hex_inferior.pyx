# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Inferior cells of a Hex position, from the six neighbours of each cell.

The theory is Hayward, Björnsson, Johanson et al. (dead cell analysis, 2003-2007), the
inferior-cell analysis every strong Hex program runs (MoHex's ``InferiorCells``). Only the
ring of six neighbours is read here (an off-board neighbour counts as a stone of the
player whose edge it lies beyond), which keeps the analysis a table lookup a cell:

- **Dead**: a cell whose colour never changes the winner. A stone joins only its own
  neighbours, which are adjacent to each other around the ring; so the cell is dead when,
  however its empty neighbours are filled, Black's neighbours form at most one run around
  the ring (then they are joined without it, and so are White's). ``DEAD_RING`` holds that
  test for all 3^6 rings.
- **Captured**: two adjacent empty cells a and b are X-captured when X answering the
  opponent's stone in either with a stone in the other leaves the intruded cell dead:
  X owns both whatever the opponent does.
- **Fill-in**: dead cells (in their ring's majority colour: any colour is exact) and
  captured pairs (in their owner's colour) are filled and the analysis repeats on the
  filled board until nothing changes. The filled position has the same winner with
  either player to move, and every other move keeps that equivalence (a dead or captured
  cell stays so as stones are added), so a best move is always outside the filled cells.
- **Vulnerable**: an empty cell c where the mover's stone would be dead once the
  opponent answers at an empty neighbour k (the killer) is dominated by k: the mover at k
  does at least as well as at c (exchange the roles of c and k in any strategy: where the
  opponent then takes c, that strategy's board has the opponent at k and a dead stone at
  c, no better for the mover). A cell is pruned only while its killer is kept, so a chain
  of killers ends in a kept move.

Nothing here decides a game: where every empty cell is filled or pruned, ``c_analyse``
returns 0 kept and its callers (``rave``'s expansion, ``kept``) prune nothing.
"""
from libc.stdint cimport int8_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from descent.search_cy.games.hex cimport HexState

# the six neighbours of a cell in cyclic order (consecutive ones are adjacent); the
# opposite of direction k is k + 3
cdef int IDR[6]
cdef int IDC[6]
IDR[:] = [-1, -1, 0, 1, 1, 0]
IDC[:] = [0, 1, 1, 0, -1, -1]


cdef void ring_table(int n, int* out) noexcept nogil:
    """The six neighbours of each cell of an n x n board in cyclic order (``out``: 6 ints
    a cell): the neighbour cell, or -1 beyond the top, -2 the bottom, -3 the left, -4 the
    right (top and bottom checked first: a point beyond two edges reads as the first; a
    corner cell touches both its edges through its other neighbours)."""
    cdef int r, c, k, rr, cc, code
    for r in range(n):
        for c in range(n):
            for k in range(6):
                rr = r + IDR[k]
                cc = c + IDC[k]
                if rr < 0:
                    code = -1
                elif rr >= n:
                    code = -2
                elif cc < 0:
                    code = -3
                elif cc >= n:
                    code = -4
                else:
                    code = rr * n + cc
                out[(r * n + c) * 6 + k] = code


cdef int POW3[7]
POW3[:] = [1, 3, 9, 27, 81, 243, 729]

LABELS = ("keep", "dead", "black", "white", "vulnerable", "stone")


def _ring_is_dead(int code) -> bool:
    """Whether every filling of the ring's empty points leaves Black's points (and so
    White's) in at most one run around the ring."""
    cdef int k, fill, e, runs
    cdef int v[6]
    cdef int empty[6]
    e = 0
    for k in range(6):
        v[k] = (code // POW3[k]) % 3
        if v[k] == 0:
            empty[e] = k
            e += 1
    cdef int w[6]
    for fill in range(1 << e):
        for k in range(6):
            w[k] = v[k]
        for k in range(e):
            w[empty[k]] = 1 if (fill >> k) & 1 else 2
        runs = 0
        for k in range(6):
            if w[k] == 1 and w[(k + 5) % 6] != 1:
                runs += 1
        if runs > 1:
            return False
    return True


cdef int8_t DEAD_RING[RING_CODES]
for _c in range(RING_CODES):
    DEAD_RING[_c] = 1 if _ring_is_dead(_c) else 0


def dead_ring(int code) -> bool:
    """Whether a ring (sum of point * 3**k, point 0 empty, 1 Black, 2 White, k in cyclic
    order) makes its cell dead. For tests."""
    if not 0 <= code < RING_CODES:
        raise ValueError(f"ring code {code} is outside [0, {RING_CODES})")
    return bool(DEAD_RING[code])


cdef class HexInferior:
    """Inferior-cell analysis of n x n Hex boards (see the module notes). Not thread-safe:
    one per search thread."""

    def __cinit__(self, int n):
        if not 1 <= n <= 25:
            raise ValueError(f"board size {n} is outside [1, 25]")
        self.n = n
        self.ncells = n * n
        self.nb = <int*>malloc(6 * self.ncells * sizeof(int))
        self.work = <int8_t*>malloc(self.ncells)
        if not self.nb or not self.work:
            raise MemoryError()
        cdef int r, c, k, rr, cc
        for r in range(n):
            for c in range(n):
                for k in range(6):
                    rr = r + IDR[k]
                    cc = c + IDC[k]
                    # beyond the top or bottom: Black's edge (checked first, so a point
                    # beyond two edges is Black's; either reading gives the same runs)
                    if rr < 0 or rr >= n:
                        self.nb[(r * n + c) * 6 + k] = -1
                    elif cc < 0 or cc >= n:
                        self.nb[(r * n + c) * 6 + k] = -2
                    else:
                        self.nb[(r * n + c) * 6 + k] = rr * n + cc

    def __dealloc__(self):
        free(self.nb)
        free(self.work)

    cdef inline int _code(self, int cell) noexcept nogil:
        cdef int k, v, code = 0
        cdef int* ring = self.nb + cell * 6
        for k in range(6):
            v = ring[k]
            if v >= 0:
                code += self.work[v] * POW3[k]
            else:
                code += (-v) * POW3[k]
        return code

    cdef int c_analyse(self, const int8_t* board, int mover, int8_t* out) noexcept nogil:
        """Labels every cell of ``board`` (0 empty, 1 Black, 2 White) in ``out`` (INF_*)
        for ``mover`` (1 Black, 2 White) to move; returns how many cells are INF_KEEP."""
        cdef int c, b, k, x, code, cb, blacks, kept = 0
        cdef int opp = 3 - mover
        cdef bint changed = True, done
        cdef int* ring
        memcpy(self.work, board, self.ncells)
        for c in range(self.ncells):
            out[c] = INF_STONE if board[c] else INF_KEEP
        while changed:
            changed = False
            for c in range(self.ncells):
                if self.work[c]:
                    continue
                code = self._code(c)
                if DEAD_RING[code]:
                    blacks = 0
                    for k in range(6):
                        x = (code // POW3[k]) % 3
                        blacks += 1 if x == 1 else (-1 if x == 2 else 0)
                    out[c] = INF_DEAD
                    self.work[c] = 1 if blacks >= 0 else 2
                    changed = True
                    continue
                ring = self.nb + c * 6
                done = False
                for k in range(6):
                    b = ring[k]
                    if b <= c or self.work[b]:
                        continue              # an edge, a stone, or a pair seen from b
                    cb = self._code(b)
                    for x in range(1, 3):
                        # the opponent takes c, x answers at b: is c dead? and mirrored
                        if DEAD_RING[code + x * POW3[k]] and DEAD_RING[cb + x * POW3[(k + 3) % 6]]:
                            out[c] = out[b] = INF_BLACK if x == 1 else INF_WHITE
                            self.work[c] = self.work[b] = x
                            changed = True
                            done = True
                            break
                    if done:
                        break
        for c in range(self.ncells):
            if self.work[c]:
                continue
            code = self._code(c)
            ring = self.nb + c * 6
            for k in range(6):
                b = ring[k]
                if b >= 0 and out[b] == INF_KEEP and DEAD_RING[code + opp * POW3[k]]:
                    out[c] = INF_VULNERABLE
                    break
            if out[c] == INF_KEEP:
                kept += 1
        return kept

    def labels(self, HexState s) -> list:
        """Each cell's label (``LABELS``: keep, dead, black, white, vulnerable, stone)
        for the player to move in ``s``."""
        if s.n != self.n:
            raise ValueError(f"a {s.n}x{s.n} board given to a {self.n}x{self.n} analysis")
        cdef bytearray out = bytearray(self.ncells)
        cdef bytearray board = bytearray(self.ncells)
        cdef int i
        for i in range(self.ncells):
            board[i] = s.cells[i]
        cdef int8_t* ob = <int8_t*><char*>out
        cdef const int8_t* bb = <const int8_t*><char*>board
        self.c_analyse(bb, s.side + 1, ob)
        return [LABELS[out[i]] for i in range(self.ncells)]

    def kept(self, HexState s) -> list:
        """The legal moves the analysis keeps for the player to move (every legal move
        when it would keep no cell; the swap is always kept)."""
        labels = self.labels(s)
        moves = [a for a in s.legal_actions() if a >= s.ncells or labels[a] == "keep"]
        if not any(a < s.ncells for a in moves):
            return list(s.legal_actions())
        return moves
