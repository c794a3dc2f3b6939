# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Virtual connections of a Hex position by H-search (Anshelevich 2002), the connection
engine of Hexy, Six and MoHex (benzene's ``VCBuilder``), written for this package.

A *full* connection between two nodes (the player's groups, its two edges, empty cells)
holds whoever moves: the player keeps them joined by answering inside its *carrier*, a
set of empty cells. A *semi* connection holds with the player to move: it plays the
*key* (a cell of the carrier) and a full connection remains. The rules:

- base: two adjacent nodes (an empty cell and a neighbour that is empty, a stone of the
  player or its edge) are fully connected by the empty carrier;
- AND: full (a, z) with carrier A and full (z, w) with carrier B, A and B disjoint and
  neither holding the other's endpoint: when z is the player's group, (a, w) is full with
  A | B; when z is an empty cell, (a, w) is semi with key z and carrier A | B | {z}. No
  AND runs over an edge (as in benzene: it would join everything near an edge);
- OR: semis of one pair whose carriers have no common cell make a full with the union of
  their carriers: the opponent's move leaves one of them untouched, whose key answers.

Every rule is sound, so a connection found holds; H-search is incomplete (a connection
may be missed). Each pair keeps at most ``max_fulls`` fulls and ``max_semis`` semis (a
carrier that holds another of its kind is dropped), and the search stops at
``max_entries`` connections: the limits bound the time, never the soundness. The OR rule
here is greedy: from each new semi it takes the pair's other semis smallest first while
they shrink the intersection, until it is empty.

Knowledge for the player to move (``c_knowledge``): its two edges fully or
semi-connected is a win; the opponent's edges fully connected is a loss; the
opponent's edge semis force the mover into the intersection of their carriers (the
*mustplay*: every other move lets the opponent play a key whose semi it left whole), and
an empty intersection is a loss. With ``fill_in`` the search reads the board after the
inferior-cell fill-in (``hex_inferior``: dead and captured cells filled, the same winner
whoever moves); a mustplay then leaves out dead cells and the mover's captured ones (a
stone there is a pass) and keeps the opponent's captured cells (a stone there forces the
answer and changes nothing, so it is no loss).

Carriers are 256-bit sets, so boards up to 16x16; ``c_knowledge`` answers VC_NONE on
larger ones.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset

from descent.search_cy.games.hex cimport HexState
from descent.search_cy.games.hex_inferior cimport (
    HexInferior, INF_BLACK, INF_WHITE, ring_table)

DEFAULT_MAX_FULLS = 8
DEFAULT_MAX_SEMIS = 12
DEFAULT_MAX_ENTRIES = 40000
CODES = ("none", "win", "loss", "mustplay")


cdef inline bint _subset(const uint64_t* a, const uint64_t* b) noexcept nogil:
    """a within b."""
    return ((a[0] & ~b[0]) | (a[1] & ~b[1]) | (a[2] & ~b[2]) | (a[3] & ~b[3])) == 0


cdef inline bint _disjoint(const uint64_t* a, const uint64_t* b) noexcept nogil:
    return ((a[0] & b[0]) | (a[1] & b[1]) | (a[2] & b[2]) | (a[3] & b[3])) == 0


cdef inline bint _has(const uint64_t* a, int c) noexcept nogil:
    return (a[c >> 6] >> (c & 63)) & 1


cdef inline int _count(const uint64_t* a) noexcept nogil:
    return (__builtin_popcountll(a[0]) + __builtin_popcountll(a[1])
            + __builtin_popcountll(a[2]) + __builtin_popcountll(a[3]))


cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil


