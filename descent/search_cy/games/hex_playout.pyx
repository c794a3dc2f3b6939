# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Hex playouts in C: the board a playout fills, its policy and its scoring (the playouts
of the ``rave`` search, MoHex's).

A playout fills the rest of the board at random, except that a player whose bridge (two
of its stones, or a stone and its edge, with two common empty neighbours) was just
intruded answers in the other cell of the bridge. A full Hex board has exactly one
winner, so a playout never checks for a win on the way and one flood fill at the end
scores it.

Pattern playouts (``pp``, with the move prior's patterns, ``games/hex_patterns.pyx``):
the cell not answering a bridge is drawn in proportion to its pattern gamma, capped at
``pp_cap``; each cell's readings and weights for both players to move are followed
stone by stone, in blocks of 16 cells so that a draw reads a few sums. The fill-in
(``fill_playouts``, ``games/hex_inferior.pyx``): a playout starts from the dead and
captured cells filled.

``HexPlayout`` holds one random stream, the root position and the board being filled;
the ``rave`` search's trees derive from it (the tree's walk places its stones on the
same board, the playout goes on from there).
"""
from libc.stdint cimport int8_t, int16_t, int32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from descent.search_cy.games.hex cimport HexState
from descent.search_cy.games.hex_patterns cimport HexPatterns, PATTERN_POINTS
from descent.search_cy.games.hex_inferior cimport (
    HexInferior, INF_DEAD, INF_BLACK, INF_WHITE, ring_table)
from descent.search_cy.games.zobrist cimport splitmix64


cdef inline int _colour(const int8_t* board, int x) noexcept nogil:
    """Stone colour of a ring code: 0 empty, 1 black, 2 white (edges count as stones)."""
    if x >= 0:
        return board[x]
    if x == EDGE_TOP or x == EDGE_BOTTOM:
        return 1
    if x == NO_CELL:
        return 0
    return 2


cdef inline double _pp_gamma(HexPlayout self, int32_t* ab) noexcept nogil:
    cdef double g = self.pat.gp[ab[0] if ab[0] < ab[1] else ab[1]]
    return g if g < self.pp_cap else self.pp_cap


cdef inline void _pp_set(HexPlayout self, int side, int cell, double g) noexcept nogil:
    cdef int i = side * self.ncells + cell
    cdef float old = self.pw[i]
    cdef float new = <float>g
    cdef double d = <double>new - <double>old
    self.pw[i] = new
    self.pblk[side * self.nblk + (cell >> 4)] += d
    self.ptot[side] += d


cdef class HexPlayout:
    """The playout board of an n x n Hex position, with its random stream."""

    def __cinit__(self, int n, *args, **kwargs):
        self.n = n
        self.ncells = n * n
        self.ring = <int*>malloc(6 * self.ncells * sizeof(int))
        self.root_board = <int8_t*>malloc(self.ncells)
        self.board = <int8_t*>malloc(self.ncells)
        self.emp = <int16_t*>malloc(self.ncells * sizeof(int16_t))
        self.epos = <int16_t*>malloc(self.ncells * sizeof(int16_t))
        self.stack = <int16_t*>malloc(self.ncells * sizeof(int16_t))
        self.seen = <int8_t*>malloc(self.ncells)
        self.labels = <int8_t*>malloc(self.ncells)
        self.nblk = (self.ncells + 15) >> 4
        self.pkey = <int32_t*>malloc(4 * self.ncells * sizeof(int32_t))
        self.root_pkey = <int32_t*>malloc(4 * self.ncells * sizeof(int32_t))
        self.pw = <float*>malloc(2 * self.ncells * sizeof(float))
        self.root_pw = <float*>malloc(2 * self.ncells * sizeof(float))
        self.pblk = <double*>malloc(2 * self.nblk * sizeof(double))
        self.root_pblk = <double*>malloc(2 * self.nblk * sizeof(double))
        self.rng = 0
        self.pat = None
        self.inferior = None
        self.pp = False
        self.pp_cap = 0.0
        self.fill_playouts = False
        if (not self.ring or not self.root_board or not self.board or not self.emp
                or not self.epos or not self.stack or not self.seen or not self.labels
                or not self.pkey or not self.root_pkey or not self.pw or not self.root_pw
                or not self.pblk or not self.root_pblk):
            raise MemoryError()
        ring_table(n, self.ring)      # EDGE_TOP..EDGE_RIGHT are its -1..-4

    def __dealloc__(self):
        free(self.ring)
        free(self.root_board)
        free(self.board)
        free(self.emp)
        free(self.epos)
        free(self.stack)
        free(self.seen)
        free(self.labels)
        free(self.pkey)
        free(self.root_pkey)
        free(self.pw)
        free(self.root_pw)
        free(self.pblk)
        free(self.root_pblk)

    cdef void c_set_root(self, const int8_t* cells) noexcept nogil:
        """The root position from ``cells``, and the pattern playouts' readings and
        weights of it (pattern playouts are off where there are no patterns)."""
        cdef int i
        for i in range(self.ncells):
            self.root_board[i] = cells[i]
        if self.pp and self.pat is not None:
            self.c_pp_init(self.root_board)
            memcpy(self.root_pkey, self.pkey, 4 * self.ncells * sizeof(int32_t))
            memcpy(self.root_pw, self.pw, 2 * self.ncells * sizeof(float))
            memcpy(self.root_pblk, self.pblk, 2 * self.nblk * sizeof(double))
            self.root_ptot[0] = self.ptot[0]
            self.root_ptot[1] = self.ptot[1]
        else:
            self.pp = False

    # -- pattern playouts -----------------------------------------------------------------
    cdef void c_pp_init(self, const int8_t* board) noexcept nogil:
        """Every cell's readings and weights for both players to move, from ``board``."""
        cdef int c, side
        cdef double g
        for side in range(2):
            self.ptot[side] = 0.0
            for c in range(self.nblk):
                self.pblk[side * self.nblk + c] = 0.0
        for c in range(self.ncells):
            for side in range(2):
                self.pat.c_readings(board, c, side, self.pkey + (c * 2 + side) * 2)
                g = _pp_gamma(self, self.pkey + (c * 2 + side) * 2) if board[c] == 0 else 0.0
                self.pw[side * self.ncells + c] = <float>g
                self.pblk[side * self.nblk + (c >> 4)] += <float>g
                self.ptot[side] += <float>g

    cdef void c_pp_moved(self, int m, int colour) noexcept nogil:
        """Follows the stone just placed on m: its weight goes, and the patterns of the
        empty cells around it change by one point."""
        cdef int j, p, side
        cdef int* pts = self.pat.pts + m * PATTERN_POINTS
        cdef int32_t* ab
        _pp_set(self, 0, m, 0.0)
        _pp_set(self, 1, m, 0.0)
        for j in range(PATTERN_POINTS):
            p = pts[j]
            if p < 0 or self.board[p] != 0:
                continue
            for side in range(2):
                ab = self.pkey + (p * 2 + side) * 2
                self.pat.c_moved(j, side, colour, ab)
                _pp_set(self, side, p, _pp_gamma(self, ab))

    cdef int c_pp_sample(self, int side) noexcept nogil:
        """An empty cell drawn in proportion to its weight for ``side`` to move, or -1
        where rounding leaves none."""
        cdef double r = (splitmix64(&self.rng) >> 11) * (1.0 / 9007199254740992.0) \
            * self.ptot[side]
        cdef int b, c, end
        cdef double* blk = self.pblk + side * self.nblk
        cdef float* w = self.pw + side * self.ncells
        for b in range(self.nblk):
            if r >= blk[b]:
                r -= blk[b]
                continue
            end = min((b + 1) << 4, self.ncells)
            for c in range(b << 4, end):
                if w[c] > 0.0:
                    r -= w[c]
                    if r < 0.0:
                        return c
            return -1
        return -1

    # -- the board -----------------------------------------------------------------------
    cdef int c_from_root(self) noexcept nogil:
        """The board (and the pattern playouts' weights) back to the root's; returns the
        number of empty cells."""
        memcpy(self.board, self.root_board, self.ncells)
        if self.pp:
            memcpy(self.pkey, self.root_pkey, 4 * self.ncells * sizeof(int32_t))
            memcpy(self.pw, self.root_pw, 2 * self.ncells * sizeof(float))
            memcpy(self.pblk, self.root_pblk, 2 * self.nblk * sizeof(double))
            self.ptot[0] = self.root_ptot[0]
            self.ptot[1] = self.root_ptot[1]
        return self.c_empties()

    cdef int c_empties(self) noexcept nogil:
        """The empty list (and each cell's place in it) of ``board``; returns its length."""
        cdef int i, ne = 0
        for i in range(self.ncells):
            if self.board[i] == 0:
                self.emp[ne] = i
                self.epos[i] = ne
                ne += 1
            else:
                self.epos[i] = -1
        return ne

    cdef void c_fill_in(self, int side, int* ne) noexcept nogil:
        """Fills the dead and captured cells of the board (MoHex's playouts start from
        the fill-in): the playout then never spends a move there, and a captured pair
        is never lost to a playout that forgets to answer."""
        cdef int c, lab
        self.inferior.c_analyse(self.board, side + 1, self.labels)
        for c in range(self.ncells):
            lab = self.labels[c]
            if lab == INF_DEAD or lab == INF_BLACK or lab == INF_WHITE:
                self.c_place(c, self.inferior.work[c], ne)

    cdef void c_place(self, int m, int colour, int* ne) noexcept nogil:
        """Stone of ``colour`` (1 black, 2 white) on empty cell m, off the empty list."""
        cdef int p = self.epos[m]
        cdef int last = self.emp[ne[0] - 1]
        self.emp[p] = last
        self.epos[last] = p
        self.epos[m] = -1
        ne[0] -= 1
        self.board[m] = colour
        if self.pp:
            self.c_pp_moved(m, colour)

    cdef bint c_connects(self, int m, int colour) noexcept nogil:
        """Whether the group of the stone just placed on m joins its player's two edges."""
        cdef int top = 0, bottom = 0, sp = 0, x, k, y, i
        for i in range(self.ncells):
            self.seen[i] = 0
        self.stack[sp] = m
        sp += 1
        self.seen[m] = 1
        while sp > 0:
            sp -= 1
            x = self.stack[sp]
            for k in range(6):
                y = self.ring[x * 6 + k]
                if y >= 0:
                    if self.board[y] == colour and not self.seen[y]:
                        self.seen[y] = 1
                        self.stack[sp] = y
                        sp += 1
                elif colour == 1 and y == EDGE_TOP or colour == 2 and y == EDGE_LEFT:
                    top = 1
                elif colour == 1 and y == EDGE_BOTTOM or colour == 2 and y == EDGE_RIGHT:
                    bottom = 1
        return top and bottom

    cdef int c_black_wins(self) noexcept nogil:
        """On a full board: whether Black's stones join top and bottom (else White wins)."""
        cdef int n = self.n, sp = 0, x, k, y, i
        for i in range(self.ncells):
            self.seen[i] = 0
        for i in range(n):
            if self.board[i] == 1:
                self.seen[i] = 1
                self.stack[sp] = i
                sp += 1
        while sp > 0:
            sp -= 1
            x = self.stack[sp]
            if x >= self.ncells - n:
                return 1
            for k in range(6):
                y = self.ring[x * 6 + k]
                if y >= 0 and self.board[y] == 1 and not self.seen[y]:
                    self.seen[y] = 1
                    self.stack[sp] = y
                    sp += 1
        return 0

    # -- the policy ----------------------------------------------------------------------
    cdef int c_bridge_reply(self, int last, int colour) noexcept nogil:
        """The cell that restores a bridge of ``colour`` intruded by the stone on ``last``,
        or -1 (a random one of them when several are)."""
        cdef int* ring = self.ring + last * 6
        cdef int k, a
        cdef int cand[6]
        cdef int nc = 0
        for k in range(6):
            a = ring[k]
            if a >= 0 and self.board[a] == 0 \
                    and _colour(self.board, ring[(k + 5) % 6]) == colour \
                    and _colour(self.board, ring[(k + 1) % 6]) == colour:
                cand[nc] = a
                nc += 1
        if nc == 0:
            return -1
        if nc == 1:
            return cand[0]
        return cand[<int>(splitmix64(&self.rng) % <uint64_t>nc)]

    cdef void c_play_out(self, int side, int last, int* ne) noexcept nogil:
        """Fills the board from ``side`` to move, the stone on ``last`` just played: an
        intruded bridge is answered, else a pattern draw or a uniform one."""
        cdef int m
        while ne[0] > 0:
            m = -1
            if last >= 0:
                m = self.c_bridge_reply(last, side + 1)
            if m < 0 and self.pp:
                m = self.c_pp_sample(side)
            if m < 0:
                m = self.emp[<int>(splitmix64(&self.rng) % <uint64_t>ne[0])]
            self.c_place(m, side + 1, ne)
            self.moves += 1
            last = m
            side = 1 - side


