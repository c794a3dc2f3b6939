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
from descent.search_cy.games.hex_inferior cimport HexInferior, INF_BLACK
from descent.search_cy.games.hex_patterns cimport ROUTE_GAP, ROUTE_OFF
from descent.search_cy.eval.evaluator cimport (
    HeuristicEvaluator, KNOW_NONE, KNOW_WIN, KNOW_LOSS, KNOW_MUSTPLAY)

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

# The tunable weights of the score (HexEvaluator.WEIGHTS; an instance's own values in
# self.w), in potential units, i.e. moves: the mover is about half a move ahead; mobility
# only breaks ties between equal potentials; the scale of the potential difference.
cdef enum:
    TEMPO = 0
    MOBILITY_WEIGHT = 1
    SCALE = 2
cdef int MOBILITY_CAP = 8
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

    WEIGHTS = (
        ("tempo", 0.5, 0.0, 2.0),
        ("mobility_weight", 0.05, 0.0, 0.5),
        ("scale", 0.3, 0.05, 1.5),
    )

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

    cdef void _label_groups(self, HexState s, const int8_t* cells) noexcept nogil:
        """Groups of both colours (flood fill) and their liberty lists (CSR), on ``cells``
        (the board of ``s``, or that board with a fill-in)."""
        cdef int ncells = s.ncells
        cdef int cell, colour, g, u, w, k, head, tail, total
        cdef int ng = 0
        for cell in range(ncells):
            self.group[cell] = -1
        for cell in range(ncells):
            colour = cells[cell]
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
                    if w >= 0 and cells[w] == colour and self.group[w] < 0:
                        self.group[w] = g
                        self.queue[tail] = w
                        tail += 1
        self.ngroups = ng
        for g in range(ng):
            self.lib_fill[g] = 0
            self.lib_last[g] = -1
        # two passes (count, then fill) give every group a contiguous liberty list
        for cell in range(ncells):
            if cells[cell]:
                continue
            for k in range(6):
                w = self.nb[cell][k]
                if w >= 0 and cells[w]:
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
            if cells[cell]:
                continue
            for k in range(6):
                w = self.nb[cell][k]
                if w >= 0 and cells[w]:
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
        if self.nb_size != s.n:
            self._build_neighbours(s.n)
        self._label_groups(s, s.cells)
        return self._scored(s)

    cdef double _scored(self, HexState s) noexcept nogil:
        """The two-distance value of `s`, its groups labelled."""
        cdef int mob_black, mob_white, dmob
        cdef int pot_black, pot_white
        cdef double score
        pot_black = self._potential(s, 0, &mob_black)
        pot_white = self._potential(s, 1, &mob_white)
        dmob = mob_black - mob_white
        if dmob > MOBILITY_CAP:
            dmob = MOBILITY_CAP
        elif dmob < -MOBILITY_CAP:
            dmob = -MOBILITY_CAP
        score = (pot_white - pot_black) + self.w[MOBILITY_WEIGHT] * dmob
        score += self.w[TEMPO] if s.side == 0 else -self.w[TEMPO]
        score = tanh(self.w[SCALE] * score)
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

    cdef bint c_move_codes(self, GameState s, int8_t* codes) noexcept nogil:
        """Each empty cell's route code (``games/hex_patterns.pyx``): how much longer the
        shortest two-distance route through it is than the shortest anywhere, for the
        player to move and for the opponent (capped at ROUTE_GAP; ROUTE_OFF where no
        route passes), as (mover's) * 6 + (opponent's)."""
        return self._move_codes(<HexState>s, codes)

    cdef bint _move_codes(self, HexState h, int8_t* codes) noexcept nogil:
        cdef int p, cell, t, gap, mobility, me = h.side
        cdef int best[2]
        if self.nb_size != h.n:
            self._build_neighbours(h.n)
        self._label_groups(h, h.cells)
        for cell in range(h.ncells):
            if h.cells[cell] == 0:
                codes[cell] = 0
        for p in range(2):
            best[p] = self._potential(h, me if p == 0 else 1 - me, &mobility)
            for cell in range(h.ncells):
                if h.cells[cell] != 0:
                    continue
                if self.dist[0][cell] >= INF or self.dist[1][cell] >= INF:
                    gap = ROUTE_OFF
                else:
                    t = self.dist[0][cell] + self.dist[1][cell] - best[p]
                    gap = t if t < ROUTE_GAP else ROUTE_GAP
                codes[cell] = <int8_t>(codes[cell] + (gap * 6 if p == 0 else gap))
        return True

    def two_distances(self, HexState s, int player):
        """Both two-distance maps of `player` (lists of n*n ints, None off the player's
        paths and on stones): from the top (left) edge and from the bottom (right) edge.
        Debugging and tests; the search path never calls it."""
        cdef int mobility
        if not 0 <= player <= 1:
            raise ValueError(f"player {player} is neither 0 (Black) nor 1 (White)")
        if self.nb_size != s.n:
            self._build_neighbours(s.n)
        self._label_groups(s, s.cells)
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
        self._label_groups(s, s.cells)
        pot = self._potential(s, player, &mobility)
        return pot, mobility


