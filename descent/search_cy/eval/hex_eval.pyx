# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Hex heuristic: the two-distance potentials of Anshelevich (Hexy) and Queenbee.

A cell's two-distance from an edge is one more than the *second* smallest distance among
its neighbours: the opponent can always cut the best one, so only the second best counts.
Stones of the player's own colour are contracted (the neighbours of a cell are the empty
cells next to it or next to an own group touching it); opponent stones block. A player's
potential is the smallest sum of the two-distances to both of its edges over the empty
cells, and how many cells reach that minimum (the "mobility") breaks ties. Everything is
breadth-first over levels, so one evaluation is O(cells) up to the liberty lists.
"""
from libc.math cimport tanh
from libc.stdint cimport int8_t
from libc.string cimport memset

from descent.search_cy.games.state cimport GameState
from descent.search_cy.games.hex cimport HexState
from descent.search_cy.search.evaluator cimport HeuristicEvaluator

cdef enum:
    MAXCELLS = 625          # 25 x 25, the largest board
    # A cell borders at most 3 distinct groups of one colour (two stones of one colour
    # that are consecutive around a cell touch each other), so at most 6 of both colours.
    MAXLIBS = 6 * MAXCELLS
    INF = 1 << 20
    E_TOP = 1
    E_BOTTOM = 2
    E_LEFT = 4
    E_RIGHT = 8
    STAMP_LIMIT = 1 << 30   # stamps grow by at most MAXCELLS per search from an edge

cdef int DR[6]
cdef int DC[6]
DR[:] = [-1, -1, 0, 0, 1, 1]
DC[:] = [0, 1, -1, 1, -1, 0]

# Weights of the score (in potential units, i.e. moves): the mover is about half a move
# ahead; mobility only breaks ties between equal potentials.
cdef double TEMPO = 0.5
cdef double MOBILITY_WEIGHT = 0.05
cdef int MOBILITY_CAP = 8
cdef double SCALE = 0.3
cdef double CLIP = 0.99


cdef inline int _hit(int* dist, int* hits, int* mark, int* queue, int v, int level,
                     int stamp, int tail) noexcept nogil:
    """Count one neighbour at `level` for cell v; settle v at its second one."""
    # dist[v] < INF covers the expanding cell itself and every settled cell; the mark
    # keeps one expansion from counting a cell twice (directly and through a group)
    if dist[v] < INF or mark[v] == stamp:
        return tail
    mark[v] = stamp
    hits[v] += 1
    if hits[v] == 2:
        dist[v] = level + 1
        queue[tail] = v
        tail += 1
    return tail


cdef class HexEvaluator(HeuristicEvaluator):
    """Two-distance Hex evaluator (player 0 = Black, top-bottom; player 1 = White).

    Values are tanh of the scaled potential difference, within (-0.99, 0.99). The scratch
    tables live inside the object, so one instance must not evaluate from two threads at
    once; any board size 2..25 works, the neighbour table follows the size it is given.
    """
    cdef int nb_size                        # board size the neighbour table is built for
    cdef int nb[MAXCELLS][6]                # neighbour cells, -1 off the board
    cdef int edge[MAXCELLS]                 # E_* bits of the edges a cell lies on
    cdef int group[MAXCELLS]                # group id of a stone, -1 for an empty cell
    cdef int gcolour[MAXCELLS]              # stone code (1 black, 2 white) of each group
    cdef int gtouch[MAXCELLS]               # E_* bits of the edges each group touches
    cdef int lib_start[MAXCELLS + 1]        # CSR offsets of each group's liberties
    cdef int lib_fill[MAXCELLS]
    cdef int lib_last[MAXCELLS]             # last cell appended per group (dedup)
    cdef int libs[MAXLIBS]
    cdef int ngroups
    cdef int dist[2][MAXCELLS]              # two-distance from each of the player's edges
    cdef int hits[MAXCELLS]
    cdef int mark[MAXCELLS]                 # stamp of the cell last expanded into it
    cdef int gmark[MAXCELLS]                # stamp of the cell last expanded through it
    cdef int gexpand[MAXCELLS]              # expansions through each group so far
    cdef int stamp
    cdef int queue[MAXCELLS]

    def __cinit__(self):
        self.nb_size = 0
        self.stamp = 0
        memset(self.mark, 0, sizeof(self.mark))
        memset(self.gmark, 0, sizeof(self.gmark))

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        return self._value(<HexState>s)

    cdef void _build_neighbours(self, int n) noexcept nogil:
        cdef int r, c, k, rr, cc, cell
        for r in range(n):
            for c in range(n):
                cell = r * n + c
                for k in range(6):
                    rr = r + DR[k]
                    cc = c + DC[k]
                    self.nb[cell][k] = rr * n + cc if 0 <= rr < n and 0 <= cc < n else -1
                self.edge[cell] = ((E_TOP if r == 0 else 0) | (E_BOTTOM if r == n - 1 else 0)
                                   | (E_LEFT if c == 0 else 0) | (E_RIGHT if c == n - 1 else 0))
        self.nb_size = n

    cdef void _label_groups(self, HexState s) noexcept nogil:
        """Groups of both colours (flood fill) and their liberty lists (CSR)."""
        cdef int ncells = s.ncells
        cdef int cell, colour, g, u, w, k, head, tail, total
        cdef int ng = 0
        for cell in range(ncells):
            self.group[cell] = -1
        for cell in range(ncells):
            colour = s.cells[cell]
            if colour == 0 or self.group[cell] >= 0:
                continue
            g = ng
            ng += 1
            self.gcolour[g] = colour
            self.gtouch[g] = 0
            self.group[cell] = g
            self.queue[0] = cell
            head = 0
            tail = 1
            while head < tail:
                u = self.queue[head]
                head += 1
                self.gtouch[g] |= self.edge[u]
                for k in range(6):
                    w = self.nb[u][k]
                    if w >= 0 and s.cells[w] == colour and self.group[w] < 0:
                        self.group[w] = g
                        self.queue[tail] = w
                        tail += 1
        self.ngroups = ng
        for g in range(ng):
            self.lib_fill[g] = 0
            self.lib_last[g] = -1
        # two passes (count, then fill) give every group a contiguous liberty list
        for cell in range(ncells):
            if s.cells[cell]:
                continue
            for k in range(6):
                w = self.nb[cell][k]
                if w >= 0 and s.cells[w]:
                    g = self.group[w]
                    if self.lib_last[g] != cell:
                        self.lib_last[g] = cell
                        self.lib_fill[g] += 1
        total = 0
        for g in range(ng):
            self.lib_start[g] = total
            total += self.lib_fill[g]
            self.lib_fill[g] = self.lib_start[g]
            self.lib_last[g] = -1
        self.lib_start[ng] = total
        for cell in range(ncells):
            if s.cells[cell]:
                continue
            for k in range(6):
                w = self.nb[cell][k]
                if w >= 0 and s.cells[w]:
                    g = self.group[w]
                    if self.lib_last[g] != cell:
                        self.lib_last[g] = cell
                        self.libs[self.lib_fill[g]] = cell
                        self.lib_fill[g] += 1

    cdef void _two_distance(self, HexState s, int stone, int edge_bit,
                            int* dist) noexcept nogil:
        """Two-distance of every empty cell from one edge for the player of `stone`."""
        cdef int ncells = s.ncells
        cdef int ngroups = self.ngroups
        cdef const int8_t* cells = s.cells
        cdef int* hits = self.hits
        cdef int* mark = self.mark
        cdef int* gmark = self.gmark
        cdef int* gexpand = self.gexpand
        cdef int* group = self.group
        cdef int* queue = self.queue
        cdef int* libs = self.libs
        cdef int* lib_start = self.lib_start
        cdef const int* nb
        cdef int cell, g, i, u, w, k, level, stamp, head = 0, tail = 0
        for cell in range(ncells):
            dist[cell] = INF
            hits[cell] = 0
        for g in range(ngroups):
            gexpand[g] = 0
        if self.stamp > STAMP_LIMIT:
            memset(self.mark, 0, sizeof(self.mark))
            memset(self.gmark, 0, sizeof(self.gmark))
            self.stamp = 0
        stamp = self.stamp
        # the edge is a group of its own that is adjacent to two of nothing: every cell on
        # it, and every liberty of an own group touching it, is one move away
        for cell in range(ncells):
            if cells[cell] == 0 and (self.edge[cell] & edge_bit):
                dist[cell] = 1
                queue[tail] = cell
                tail += 1
        for g in range(ngroups):
            if self.gcolour[g] == stone and (self.gtouch[g] & edge_bit):
                gexpand[g] = 2
                for i in range(lib_start[g], lib_start[g + 1]):
                    cell = libs[i]
                    if dist[cell] == INF:
                        dist[cell] = 1
                        queue[tail] = cell
                        tail += 1
        # FIFO order is level order: cells enter at level + 1 while level is expanded
        while head < tail:
            u = queue[head]
            head += 1
            level = dist[u]
            stamp += 1
            nb = &self.nb[u][0]
            for k in range(6):
                w = nb[k]
                if w < 0:
                    continue
                if cells[w] == 0:
                    tail = _hit(dist, hits, mark, queue, w, level, stamp, tail)
                elif cells[w] == stone:
                    g = group[w]
                    # two expansions through a group settle all its liberties (each one
                    # hit by both expanding cells), so later ones would find nothing
                    if gmark[g] != stamp and gexpand[g] < 2:
                        gmark[g] = stamp
                        gexpand[g] += 1
                        for i in range(lib_start[g], lib_start[g + 1]):
                            tail = _hit(dist, hits, mark, queue, libs[i], level, stamp, tail)
        self.stamp = stamp

    cdef int _potential(self, HexState s, int player, int* mobility) noexcept nogil:
        """Smallest sum of both two-distances over the empty cells, and how many reach it.
        A player without any two-distance path (every route can be cut) gets 4n + 4, more
        than any position short of a long winding route needs, and mobility 0."""
        cdef int stone = player + 1
        cdef int cell, p, best = INF, count = 0
        self._two_distance(s, stone, E_TOP if player == 0 else E_LEFT, &self.dist[0][0])
        self._two_distance(s, stone, E_BOTTOM if player == 0 else E_RIGHT, &self.dist[1][0])
        for cell in range(s.ncells):
            if s.cells[cell] or self.dist[0][cell] >= INF or self.dist[1][cell] >= INF:
                continue
            p = self.dist[0][cell] + self.dist[1][cell]
            if p < best:
                best = p
                count = 1
            elif p == best:
                count += 1
        if best >= INF:
            best = 4 * s.n + 4
            count = 0
        mobility[0] = count
        return best

    cdef double _value(self, HexState s) noexcept nogil:
        cdef int mob_black, mob_white, dmob
        cdef int pot_black, pot_white
        cdef double score
        if self.nb_size != s.n:
            self._build_neighbours(s.n)
        self._label_groups(s)
        pot_black = self._potential(s, 0, &mob_black)
        pot_white = self._potential(s, 1, &mob_white)
        dmob = mob_black - mob_white
        if dmob > MOBILITY_CAP:
            dmob = MOBILITY_CAP
        elif dmob < -MOBILITY_CAP:
            dmob = -MOBILITY_CAP
        score = (pot_white - pot_black) + MOBILITY_WEIGHT * dmob
        score += TEMPO if s.side == 0 else -TEMPO
        score = tanh(SCALE * score)
        if score > CLIP:
            return CLIP
        if score < -CLIP:
            return -CLIP
        return score

    def move_priors(self, GameState s):
        """The opponent's route first: a cell scores minus the sum of the opponent's two
        two-distances through it (cells off its routes, and the swap, come last). Where
        the values are equal (a decided position: no single stone changes the winner's
        potential) the search then plays on the winner's shortest route, not in move
        order (a1)."""
        cdef HexState h = <HexState>s
        cdef int opponent = 1 - h.current_player()
        near, far = self.two_distances(h, opponent)
        priors = []
        for action in s.legal_actions():
            if action >= h.ncells or near[action] is None or far[action] is None:
                priors.append(-float(INF))
            else:
                priors.append(-float(near[action] + far[action]))
        return priors

    def two_distances(self, HexState s, int player):
        """Both two-distance maps of `player` (lists of n*n ints, None off the player's
        paths and on stones): from the top (left) edge and from the bottom (right) edge.
        Debugging and tests; the search path never calls it."""
        cdef int mobility
        if not 0 <= player <= 1:
            raise ValueError(f"player {player} is neither 0 (Black) nor 1 (White)")
        if self.nb_size != s.n:
            self._build_neighbours(s.n)
        self._label_groups(s)
        self._potential(s, player, &mobility)
        return tuple(
            [self.dist[e][i] if self.dist[e][i] < INF else None for i in range(s.ncells)]
            for e in range(2))

    def potential(self, HexState s, int player) -> tuple:
        """(potential, mobility) of `player` in `s` (Queenbee's definitions)."""
        cdef int mobility, pot
        if not 0 <= player <= 1:
            raise ValueError(f"player {player} is neither 0 (Black) nor 1 (White)")
        if self.nb_size != s.n:
            self._build_neighbours(s.n)
        self._label_groups(s)
        pot = self._potential(s, player, &mobility)
        return pot, mobility