# -- the playout policy, exposed for its tests ---------------------------------------------

cdef HexPlayout _on(HexState state, uint64_t seed):
    """A playout board holding ``state``'s cells, its stream at ``seed``."""
    cdef HexPlayout p = HexPlayout(state.n)
    cdef int i
    p.rng = seed
    for i in range(state.ncells):
        p.board[i] = state.cells[i]
    return p


def bridge_reply(HexState state, int last, int player, uint64_t seed=0) -> int:
    """The playouts' answer for ``player`` (0 black, 1 white) to a stone just placed on
    cell ``last`` of ``state``: the other cell of the bridge it intruded, or -1."""
    return _on(state, seed).c_bridge_reply(last, player + 1)


def playout_value(HexState state, int playouts, uint64_t seed, weights=None, double cap=0.0,
                  bint fill_in=False) -> float:
    """Black's share of wins in ``playouts`` playouts from ``state`` itself (the player
    to move first, answering the last stone): the playout policy's own value of the
    position, as the search's leaves see it. ``weights`` with ``cap`` > 0: pattern
    playouts (gammas capped at ``cap``); ``fill_in``: from the inferior-cell fill-in."""
    cdef HexPlayout p = HexPlayout(state.n)
    cdef int i, ne, black = 0
    cdef int side = state.side
    cdef int last = -1
    p.rng = seed
    if fill_in:
        p.inferior = HexInferior(state.n)
        p.fill_playouts = True
    if weights is not None and cap > 0.0:
        p.pat = HexPatterns(state.n, weights)
        p.pp = True
        p.pp_cap = cap
    if state.nhist > 0 and state.hist_action[state.nhist - 1] < state.ncells:
        last = state.hist_action[state.nhist - 1]
    p.c_set_root(state.cells)
    with nogil:
        for i in range(playouts):
            ne = p.c_from_root()
            if p.fill_playouts and ne > 1:
                p.c_fill_in(side, &ne)
            p.c_play_out(side, last, &ne)
            if p.c_black_wins():
                black += 1
    return <double>black / max(playouts, 1)