cdef enum:
    MAXN = 25
    MAXNODES = MAXCELLS + 2             # a player's groups, then its two edges
    MAXHALF = 20 * MAXCELLS             # half-links: <= 10 node pairs per empty cell, x2
    VC_BUDGET = 4096                    # search steps before a connection is given up
    DIRECT = -1                         # a group touching an edge: no carrier
    TEMPLATE = -2                       # an edge template: its carrier is a tmpl_cells row
    MAXTEMPLATES = 8 * MAXN             # templates kept per player (more are ignored)
    TEMPLATE_CELLS = 8

# Template IIIa (the ziggurat) for a stone two rows from its edge, in edge coordinates
# (rows from the edge, columns along it) relative to the stone, in both orientations: its
# 8 empty cells connect the stone to the edge whatever the opponent does (the tests play
# every line inside the carrier: ``ziggurat_carriers``).
cdef int ZIG_D[2][TEMPLATE_CELLS]
cdef int ZIG_A[2][TEMPLATE_CELLS]
ZIG_D[0][:] = [0, -1, -1, -1, -2, -2, -2, -2]
ZIG_A[0][:] = [1, 0, 1, 2, 0, 1, 2, 3]
ZIG_D[1][:] = [0, -1, -1, -1, -2, -2, -2, -2]
ZIG_A[1][:] = [-1, -1, 0, 1, -1, 0, 1, 2]

# Values of a position with a virtual connection: above any two-distance value (which the
# VC evaluator clips at VC_CLIP), below the resolved +-1 of a terminal state.
cdef double VC_WIN = 0.99
cdef double VC_CLIP = 0.97
# for the evaluators that keep the VC evaluator's scale (eval/hex_actions.pyx)
VC_VALUES = {"win": VC_WIN, "clip": VC_CLIP}


cdef inline int _edge_flip(int bit, int n, int x, int y) noexcept nogil:
    """Board cell (x, y) = (row, column) in the coordinates of edge `bit` (rows from the
    edge, column along it), as a cell index ``row * n + column``; the map is its own
    inverse, so it also takes edge coordinates back to the board's."""
    if bit == E_TOP:
        return x * n + y
    if bit == E_BOTTOM:
        return (n - 1 - x) * n + (n - 1 - y)
    if bit == E_LEFT:
        return y * n + x
    return (n - 1 - y) * n + (n - 1 - x)


