# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""MCTS with RAVE and Hex playouts: the search family of MoHex, for Hex only.

Each simulation walks the tree from the root by a RAVE-blended score, adds one node, then
fills the rest of the board at random, except that a player whose bridge (two of its
stones, or a stone and its edge, with two common empty neighbours) was just intruded
answers in the other cell of the bridge. A full Hex board has exactly one winner, so a
playout never checks for a win on the way and one flood fill at the end scores it.

All-moves-as-first (AMAF): a full board says which player owns every cell, so after each
playout every child of every node on the path whose cell ended in the colour of that
node's player to move is counted as if it had been played first (the RAVE statistics).
The score of a child blends its own mean with its RAVE mean (Gelly and Silver 2011):

    beta = rn / (n + rn + n * rn / K),   score = (1 - beta) q + beta q_rave + c sqrt(ln N / (n+1))

The move prior (``games/hex_patterns.pyx``, MoHex 2.0's prior knowledge): when a node is
expanded each child gets the probability its local pattern gives it, and its score gains
``progressive_bias * prior / sqrt(n + 1)``; children whose prior is under ``prune_ratio``
of the best are skipped until every other child is proven lost (they never count in a
proof). The swap, which no playout plays and so has no AMAF statistics, starts with a
few virtual AMAF visits at even odds.

The prior's route factor: patterns see twelve cells, not where the game is going. At a
node of ``route_at`` visits (the root at once) each child's prior is multiplied by the
route gamma of its cell (how far the shortest two-distance route of each player through
it is from that player's shortest, the evaluator's ``c_move_codes``), renormalised, and
the prior pruning redone over the children not yet visited. It costs one two-distance
computation a node, so it waits for the visits that show a node is worth it.

Inferior cells (``games/hex_inferior.pyx``, MoHex's inferior-cell analysis from each
cell's ring of neighbours): at expansion, dead cells, captured cells (after their fill-in)
and the mover's vulnerable cells get no child worth searching (``INFERIOR``): a best move
is always among the others, so they never count against a proof either.

H-search (``games/hex_vc.pyx``) at nodes of ``vc_at`` visits: a connection proves the
node, the opponent's semis prune the children outside their mustplay. With
``vcm_bonus`` > 0 (2.5 by default, MoHex's gamma of 282 against its sum of about a
hundred) it also maintains connections (MoHex's VCM): below each child that probes a full
connection of the opponent, the opponent's answers that make it whole again gain that
much prior, the child's priors renormalised (the root, searched before it has children,
runs it again at ``vc_at`` visits). RESULTS.md, nineteenth session, has its matches.

Two more of MoHex's search settings are options, off by default since neither measured
stronger (RESULTS.md, twentieth session): ``rave_prior`` virtual AMAF visits at even
odds for every child (MoHex gives 8), and ``plain_every``: one selection in that many
ignores RAVE and follows the children's own means (MoHex's randomised RAVE, 30).

The swap map (``games/hex_swap.py``, MoHex's swap table measured by self-play): where it
covers the board size, the second player swaps at once the first stones it says to swap
and otherwise searches without the swap, and under the swap rule the first player opens
at once with the map's most even stone (``stop_reason`` "book" for both).

Proven results back up as in an MCTS-Solver: a node where the last move connected is a
loss for the player to move; a node with a child lost for the opponent is won; a node
whose children are all won for the opponent is lost. A proven root stops the search.

The tree is kept from one move to the next (``keep_tree``): the subtree below the moves
played since the last search is moved down to the front of its arenas, in place, its
statistics and proofs included. That move, like the root's knowledge, runs on the
search's clock (``run`` starts the stopper before it).

The clock: where it is elastic (a main time or a Canadian block: the stopper's
``max_time`` is past its target), a search whose most visited root child is not its best
valued one (a rival with a tenth of the visits and a higher mean) is extended once to
``extend_unstable`` times its target (MoHex's 1.5), and a search whose runner-up cannot
catch the best before the latest deadline stops early (``stop_reason`` "decided"): time
moves from the clear moves to the unclear ones (Huang, Coulom and Lin 2010). Under a
fixed move time or a one-stone byo-yomi nothing changes.

Threads: root parallelisation (Chaslot, Winands and van den Herik 2008). Each thread grows
its own tree from its own seed over a share of the memory budget; the decision sums the
root children's visits over the trees. One thread is deterministic by seed.

Nothing here is a Python object per node: nodes and children are C structs in arenas
sized from ``hash_mb``; once they are full the trees stop growing and the playouts go on
from their leaves.
"""
import threading

from libc.stdint cimport int8_t, int16_t, int32_t, uint64_t
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy, memmove, memset
from libc.math cimport sqrt, log

from descent.search_cy.games.hex cimport HexState
from descent.search_cy.games.hex_patterns cimport HexPatterns, PATTERN_POINTS
from descent.search_cy.games.hex_inferior cimport (
    HexInferior, INF_KEEP, INF_DEAD, INF_BLACK, INF_WHITE, INF_VULNERABLE, ring_table)
from descent.search_cy.games.hex_vc cimport (
    HexVC, VC_NONE, VC_WIN, VC_LOSS, VC_MUSTPLAY, VC_MAXCELLS)
from descent.search_cy.games.zobrist cimport splitmix64
from descent.search_cy.search.stopper cimport (
    Stopper, STOP_RESOLVED, STOP_NONE, STOP_TIME, STOP_DECIDED)
from descent.search_cy.search.evaluator cimport (
    Evaluator, HeuristicEvaluator, KNOW_NONE, KNOW_WIN, KNOW_LOSS, KNOW_MUSTPLAY)

from descent.search_cy.games.hex_patterns import shipped_weights
from descent.search_cy.games.hex_swap import shipped_swap_map
from descent.search_cy.search.result import ChildStat, SearchResult

cdef enum:
    MAXCELLS = 625
    MAXPATH = 640
    CHUNK = 32            # simulations between two polls of the stopper
    EDGE_TOP = -1         # ring codes of the off-board neighbours
    EDGE_BOTTOM = -2
    EDGE_LEFT = -3
    EDGE_RIGHT = -4
    NO_CELL = -100
    SWAP_RAVE = 8         # virtual AMAF visits of the swap (at even odds)
    VCM_CAP = 512         # (probe, answer) pairs read from one H-search
    LOST_BY_KNOWLEDGE = 1 # a child proven to lose by the evaluator's knowledge (mustplay)
    SKIPPED_BY_PRIOR = 2  # a child the prior leaves out (prior pruning), not proven
    INFERIOR = 3          # an inferior cell (dead, captured or vulnerable): never searched
    KNOWN_GREEDY = 1      # Node.known: the evaluator's knowledge was applied
    KNOWN_VC = 2          # Node.known: H-search's knowledge was applied
    KNOWN_VCM = 4         # Node.known: and its VC maintenance, with the children visited
    KNOWN_VALUE = 8       # Node.known: the value network's virtual visits were given
    KNOWN_ROUTE = 16      # Node.known: the route factor was applied to the children's prior

# defaults measured on Hex 11x11 (RESULTS.md, eleventh session)
DEFAULT_RAVE_K = 1000.0
DEFAULT_EXPLORATION = 0.0
DEFAULT_EXPAND = 2
DEFAULT_KNOW_AT = 20
DEFAULT_PROGRESSIVE_BIAS = 2.5
DEFAULT_PRUNE_RATIO = 0.02        # prior pruning: children under this share of the best
DEFAULT_INFERIOR = True           # inferior-cell pruning at expansion
DEFAULT_PLAYOUT_GAMMA_CAP = 0.0   # pattern playouts: the largest gamma (0: uniform playouts)
DEFAULT_PLAYOUT_FILL_IN = False   # playouts start from the inferior-cell fill-in
DEFAULT_PLAYOUT_NODE_FILL_IN = False  # ... from the one found at the last node expanded
DEFAULT_VC_AT = 1000              # H-search knowledge at nodes of this many visits
DEFAULT_VCM_BONUS = 2.5           # VC maintenance: prior added to a probe's answers (0: off)
DEFAULT_RAVE_PRIOR = 0            # virtual AMAF visits at even odds of every child (MoHex: 8)
DEFAULT_PLAIN_EVERY = 0           # one selection in this many ignores RAVE (MoHex: 30; 0: none)
DEFAULT_EXTEND_UNSTABLE = 1.5     # an unstable search's deadline x this, where the clock allows
DEFAULT_STOP_DECIDED = True       # stop when the move cannot change, where the clock keeps it
DEFAULT_VALUE_AT = 20             # a value network's word on the children of nodes this visited
DEFAULT_VALUE_VISITS = 8          # ... as this many virtual visits at the network's odds
DEFAULT_VALUE_AT_BATCH = 300      # the same for a network called in batches (a call a node)
DEFAULT_ROUTE_AT = 20             # the prior's route factor at nodes this visited (0: never)
cdef double UNSTABLE_SHARE = 0.1  # a rival's visits, as a share of the best's, to count
cdef int DECIDED_POLL = 16          # chunks between two checks of a decided move
cdef double DECIDED_AFTER = 0.05    # seconds before the simulation rate is trusted
cdef double PLAIN_FPU = 0.35       # an unvisited child's mean there (MoHex's first-play urgency)
SHIPPED = object()                # the pattern weights shipped with the package


cdef struct Child:
    int32_t node          # index of the child's node, -1 before it is created
    int16_t move          # cell, or ncells for the swap
    int8_t pruned         # LOST_BY_KNOWLEDGE, SKIPPED_BY_PRIOR or INFERIOR, else 0
    int8_t fill           # an inferior cell's fill-in colour (1 Black, 2 White), else 0
    int32_t n, w          # visits and wins of the player to move at the parent
    int32_t rn, rw        # AMAF visits and wins
    float prior           # the patterns' probability of the move (1/count without them)


cdef struct Node:
    int32_t first         # index of the first child, -1 before expansion
    int16_t count         # children
    int8_t side           # player to move: 0 black, 1 white
    int8_t proven         # 0 unknown, +1 the player to move wins, -1 it loses
    int8_t known          # KNOWN_GREEDY | KNOWN_VC: which knowledge was applied here
    int32_t visits


cdef int _cmp_u64(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0], y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef inline bint _routed(Child c, int ncells) noexcept nogil:
    """Whether the route factor weighs child c: a cell neither inferior nor proven lost
    (the swap keeps its own prior)."""
    return c.move < ncells and c.pruned != INFERIOR and c.pruned != LOST_BY_KNOWLEDGE


cdef inline int _colour(const int8_t* board, int x) noexcept nogil:
    """Stone colour of a ring code: 0 empty, 1 black, 2 white (edges count as stones)."""
    if x >= 0:
        return board[x]
    if x == EDGE_TOP or x == EDGE_BOTTOM:
        return 1
    if x == NO_CELL:
        return 0
    return 2


cdef class _Tree:
    """One search tree with its arenas, random stream and playout buffers."""
    cdef Node* nodes
    cdef Child* children
    cdef long long node_cap, child_cap, n_nodes, n_children
    cdef int n, ncells
    cdef int* ring                    # 6 ring codes a cell
    cdef int8_t* root_board
    cdef int root_side, root_first    # root_first: Black's stone the swap moves, else -1
    cdef bint root_swap
    cdef bint swap_off                # the swap map says not to swap: no swap child
    cdef int8_t* board
    cdef int16_t* emp
    cdef int16_t* epos
    cdef int16_t* stack
    cdef int8_t* seen
    cdef int32_t path_node[MAXPATH]
    cdef int32_t path_child[MAXPATH]
    cdef uint64_t rng
    cdef double K, c_uct, c_pb, prune_ratio
    cdef HexPatterns pat              # the move prior's patterns, or None
    cdef HexInferior inferior         # the inferior-cell analysis at expansion, or None
    cdef bint pp                      # pattern playouts (needs pat)
    cdef double pp_cap                # their largest gamma
    cdef int nblk                     # blocks of 16 cells in the weight sums
    cdef int32_t* pkey                # per cell and player to move: both pattern readings
    cdef float* pw                    # per player to move and cell: its playout weight
    cdef double* pblk                 # per player to move and block: the weights' sum
    cdef double ptot[2]
    cdef int32_t* root_pkey           # the same at the root, copied before each simulation
    cdef float* root_pw
    cdef double* root_pblk
    cdef double root_ptot[2]
    cdef int8_t* labels               # its labels of the node being expanded
    cdef bint fill_playouts           # playouts start from the fill-in (needs inferior)
    cdef bint node_fill               # playouts start from the last expanded node's fill-in
    cdef int root_last                # the root's last stone, -1 when none
    cdef int expand_at, know_at
    cdef Evaluator know               # knowledge (c_knowledge) at nodes of know_at visits
    cdef HexState pos                 # the root position, moved along a path for knowledge
    cdef Evaluator value              # a value network valuing children at value_at visits
    cdef bint value_in_c              # ... computed in C without the GIL (an mlp model)
    cdef int value_at, value_visits
    cdef bint use_value
    cdef double* vbuf                 # the values of a node's children, one batch
    cdef int* vslot                   # each child's place in it, -1 for none
    cdef object value_error           # what a batch network raised (run raises it)
    cdef int8_t* keep
    cdef bint use_know
    cdef int route_at                 # the prior's route factor at nodes of route_at visits
    cdef bint use_route
    cdef int8_t* codes                # the evaluator's route codes of a node's cells
    cdef HexVC vc                     # H-search knowledge at nodes of vc_at visits
    cdef int vc_at
    cdef bint use_vc
    cdef double vcm_bonus             # VC maintenance: prior added to a probe's answers
    cdef int rave_prior               # virtual AMAF visits at even odds of every child
    cdef int plain_every              # one selection in this many by the plain mean
    cdef int16_t* vcm                 # its (probe, answer, x, y) pairs
    cdef int8_t* scratch              # a board after one more stone
    cdef public long long sims, moves, max_depth, vc_calls
    cdef public bint full

    def __cinit__(self, int n, long long budget_bytes, uint64_t seed, double K, double c_uct,
                  int expand_at):
        self.n = n
        self.ncells = n * n
        self.node_cap = max(1024, budget_bytes // 5 // sizeof(Node))
        self.child_cap = max(4096, (budget_bytes - self.node_cap * sizeof(Node)) // sizeof(Child))
        self.nodes = <Node*>malloc(self.node_cap * sizeof(Node))
        self.children = <Child*>malloc(self.child_cap * sizeof(Child))
        self.ring = <int*>malloc(6 * self.ncells * sizeof(int))
        self.root_board = <int8_t*>malloc(self.ncells)
        self.board = <int8_t*>malloc(self.ncells)
        self.emp = <int16_t*>malloc(self.ncells * sizeof(int16_t))
        self.epos = <int16_t*>malloc(self.ncells * sizeof(int16_t))
        self.stack = <int16_t*>malloc(self.ncells * sizeof(int16_t))
        self.seen = <int8_t*>malloc(self.ncells)
        self.keep = <int8_t*>malloc(self.ncells + 2)
        self.codes = <int8_t*>malloc(self.ncells + 2)
        self.labels = <int8_t*>malloc(self.ncells)
        self.vbuf = <double*>malloc((self.ncells + 1) * sizeof(double))
        self.vslot = <int*>malloc((self.ncells + 1) * sizeof(int))
        self.vcm = <int16_t*>malloc(4 * VCM_CAP * sizeof(int16_t))
        self.scratch = <int8_t*>malloc(self.ncells)
        self.vcm_bonus = 0.0
        self.rave_prior = 0
        self.plain_every = 0
        self.inferior = None
        self.fill_playouts = False
        self.node_fill = False
        self.pp = False
        self.pp_cap = 0.0
        self.nblk = (self.ncells + 15) >> 4
        self.pkey = <int32_t*>malloc(4 * self.ncells * sizeof(int32_t))
        self.root_pkey = <int32_t*>malloc(4 * self.ncells * sizeof(int32_t))
        self.pw = <float*>malloc(2 * self.ncells * sizeof(float))
        self.root_pw = <float*>malloc(2 * self.ncells * sizeof(float))
        self.pblk = <double*>malloc(2 * self.nblk * sizeof(double))
        self.root_pblk = <double*>malloc(2 * self.nblk * sizeof(double))
        self.know = None
        self.pos = None
        self.value = None
        self.value_in_c = False
        self.value_error = None
        self.value_at = 0
        self.value_visits = 0
        self.know_at = DEFAULT_KNOW_AT
        self.vc = None
        self.vc_at = 0
        self.use_vc = False
        self.pat = None
        self.c_pb = 0.0
        self.prune_ratio = 0.0
        self.root_last = -1
        self.route_at = 0
        self.use_route = False
        if (not self.keep or not self.codes or not self.labels or not self.vcm or not self.scratch
                or not self.pkey or not self.root_pkey
                or not self.pw or not self.root_pw or not self.pblk or not self.root_pblk
                or not self.nodes or not self.children or not self.ring
                or not self.root_board or not self.board or not self.emp or not self.epos or not self.stack
                or not self.seen):
            raise MemoryError()
        self.rng = seed
        self.K = K
        self.c_uct = c_uct
        self.expand_at = expand_at
        ring_table(n, self.ring)      # EDGE_TOP..EDGE_RIGHT are its -1..-4

    def __dealloc__(self):
        free(self.nodes)
        free(self.children)
        free(self.ring)
        free(self.root_board)
        free(self.board)
        free(self.emp)
        free(self.epos)
        free(self.stack)
        free(self.seen)
        free(self.keep)
        free(self.codes)
        free(self.labels)
        free(self.vbuf)
        free(self.vslot)
        free(self.vcm)
        free(self.scratch)
        free(self.pkey)
        free(self.root_pkey)
        free(self.pw)
        free(self.root_pw)
        free(self.pblk)
        free(self.root_pblk)

    # -- setting up ------------------------------------------------------------------
    cdef void reset(self, HexState s):
        """A fresh tree whose root is ``s`` (not terminal)."""
        self._root_facts(s)
        self.n_nodes = 0
        self.n_children = 0
        self.sims = 0
        self.moves = 0
        self.max_depth = 0
        self.full = False
        self._new_node(self.root_side)
        self._expand(0, self.root_board, self.root_side, self.root_last)
        self.vc_calls = 0
        if self.use_route:
            self._route_prior(0, 0)
        if self.use_know:
            self._knowledge(0, 0)
        if self.use_vc and self.nodes[0].proven == 0:
            self._vc_knowledge(0, self.root_board, self.root_side)
        self._root_wins()

    cdef void _root_wins(self) noexcept:
        """Proves the root's winning moves at once (a stone that connects), so that a
        search of any length plays one."""
        cdef Node* nd = &self.nodes[0]
        cdef Child* ch
        cdef int i, m, colour = self.root_side + 1
        cdef int32_t cidx
        if nd.first < 0:
            return
        memcpy(self.board, self.root_board, self.ncells)
        for i in range(nd.count):
            ch = self.children + nd.first + i
            m = ch.move
            if m >= self.ncells or ch.node >= 0 or ch.pruned == LOST_BY_KNOWLEDGE:
                continue
            self.board[m] = colour
            if self._connects(m, colour):
                cidx = self._new_node(1 - self.root_side)
                if cidx >= 0:
                    ch.node = cidx
                    self.nodes[cidx].proven = -1
            self.board[m] = 0
        self._prove(0)

    cdef bint reuse(self, HexState s, list path):
        """Keeps the subtree below ``path`` (moves from the previous root to ``s``) as
        the new tree, its statistics and proofs included; False (and nothing changed)
        when the tree does not hold that node."""
        cdef int32_t idx = 0, j
        cdef int i, m
        cdef Node* nd
        if s.c_swap_legal():
            return False                  # the new root needs the swap among its children
        for m in path:
            nd = &self.nodes[idx]
            if nd.first < 0:
                return False
            j = -1
            for i in range(nd.count):
                if self.children[nd.first + i].move == m:
                    j = i
                    break
            if j < 0 or self.children[nd.first + j].node < 0:
                return False
            idx = self.children[nd.first + j].node
        if idx != 0 and not self._compact(idx):
            return False
        self._root_facts(s)
        self.sims = 0
        self.moves = 0
        self.max_depth = 0
        nd = &self.nodes[0]
        # a root proven by knowledge alone has no winning child to play: prove it again
        # from its children
        nd.proven = 0
        if nd.first < 0:
            self._expand(0, self.root_board, self.root_side, self.root_last)
        self.vc_calls = 0
        if self.use_route and not (nd.known & KNOWN_ROUTE):
            self._route_prior(0, 0)
        if self.use_know and not (nd.known & KNOWN_GREEDY):
            self._knowledge(0, 0)
        if self.use_vc and not (nd.known & KNOWN_VC):
            self._vc_knowledge(0, self.root_board, self.root_side)
        self._root_wins()
        return True

    cdef bint _compact(self, int32_t root):
        """Moves the subtree of node ``root`` to the front of the arenas, ``root`` first,
        in place. A node is created after its parent and a children block after the
        blocks before it, so in the order of their old positions every kept node and
        block moves down or stays (its new position is its rank among the kept ones): no
        second arena, no fresh pages to fault in, no large free (the copy into fresh
        arenas took 10-130 ms a move on 11x11, outside the move's clock)."""
        cdef long long nn = self.n_nodes
        cdef int32_t* remap = <int32_t*>malloc(nn * sizeof(int32_t))
        cdef uint64_t* keys = <uint64_t*>malloc(nn * sizeof(uint64_t))
        cdef long long k, kept = 0, p, dest = 0, blocks = 0, b
        cdef int32_t j, x
        cdef int i, count
        cdef Node* nd
        cdef Child* c
        if not remap or not keys:
            free(remap)
            free(keys)
            return False
        with nogil:
            # one pass in the order of the old indices: a node's children come after it,
            # so a node reached from the root is marked (0; -1 elsewhere) before the pass
            # gets to it; a marked node marks its children and takes its rank as its new
            # index (the root, the lowest index of its subtree, becomes node 0)
            memset(remap, 0xFF, nn * sizeof(int32_t))
            remap[root] = 0
            for k in range(root, nn):
                if remap[k] != 0:
                    continue
                nd = &self.nodes[k]
                if nd.first >= 0:
                    for i in range(nd.count):
                        x = self.children[nd.first + i].node
                        if x >= 0:
                            remap[x] = 0
                remap[k] = <int32_t>kept
                self.nodes[kept] = self.nodes[k]
                kept += 1
            # the kept nodes' children blocks, in the order of their old positions (a
            # sort of the expanded nodes' keys: far fewer than the children)
            for j in range(<int32_t>kept):
                if self.nodes[j].first >= 0:
                    if self.nodes[j].count > 0:
                        keys[blocks] = (<uint64_t>self.nodes[j].first << 32) | <uint64_t>j
                        blocks += 1
                    else:
                        self.nodes[j].first = 0     # expanded, no children: no block
            qsort(keys, blocks, sizeof(uint64_t), _cmp_u64)
            for b in range(blocks):
                j = <int32_t>(keys[b] & <uint64_t>0xFFFFFFFF)
                p = <long long>(keys[b] >> 32)
                count = self.nodes[j].count
                if dest != p:
                    memmove(self.children + dest, self.children + p, count * sizeof(Child))
                self.nodes[j].first = <int32_t>dest
                for i in range(count):
                    c = self.children + dest + i
                    if c.node >= 0:
                        c.node = remap[c.node]
                dest += count
        free(remap)
        free(keys)
        self.n_nodes = kept
        self.n_children = dest
        self.full = False
        return True

    cdef void _root_facts(self, HexState s):
        cdef int i
        for i in range(self.ncells):
            self.root_board[i] = s.cells[i]
        self.root_side = s.side
        self.root_swap = s.c_swap_legal() and not self.swap_off
        self.root_first = s.hist_action[0] if self.root_swap else -1
        self.root_last = -1
        if s.nhist > 0 and s.hist_action[s.nhist - 1] < self.ncells:
            self.root_last = s.hist_action[s.nhist - 1]
        self.use_know = self.know is not None and self.know_at > 0
        self.use_route = self.know is not None and self.route_at > 0 and self.pat is not None
        self.use_vc = self.vc is not None and self.vc_at > 0 and self.vc.n == s.n
        self.use_value = self.value is not None and self.value_at > 0 and self.value_visits > 0
        self.value_in_c = isinstance(self.value, HeuristicEvaluator)
        self.value_error = None
        self.pos = <HexState>s.c_clone() if (self.use_know or self.use_value
                                             or self.use_route) else None
        if self.pp and self.pat is not None:
            self._pp_init(self.root_board)
            memcpy(self.root_pkey, self.pkey, 4 * self.ncells * sizeof(int32_t))
            memcpy(self.root_pw, self.pw, 2 * self.ncells * sizeof(float))
            memcpy(self.root_pblk, self.pblk, 2 * self.nblk * sizeof(double))
            self.root_ptot[0] = self.ptot[0]
            self.root_ptot[1] = self.ptot[1]
        else:
            self.pp = False

    # -- pattern playouts -----------------------------------------------------------------
    cdef inline double _pp_gamma(self, int32_t* ab) noexcept nogil:
        cdef double g = self.pat.gp[ab[0] if ab[0] < ab[1] else ab[1]]
        return g if g < self.pp_cap else self.pp_cap

    cdef inline void _pp_set(self, int side, int cell, double g) noexcept nogil:
        cdef int i = side * self.ncells + cell
        cdef float old = self.pw[i]
        cdef float new = <float>g
        cdef double d = <double>new - <double>old
        self.pw[i] = new
        self.pblk[side * self.nblk + (cell >> 4)] += d
        self.ptot[side] += d

    cdef void _pp_init(self, const int8_t* board) noexcept nogil:
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
                g = self._pp_gamma(self.pkey + (c * 2 + side) * 2) if board[c] == 0 else 0.0
                self.pw[side * self.ncells + c] = <float>g
                self.pblk[side * self.nblk + (c >> 4)] += <float>g
                self.ptot[side] += <float>g

    cdef void _pp_moved(self, int m, int colour) noexcept nogil:
        """Follows the stone just placed on m: its weight goes, and the patterns of the
        empty cells around it change by one point."""
        cdef int j, p, side
        cdef int* pts = self.pat.pts + m * PATTERN_POINTS
        cdef int32_t* ab
        self._pp_set(0, m, 0.0)
        self._pp_set(1, m, 0.0)
        for j in range(PATTERN_POINTS):
            p = pts[j]
            if p < 0 or self.board[p] != 0:
                continue
            for side in range(2):
                ab = self.pkey + (p * 2 + side) * 2
                self.pat.c_moved(j, side, colour, ab)
                self._pp_set(side, p, self._pp_gamma(ab))

    cdef int _pp_sample(self, int side) noexcept nogil:
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

    cdef void _pos_down(self, int depth) noexcept nogil:
        """Moves ``pos`` (the root position) along the first ``depth`` moves of the path."""
        cdef int i
        for i in range(depth):
            self.pos.c_apply(self.children[self.path_child[i]].move)

    cdef void _pos_up(self, int depth) noexcept nogil:
        """Takes back what ``_pos_down(depth)`` played."""
        cdef int i
        for i in range(depth):
            self.pos.c_undo()

    cdef void _knowledge(self, int32_t idx, int depth) noexcept nogil:
        """Applies the evaluator's proofs to node idx, reached by the first ``depth``
        moves of the path: a proven win or loss (not at the root, which needs a move),
        or the children outside the mustplay set pruned as losses."""
        cdef int code
        self.nodes[idx].known |= KNOWN_GREEDY
        self._pos_down(depth)
        code = self.know.c_knowledge(self.pos, self.keep)
        self._pos_up(depth)
        self._apply_knowledge(idx, code, False)

    cdef void _route_prior(self, int32_t idx, int depth) noexcept nogil:
        """The prior's route factor at node idx (reached by the first ``depth`` moves of
        the path): each child's prior times the route gamma of its cell's code (the
        evaluator's ``c_move_codes``), renormalised so that the searched children keep
        their share (the swap keeps its own), and the prior pruning redone: a child
        never visited that falls under ``prune_ratio`` of the best is skipped, a skipped
        one that rises above it comes back."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch
        cdef int i
        cdef bint ok
        cdef double before = 0.0, after = 0.0, scale
        nd.known |= KNOWN_ROUTE
        if nd.first < 0:
            return
        self._pos_down(depth)
        ok = self.know.c_move_codes(self.pos, self.codes)
        self._pos_up(depth)
        if not ok:
            return
        ch = self.children + nd.first
        for i in range(nd.count):
            if not _routed(ch[i], self.ncells):
                continue
            before += ch[i].prior
            ch[i].prior = <float>(ch[i].prior * self.pat.c_route_gamma(self.codes[ch[i].move]))
            after += ch[i].prior
        if after <= 0.0:
            return
        scale = before / after
        for i in range(nd.count):
            if not _routed(ch[i], self.ncells):
                continue
            ch[i].prior = <float>(ch[i].prior * scale)
        self._prune_by_prior(ch, nd.count)

    cdef void _prune_by_prior(self, Child* ch, int count) noexcept nogil:
        """The prior pruning over ``count`` children: a child never visited whose prior
        falls under ``prune_ratio`` of the best is skipped, a skipped one that rises above
        it comes back (inferior children and proven losses are left alone)."""
        cdef int i
        cdef double best = 0.0
        if self.prune_ratio <= 0.0:
            return
        for i in range(count):
            if (ch[i].pruned == 0 or ch[i].pruned == SKIPPED_BY_PRIOR) and ch[i].prior > best:
                best = ch[i].prior
        for i in range(count):
            if ch[i].move >= self.ncells:
                continue
            if ch[i].pruned == SKIPPED_BY_PRIOR and ch[i].prior >= self.prune_ratio * best:
                ch[i].pruned = 0
            elif (ch[i].pruned == 0 and ch[i].n == 0 and ch[i].node < 0
                    and ch[i].prior < self.prune_ratio * best):
                ch[i].pruned = SKIPPED_BY_PRIOR

    cdef void _value_prior(self, int32_t idx, int depth, int side) noexcept nogil:
        """The value network's word on the children of node idx (reached by the first
        ``depth`` moves of the path, ``side`` to move): each child searched or not gets
        ``value_visits`` virtual visits won at the network's odds for the player to move
        (Gelly and Silver's prior knowledge, with a network as the prior). The swap and
        pruned children are left alone; a child that ends the game needs no word. A
        network in C is read here, any other in one batch under the GIL."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch
        cdef int i, k = 0
        nd.known |= KNOWN_VALUE
        if nd.first < 0:
            return
        self._pos_down(depth)
        ch = self.children + nd.first
        for i in range(nd.count):
            self.vslot[i] = -1
            if ch[i].pruned == INFERIOR or ch[i].pruned == LOST_BY_KNOWLEDGE \
                    or ch[i].move == self.ncells:
                continue
            self.pos.c_apply(ch[i].move)
            if not self.pos.c_terminal():
                self.vslot[i] = k
                if self.value_in_c:
                    self.vbuf[k] = (<HeuristicEvaluator>self.value).c_heuristic(self.pos)
                k += 1
            self.pos.c_undo()
        if self.value_in_c:
            self.value.positions += k     # what the engine reports it valued
        elif k > 0:
            with gil:
                k = self._value_batch(idx)
        for i in range(nd.count):
            if self.vslot[i] >= 0 and k > 0:
                self._virtual(&ch[i], self.vbuf[self.vslot[i]], side)
        self._pos_up(depth)

    cdef int _value_batch(self, int32_t idx) noexcept:
        """The children of node idx marked in ``vslot`` (the path already on ``pos``),
        valued in one call of the batch network into ``vbuf``; 0 when it raised (kept in
        ``value_error``: the search raises it after its chunk) and the network is off."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch = self.children + nd.first
        cdef int i
        try:
            for i in range(nd.count):
                if self.vslot[i] >= 0:
                    self.pos.c_apply(ch[i].move)
                    self.value.c_add(self.pos)
                    self.pos.c_undo()
            self.value.c_flush(self.vbuf)
        except BaseException as e:
            self.value.c_discard()
            self.value_error = e
            self.use_value = False
            return 0
        return 1

    cdef inline void _virtual(self, Child* ch, double v, int side) noexcept nogil:
        """``value_visits`` virtual visits at the odds of ``v`` (player 0's view)."""
        cdef double q = 0.5 * (1.0 + v) if side == 0 else 0.5 * (1.0 - v)
        q = 0.0 if q < 0.0 else 1.0 if q > 1.0 else q
        ch.n += self.value_visits
        ch.w += <int32_t>(q * self.value_visits + 0.5)

    cdef void _apply_knowledge(self, int32_t idx, int code, bint keep_inferior) noexcept nogil:
        """A KNOW_* code at node idx: a proven win or loss (not at the root, which needs
        a move), or the children outside ``keep`` pruned as losses (the inferior ones
        left as they are where ``keep_inferior``)."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch
        cdef int i
        if code == KNOW_WIN and idx != 0:
            nd.proven = 1
        elif code == KNOW_LOSS and idx != 0:
            nd.proven = -1
        elif code == KNOW_MUSTPLAY and nd.first >= 0:
            ch = self.children + nd.first
            for i in range(nd.count):
                if keep_inferior and ch[i].pruned == INFERIOR:
                    continue
                if not self.keep[ch[i].move]:
                    ch[i].pruned = LOST_BY_KNOWLEDGE
                elif ch[i].pruned == SKIPPED_BY_PRIOR:
                    ch[i].pruned = 0      # a move that must be considered

    cdef void _vc_knowledge(self, int32_t idx, const int8_t* board, int side) noexcept nogil:
        """H-search's proofs at node idx (``board``, ``side`` to move): a win or a loss
        (not at the root), or the children outside the mustplay pruned as losses."""
        cdef int code
        # the maintenance boosts the answers below children that have nodes: at the
        # root, searched before its first simulation, it waits for a second H-search
        cdef bint maintain = self.vcm_bonus > 0.0 and self.nodes[idx].visits >= self.vc_at
        self.nodes[idx].known |= KNOWN_VC
        if maintain:
            self.nodes[idx].known |= KNOWN_VCM
        self.vc_calls += 1
        code = self.vc.c_knowledge(board, side, idx == 0 and self.root_swap, self.keep)
        self._apply_knowledge(
            idx, KNOW_WIN if code == VC_WIN else KNOW_LOSS if code == VC_LOSS
            else KNOW_MUSTPLAY if code == VC_MUSTPLAY else KNOW_NONE, True)
        if maintain and self.nodes[idx].proven == 0 and (code == VC_NONE or code == VC_MUSTPLAY):
            self._maintain(idx, board, side)

    cdef void _maintain(self, int32_t idx, const int8_t* board, int side) noexcept nogil:
        """VC maintenance (MoHex's VCM), from the H-search just run at node idx: below
        each child that probes the opponent's connections (and has been visited), the
        opponent's answers that make them whole again get ``vcm_bonus`` more prior (the
        child's priors renormalised), and come back if the prior had skipped them."""
        cdef int npairs = self.vc.c_maintenance(self.vcm, VCM_CAP)
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch
        cdef Child* kids
        cdef int i, k, t, m, boosted
        cdef int32_t cidx
        cdef bint probe
        if npairs == 0:
            return
        for i in range(nd.count):
            ch = self.children + nd.first + i
            m = ch.move
            if ch.pruned == LOST_BY_KNOWLEDGE or ch.pruned == INFERIOR or ch.node < 0 \
                    or m >= self.ncells:
                continue
            probe = False
            for k in range(npairs):
                if self.vcm[4 * k] == m:
                    probe = True
                    break
            cidx = ch.node
            if not probe or self.nodes[cidx].proven != 0:
                continue
            if self.nodes[cidx].first < 0:
                memcpy(self.scratch, board, self.ncells)
                self.scratch[m] = side + 1
                if not self._expand(cidx, self.scratch, 1 - side, m):
                    return                # the arenas are full
            kids = self.children + self.nodes[cidx].first
            boosted = 0
            for t in range(self.nodes[cidx].count):
                if kids[t].pruned == LOST_BY_KNOWLEDGE or kids[t].pruned == INFERIOR:
                    continue
                for k in range(npairs):
                    if self.vcm[4 * k] == m and self.vcm[4 * k + 1] == kids[t].move:
                        kids[t].prior += <float>self.vcm_bonus
                        if kids[t].pruned == SKIPPED_BY_PRIOR:
                            kids[t].pruned = 0
                        boosted += 1
                        break
            if boosted:
                for t in range(self.nodes[cidx].count):
                    kids[t].prior = <float>(kids[t].prior / (1.0 + self.vcm_bonus * boosted))

    cdef int32_t _new_node(self, int side) noexcept nogil:
        cdef int32_t i
        if self.n_nodes >= self.node_cap:
            self.full = True
            return -1
        i = <int32_t>self.n_nodes
        self.n_nodes += 1
        self.nodes[i].first = -1
        self.nodes[i].count = 0
        self.nodes[i].side = side
        self.nodes[i].proven = 0
        self.nodes[i].known = 0
        self.nodes[i].visits = 0
        return i

    cdef bint _expand(self, int32_t idx, const int8_t* board, int side, int last) noexcept nogil:
        """Children for every empty cell (and the swap at the root where it is legal),
        the inferior cells among them left out (where some cell is kept), with their
        prior: the patterns' gammas normalised over the children searched (the swap gets
        the largest: it is always a serious candidate), or uniform without them."""
        cdef int i, k = 0, total = 0, searched
        cdef Child* ch
        cdef double g, gsum = 0.0
        for i in range(self.ncells):
            if board[i] == 0:
                total += 1
        if idx == 0 and self.root_swap:
            total += 1
        if self.n_children + total > self.child_cap:
            self.full = True
            return False
        ch = self.children + self.n_children
        for i in range(self.ncells):
            if board[i] == 0:
                ch[k].move = i
                k += 1
        if idx == 0 and self.root_swap:
            ch[k].move = self.ncells
            k += 1
        for i in range(k):
            ch[i].node = -1
            ch[i].pruned = 0
            ch[i].fill = 0
            ch[i].n = 0
            ch[i].w = 0
            # rave_prior virtual AMAF visits at even odds (MoHex gives every move 8),
            # lest a child's first playouts decide whether it is ever tried
            ch[i].rn = self.rave_prior
            ch[i].rw = self.rave_prior // 2
            ch[i].prior = 1.0
        if idx == 0 and self.root_swap and self.rave_prior < SWAP_RAVE:
            # no playout ever plays the swap, so it has no AMAF statistics: it gets at
            # least SWAP_RAVE virtual ones at even odds, lest its first playout decide it
            ch[k - 1].rn = SWAP_RAVE
            ch[k - 1].rw = SWAP_RAVE // 2
        searched = k
        if self.inferior is not None and k > 1:
            if self.inferior.c_analyse(board, side + 1, self.labels) > 0:
                for i in range(k):
                    if ch[i].move < self.ncells and self.labels[ch[i].move] != INF_KEEP:
                        ch[i].pruned = INFERIOR
                        ch[i].prior = 0.0
                        searched -= 1
                        if self.labels[ch[i].move] != INF_VULNERABLE:
                            # dead or captured: what the playouts may start from
                            ch[i].fill = self.inferior.work[ch[i].move]
        if self.pat is not None and k > 0:
            for i in range(k):
                if ch[i].move < self.ncells and ch[i].pruned != INFERIOR:
                    g = self.pat.c_gamma(board, ch[i].move, side, last)
                    ch[i].prior = <float>g
                    gsum += g
            if idx == 0 and self.root_swap:
                g = 1.0
                for i in range(k - 1):
                    if ch[i].prior > g:
                        g = ch[i].prior
                ch[k - 1].prior = <float>g
                gsum += g
            for i in range(k):
                ch[i].prior = <float>(ch[i].prior / gsum)
            self._prune_by_prior(ch, k)
        else:
            for i in range(k):
                if ch[i].pruned != INFERIOR:
                    ch[i].prior = <float>(1.0 / searched)
        self.nodes[idx].first = <int32_t>self.n_children
        self.nodes[idx].count = k
        self.n_children += k
        return True

    # -- one simulation -----------------------------------------------------------------
    cdef inline double _score(self, Child* ch, double log_n, bint plain) noexcept nogil:
        cdef double q, qr, beta
        cdef double n = ch.n, rn = ch.rn
        if plain:
            # the plain mean, RAVE ignored (MoHex's randomised RAVE: a child whose AMAF
            # statistics misjudge it is still tried on its own results)
            q = ch.w / n if n > 0.0 else PLAIN_FPU
            return (q + self.c_uct * sqrt(log_n / (n + 1.0))
                    + self.c_pb * ch.prior / sqrt(n + 1.0))
        if rn > 0.0:
            qr = ch.rw / rn
            beta = rn / (n + rn + n * rn / self.K)
        else:
            qr = 0.5
            beta = 1.0 if n == 0.0 else 0.0
        q = ch.w / n if n > 0.0 else 0.0
        return ((1.0 - beta) * q + beta * qr + self.c_uct * sqrt(log_n / (n + 1.0))
                + self.c_pb * ch.prior / sqrt(n + 1.0))

    cdef int _select(self, int32_t idx) noexcept nogil:
        """The child to follow: a proven win at once, never a proven loss unless all are."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch = self.children + nd.first
        cdef int i, best = -1
        cdef double s, best_s = -1e300
        cdef double log_n = log(nd.visits + 1.0)
        cdef int8_t p
        cdef bint plain = self.plain_every > 0 and \
            splitmix64(&self.rng) % <uint64_t>self.plain_every == 0
        for i in range(nd.count):
            if ch[i].pruned:
                continue
            if ch[i].node >= 0:
                p = self.nodes[ch[i].node].proven
                if p == -1:
                    return i              # the opponent is lost there
                if p == 1:
                    continue              # the opponent wins there
            s = self._score(&ch[i], log_n, plain)
            if s > best_s:
                best_s = s
                best = i
        if best < 0:
            # every child kept is lost: the prior's skipped ones come back
            for i in range(nd.count):
                if ch[i].pruned == SKIPPED_BY_PRIOR:
                    ch[i].pruned = 0
                    best = i
            if best >= 0:
                return self._select(idx)
            best = 0                      # every child is lost: any will do
        return best

    cdef int _empties(self) noexcept nogil:
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

    cdef void _fill_in(self, int side, int* ne) noexcept nogil:
        """Fills the dead and captured cells of the board (MoHex's playouts start from
        the fill-in): the playout then never spends a move there, and a captured pair
        is never lost to a playout that forgets to answer."""
        cdef int c, lab
        self.inferior.c_analyse(self.board, side + 1, self.labels)
        for c in range(self.ncells):
            lab = self.labels[c]
            if lab == INF_DEAD or lab == INF_BLACK or lab == INF_WHITE:
                self._place(c, self.inferior.work[c], ne)

    cdef void _place(self, int m, int colour, int* ne) noexcept nogil:
        """Stone of ``colour`` (1 black, 2 white) on empty cell m, off the empty list."""
        cdef int p = self.epos[m]
        cdef int last = self.emp[ne[0] - 1]
        self.emp[p] = last
        self.epos[last] = p
        self.epos[m] = -1
        ne[0] -= 1
        self.board[m] = colour
        if self.pp:
            self._pp_moved(m, colour)

    cdef bint _connects(self, int m, int colour) noexcept nogil:
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

    cdef int _black_wins(self) noexcept nogil:
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

    cdef int _bridge_reply(self, int last, int colour) noexcept nogil:
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

    cdef int simulate(self) noexcept nogil:
        """One simulation: descent, expansion, playout, backup. Returns 1 when the root is
        proven (the search can stop)."""
        cdef int i, ne = 0, depth = 0, side, m, last = -1, winner, colour, first, t
        cdef int32_t idx = 0, cidx
        cdef Node* nd
        cdef Child* ch
        cdef Child* kids
        cdef int8_t proven_winner = -1
        cdef int32_t leaf = 0             # the node the playout starts from (-1: none)
        cdef int32_t filled = -1          # the deepest expanded node passed (its fill-in)
        ne = self._from_root()
        side = self.root_side
        # -- descent
        while True:
            nd = &self.nodes[idx]
            leaf = idx
            if nd.proven != 0:
                proven_winner = side if nd.proven == 1 else 1 - side
                break
            if nd.first < 0:
                if nd.visits < self.expand_at or not self._expand(idx, self.board, side, last):
                    break
            # the route factor before the proofs: a mustplay brings back what it skipped
            if self.use_route and nd.visits >= self.route_at and not (nd.known & KNOWN_ROUTE):
                self._route_prior(idx, depth)
            if self.use_know and not (nd.known & KNOWN_GREEDY) and nd.visits >= self.know_at:
                self._knowledge(idx, depth)
                if nd.proven != 0:
                    proven_winner = side if nd.proven == 1 else 1 - side
                    break
            if self.use_vc and nd.visits >= self.vc_at and (
                    not (nd.known & KNOWN_VC)
                    or self.vcm_bonus > 0.0 and not (nd.known & KNOWN_VCM)):
                self._vc_knowledge(idx, self.board, side)
                if nd.proven != 0:
                    proven_winner = side if nd.proven == 1 else 1 - side
                    break
            if self.use_value and nd.visits >= self.value_at and not (nd.known & KNOWN_VALUE):
                self._value_prior(idx, depth, side)
            if nd.count == 0:
                break                     # cannot happen before the end: a full board is won
            leaf = -1
            filled = idx
            i = self._select(idx)
            ch = self.children + nd.first + i
            self.path_node[depth] = idx
            self.path_child[depth] = nd.first + i
            depth += 1
            m = ch.move
            colour = side + 1
            if m == self.ncells:
                # the canonical swap: Black's stone (r, c) becomes White's (c, r)
                first = self.root_first
                t = (first % self.n) * self.n + first // self.n
                self.board[first] = 0
                self.emp[ne] = first
                self.epos[first] = ne
                ne += 1
                self._place(t, 2, &ne)
                if self.pp:
                    self._pp_init(self.board)     # a stone moved: read every cell again
                m = t
            else:
                self._place(m, colour, &ne)
            self.moves += 1
            last = m
            side = 1 - side
            if ch.node < 0:
                cidx = self._new_node(side)
                if cidx < 0:
                    break
                ch.node = cidx
                leaf = cidx
                if self._connects(m, self.board[m]):
                    self.nodes[cidx].proven = -1      # the player to move there has lost
                    proven_winner = 1 - side
                    break
                idx = cidx
                if self.expand_at > 0:
                    break
                continue
            idx = ch.node
            if depth >= MAXPATH - 1:
                leaf = idx
                break
        if depth > self.max_depth:
            self.max_depth = depth
        # -- playout
        if proven_winner >= 0:
            winner = proven_winner
        else:
            if self.fill_playouts and ne > 1:
                self._fill_in(side, &ne)
            elif self.node_fill and filled >= 0 and not (filled == 0 and self.root_first >= 0
                                                         and self.board[self.root_first] == 0):
                # the dead and captured cells found when that node was expanded (the
                # moves below it are never among them; the root's are not the board's
                # once the swap moved its stone)
                nd = &self.nodes[filled]
                kids = self.children + nd.first
                for t in range(nd.count):
                    m = kids[t].move
                    if kids[t].fill and self.board[m] == 0:
                        self._place(m, kids[t].fill, &ne)
            self._play_out(side, last, &ne)
            winner = 0 if self._black_wins() else 1
        # -- backup, with AMAF over the final board (a proven end leaves cells empty:
        # those count for neither player)
        self.sims += 1
        for i in range(depth - 1, -1, -1):
            idx = self.path_node[i]
            nd = &self.nodes[idx]
            ch = self.children + self.path_child[i]
            nd.visits += 1
            ch.n += 1
            if winner == nd.side:
                ch.w += 1
            colour = nd.side + 1
            kids = self.children + nd.first
            for t in range(nd.count):
                m = kids[t].move
                if m < self.ncells and self.board[m] == colour:
                    kids[t].rn += 1
                    if winner == nd.side:
                        kids[t].rw += 1
            self._prove(idx)
        if leaf >= 0:
            self.nodes[leaf].visits += 1
        return self.nodes[0].proven != 0

    cdef int playout_root(self) noexcept nogil:
        """One playout from the root position itself (no tree move first), the root's
        player to move first, answering the root's last stone: 0 when Black wins, 1 when
        White does."""
        cdef int ne = self._from_root()
        if self.fill_playouts and ne > 1:
            self._fill_in(self.root_side, &ne)
        self._play_out(self.root_side, self.root_last, &ne)
        return 0 if self._black_wins() else 1

    cdef int _from_root(self) noexcept nogil:
        """The board (and the pattern playouts' weights) back to the root's; returns the
        number of empty cells."""
        memcpy(self.board, self.root_board, self.ncells)
        if self.pp:
            memcpy(self.pkey, self.root_pkey, 4 * self.ncells * sizeof(int32_t))
            memcpy(self.pw, self.root_pw, 2 * self.ncells * sizeof(float))
            memcpy(self.pblk, self.root_pblk, 2 * self.nblk * sizeof(double))
            self.ptot[0] = self.root_ptot[0]
            self.ptot[1] = self.root_ptot[1]
        return self._empties()

    cdef void _play_out(self, int side, int last, int* ne) noexcept nogil:
        """Fills the board from ``side`` to move, the stone on ``last`` just played: an
        intruded bridge is answered, else a pattern draw or a uniform one."""
        cdef int m
        while ne[0] > 0:
            m = -1
            if last >= 0:
                m = self._bridge_reply(last, side + 1)
            if m < 0 and self.pp:
                m = self._pp_sample(side)
            if m < 0:
                m = self.emp[<int>(splitmix64(&self.rng) % <uint64_t>ne[0])]
            self._place(m, side + 1, ne)
            self.moves += 1
            last = m
            side = 1 - side

    cdef void _prove(self, int32_t idx) noexcept nogil:
        """MCTS-Solver: a child lost for the opponent wins; all children won for it lose."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch = self.children + nd.first
        cdef int i
        cdef bint all_lost = True
        if nd.proven != 0 or nd.first < 0:
            return
        for i in range(nd.count):
            if ch[i].pruned == LOST_BY_KNOWLEDGE:
                continue
            if ch[i].pruned == INFERIOR:
                # never searched, and never better than the best child searched; but a
                # stone that connects (proven at the root) still wins
                if ch[i].node >= 0 and self.nodes[ch[i].node].proven == -1:
                    nd.proven = 1
                    return
                continue
            if ch[i].pruned == SKIPPED_BY_PRIOR or ch[i].node < 0:
                all_lost = False
                continue
            if self.nodes[ch[i].node].proven == -1:
                nd.proven = 1
                return
            if self.nodes[ch[i].node].proven != 1:
                all_lost = False
        if all_lost:
            nd.proven = -1

    cdef void run_chunk(self, int k) noexcept nogil:
        cdef int i
        for i in range(k):
            if self.simulate():
                return

    # -- reading the tree ---------------------------------------------------------------
    cdef int child_proven(self, Child* ch) noexcept:
        """+1 when the move wins for the player who makes it, -1 when it loses, else 0."""
        if ch.pruned == LOST_BY_KNOWLEDGE:
            return -1
        if ch.node < 0:
            return 0
        return -self.nodes[ch.node].proven


cdef int _root_lead(list trees, long long* lead):
    """The roots' children summed over the trees (matched by move). Sets ``lead[0]`` to the most visited child's visits less the
    runner-up's and returns 1 when the search is unstable: a child with at least
    UNSTABLE_SHARE of the best's visits has a higher mean (MoHex extends when the most
    visited and the best valued children differ; without a share, one lucky visit would
    make every search unstable). Children proven lost do not count."""
    cdef long long n[MAXCELLS + 1]
    cdef long long w[MAXCELLS + 1]
    cdef int8_t live[MAXCELLS + 1]
    cdef int16_t slot[MAXCELLS + 1]      # a move's index among the first tree's children
    cdef _Tree t0 = <_Tree>trees[0]
    cdef _Tree t
    cdef Node* root = &t0.nodes[0]
    cdef Child* ch
    cdef int j, best = -1, count = root.count
    cdef long long first = 0, second = 0
    if count == 0:
        lead[0] = 0
        return 0
    for j in range(MAXCELLS + 1):
        slot[j] = -1
    for j in range(count):
        n[j] = 0
        w[j] = 0
        live[j] = t0.child_proven(t0.children + root.first + j) >= 0
        slot[t0.children[root.first + j].move] = j
    for t in trees:
        for j in range(t.nodes[0].count):
            ch = t.children + t.nodes[0].first + j
            if slot[ch.move] >= 0:
                n[slot[ch.move]] += ch.n
                w[slot[ch.move]] += ch.w
    for j in range(count):
        if not live[j]:
            continue
        if n[j] > first:
            second = first
            first = n[j]
            best = j
        elif n[j] > second:
            second = n[j]
    lead[0] = first - second
    if best < 0:
        return 0
    for j in range(count):
        if (live[j] and j != best and n[j] > 0 and n[j] >= UNSTABLE_SHARE * first
                and w[j] * n[best] > w[best] * n[j]):
            return 1
    return 0


cdef class RaveSearch:
    """MCTS with RAVE and Hex playouts (see the module notes). Hex only; the evaluator is
    not used (the playouts value the leaves)."""
    cdef readonly object params
    cdef readonly Evaluator evaluator
    cdef readonly list trees
    cdef list history                 # the moves to the last root searched
    cdef tuple _patterns              # (size, weights, HexPatterns) of the last search
    cdef object _spawned_from         # the value network the trees' copies were made of
    cdef public double K, exploration, progressive_bias, prune_ratio
    cdef public int expand_at, know_at, vc_at
    cdef public object pattern_weights  # (pattern, local[, route] gammas), or None: no prior
    cdef public object swap_map         # a SwapMap, or None: the search decides the swap
    cdef public bint inferior           # prune inferior cells (games/hex_inferior.pyx)
    cdef public double playout_gamma_cap  # pattern playouts' largest gamma; 0: uniform
    cdef public bint playout_fill_in    # playouts start from the fill-in (with inferior)
    cdef public bint playout_node_fill_in  # ... from the last expanded node's fill-in
    cdef public double vcm_bonus        # VC maintenance's prior for a probe's answers
    cdef public int rave_prior          # virtual AMAF visits at even odds of every child
    cdef public int plain_every         # one selection in this many ignores RAVE (0: none)
    cdef public double extend_unstable  # an unstable search's deadline x this (1: never)
    cdef public bint stop_decided       # stop once the move cannot change
    cdef public Evaluator value         # a value network (in C: an mlp model), or None
    cdef public int value_at            # its word on the children of nodes this visited
    cdef public int value_visits        # ... as this many virtual visits (0: none)
    cdef public int route_at            # the prior's route factor at nodes this visited

    def __init__(self, Evaluator evaluator not None, params, *, double rave_k=DEFAULT_RAVE_K,
                 double exploration=DEFAULT_EXPLORATION, int expand_at=DEFAULT_EXPAND,
                 int know_at=DEFAULT_KNOW_AT, double progressive_bias=DEFAULT_PROGRESSIVE_BIAS,
                 double prune_ratio=DEFAULT_PRUNE_RATIO, pattern_weights=SHIPPED,
                 swap_map=SHIPPED, bint inferior=DEFAULT_INFERIOR,
                 double playout_gamma_cap=DEFAULT_PLAYOUT_GAMMA_CAP,
                 bint playout_fill_in=DEFAULT_PLAYOUT_FILL_IN,
                 bint playout_node_fill_in=DEFAULT_PLAYOUT_NODE_FILL_IN, int vc_at=DEFAULT_VC_AT,
                 double vcm_bonus=DEFAULT_VCM_BONUS, int rave_prior=DEFAULT_RAVE_PRIOR,
                 int plain_every=DEFAULT_PLAIN_EVERY,
                 double extend_unstable=DEFAULT_EXTEND_UNSTABLE,
                 bint stop_decided=DEFAULT_STOP_DECIDED, Evaluator value=None,
                 int value_at=DEFAULT_VALUE_AT, int value_visits=DEFAULT_VALUE_VISITS,
                 int route_at=DEFAULT_ROUTE_AT):
        if rave_k <= 0.0:
            raise ValueError("rave_k must be > 0")
        if exploration < 0.0:
            raise ValueError("exploration must be >= 0")
        if expand_at < 0:
            raise ValueError("expand_at must be >= 0")
        if know_at < 0:
            raise ValueError("know_at must be >= 0 (0: no knowledge)")
        if vc_at < 0:
            raise ValueError("vc_at must be >= 0 (0: no H-search)")
        if vcm_bonus < 0.0:
            raise ValueError("vcm_bonus must be >= 0 (0: no VC maintenance)")
        if rave_prior < 0 or rave_prior % 2:
            raise ValueError("rave_prior must be an even number >= 0 (0: none)")
        self.vc_at = vc_at
        self.vcm_bonus = vcm_bonus
        self.rave_prior = rave_prior
        if plain_every < 0:
            raise ValueError("plain_every must be >= 0 (0: RAVE in every selection)")
        self.plain_every = plain_every
        if extend_unstable < 1.0:
            raise ValueError("extend_unstable must be >= 1 (1: never extend)")
        self.extend_unstable = extend_unstable
        self.stop_decided = stop_decided
        if value_at < 1 or value_visits < 0:
            raise ValueError("value_at must be >= 1 and value_visits >= 0 (0: no value network)")
        self.value = value
        self.value_at = value_at
        if route_at < 0:
            raise ValueError("route_at must be >= 0 (0: no route factor)")
        self.route_at = route_at
        self.value_visits = value_visits
        self.evaluator = evaluator
        self.params = params
        self.trees = []
        self.history = None
        self.K = rave_k
        self.exploration = exploration
        self.expand_at = expand_at
        self.know_at = know_at
        if progressive_bias < 0.0:
            raise ValueError("progressive_bias must be >= 0")
        self.progressive_bias = progressive_bias
        if not 0.0 <= prune_ratio < 1.0:
            raise ValueError("prune_ratio must be in [0, 1)")
        self.prune_ratio = prune_ratio
        self.pattern_weights = shipped_weights() if pattern_weights is SHIPPED \
            else pattern_weights
        self.swap_map = shipped_swap_map() if swap_map is SHIPPED else swap_map
        self.inferior = inferior
        if playout_gamma_cap < 0.0:
            raise ValueError("playout_gamma_cap must be >= 0 (0: uniform playouts)")
        self.playout_gamma_cap = playout_gamma_cap
        self.playout_fill_in = playout_fill_in
        self.playout_node_fill_in = playout_node_fill_in

    def clear(self) -> None:
        """Forgets the trees (a new game)."""
        self.trees = []
        self.history = None

    def _book(self, HexState s) -> tuple:
        """The swap map's word on ``s``: (its move, -1 when it has none and the search
        decides; whether the search leaves the swap out, the map keeping the stone)."""
        if self.swap_map is None:
            return -1, False
        if s.c_swap_legal():
            swaps = self.swap_map.swaps(s.n, s.hist_action[0])
            return (s.ncells if swaps else -1), swaps is False
        if s.swap_rule and s.nhist == 0 and s.n_empty == s.ncells:
            opening = self.swap_map.opening(s.n)
            return (-1 if opening is None else opening), False
        return -1, False

    def _trees_for(self, HexState s, bint swap_off):
        cdef _Tree t
        cdef int threads = self.params.threads
        cdef long long budget = (<long long>self.params.hash_mb << 20) // threads
        history = s.history()
        path = None
        if (self.params.keep_tree and self.history is not None
                and history[:len(self.history)] == self.history):
            path = history[len(self.history):]
        self.history = history
        if (len(self.trees) != threads or (<_Tree>self.trees[0]).n != s.n):
            path = None
            self.trees = [_Tree(s.n, budget, 0, self.K, self.exploration, self.expand_at)
                          for _ in range(threads)]
            for i, t in enumerate(self.trees):
                try:
                    t.know = self.evaluator if i == 0 else self.evaluator.spawn()
                except TypeError:
                    t.know = None         # an evaluator that cannot be duplicated
            self._spawned_from = None     # new trees: their value networks are to give
        if self._spawned_from is not self.value:
            # the first tree values with the network itself, the others with copies
            self._spawned_from = self.value
            for i, t in enumerate(self.trees):
                t.value = None if self.value is None else \
                    self.value if i == 0 else self.value.spawn()
        cdef uint64_t seed
        cdef HexPatterns pat = None
        if self.pattern_weights is not None and self.progressive_bias > 0.0:
            if self._patterns is None or self._patterns[0] != s.n \
                    or self._patterns[1] is not self.pattern_weights:
                self._patterns = (s.n, self.pattern_weights,
                                  HexPatterns(s.n, self.pattern_weights))
            pat = self._patterns[2]
        for i, t in enumerate(self.trees):
            seed = <uint64_t>self.params.seed * <uint64_t>0x9E3779B97F4A7C15 \
                + <uint64_t>(i + 1) * <uint64_t>0xD1B54A32D192ED03
            t.rng = seed
            t.K = self.K
            t.c_uct = self.exploration
            t.expand_at = self.expand_at
            t.know_at = self.know_at
            t.route_at = self.route_at
            t.c_pb = self.progressive_bias
            t.prune_ratio = self.prune_ratio
            t.pat = pat
            t.pp = pat is not None and self.playout_gamma_cap > 0.0
            t.pp_cap = self.playout_gamma_cap
            if not self.inferior:
                t.inferior = None
            elif t.inferior is None or t.inferior.n != s.n:
                t.inferior = HexInferior(s.n)
            t.fill_playouts = self.playout_fill_in and t.inferior is not None
            t.node_fill = self.playout_node_fill_in and t.inferior is not None
            t.vc_at = self.vc_at
            t.vcm_bonus = self.vcm_bonus
            t.rave_prior = self.rave_prior
            t.plain_every = self.plain_every
            t.value_at = self.value_at
            t.value_visits = self.value_visits
            if self.vc_at <= 0 or s.n * s.n > VC_MAXCELLS:
                t.vc = None               # off, or a board past H-search's 256-bit carriers
            elif t.vc is None or t.vc.n != s.n:
                t.vc = HexVC(s.n)
            t.swap_off = swap_off
            if path is None or not t.reuse(s, path):
                t.reset(s)
        return self.trees

    def run(self, state, Stopper stopper) -> SearchResult:
        """Simulations from ``state`` until ``stopper`` fires or the root is proven.

        Blocks (without the GIL between polls); ``stopper.stop()`` from another thread
        ends it at the next poll. A search stopped before its first simulation (a stop
        already asked for, a spent clock) still runs one: no move without a search behind
        it. ``nodes`` counts the stones placed (tree and playouts), ``iterations`` the
        simulations. The state is not touched.
        """
        if not isinstance(state, HexState):
            raise ValueError("the rave search plays Hex only")
        cdef HexState s = <HexState>state
        if s.c_terminal():
            raise ValueError("cannot search a terminal state")
        book, swap_off = self._book(s)
        if book >= 0:
            return self._book_result(s, book, stopper)
        cdef _Tree main
        cdef int k, polls = 0
        cdef long long sims, moves, lead = 0
        cdef bint done = False, extended = False, stopping, forced = False
        cdef double remaining, elapsed
        # An elastic clock (a main time or a Canadian block: the stopper's maximum is past
        # its target) keeps what one move does not spend for the next ones: only there is
        # an unstable search extended and a decided one stopped early. Under a fixed
        # move time or a one-stone byo-yomi every move simply spends its time.
        cdef bint elastic = stopper.max_time > stopper.time_limit > 0.0
        # the move's clock covers the tree's setup too (moving the kept subtree down and
        # the root's knowledge: tens of milliseconds late in an 11x11 game)
        stopper.c_start()
        trees = self._trees_for(s, swap_off)
        main = <_Tree>trees[0]
        stop_flag = threading.Event()
        helpers = [threading.Thread(target=_help, args=(t, stop_flag), daemon=True)
                   for t in trees[1:]]
        for h in helpers:
            h.start()
        try:
            while True:
                sims = 0
                moves = 0
                for t in trees:
                    sims += (<_Tree>t).sims
                    moves += (<_Tree>t).moves
                stopping = stopper.c_check(moves, sims)
                if stopping and (sims > 0 or forced):
                    if (elastic and not extended and not done and stopper.reason == STOP_TIME
                            and self.extend_unstable > 1.0):
                        extended = True
                        if _root_lead(trees, &lead) and stopper.c_extend(self.extend_unstable):
                            continue
                    break
                if done:
                    stopper.c_finish(STOP_RESOLVED)
                    break
                polls += 1
                if elastic and self.stop_decided and polls % DECIDED_POLL == 0:
                    # the runner-up cannot catch the best even if every simulation left
                    # to the latest deadline went to it (MoHex's count abort)
                    elapsed = stopper.elapsed
                    remaining = stopper.c_remaining()
                    if elapsed >= DECIDED_AFTER and sims > 0:
                        _root_lead(trees, &lead)
                        if lead > sims / elapsed * remaining:
                            stopper.c_finish(STOP_DECIDED)
                            break
                k = CHUNK
                if stopper.max_iterations:
                    k = min(k, stopper.max_iterations - sims)
                if stopping:
                    # no move without a search behind it: a search stopped before its
                    # first simulation (a stop already asked for, a spent clock) still
                    # runs one, which follows the prior's best child
                    k = 1
                    forced = True
                with nogil:
                    main.run_chunk(k)
                if main.value_error is not None:
                    break
                done = main.nodes[0].proven != 0
        finally:
            stop_flag.set()
            for h in helpers:
                h.join()
        for t in trees:
            if (<_Tree>t).value_error is not None:
                error, (<_Tree>t).value_error = (<_Tree>t).value_error, None
                raise ValueError(f"the value network failed: {error}") from error
        return self._result(stopper)

    def root_lead(self) -> tuple:
        """(the most visited root child's visits less the runner-up's, whether the search
        is unstable) over the trees of the last search: what the clock rules read."""
        cdef long long lead = 0
        if not self.trees:
            raise ValueError("no search has run")
        unstable = _root_lead(self.trees, &lead) == 1
        return int(lead), unstable

    def _subtree(self, path=()) -> tuple:
        """The first tree below ``path`` (moves from its root): per child (move, visits,
        wins, AMAF visits, AMAF wins, pruned, its own subtree or None, prior), for the tests
        that hold a kept tree equal to the subtree it was cut from."""
        cdef _Tree t = <_Tree>self.trees[0]
        cdef int32_t idx = 0
        cdef int i
        for m in path:
            nd_first, nd_count = t.nodes[idx].first, t.nodes[idx].count
            idx = -1
            for i in range(nd_count):
                if t.children[nd_first + i].move == m:
                    idx = t.children[nd_first + i].node
            if idx < 0:
                raise ValueError(f"move {m} has no node below {list(path)}")
        return _subtree_of(t, idx)

    def _book_result(self, HexState s, int action, Stopper stopper):
        """The swap map's move, played without a search; its value is Black's score of
        the first stone (after the swap, White owns it)."""
        cdef int first = s.hist_action[0] if action == s.ncells else action
        score = self.swap_map.black_score(s.n, first)
        value = 2.0 * score - 1.0
        if action == s.ncells:
            value = -value
        stopper.c_start()
        stopper.c_finish(STOP_RESOLVED)
        return SearchResult(
            action=action, value=value, pv=[action], nodes=0, iterations=0, depth=0,
            time=stopper.elapsed, stop_reason="book", resolved=False, evaluations=0,
            children=[ChildStat(action, value, 0, False, None)])

    def _result(self, Stopper stopper):
        cdef _Tree t0 = <_Tree>self.trees[0]
        cdef _Tree t
        cdef Child* ch
        cdef Node* root = &t0.nodes[0]
        cdef int i, j, count = root.count
        cdef int p = root.side
        sims = 0
        moves = 0
        depth = 0
        visits = {}
        wins = {}
        proven = {}
        for t in self.trees:
            sims += t.sims
            moves += t.moves
            depth = max(depth, t.max_depth)
            for j in range(t.nodes[0].count):
                ch = t.children + t.nodes[0].first + j
                visits[ch.move] = visits.get(ch.move, 0) + ch.n
                wins[ch.move] = wins.get(ch.move, 0) + ch.w
                pr = t.child_proven(ch)
                if pr == 0 and ch.pruned == INFERIOR and t.nodes[0].proven == -1:
                    pr = -1               # no better than the searched moves, all lost
                if pr != 0:
                    proven[ch.move] = pr
        order = [t0.children[root.first + j].move for j in range(count)]

        def rank(a):
            # a proven win first, proven losses last, then visits, then the mean
            pr = proven.get(a, 0)
            n = visits[a]
            return (pr, n, wins[a] / n if n else 0.0)

        best = max(order, key=rank)
        sign = 1.0 if p == 0 else -1.0
        children = []
        for a in order:
            n = visits[a]
            pr = proven.get(a, 0)
            if pr:
                v = float(pr)
            else:
                v = 2.0 * wins[a] / n - 1.0 if n else 0.0
            children.append(ChildStat(a, sign * v, n, pr != 0,
                                      (pr if p == 0 else -pr) if pr else None))
        root_proven = bool(t0.nodes[0].proven)
        value = next(c.value for c in children if c.action == best)
        return SearchResult(
            action=best, value=value, pv=self._pv(t0, best), nodes=moves, iterations=sims,
            depth=depth, time=stopper.elapsed, stop_reason=stopper.reason_name,
            resolved=root_proven, evaluations=0, children=children)

    cdef list _pv(self, _Tree t, int best):
        """The best move, then the most visited child down the first tree."""
        cdef list pv = [best]
        cdef int32_t idx = 0
        cdef Node* nd
        cdef Child* ch
        cdef int i, bi
        nd = &t.nodes[0]
        idx = -1
        for i in range(nd.count):
            if t.children[nd.first + i].move == best:
                idx = t.children[nd.first + i].node
        while idx >= 0 and len(pv) < 32:
            nd = &t.nodes[idx]
            if nd.first < 0 or nd.count == 0:
                break
            bi = -1
            for i in range(nd.count):
                ch = t.children + nd.first + i
                if bi < 0 or ch.n > t.children[nd.first + bi].n:
                    bi = i
            ch = t.children + nd.first + bi
            if ch.n == 0:
                break
            pv.append(ch.move)
            idx = ch.node
        return pv


cdef tuple _subtree_of(_Tree t, int32_t idx):
    cdef Node* nd = &t.nodes[idx]
    cdef Child* ch
    cdef int i
    out = []
    if nd.first >= 0:
        for i in range(nd.count):
            ch = t.children + nd.first + i
            out.append((ch.move, ch.n, ch.w, ch.rn, ch.rw, ch.pruned,
                        _subtree_of(t, ch.node) if ch.node >= 0 else None, ch.prior))
    return (nd.side, nd.visits, tuple(out))


def _help(_Tree t, stop_flag) -> None:
    """A helper thread's loop: its own tree until the main search says stop."""
    while not stop_flag.is_set():
        with nogil:
            t.run_chunk(CHUNK)
        if t.nodes[0].proven != 0 or t.value_error is not None:
            break


# -- the playout policy, exposed for its tests ---------------------------------------------

def bridge_reply(HexState state, int last, int player, uint64_t seed=0) -> int:
    """The playouts' answer for ``player`` (0 black, 1 white) to a stone just placed on
    cell ``last`` of ``state``: the other cell of the bridge it intruded, or -1."""
    cdef _Tree t = _Tree(state.n, 1 << 16, seed, DEFAULT_RAVE_K, 0.0, DEFAULT_EXPAND)
    cdef int i
    for i in range(state.ncells):
        t.board[i] = state.cells[i]
    return t._bridge_reply(last, player + 1)


def playout(HexState state, uint64_t seed, bint fill_in=False,
            bint node_fill_in=False) -> tuple:
    """One simulation from ``state``: one tree move, then the playout (with ``fill_in``
    from its inferior-cell fill-in, with ``node_fill_in`` from the one found when the
    root was expanded): (final cells, 0 empty / 1 black / 2 white, and whether Black won,
    by the playouts' own scoring)."""
    cdef _Tree t = _Tree(state.n, 1 << 16, seed, DEFAULT_RAVE_K, 0.0, 1 << 30)
    if fill_in or node_fill_in:
        t.inferior = HexInferior(state.n)
        t.fill_playouts = fill_in
        t.node_fill = node_fill_in
    t.reset(state)
    t.simulate()
    return [t.board[i] for i in range(state.ncells)], bool(t._black_wins())


def playout_value(HexState state, int playouts, uint64_t seed, weights=None, double cap=0.0,
                  bint fill_in=False) -> float:
    """Black's share of wins in ``playouts`` playouts from ``state`` itself (the player
    to move first, answering the last stone): the playout policy's own value of the
    position, as the search's leaves see it. ``weights`` with ``cap`` > 0: pattern
    playouts (gammas capped at ``cap``); ``fill_in``: from the inferior-cell fill-in."""
    cdef _Tree t = _Tree(state.n, 1 << 16, seed, DEFAULT_RAVE_K, 0.0, 1 << 30)
    cdef int i, black = 0
    if fill_in:
        t.inferior = HexInferior(state.n)
        t.fill_playouts = True
    if weights is not None and cap > 0.0:
        t.pat = HexPatterns(state.n, weights)
        t.pp = True
        t.pp_cap = cap
    t._root_facts(state)
    with nogil:
        for i in range(playouts):
            if t.playout_root() == 0:
                black += 1
    return <double>black / max(playouts, 1)


def _pattern_tree(HexState state, weights, double cap, uint64_t seed) -> _Tree:
    cdef _Tree t = _Tree(state.n, 1 << 16, seed, DEFAULT_RAVE_K, 0.0, 1 << 30)
    t.pat = HexPatterns(state.n, weights)
    t.pp = True
    t.pp_cap = cap
    t.reset(state)
    return t


def pattern_weights_followed(HexState state, moves, weights, double cap) -> tuple:
    """The pattern playouts' weights (Black to move, White to move) after ``moves``
    (alternate colours from the player to move) are placed, followed stone by stone,
    and the same read afresh from the final board: for the tests that hold them equal."""
    cdef _Tree t = _pattern_tree(state, weights, cap, 0)
    cdef int ne = t._empties(), i, colour = state.side + 1
    for m in moves:
        if not 0 <= m < t.ncells or t.board[m] != 0:
            raise ValueError(f"cell {m} is not an empty cell")
        t._place(m, colour, &ne)
        colour = 3 - colour
    followed = ([t.pw[i] for i in range(t.ncells)], [t.pw[t.ncells + i] for i in range(t.ncells)],
                t.ptot[0], t.ptot[1])
    t._pp_init(t.board)
    fresh = ([t.pw[i] for i in range(t.ncells)], [t.pw[t.ncells + i] for i in range(t.ncells)],
             t.ptot[0], t.ptot[1])
    return followed, fresh


def pattern_draws(HexState state, weights, double cap, int draws, uint64_t seed) -> list:
    """How often each cell is drawn by the pattern playouts' first move from ``state``
    (the player to move), in ``draws`` draws."""
    cdef _Tree t = _pattern_tree(state, weights, cap, seed)
    counts = [0] * t.ncells
    cdef int i, c
    for i in range(draws):
        c = t._pp_sample(state.side)
        if c >= 0:
            counts[c] += 1
    return counts