cdef HexPlayout _pattern_board(HexState state, weights, double cap, uint64_t seed):
    cdef HexPlayout p = _on(state, seed)
    p.pat = HexPatterns(state.n, weights)
    p.pp = True
    p.pp_cap = cap
    p.c_pp_init(p.board)
    return p


def pattern_weights_followed(HexState state, moves, weights, double cap) -> tuple:
    """The pattern playouts' weights (Black to move, White to move) after ``moves``
    (alternate colours from the player to move) are placed, followed stone by stone,
    and the same read afresh from the final board: for the tests that hold them equal."""
    cdef HexPlayout p = _pattern_board(state, weights, cap, 0)
    cdef int ne = p.c_empties(), i, colour = state.side + 1
    for m in moves:
        if not 0 <= m < p.ncells or p.board[m] != 0:
            raise ValueError(f"cell {m} is not an empty cell")
        p.c_place(m, colour, &ne)
        colour = 3 - colour
    followed = ([p.pw[i] for i in range(p.ncells)], [p.pw[p.ncells + i] for i in range(p.ncells)],
                p.ptot[0], p.ptot[1])
    p.c_pp_init(p.board)
    fresh = ([p.pw[i] for i in range(p.ncells)], [p.pw[p.ncells + i] for i in range(p.ncells)],
             p.ptot[0], p.ptot[1])
    return followed, fresh


def pattern_draws(HexState state, weights, double cap, int draws, uint64_t seed) -> list:
    """How often each cell is drawn by the pattern playouts' first move from ``state``
    (the player to move), in ``draws`` draws."""
    cdef HexPlayout p = _pattern_board(state, weights, cap, seed)
    counts = [0] * p.ncells
    cdef int i, c
    for i in range(draws):
        c = p.c_pp_sample(state.side)
        if c >= 0:
            counts[c] += 1
    return counts