cdef class HexVCEvaluator(HexEvaluator):
    """Two-distance Hex evaluator that first looks for a virtual connection.

    A player is *virtually connected* when a chain of its groups joins its two edges and
    every link of the chain holds whatever the opponent does: a group touching an edge,
    two groups (a group and an edge) with two empty cells next to both (a bridge; the
    edge template II), or a stone two rows from an edge with the 8 empty cells of a
    ziggurat (template IIIa), the links' carriers pairwise disjoint. The opponent breaks
    into at most one carrier a move and the player answers inside the same one, so the
    player wins whoever is to move. The player to move also wins when one link of
    such a chain has a single common empty cell (it plays there). Either way the value is
    +-VC_WIN, above every two-distance value (clipped at VC_CLIP): the search sees a
    decided game many moves before its last stone. Links are looked for greedily (the
    first two common cells of a pair are its carrier), so a connection can be missed,
    never invented.
    """
    cdef int ncarrier[MAXHALF]              # per half-link: common empty cells, or DIRECT
    cdef int hl_to[MAXHALF]
    cdef int hl_c1[MAXHALF]
    cdef int hl_c2[MAXHALF]
    cdef int hl_next[MAXHALF]
    cdef int hl_twin[MAXHALF]
    cdef int head[MAXNODES]
    cdef int nhalf
    cdef int tmpl_cells[MAXTEMPLATES][TEMPLATE_CELLS]
    cdef int ntemplates
    cdef int used[MAXCELLS]                 # carrier cells taken by the chain being built
    cdef int on_path[MAXNODES]
    cdef int budget
    cdef public bint fill_in                # knowledge reads the board after the fill-in
    cdef HexInferior inferior               # the fill-in's analysis (one board size)
    cdef int8_t labels[MAXCELLS]

    def __cinit__(self):
        self.fill_in = True
        self.inferior = None

    def spawn(self):
        """A fresh instance with the same bounds and fill-in setting."""
        cdef HexVCEvaluator fresh = HeuristicEvaluator.spawn(self)
        fresh.fill_in = self.fill_in
        return fresh

    cdef double _value(self, HexState s) noexcept nogil:
        cdef double v
        if self.nb_size != s.n:
            self._build_neighbours(s.n)
        self._label_groups(s, s.cells)
        if self._connected(s, 0, s.side == 0, s.cells):
            return VC_WIN
        if self._connected(s, 1, s.side == 1, s.cells):
            return -VC_WIN
        v = self._scored(s)
        if v > VC_CLIP:
            return VC_CLIP
        if v < -VC_CLIP:
            return -VC_CLIP
        return v

    cdef int _find_half(self, int a, int b) noexcept nogil:
        cdef int l = self.head[a]
        while l >= 0:
            if self.hl_to[l] == b:
                return l
            l = self.hl_next[l]
        return -1

    cdef int _new_link(self, int a, int b) noexcept nogil:
        """A new link between nodes a and b (two half-links, one on each node's list): the
        half-link from a, or -1 when the table is full."""
        cdef int l, m
        if self.nhalf + 2 > MAXHALF:
            return -1
        l = self.nhalf
        m = l + 1
        self.nhalf += 2
        self.hl_to[l] = b
        self.hl_to[m] = a
        self.hl_twin[l] = m
        self.hl_twin[m] = l
        self.hl_next[l] = self.head[a]
        self.head[a] = l
        self.hl_next[m] = self.head[b]
        self.head[b] = m
        self.ncarrier[l] = 0
        self.ncarrier[m] = 0
        return l

    cdef void _link(self, int a, int b, int cell) noexcept nogil:
        """Counts `cell` (or DIRECT) as a common cell of nodes a and b."""
        cdef int l = self._find_half(a, b)
        cdef int m
        if l < 0:
            l = self._new_link(a, b)
            if l < 0:
                return
        m = self.hl_twin[l]
        if self.ncarrier[l] == DIRECT:
            return
        if cell == DIRECT:
            self.ncarrier[l] = self.ncarrier[m] = DIRECT
            return
        if self.ncarrier[l] == 0:
            self.hl_c1[l] = self.hl_c1[m] = cell
        elif self.ncarrier[l] == 1:
            self.hl_c2[l] = self.hl_c2[m] = cell
        self.ncarrier[l] += 1
        self.ncarrier[m] += 1

    cdef void _template(self, int g, int e, int* cells) noexcept nogil:
        """A link from group g to edge node e whose carrier is the 8 `cells` (a link of
        its own, beside any bridge-like link between the same two nodes)."""
        cdef int l, m, i, t
        if self.ntemplates >= MAXTEMPLATES:
            return
        l = self._new_link(g, e)
        if l < 0:
            return
        m = self.hl_twin[l]
        t = self.ntemplates
        self.ntemplates += 1
        for i in range(TEMPLATE_CELLS):
            self.tmpl_cells[t][i] = cells[i]
        self.ncarrier[l] = self.ncarrier[m] = TEMPLATE
        self.hl_c1[l] = self.hl_c1[m] = t

    cdef void _edge_templates(self, HexState s, const int8_t* board, int stone, int bit,
                              int e) noexcept nogil:
        """Ziggurats from the player's stones two rows from edge `bit` to its node e."""
        cdef int n = s.n
        cdef int cell, d, a, da, o, i, dd, aa
        cdef int cells[TEMPLATE_CELLS]
        cdef bint ok
        for cell in range(s.ncells):
            if board[cell] != stone:
                continue
            # edge coordinates: d rows from the edge, a along it
            da = _edge_flip(bit, n, cell // n, cell % n)
            d = da // n
            a = da - d * n
            if d != 2:
                continue
            for o in range(2):
                ok = True
                for i in range(TEMPLATE_CELLS):
                    dd = d + ZIG_D[o][i]
                    aa = a + ZIG_A[o][i]
                    if aa < 0 or aa >= n:
                        ok = False
                        break
                    cells[i] = _edge_flip(bit, n, dd, aa)
                    if board[cells[i]] != 0:
                        ok = False
                        break
                if ok:
                    self._template(self.group[cell], e, cells)

    cdef bint _connected(self, HexState s, int player, bint semi,
                         const int8_t* board) noexcept nogil:
        """Whether `player` is virtually connected (or, with `semi`, one move from it).
        On success ``used`` marks the carrier cells of the chain found."""
        cdef int stone = player + 1
        cdef int first = E_TOP if player == 0 else E_LEFT
        cdef int second = E_BOTTOM if player == 0 else E_RIGHT
        cdef int ng = self.ngroups
        cdef int e1 = ng, e2 = ng + 1
        cdef int cell, k, w, g, i, j, cnt
        cdef int around[5]
        for i in range(ng + 2):
            self.head[i] = -1
            self.on_path[i] = 0
        self.nhalf = 0
        for g in range(ng):
            if self.gcolour[g] == stone:
                if self.gtouch[g] & first:
                    self._link(g, e1, DIRECT)
                if self.gtouch[g] & second:
                    self._link(g, e2, DIRECT)
        for cell in range(s.ncells):
            if board[cell]:
                continue
            self.used[cell] = 0
            # the nodes next to this empty cell: own groups, and the edges it lies on
            cnt = 0
            if self.edge[cell] & first:
                around[cnt] = e1
                cnt += 1
            if self.edge[cell] & second:
                around[cnt] = e2
                cnt += 1
            for k in range(6):
                w = self.nb[cell][k]
                if w < 0 or board[w] != stone:
                    continue
                g = self.group[w]
                for i in range(cnt):
                    if around[i] == g:
                        break
                else:
                    if cnt < 5:
                        around[cnt] = g
                        cnt += 1
            for i in range(cnt):
                for j in range(i + 1, cnt):
                    self._link(around[i], around[j], cell)
        self.ntemplates = 0
        if s.n >= 4:
            self._edge_templates(s, board, stone, first, e1)
            self._edge_templates(s, board, stone, second, e2)
        self.budget = VC_BUDGET
        return self._chain(e1, e2, semi)

    cdef bint _chain(self, int node, int target, bint semi) noexcept nogil:
        """Depth-first: a chain from `node` to `target` with disjoint carriers (and at
        most one single-cell link when `semi`)."""
        cdef int l, to, c1, c2, n
        if node == target:
            return True
        if self.budget <= 0:
            return False
        self.budget -= 1
        self.on_path[node] = 1
        l = self.head[node]
        while l >= 0:
            to = self.hl_to[l]
            n = self.ncarrier[l]
            if not self.on_path[to]:
                if n == DIRECT:
                    if self._chain(to, target, semi):
                        return True
                elif n == TEMPLATE:
                    if self._take_template(self.hl_c1[l]):
                        if self._chain(to, target, semi):
                            return True
                        self._drop_template(self.hl_c1[l])
                elif n >= 2:
                    c1 = self.hl_c1[l]
                    c2 = self.hl_c2[l]
                    if not self.used[c1] and not self.used[c2]:
                        self.used[c1] = 1
                        self.used[c2] = 1
                        if self._chain(to, target, semi):
                            return True
                        self.used[c1] = 0
                        self.used[c2] = 0
                elif n == 1 and semi:
                    c1 = self.hl_c1[l]
                    if not self.used[c1]:
                        self.used[c1] = 1
                        if self._chain(to, target, False):
                            return True
                        self.used[c1] = 0
            l = self.hl_next[l]
        self.on_path[node] = 0
        return False

    cdef bint _take_template(self, int t) noexcept nogil:
        cdef int i
        for i in range(TEMPLATE_CELLS):
            if self.used[self.tmpl_cells[t][i]]:
                return False
        for i in range(TEMPLATE_CELLS):
            self.used[self.tmpl_cells[t][i]] = 1
        return True

    cdef void _drop_template(self, int t) noexcept nogil:
        cdef int i
        for i in range(TEMPLATE_CELLS):
            self.used[self.tmpl_cells[t][i]] = 0

    def virtual_connection(self, HexState s, int player) -> bool:
        """Whether `player` is virtually connected in `s` (to move: or one move from it)."""
        if not 0 <= player <= 1:
            raise ValueError(f"player {player} is neither 0 (Black) nor 1 (White)")
        if self.nb_size != s.n:
            self._build_neighbours(s.n)
        self._label_groups(s, s.cells)
        return self._connected(s, player, s.side == player, s.cells)

    cdef int c_knowledge(self, GameState s, int8_t* keep) noexcept nogil:
        """Virtual connections as proofs: the player to move wins when it is connected
        or one move from it; it loses when the opponent is connected; when the opponent
        is one move from a connection, every move outside that chain's carrier loses
        (the opponent then plays its missing cell), so only the carrier is kept.

        With ``fill_in`` the connections are looked for on the board after the
        inferior-cell fill-in (``games/hex_inferior.pyx``: dead and captured cells
        filled), which has the same winner whoever moves and where the filled cells'
        owners hold them: a captured pair by an edge is an edge link, and more chains
        close. A mustplay leaves out the dead cells, the mover's captured ones (a stone
        there is a pass) and the opponent's captured ones off its chain, but keeps those
        on the chain (a stone there forces the answer)."""
        return self._knowledge(<HexState>s, keep)

    cdef int _knowledge(self, HexState s, int8_t* keep) noexcept nogil:
        cdef int me = s.side, cell
        cdef const int8_t* board = s.cells
        if s.winner >= 0:
            return KNOW_NONE
        if self.nb_size != s.n:
            self._build_neighbours(s.n)
        if self.fill_in:
            if self.inferior is None or self.inferior.n != s.n:
                with gil:
                    self.inferior = HexInferior(s.n)
            self.inferior.c_analyse(s.cells, me + 1, self.labels)
            board = self.inferior.work
        self._label_groups(s, board)
        if self._connected(s, me, True, board):
            return KNOW_WIN
        if self._connected(s, 1 - me, False, board):
            return KNOW_LOSS
        if not self._connected(s, 1 - me, True, board):
            return KNOW_NONE
        for cell in range(s.ncells + 1):
            keep[cell] = 0
        for cell in range(s.ncells):
            if board[cell] == 0 and self.used[cell]:
                keep[cell] = 1
            elif (board != s.cells and self.labels[cell] == INF_BLACK + 1 - me
                    and self.on_path[self.group[cell]]):
                # a stone in a pair the opponent captured, on its chain, forces the
                # answer there: not a loss by itself
                keep[cell] = 1
        # the swap (legal only at the second ply) is never pruned
        if s.c_swap_legal():
            keep[s.ncells] = 1
        return KNOW_MUSTPLAY


def ziggurat_carriers() -> list:
    """The ziggurat's two carriers as (rows from the edge, offset along it) pairs relative
    to a stone two rows from its edge: the table the evaluator matches. For tests."""
    return [[(2 + ZIG_D[o][i], ZIG_A[o][i]) for i in range(TEMPLATE_CELLS)]
            for o in range(2)]