cdef class HexVC:
    """H-search on n x n boards (n at most 16). Not thread-safe: one per search thread."""

    def __cinit__(self, int n, int max_fulls=DEFAULT_MAX_FULLS,
                  int max_semis=DEFAULT_MAX_SEMIS, int max_entries=DEFAULT_MAX_ENTRIES,
                  bint fill_in=True):
        if not 1 <= n <= 16:
            raise ValueError(f"board size {n} is outside [1, 16] (carriers are 256-bit sets)")
        if max_fulls < 1 or max_semis < 1 or max_entries < 64:
            raise ValueError("max_fulls and max_semis must be >= 1, max_entries >= 64")
        self.n = n
        self.ncells = n * n
        self.max_fulls = max_fulls
        self.max_semis = max_semis
        self.max_entries = max_entries
        self.fill_in = fill_in
        self.nb = <int*>malloc(6 * self.ncells * sizeof(int))
        self.node_of = <int*>malloc(self.ncells * sizeof(int))
        self.node_cell = <int*>malloc(VC_MAXNODES * sizeof(int))
        self.full_head = <int32_t*>malloc(VC_MAXNODES * VC_MAXNODES * sizeof(int32_t))
        self.semi_head = <int32_t*>malloc(VC_MAXNODES * VC_MAXNODES * sizeof(int32_t))
        self.nfull = <int16_t*>malloc(VC_MAXNODES * VC_MAXNODES * sizeof(int16_t))
        self.nsemi = <int16_t*>malloc(VC_MAXNODES * VC_MAXNODES * sizeof(int16_t))
        self.adj = <int16_t*>malloc(VC_MAXNODES * VC_MAXNODES * sizeof(int16_t))
        self.nadj = <int16_t*>malloc(VC_MAXNODES * sizeof(int16_t))
        self.pool = <VCEntry*>malloc(max_entries * sizeof(VCEntry))
        self.queue = <int32_t*>malloc(max_entries * sizeof(int32_t))
        self.labels = <int8_t*>malloc(self.ncells)
        if not (self.nb and self.node_of and self.node_cell and self.full_head
                and self.semi_head and self.nfull and self.nsemi and self.adj
                and self.nadj and self.pool and self.queue and self.labels):
            raise MemoryError()
        self.inferior = HexInferior(n)
        self.nnodes = 0
        self.npool = 0
        ring_table(n, self.nb)

    def __dealloc__(self):
        free(self.nb)
        free(self.node_of)
        free(self.node_cell)
        free(self.full_head)
        free(self.semi_head)
        free(self.nfull)
        free(self.nsemi)
        free(self.adj)
        free(self.nadj)
        free(self.pool)
        free(self.queue)
        free(self.labels)

    cdef int _pair(self, int x, int y) noexcept nogil:
        if x > y:
            x, y = y, x
        return x * self.nnodes + y

    cdef bint _within(self, int32_t e, const uint64_t* bits) noexcept nogil:
        """Whether some entry of the list from e has its carrier within ``bits``."""
        while e >= 0:
            if _subset(self.pool[e].bits, bits):
                return True
            e = self.pool[e].next
        return False

    cdef int32_t _insert(self, int32_t* head, int16_t* count, int limit, int x, int y,
                         const uint64_t* bits, int key) noexcept nogil:
        """Adds an entry to a pair's list, kept smallest first (the AND and OR rules
        meet the cheapest carriers first); at the list's limit the largest makes room
        for a smaller one. The new entry, or -1 (no room, or the pool is full)."""
        cdef int size = _count(bits), i
        cdef int32_t e, prev = -1, cur
        if count[0] >= limit and not self._drop_largest(head, size):
            return -1
        if self.npool >= self.max_entries:
            self.overflow = True
            return -1
        e = self.npool
        self.npool += 1
        for i in range(VC_WORDS):
            self.pool[e].bits[i] = bits[i]
        self.pool[e].x = <int16_t>x
        self.pool[e].y = <int16_t>y
        self.pool[e].key = <int16_t>key
        self.pool[e].size = <int16_t>size
        cur = head[0]
        while cur >= 0 and self.pool[cur].size <= size:
            prev = cur
            cur = self.pool[cur].next
        self.pool[e].next = cur
        if prev < 0:
            head[0] = e
        else:
            self.pool[prev].next = e
        if count[0] < limit:
            count[0] += 1
        return e

    cdef bint _add_full(self, int x, int y, const uint64_t* bits) noexcept nogil:
        """Adds a full (x, y) unless one within it is known or the pair is at its
        limit; queues it for the AND rule. Whether it was added."""
        cdef int p
        cdef int32_t e
        cdef bint first
        if x > y:
            x, y = y, x           # an entry's endpoints are kept in order
        p = self._pair(x, y)
        if self._within(self.full_head[p], bits):
            return False
        first = self.nfull[p] == 0
        e = self._insert(&self.full_head[p], &self.nfull[p], self.max_fulls, x, y, bits, -1)
        if e < 0:
            return False
        if first:
            self.adj[x * VC_MAXNODES + self.nadj[x]] = <int16_t>y
            self.nadj[x] += 1
            self.adj[y * VC_MAXNODES + self.nadj[y]] = <int16_t>x
            self.nadj[y] += 1
        self.queue[self.qtail] = e
        self.qtail += 1
        return True

    cdef bint _drop_largest(self, int32_t* head, int size) noexcept nogil:
        """Unlinks the last (largest) entry of a list when ``size`` is smaller: whether
        room was made. An entry dropped after its combinations were made stays sound; it
        is only no longer offered to later ones."""
        cdef int32_t prev = -1, cur = head[0]
        if cur < 0:
            return False
        while self.pool[cur].next >= 0:
            prev = cur
            cur = self.pool[cur].next
        if self.pool[cur].size <= size:
            return False
        if prev < 0:
            head[0] = -1
        else:
            self.pool[prev].next = -1
        return True

    cdef void _add_semi(self, int x, int y, const uint64_t* bits, int key) noexcept nogil:
        """Adds a semi (x, y) keyed at ``key`` unless a full or a semi within it is known
        or the pair is at its limit; then tries the OR rule with it."""
        cdef int p
        cdef int32_t e
        if x > y:
            x, y = y, x           # an entry's endpoints are kept in order
        p = self._pair(x, y)
        if self._within(self.full_head[p], bits) or self._within(self.semi_head[p], bits):
            return
        e = self._insert(&self.semi_head[p], &self.nsemi[p], self.max_semis, x, y, bits, key)
        if e >= 0:
            self._or(x, y, e)

    cdef void _or(self, int x, int y, int32_t e) noexcept nogil:
        """The OR rule from the new semi e: the pair's other semis, smallest first, each
        taken while it shrinks the intersection; an empty one gives a full."""
        cdef uint64_t inter[VC_WORDS]
        cdef uint64_t union[VC_WORDS]
        cdef uint64_t t[VC_WORDS]
        cdef int i
        cdef int32_t s
        cdef bint shrinks
        for i in range(VC_WORDS):
            inter[i] = self.pool[e].bits[i]
            union[i] = inter[i]
        s = self.semi_head[self._pair(x, y)]
        while s >= 0:
            if s != e:
                shrinks = False
                for i in range(VC_WORDS):
                    t[i] = inter[i] & self.pool[s].bits[i]
                    if t[i] != inter[i]:
                        shrinks = True
                if shrinks:
                    for i in range(VC_WORDS):
                        inter[i] = t[i]
                        union[i] |= self.pool[s].bits[i]
                    if (inter[0] | inter[1] | inter[2] | inter[3]) == 0:
                        self._add_full(x, y, union)
                        return
            s = self.pool[s].next

    cdef void _and(self, int32_t e) noexcept nogil:
        """The AND rule for the new full e against every full at either of its ends."""
        cdef int side, z, a, zc, ac, w, wc, i, count
        cdef int32_t d
        cdef uint64_t u[VC_WORDS]
        cdef uint64_t c[VC_WORDS]
        for i in range(VC_WORDS):
            c[i] = self.pool[e].bits[i]
        for side in range(2):
            if side == 0:
                z = self.pool[e].x
                a = self.pool[e].y
            else:
                z = self.pool[e].y
                a = self.pool[e].x
            if z < 2:
                continue                      # no AND over an edge
            zc = self.node_cell[z]
            ac = self.node_cell[a]
            count = self.nadj[z]
            for i in range(count):
                w = self.adj[z * VC_MAXNODES + i]
                if w == a:
                    continue
                wc = self.node_cell[w]
                if wc >= 0 and _has(c, wc):
                    continue
                d = self.full_head[self._pair(z, w)]
                while d >= 0:
                    if (d != e and _disjoint(c, self.pool[d].bits)
                            and (ac < 0 or not _has(self.pool[d].bits, ac))):
                        u[0] = c[0] | self.pool[d].bits[0]
                        u[1] = c[1] | self.pool[d].bits[1]
                        u[2] = c[2] | self.pool[d].bits[2]
                        u[3] = c[3] | self.pool[d].bits[3]
                        if zc < 0:
                            self._add_full(a, w, u)
                        else:
                            u[zc >> 6] |= (<uint64_t>1) << (zc & 63)
                            self._add_semi(a, w, u, zc)
                        if self._done():
                            return
                    d = self.pool[d].next

    cdef bint _done(self) noexcept nogil:
        """The search can stop: the edges are fully joined (or semi-joined, where that
        is all the caller asks), or the pool is full."""
        return (self.nfull[1] > 0 or (self.stop_at_semi and self.nsemi[1] > 0)
                or self.npool >= self.max_entries)

    cdef void _build(self, const int8_t* board, int player) noexcept nogil:
        """H-search for ``player`` (1 Black, top to bottom; 2 White, left to right) on
        ``board``: nodes, base connections, then the AND and OR rules to a fixpoint."""
        cdef int c, k, g, sp, x, nbc, node, edge0, edge1, i, count
        cdef bint touches0, touches1
        cdef uint64_t empty[VC_WORDS]
        edge0 = -1 if player == 1 else -3
        edge1 = -2 if player == 1 else -4
        self.overflow = False
        self.npool = 0
        self.qhead = 0
        self.qtail = 0
        for i in range(VC_WORDS):
            empty[i] = 0
        # nodes: 0 and 1 the edges (with the groups touching them), then the other
        # groups, then the empty cells
        for c in range(self.ncells):
            self.node_of[c] = -2 if board[c] == player else (-1 if board[c] else -3)
        self.node_cell[0] = -1
        self.node_cell[1] = -1
        node = 2
        for c in range(self.ncells):
            if self.node_of[c] != -2:
                continue
            # flood fill one group (marked -5 while pending), noting the edges it touches
            self.stack[0] = c
            self.node_of[c] = -5
            sp = 1
            count = 0
            touches0 = touches1 = False
            while sp > 0:
                sp -= 1
                x = self.stack[sp]
                self.members[count] = x
                count += 1
                for k in range(6):
                    nbc = self.nb[x * 6 + k]
                    if nbc == edge0:
                        touches0 = True
                    elif nbc == edge1:
                        touches1 = True
                    elif nbc >= 0 and self.node_of[nbc] == -2:
                        self.node_of[nbc] = -5
                        self.stack[sp] = nbc
                        sp += 1
            if touches0 and touches1:
                g = -10                      # joins both edges
            elif touches0:
                g = 0
            elif touches1:
                g = 1
            else:
                g = node
                self.node_cell[node] = -1
                node += 1
            for i in range(count):
                self.node_of[self.members[i]] = g
        # empty cells
        for c in range(self.ncells):
            if self.node_of[c] == -3:
                self.node_of[c] = node
                self.node_cell[node] = c
                node += 1
        self.nnodes = node
        memset(self.full_head, 0xff, node * node * sizeof(int32_t))
        memset(self.semi_head, 0xff, node * node * sizeof(int32_t))
        memset(self.nfull, 0, node * node * sizeof(int16_t))
        memset(self.nsemi, 0, node * node * sizeof(int16_t))
        memset(self.nadj, 0, node * sizeof(int16_t))
        for c in range(self.ncells):
            if self.node_of[c] == -10:
                # a group joining both edges: connected with the empty carrier
                self._add_full(0, 1, empty)
                return
        # base: each empty cell to its adjacent empty cells, groups and edges
        for c in range(self.ncells):
            x = self.node_of[c]
            if x < 2 or self.node_cell[x] != c:
                continue                     # a stone: only empty cells have base links
            for k in range(6):
                nbc = self.nb[c * 6 + k]
                if nbc == edge0:
                    self._add_full(x, 0, empty)
                elif nbc == edge1:
                    self._add_full(x, 1, empty)
                elif nbc >= 0 and self.node_of[nbc] >= 0:
                    self._add_full(x, self.node_of[nbc], empty)
        while self.qhead < self.qtail and not self._done():
            self.qhead += 1
            self._and(self.queue[self.qhead - 1])
        if self.npool >= self.max_entries:
            self.overflow = True

    cdef const int8_t* _board(self, const int8_t* board, int mover) noexcept nogil:
        """The board searched: after the fill-in (labels kept for the mustplay) or as is."""
        if self.fill_in:
            self.inferior.c_analyse(board, mover, self.labels)
            return self.inferior.work
        return board

    cdef int c_knowledge(self, const int8_t* board, int mover, bint swap_legal,
                         int8_t* keep) noexcept nogil:
        """VC_WIN, VC_LOSS, VC_MUSTPLAY (``keep``: the cells, and the swap at index
        ncells, that may save the game) or VC_NONE for ``mover`` (0 Black, 1 White) to
        move on ``board`` (0 empty, 1 Black, 2 White)."""
        cdef const int8_t* b = self._board(board, mover + 1)
        cdef int me = mover + 1, opp = 2 - mover, c, i
        cdef int32_t s
        cdef uint64_t inter[VC_WORDS]
        # the mover wins with either kind: its search stops at the first
        self.stop_at_semi = True
        self._build(b, me)
        self.stop_at_semi = False
        if self.nfull[1] > 0 or self.nsemi[1] > 0:       # pair (0, 1) is index 1
            return VC_WIN
        self._build(b, opp)
        if self.nfull[1] > 0:
            return VC_LOSS
        if self.nsemi[1] == 0:
            return VC_NONE
        for i in range(VC_WORDS):
            inter[i] = ~(<uint64_t>0)
        s = self.semi_head[1]
        while s >= 0:
            for i in range(VC_WORDS):
                inter[i] &= self.pool[s].bits[i]
            s = self.pool[s].next
        if (inter[0] | inter[1] | inter[2] | inter[3]) == 0:
            return VC_LOSS
        for c in range(self.ncells + 1):
            keep[c] = 0
        for c in range(self.ncells):
            if b[c] == 0 and _has(inter, c):
                keep[c] = 1
            elif (self.fill_in and board[c] == 0
                    and self.labels[c] == (INF_BLACK if opp == 1 else INF_WHITE)):
                keep[c] = 1       # the opponent's captured cell: forces the answer
        if swap_legal:
            keep[self.ncells] = 1
        return VC_MUSTPLAY

    cdef int c_maintenance(self, int16_t* out, int cap) noexcept nogil:
        """Virtual-connection maintenance (MoHex's VCM), read from the opponent's
        connections that ``c_knowledge`` built last (call it right after that answered
        VC_NONE or VC_MUSTPLAY): for two of the opponent's groups or edges fully
        connected, a cell in every one of their full carriers is a *probe* that breaks
        them all, and the key of each of their semis whose carrier the probe leaves whole
        is an *answer* that makes the connection full again. Writes (probe, answer, x,
        y) to ``out`` (four numbers a pair, x and y the connection's nodes: 0 and 1 the
        edges, from 2 the groups; at most ``cap`` pairs, each probe and answer once)
        and returns how many."""
        cdef int x, y, p, c, i, k, count = 0, ngroups = 0
        cdef int32_t e, s
        cdef uint64_t inter[VC_WORDS]
        while ngroups < self.nnodes and self.node_cell[ngroups] < 0:
            ngroups += 1                      # the edges and groups come first
        for x in range(ngroups):
            for y in range(x + 1, ngroups):
                p = self._pair(x, y)
                if self.nfull[p] == 0 or self.nsemi[p] == 0:
                    continue
                for i in range(VC_WORDS):
                    inter[i] = ~(<uint64_t>0)
                e = self.full_head[p]
                while e >= 0:
                    for i in range(VC_WORDS):
                        inter[i] &= self.pool[e].bits[i]
                    e = self.pool[e].next
                if (inter[0] | inter[1] | inter[2] | inter[3]) == 0:
                    continue
                for c in range(self.ncells):
                    if not _has(inter, c):
                        continue
                    s = self.semi_head[p]
                    while s >= 0:
                        if self.pool[s].key >= 0 and not _has(self.pool[s].bits, c):
                            for k in range(count):
                                if out[4 * k] == c and out[4 * k + 1] == self.pool[s].key:
                                    break
                            else:
                                if count >= cap:
                                    return count
                                out[4 * count] = <int16_t>c
                                out[4 * count + 1] = self.pool[s].key
                                out[4 * count + 2] = <int16_t>x
                                out[4 * count + 3] = <int16_t>y
                                count += 1
                        s = self.pool[s].next
        return count

    # -- Python access, for tests and tools --------------------------------------------

    def _check(self, HexState s) -> None:
        if s.n != self.n:
            raise ValueError(f"a {s.n}x{s.n} board given to a {self.n}x{self.n} H-search")

    def connections(self, HexState s, int player) -> tuple:
        """``player``'s (0 Black, 1 White) edge-to-edge connections on ``s``'s board
        (after the fill-in when ``fill_in``): (full carriers, [(key, semi carrier)]),
        each carrier a sorted list of cells."""
        if not 0 <= player <= 1:
            raise ValueError(f"player {player} is neither 0 (Black) nor 1 (White)")
        self._check(s)
        cdef const int8_t* b = self._board(s.cells, s.side + 1)
        self._build(b, player + 1)
        fulls = []
        semis = []
        cdef int32_t e = self.full_head[1]
        while e >= 0:
            fulls.append(self._cells(e))
            e = self.pool[e].next
        e = self.semi_head[1]
        while e >= 0:
            semis.append((int(self.pool[e].key), self._cells(e)))
            e = self.pool[e].next
        return fulls, semis

    def maintenance(self, HexState s) -> list:
        """The opponent's answers to the player to move's probes (``c_maintenance``):
        sorted (probe, answer, end, end) with each end of the connection a cell of the
        opponent's group, or -1 / -2 for its first / second edge (top / bottom for
        Black, left / right for White); empty when the position is decided."""
        self._check(s)
        cdef bytearray keep = bytearray(self.ncells + 1)
        cdef int16_t out[4 * 1024]
        cdef int code, count, i, c
        if s.winner >= 0:
            return []
        code = self.c_knowledge(s.cells, s.side, False, <int8_t*><char*>keep)
        if code != VC_NONE and code != VC_MUSTPLAY:
            return []
        count = self.c_maintenance(out, 1024)
        ends = {0: -1, 1: -2}
        for c in range(self.ncells):
            if self.node_of[c] >= 2 and self.node_cell[self.node_of[c]] < 0:
                ends.setdefault(self.node_of[c], c)
        return sorted((int(out[4 * i]), int(out[4 * i + 1]), ends[out[4 * i + 2]],
                       ends[out[4 * i + 3]]) for i in range(count))

    cdef list _cells(self, int32_t e):
        return [c for c in range(self.ncells) if _has(self.pool[e].bits, c)]

    def knowledge(self, HexState s) -> tuple:
        """(code, kept moves or None) for the player to move in ``s``: code "win",
        "loss", "mustplay" (the moves kept) or "none"."""
        self._check(s)
        cdef bytearray keep = bytearray(self.ncells + 1)
        cdef int8_t* kp = <int8_t*><char*>keep
        cdef int code
        if s.winner >= 0:
            return "none", None
        code = self.c_knowledge(s.cells, s.side, s.c_swap_legal(), kp)
        if code != VC_MUSTPLAY:
            return CODES[code], None
        return "mustplay", [a for a in s.legal_actions() if keep[a]]

    @property
    def entries(self) -> int:
        """Connections the last search built."""
        return self.npool

    @property
    def overflowed(self) -> bool:
        """Whether the last search stopped at ``max_entries``."""
        return bool(self.overflow)
