# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Iterative-deepening expectiminimax: alpha-beta at player nodes, Star1/Star2 at chance nodes.

Values are in player 0's view: player 0 maximises, player 1 minimises, a chance node is
the probability-weighted mean of its outcomes. Depth counts player plies: a chance node
does not consume depth (its outcomes are searched to the same depth), and a state reached
with no depth left is valued by the evaluator (a chance state too), a terminal state by
``terminal_value`` (terminal.pxd).

* ``star=0``: plain expectimax with alpha-beta at player nodes only (the reference).
* ``star=1``: Ballard's Star1: each outcome is searched with the window that would let
  the chance node fail, using the bounds [L, U] of every value
  (L = min(lo, -T), U = max(hi, T), T the largest terminal value).
* ``star=2``: Star1 preceded by a probing phase: each outcome's successor is bounded by
  searching its first move only (or by its table entry), and the chance node is cut as
  soon as the bounds prove it fails.

Cut tests keep a small margin (``eps``, 1e-9 of U - L) so that floating-point rounding
never turns a bound into a wrong decision: without the table, or with ``exact_depth``,
the three variants return the same value at a fixed depth, bit for bit, and so do runs
with and without the table. The transposition table (keyed by the kernel's hash, which
includes the pending chance event; with a depth heuristic the ply is mixed in) stores
value, bound, depth, best move and a resolved flag (only terminal states were valued
below). An entry answers a search to its own depth, to any depth when resolved, and by
default (``exact_depth=False``) to a smaller depth too: the standard rule, which makes
values depend a little on what the table holds (a deeper result replaces a shallower
one) but saves most of the work in endgames, where positions recur at different plies.
Move ordering: the table's move first, then history scores (cut-offs, depth squared);
at the root the previous iteration's order, best first.

The search runs without the GIL; it takes it every ``POLL_EVERY`` nodes to poll the
stopper, and at the evaluator calls of network (batch) evaluators, which value all the
children of a node with one remaining ply in one ``c_flush``. A ``HeuristicEvaluator``
is called directly through its ``c_heuristic`` (no GIL, no Python object per node).

With ``params.threads`` > 1 the search is Lazy SMP (Stockfish's): helper searches, each
an Expectiminimax of its own (state copy, evaluator spawn, buffers, history) on its own
thread, run the same iterative deepening over the one shared transposition table (made
safe for that by its lockless entries), each skipping some depths (Stockfish's skip
pattern) so that the threads spread over depths; what one finds, the others meet in
the table. The main search keeps the clock; the result is the deepest completed
iteration among the threads (the main's on a tie). One thread is the serial search;
several make the result depend on the scheduling.
"""
import threading
from dataclasses import replace

from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, calloc, free
from libc.math cimport INFINITY

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.search.evaluator cimport Evaluator, HeuristicEvaluator
from descent.search_cy.search.stopper cimport Stopper, STOP_DEPTH, STOP_RESOLVED
from descent.search_cy.search.terminal cimport (
    terminal_value, TERMINAL_DEPTH_ADD, TERMINAL_DEPTH_MUL)
from descent.search_cy.search.ttable cimport (
    TranspositionTable, TTEntry, TT_EXACT, TT_LOWER, TT_UPPER, TT_BOUND_MASK, TT_RESOLVED)

from descent.search_cy.search.api import TERMINAL_KINDS, SearchParams
from descent.search_cy.search.rminimax import full_width_tree

# Rminimax (rminimax_policy): the full-width tree's depth in player plies, and its size
# bound (a tree that would pass it is built one ply shallower).
RMINIMAX_DEPTH = 3
RMINIMAX_NODES = 1_000_000
from descent.search_cy.search.result import ChildStat, SearchResult

cdef enum:
    HIST_SIZE = 32768          # history table per player, indexed by action & (size - 1)
    POLL_EVERY = 256           # nodes between two stopper polls
    TT_MOVE_SCORE = 0x7FFFFFFF
    DBL_BLOCKS = 7             # double arrays per recursion level (cap + 1 each)
    # what _chance_batch does with an outcome
    B_VALUED = 0               # terminal, or an exact table entry
    B_PLAYER0 = 1              # player 0 to move: its moves join the batch
    B_PLAYER1 = 2              # player 1 to move: its moves join the batch
    B_SEARCH = 3               # anything else: the general search after the flush

cdef uint64_t PLY_MUL = <uint64_t>0x9E3779B97F4A7C15

# Stockfish's Lazy SMP skip pattern (helper i skips depth d when
# ((d + SKIP_PHASE[i]) // SKIP_SIZE[i]) is odd), indexed by helper number modulo 20
cdef int SKIP_SIZE[20]
cdef int SKIP_PHASE[20]
SKIP_SIZE[:] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4]
SKIP_PHASE[:] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7]

cdef class Expectiminimax:
    """ID expectiminimax bound to an evaluator and SearchParams (star, max_depth,
    hash_mb, terminal, max_plies, keep_tree).

    ``use_tt=False`` disables the transposition table (tests: the values must not
    change). The object keeps its table and history scores between runs when
    ``params.keep_tree``; ``clear()`` forgets them. One run at a time; ``params.threads``
    > 1 runs Lazy SMP helpers (see the module docstring). ``table``: a transposition
    table to share (the helpers take their main search's).
    """
    cdef readonly Evaluator evaluator
    cdef HeuristicEvaluator heur
    cdef readonly bint heuristic_path
    cdef readonly object params
    cdef readonly TranspositionTable tt
    cdef readonly bint use_tt
    cdef readonly bint exact_depth
    cdef int star, kind, levels, cap, batch_cap
    cdef double max_plies, L, U, eps
    cdef bint ply_in_key
    # Lazy SMP
    cdef readonly int threads
    cdef list helpers                    # the helper searches (threads - 1)
    cdef bint helper                     # this search is a helper: the table is not its own
    cdef int skip_size, skip_phase

    # state of the current run
    cdef GameState s
    cdef Stopper stopper
    cdef long long nodes, next_poll, max_nodes, evals
    cdef int iterations
    cdef bint aborted
    cdef object error

    # buffers: per recursion level (stride cap for ints, cap + 1 for doubles)
    cdef int* acts
    cdef int* scores
    cdef double* dbl
    cdef unsigned int* history
    # the chance-batch scratch: every grandchild of one chance node (outcomes x moves)
    cdef int* b_acts
    cdef double* b_vals
    cdef double* b_flushed
    cdef char* b_term
    cdef int* b_count
    cdef char* b_kind
    cdef uint64_t* b_key

    # root of the current run
    cdef int root_n, root_player, root_done, root_best
    cdef int* root_acts
    cdef double* root_probs
    cdef double* it_vals
    cdef char* it_res
    cdef long long* it_visits

    def __cinit__(self, *args, **kwargs):
        self.acts = NULL
        self.scores = NULL
        self.dbl = NULL
        self.root_acts = NULL
        self.root_probs = NULL
        self.it_vals = NULL
        self.it_res = NULL
        self.it_visits = NULL
        self.history = <unsigned int*>calloc(2 * HIST_SIZE, sizeof(unsigned int))
        if self.history == NULL:
            raise MemoryError()

    def __init__(self, Evaluator evaluator not None, params=None, *, bint use_tt=True,
                 bint exact_depth=False, TranspositionTable table=None):
        if params is None:
            params = SearchParams()
        self.threads = getattr(params, "threads", 1)
        if not 1 <= self.threads <= 1024:
            raise ValueError(f"threads must be in 1..1024; got {self.threads!r}")
        self.helpers = []
        self.helper = False
        self.skip_size = 1
        self.skip_phase = 0
        self.evaluator = evaluator
        self.params = params
        self.heuristic_path = isinstance(evaluator, HeuristicEvaluator)
        self.heur = evaluator if self.heuristic_path else None
        self.star = params.star
        self.kind = TERMINAL_KINDS[params.terminal]
        self.levels = 2 * params.max_depth + 8
        self.use_tt = use_tt
        self.exact_depth = exact_depth
        self.tt = table if table is not None else TranspositionTable(params.hash_mb)
        self.cap = 0

    def __dealloc__(self):
        self._free_buffers()
        free(self.history)

    cdef void _free_buffers(self) noexcept:
        free(self.acts)
        free(self.scores)
        free(self.dbl)
        free(self.root_acts)
        free(self.root_probs)
        free(self.it_vals)
        free(self.it_res)
        free(self.it_visits)
        free(self.b_acts)
        free(self.b_vals)
        free(self.b_flushed)
        free(self.b_term)
        free(self.b_count)
        free(self.b_kind)
        free(self.b_key)
        self.b_acts = NULL
        self.b_vals = NULL
        self.b_flushed = NULL
        self.b_term = NULL
        self.b_count = NULL
        self.b_kind = NULL
        self.b_key = NULL
        self.acts = NULL
        self.scores = NULL
        self.dbl = NULL
        self.root_acts = NULL
        self.root_probs = NULL
        self.it_vals = NULL
        self.it_res = NULL
        self.it_visits = NULL
        self.cap = 0
        self.batch_cap = 0

    cdef int _ensure_buffers(self, int cap, int batch_cap) except -1:
        """``cap``: actions or outcomes of one node; ``batch_cap``: grandchildren of one
        chance node (outcomes x actions)."""
        if batch_cap < 1:
            batch_cap = 1
        if cap <= self.cap and batch_cap <= self.batch_cap:
            return 0
        if batch_cap < self.batch_cap:
            batch_cap = self.batch_cap
        if cap < self.cap:
            cap = self.cap
        self._free_buffers()
        self.acts = <int*>malloc(<size_t>self.levels * cap * sizeof(int))
        self.scores = <int*>malloc(<size_t>self.levels * cap * sizeof(int))
        self.dbl = <double*>malloc(<size_t>self.levels * DBL_BLOCKS * (cap + 1) * sizeof(double))
        self.root_acts = <int*>malloc(cap * sizeof(int))
        self.root_probs = <double*>malloc(cap * sizeof(double))
        self.it_vals = <double*>malloc(cap * sizeof(double))
        self.it_res = <char*>malloc(cap * sizeof(char))
        self.it_visits = <long long*>malloc(cap * sizeof(long long))
        self.b_acts = <int*>malloc(<size_t>batch_cap * sizeof(int))
        self.b_vals = <double*>malloc(<size_t>batch_cap * sizeof(double))
        self.b_flushed = <double*>malloc(<size_t>batch_cap * sizeof(double))
        self.b_term = <char*>malloc(<size_t>batch_cap * sizeof(char))
        self.b_count = <int*>malloc(cap * sizeof(int))
        self.b_kind = <char*>malloc(cap * sizeof(char))
        self.b_key = <uint64_t*>malloc(cap * sizeof(uint64_t))
        if (self.acts == NULL or self.scores == NULL or self.dbl == NULL
                or self.root_acts == NULL or self.root_probs == NULL or self.it_vals == NULL
                or self.it_res == NULL or self.it_visits == NULL or self.b_acts == NULL
                or self.b_vals == NULL or self.b_flushed == NULL or self.b_term == NULL
                or self.b_count == NULL or self.b_kind == NULL or self.b_key == NULL):
            self._free_buffers()
            raise MemoryError("expectiminimax buffers")
        self.cap = cap
        self.batch_cap = batch_cap
        return 0

    def clear(self) -> None:
        """Forget the transposition table and the history scores (a new game)."""
        cdef int i
        self.tt.c_clear()
        for i in range(2 * HIST_SIZE):
            self.history[i] = 0

    def rminimax_policy(self, GameState state, double theta, double arc_cost=0.0,
                        double scale=1.0, int depth=RMINIMAX_DEPTH) -> list:
        """[(action, probability)] of Rminimax's randomised policy (rminimax.pyx) over the
        full-width tree of ``state`` to ``depth`` player plies (fewer when that tree
        would pass RMINIMAX_NODES nodes), the paper's own setting: chance nodes take the
        expectation, the horizon is valued by this search's evaluator and terminal states
        by its terminal heuristic. Blocks (the evaluator values every horizon state)."""
        cdef int d
        if not theta > 0:
            raise ValueError("theta must be > 0")
        max_plies = float(self.params.max_plies or state.game.max_game_length)
        d = max(1, depth)
        while True:
            tree = full_width_tree(state, self.evaluator, d, terminal=self.kind,
                                   max_plies=max_plies, scale=scale,
                                   max_nodes=RMINIMAX_NODES)
            if tree is not None or d == 1:
                break
            d -= 1
        if tree is None:
            raise ValueError("the root has too many moves for an Rminimax tree")
        probs = tree.policy(theta, arc_cost)
        return [(int(a), float(p)) for a, p in zip(tree.root_actions, probs, strict=True)]

    @property
    def bounds(self) -> tuple:
        """(L, U): the value bounds Star1/Star2 prune with in the last run."""
        return (self.L, self.U)

    # ------------------------------------------------------------------ helpers
    cdef inline uint64_t _key(self) noexcept nogil:
        if self.ply_in_key:
            return self.s.c_hash() ^ (<uint64_t>self.s._ply * PLY_MUL)
        return self.s.c_hash()

    cdef inline void _count(self) noexcept nogil:
        self.nodes += 1
        if self.nodes >= self.next_poll:
            self._poll()

    cdef inline bint _may_stop(self) noexcept nogil:
        """Whether a stopper that fired ends the search: not before the main search has
        completed depth 1 at a player root (no move without a search behind it: depth 1
        costs one node a move). A chance root has no move to choose and its depth 1 may
        be the full width of several chance events (EinStein's set-ups: millions of
        nodes), and a Lazy SMP helper may skip depth 1: those stop at once."""
        return self.iterations > 0 or self.helper or self.root_player == CHANCE

    cdef void _poll(self) noexcept nogil:
        with gil:
            if self.stopper.c_check(self.nodes, self.iterations) and self._may_stop():
                self.aborted = True
        self.next_poll = self.nodes + POLL_EVERY
        if self.max_nodes > 0 and self.next_poll > self.max_nodes:
            self.next_poll = self.max_nodes

    cdef inline double _clamp(self, double v) noexcept nogil:
        if v < self.L:
            return self.L
        if v > self.U:
            return self.U
        return v

    cdef double _leaf(self) noexcept nogil:
        """The evaluator's value of the current (non-terminal) state."""
        self.evals += 1
        if self.heuristic_path:
            return self._clamp(self.heur.c_heuristic(self.s))
        return self._clamp(self._leaf_batch())

    cdef double _leaf_batch(self) noexcept with gil:
        # a function of its own: a nogil function holding a Python variable takes the
        # GIL at every exit to release it, which would serialise the search threads
        try:
            return self.evaluator.c_eval(self.s)
        except BaseException as exc:
            self.error = exc
            self.aborted = True
        return 0.0

    cdef void _order(self, int p, int* acts, int* scores, int n, int tt_move) noexcept nogil:
        """Table move first, then by history score; stable (kernel order on ties)."""
        cdef unsigned int* hist = self.history + p * HIST_SIZE
        cdef int i, j, a, sc
        for i in range(n):
            a = acts[i]
            sc = TT_MOVE_SCORE if a == tt_move else <int>(hist[a & (HIST_SIZE - 1)] >> 1)
            j = i
            while j > 0 and scores[j - 1] < sc:
                scores[j] = scores[j - 1]
                acts[j] = acts[j - 1]
                j -= 1
            scores[j] = sc
            acts[j] = a

    cdef inline void _reward(self, int p, int action, int depth) noexcept nogil:
        cdef unsigned int* h = &self.history[p * HIST_SIZE + (action & (HIST_SIZE - 1))]
        if h[0] < 0x3FFFFFFF:
            h[0] += <unsigned int>(depth * depth)

    cdef inline bint _extreme(self, int p, double value) noexcept nogil:
        """A value the player to move cannot improve on (a proven win, up to rounding):
        a resolved child with it resolves the node whatever its siblings are."""
        if p == 0:
            return value >= self.U - self.eps
        return value <= self.L + self.eps

    cdef inline bint _usable(self, TTEntry* e, int depth) noexcept nogil:
        """Whether an entry's value may stand for a search to ``depth``: its own depth,
        a deeper one (unless exact_depth), any when resolved."""
        if e.depth == depth:
            return True
        if e.flags & TT_RESOLVED:
            return True
        return e.depth > depth and not self.exact_depth

    cdef inline bint _tt_cut(self, TTEntry* e, int depth, double alpha, double beta,
                             double* value, bint* res) noexcept nogil:
        """Whether a table entry decides the node (sets value and res)."""
        cdef int bound = e.flags & TT_BOUND_MASK
        cdef bint resolved = (e.flags & TT_RESOLVED) != 0
        if not self._usable(e, depth):
            return False
        if bound == TT_EXACT or (bound == TT_LOWER and e.value >= beta) \
                or (bound == TT_UPPER and e.value <= alpha):
            value[0] = e.value
            res[0] = resolved
            return True
        return False

    # ------------------------------------------------------------------ search
    cdef double _search(self, int depth, double alpha, double beta, int level,
                        bint* res) noexcept nogil:
        """Value of the current state searched ``depth`` plies within (alpha, beta)."""
        cdef int p
        if self.aborted:
            res[0] = False
            return 0.0
        if self.s.c_terminal():
            res[0] = True
            return terminal_value(self.s, self.kind, self.max_plies)
        if depth <= 0 or level >= self.levels:
            res[0] = False
            return self._leaf()
        p = self.s.c_player()
        if p == CHANCE:
            if depth == 1 and not self.heuristic_path and level + 1 < self.levels:
                return self._chance_batch(alpha, beta, level, res)
            if self.star == 0:
                return self._chance_plain(depth, level, res)
            return self._chance_star(depth, alpha, beta, level, res)
        return self._player(p, depth, alpha, beta, level, res)

    cdef double _player(self, int p, int depth, double alpha, double beta, int level,
                        bint* res) noexcept nogil:
        cdef int* acts = self.acts + <size_t>level * self.cap
        cdef int* scores = self.scores + <size_t>level * self.cap
        cdef uint64_t key = 0
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int tt_move = -1, n, i, act, best_move, bound
        cdef double best, v, a = alpha, b = beta
        cdef bint r = False, allres = True, bestres = False
        if self.use_tt:
            key = self._key()
            e = self.tt.c_lookup(key, &ent)
            if e != NULL:
                tt_move = e.move
                if self._tt_cut(e, depth, alpha, beta, &v, res):
                    return v
        n = self.s.c_legal(acts)
        if n <= 0:
            res[0] = False
            return self._leaf()
        self._order(p, acts, scores, n, tt_move)
        if depth == 1 and not self.heuristic_path:
            return self._player_batch(p, key, acts, n, level, alpha, beta, res)
        best = -INFINITY if p == 0 else INFINITY
        best_move = acts[0]
        for i in range(n):
            act = acts[i]
            self.s.c_apply(act)
            self._count()
            if depth == 1:
                if self.s.c_terminal():
                    v = terminal_value(self.s, self.kind, self.max_plies)
                    r = True
                else:
                    v = self._clamp(self.heur.c_heuristic(self.s))
                    self.evals += 1
                    r = False
            else:
                v = self._search(depth - 1, a, b, level + 1, &r)
            self.s.c_undo()
            if self.aborted:
                return 0.0
            allres = allres and r
            if p == 0:
                if v > best:
                    best = v
                    bestres = r
                    best_move = act
                    if best > a:
                        a = best
            else:
                if v < best:
                    best = v
                    bestres = r
                    best_move = act
                    if best < b:
                        b = best
            if a >= b:
                self._reward(p, act, depth)
                break
        allres = allres or (bestres and self._extreme(p, best))
        bound = TT_EXACT
        if best <= alpha:
            bound = TT_UPPER
            best_move = -1
        elif best >= beta:
            bound = TT_LOWER
        if self.use_tt:
            self.tt.c_store(key, best, depth, bound, best_move, allres)
        res[0] = allres
        return best

    cdef inline double _best_child(self, int p, int* acts, char* term, double* vals,
                                   double* flushed, int n, int* k, int* best_move,
                                   bint* res) noexcept nogil:
        """The value of a player node whose ``n`` children were valued in a batch: a
        terminal child's value is in ``vals``, the others' in ``flushed`` from index
        ``k[0]`` on, in order (``k`` advances). ``res``: every child resolved, or the
        best one resolved with a value its player cannot improve on."""
        cdef int i
        cdef double v, best = -INFINITY if p == 0 else INFINITY
        cdef bint allres = True, bestres = False
        best_move[0] = acts[0]
        for i in range(n):
            if term[i]:
                v = vals[i]
            else:
                v = self._clamp(flushed[k[0]])
                k[0] += 1
                allres = False
            if (p == 0 and v > best) or (p != 0 and v < best):
                best = v
                bestres = term[i]
                best_move[0] = acts[i]
        res[0] = allres or (bestres and self._extreme(p, best))
        return best

    cdef double _player_batch(self, int p, uint64_t key, int* acts, int n, int level,
                              double alpha, double beta, bint* res) noexcept nogil:
        """A node with one ply left and a batch evaluator: all children in one flush."""
        cdef double* vals = self.dbl + <size_t>level * DBL_BLOCKS * (self.cap + 1)
        cdef double* flushed = vals + (self.cap + 1)
        cdef char* term = <char*>(vals + 2 * (self.cap + 1))
        cdef int i, k, pending = 0, best_move, bound
        cdef double best
        cdef bint allres = True, inside = False
        with gil:
            try:
                for i in range(n):
                    self.s.c_apply(acts[i])
                    inside = True
                    self.nodes += 1
                    if self.s.c_terminal():
                        term[i] = 1
                        vals[i] = terminal_value(self.s, self.kind, self.max_plies)
                    else:
                        term[i] = 0
                        self.evaluator.c_add(self.s)
                        pending += 1
                    self.s.c_undo()
                    inside = False
                if pending:
                    self.evaluator.c_flush(flushed)
                    self.evals += pending
            except BaseException as exc:
                if inside:
                    self.s.c_undo()
                self.error = exc
                self.aborted = True
                return 0.0
            if self.nodes >= self.next_poll:
                self._poll()
        if self.aborted:
            return 0.0
        k = 0
        best = self._best_child(p, acts, term, vals, flushed, n, &k, &best_move, &allres)
        bound = TT_EXACT
        if best <= alpha:
            bound = TT_UPPER
            best_move = -1
        elif best >= beta:
            bound = TT_LOWER
            self._reward(p, best_move, 1)
        if self.use_tt:
            self.tt.c_store(key, best, 1, bound, best_move, allres)
        res[0] = allres
        return best

    cdef double _chance_batch(self, double alpha, double beta, int level,
                              bint* res) noexcept nogil:
        """A chance node with one player ply left, under a batch evaluator: the moves of
        every outcome are valued in one flush. A network then sees one batch of about
        outcomes x moves positions instead of one call per outcome and one per Star2
        probe; its per-call cost, not its per-position cost, dominates at these sizes.
        The value is the exact expectation (every window accepts it): nothing is pruned
        at this level, and the sums run in star=0's order, so every star mode returns
        the same bits."""
        cdef int* outs = self.acts + <size_t>level * self.cap
        cdef int* scores = self.scores + <size_t>(level + 1) * self.cap
        cdef double* probs = self.dbl + <size_t>level * DBL_BLOCKS * (self.cap + 1)
        cdef double* ovals = probs + (self.cap + 1)
        cdef char* ores = <char*>(probs + 2 * (self.cap + 1))
        cdef char* kinds = <char*>(probs + 3 * (self.cap + 1))   # this level's copy of b_kind
        cdef uint64_t key = 0, okey
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int n = 0, i, j, k = 0, q, m, off, tt_move, best_move, pending = 0, applied = 0
        cdef double v, best, total = 0.0
        cdef bint r = False, allres
        if self.use_tt:
            key = self._key()
            e = self.tt.c_lookup(key, &ent)
            if e != NULL and self._tt_cut(e, 1, alpha, beta, &v, res):
                return v
        with gil:
            try:
                n = self.s.c_chance(outs, probs)
                off = 0
                for i in range(n):
                    self.s.c_apply(outs[i])
                    applied = 1
                    self.nodes += 1
                    self.b_count[i] = 0
                    if self.s.c_terminal():
                        self.b_kind[i] = B_VALUED
                        ovals[i] = terminal_value(self.s, self.kind, self.max_plies)
                        ores[i] = 1
                    else:
                        q = self.s.c_player()
                        m = self.s.c_legal(self.b_acts + off) if q == 0 or q == 1 else 0
                        self.b_kind[i] = B_SEARCH
                        if m > 0:
                            okey = self._key() if self.use_tt else 0
                            tt_move = -1
                            e = self.tt.c_lookup(okey, &ent) if self.use_tt else NULL
                            if e != NULL:
                                tt_move = e.move
                            if e != NULL and self._tt_cut(e, 1, -INFINITY, INFINITY, &v, &r):
                                self.b_kind[i] = B_VALUED
                                ovals[i] = v
                                ores[i] = r
                            else:
                                self.b_kind[i] = B_PLAYER0 if q == 0 else B_PLAYER1
                                self.b_key[i] = okey
                                self.b_count[i] = m
                                self._order(q, self.b_acts + off, scores, m, tt_move)
                                for j in range(off, off + m):
                                    self.s.c_apply(self.b_acts[j])
                                    applied = 2
                                    self.nodes += 1
                                    if self.s.c_terminal():
                                        self.b_term[j] = 1
                                        self.b_vals[j] = terminal_value(self.s, self.kind,
                                                                        self.max_plies)
                                    else:
                                        self.b_term[j] = 0
                                        self.evaluator.c_add(self.s)
                                        pending += 1
                                    self.s.c_undo()
                                    applied = 1
                                off += m
                    self.s.c_undo()
                    applied = 0
                if pending:
                    self.evaluator.c_flush(self.b_flushed)
                    self.evals += pending
            except BaseException as exc:
                while applied > 0:
                    self.s.c_undo()
                    applied -= 1
                self.error = exc
                self.aborted = True
                return 0.0
            if self.nodes >= self.next_poll:
                self._poll()
        if self.aborted:
            return 0.0
        # the batched outcomes first: a general search below may run another chance
        # batch (EinStein's two random set-ups, then a roll), which reuses the b_ buffers
        off = 0
        for i in range(n):
            kinds[i] = self.b_kind[i]
            if kinds[i] == B_PLAYER0 or kinds[i] == B_PLAYER1:
                q = 0 if kinds[i] == B_PLAYER0 else 1
                best = self._best_child(q, self.b_acts + off, self.b_term + off,
                                        self.b_vals + off, self.b_flushed, self.b_count[i],
                                        &k, &best_move, &r)
                if self.use_tt:
                    self.tt.c_store(self.b_key[i], best, 1, TT_EXACT, best_move, r)
                off += self.b_count[i]
                ovals[i] = best
                ores[i] = r
        allres = True
        for i in range(n):
            if kinds[i] == B_SEARCH:
                # a pass, a player without moves or a second chance event: the general
                # search (rare)
                self.s.c_apply(outs[i])
                ovals[i] = self._search(1, -INFINITY, INFINITY, level + 1, &r)
                ores[i] = r
                self.s.c_undo()
                if self.aborted:
                    return 0.0
            total += probs[i] * ovals[i]
            allres = allres and ores[i]
        if self.use_tt:
            self.tt.c_store(key, total, 1, TT_EXACT, -1, allres)
        res[0] = allres
        return total

    cdef double _chance_plain(self, int depth, int level, bint* res) noexcept nogil:
        """star=0: every outcome searched with the full window."""
        cdef int* outs = self.acts + <size_t>level * self.cap
        cdef double* probs = self.dbl + <size_t>level * DBL_BLOCKS * (self.cap + 1)
        cdef uint64_t key = 0
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int n, i
        cdef double total = 0.0, v
        cdef bint r = False, allres = True
        if self.use_tt:
            key = self._key()
            e = self.tt.c_lookup(key, &ent)
            if e != NULL and self._tt_cut(e, depth, -INFINITY, INFINITY, &v, res):
                return v
        n = self.s.c_chance(outs, probs)
        for i in range(n):
            self.s.c_apply(outs[i])
            self._count()
            v = self._search(depth, -INFINITY, INFINITY, level + 1, &r)
            self.s.c_undo()
            if self.aborted:
                return 0.0
            allres = allres and r
            total += probs[i] * v
        if self.use_tt:
            self.tt.c_store(key, total, depth, TT_EXACT, -1, allres)
        res[0] = allres
        return total

    cdef double _probe(self, int q, int depth, double a, double b, int level,
                       bint* res) noexcept nogil:
        """Star2 probe of the current player node: its first move only (table move,
        else the best by history), searched to depth - 1 within (a, b)."""
        cdef int* acts = self.acts + <size_t>level * self.cap
        cdef int* scores = self.scores + <size_t>level * self.cap
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int tt_move = -1, n
        cdef double v
        if self.aborted:
            res[0] = False
            return -INFINITY if q == 0 else INFINITY
        if self.use_tt:
            e = self.tt.c_lookup(self._key(), &ent)
            if e != NULL:
                tt_move = e.move
        n = self.s.c_legal(acts)
        if n <= 0:
            res[0] = False
            return -INFINITY if q == 0 else INFINITY    # no information
        self._order(q, acts, scores, n, tt_move)
        self.s.c_apply(acts[0])
        self._count()
        v = self._search(depth - 1, a, b, level + 1, res)
        self.s.c_undo()
        return v

    cdef inline double _chance_cut(self, uint64_t key, double lim, int depth, int bound,
                                   bint allres, bint* res) noexcept nogil:
        """A Star1/Star2 cutoff at a chance node: ``lim`` is a proven bound on its value
        (TT_LOWER: it fails high, TT_UPPER: it fails low). The bound is weakened by a
        quarter eps, so that the rounding of the probability-weighted sums cannot make
        it claim more than was proven."""
        if bound == TT_LOWER:
            lim -= 0.25 * self.eps
        else:
            lim += 0.25 * self.eps
        if self.use_tt:
            self.tt.c_store(key, lim, depth, bound, -1, allres)
        res[0] = allres
        return lim

    cdef double _chance_star(self, int depth, double alpha, double beta, int level,
                             bint* res) noexcept nogil:
        """Star1 (and Star2 probing when star == 2) at a chance node."""
        cdef size_t stride = self.cap + 1
        cdef int* outs = self.acts + <size_t>level * self.cap
        cdef double* probs = self.dbl + <size_t>level * DBL_BLOCKS * stride
        cdef double* lb = probs + stride
        cdef double* ub = probs + 2 * stride
        cdef double* suf_lb = probs + 3 * stride
        cdef double* suf_ub = probs + 4 * stride
        cdef double* sufp = probs + 5 * stride
        cdef char* known = <char*>(probs + 6 * stride)
        cdef uint64_t key = 0
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int n, i, q, bound
        cdef double L = self.L, U = self.U, eps = self.eps
        cdef double v, w, pi, ca, cb, pa, pb, done_lb, done_ub, total, lim
        cdef bint r = False, allres = True
        if self.use_tt:
            key = self._key()
            e = self.tt.c_lookup(key, &ent)
            if e != NULL and self._tt_cut(e, depth, alpha, beta, &v, res):
                return v
        n = self.s.c_chance(outs, probs)
        sufp[n] = 0.0
        for i in range(n - 1, -1, -1):
            sufp[i] = sufp[i + 1] + probs[i]
            lb[i] = L
            ub[i] = U
            known[i] = 0

        if self.star == 2:
            done_lb = 0.0
            done_ub = 0.0
            for i in range(n):
                pi = probs[i]
                self.s.c_apply(outs[i])
                self._count()
                if self.s.c_terminal():
                    v = terminal_value(self.s, self.kind, self.max_plies)
                    lb[i] = v
                    ub[i] = v
                    known[i] = 1
                else:
                    q = self.s.c_player()
                    if q == 0 or q == 1:
                        r = True
                        if self.use_tt:
                            e = self.tt.c_lookup(self._key(), &ent)
                            if e != NULL and self._usable(e, depth):
                                bound = e.flags & TT_BOUND_MASK
                                if bound == TT_EXACT:
                                    known[i] = 1
                                if bound != TT_UPPER and e.value > lb[i]:
                                    lb[i] = e.value
                                if bound != TT_LOWER and e.value < ub[i]:
                                    ub[i] = e.value
                                r = (e.flags & TT_RESOLVED) != 0
                        if not known[i] and level + 2 < self.levels and (
                                (q == 0 and lb[i] == L) or (q == 1 and ub[i] == U)):
                            pa = (alpha - eps - done_ub - sufp[i + 1] * U) / pi
                            pb = (beta + eps - done_lb - sufp[i + 1] * L) / pi
                            if pa <= lb[i]:
                                pa = -INFINITY
                            if pb >= ub[i]:
                                pb = INFINITY
                            w = self._probe(q, depth, pa, pb, level + 1, &r)
                            if q == 0 and w > pa and w > lb[i]:
                                lb[i] = w
                            elif q == 1 and w < pb and w < ub[i]:
                                ub[i] = w
                        allres = allres and r
                self.s.c_undo()
                if self.aborted:
                    return 0.0
                done_lb += pi * lb[i]
                done_ub += pi * ub[i]
                lim = done_lb + sufp[i + 1] * L
                if lim >= beta + 0.5 * eps:
                    return self._chance_cut(key, lim, depth, TT_LOWER, allres, res)
                lim = done_ub + sufp[i + 1] * U
                if lim <= alpha - 0.5 * eps:
                    return self._chance_cut(key, lim, depth, TT_UPPER, allres, res)

        suf_lb[n] = 0.0
        suf_ub[n] = 0.0
        for i in range(n - 1, -1, -1):
            suf_lb[i] = suf_lb[i + 1] + probs[i] * lb[i]
            suf_ub[i] = suf_ub[i + 1] + probs[i] * ub[i]

        total = 0.0
        for i in range(n):
            pi = probs[i]
            if known[i]:
                v = lb[i]                     # a terminal or an exact table value
            else:
                ca = (alpha - eps - total - suf_ub[i + 1]) / pi
                cb = (beta + eps - total - suf_lb[i + 1]) / pi
                if ca <= lb[i]:
                    ca = -INFINITY
                if cb >= ub[i]:
                    cb = INFINITY
                self.s.c_apply(outs[i])
                self._count()
                while True:
                    v = self._search(depth, ca, cb, level + 1, &r)
                    if self.aborted:
                        self.s.c_undo()
                        return 0.0
                    if v <= ca:
                        lim = total + pi * v + suf_ub[i + 1]
                        if lim <= alpha - 0.5 * eps:
                            self.s.c_undo()
                            return self._chance_cut(key, lim, depth, TT_UPPER,
                                                    allres and r, res)
                        ca = -INFINITY          # rounding: search the outcome again
                    elif v >= cb:
                        lim = total + pi * v + suf_lb[i + 1]
                        if lim >= beta + 0.5 * eps:
                            self.s.c_undo()
                            return self._chance_cut(key, lim, depth, TT_LOWER,
                                                    allres and r, res)
                        cb = INFINITY
                    else:
                        break
                self.s.c_undo()
                allres = allres and r
            total += pi * v
        if self.use_tt:
            self.tt.c_store(key, total, depth, TT_EXACT, -1, allres)
        res[0] = allres
        return total

    # ------------------------------------------------------------------ root
    cdef void _root(self, int depth) noexcept nogil:
        """One iteration over the root's actions in their current order."""
        cdef int k, act
        cdef long long before
        cdef double v, best, a = -INFINITY, b = INFINITY
        cdef bint r = False
        cdef bint chance = self.root_player == CHANCE
        self.root_done = 0
        self.root_best = -1
        best = -INFINITY if self.root_player == 0 else INFINITY
        for k in range(self.root_n):
            act = self.root_acts[k]
            before = self.nodes
            self.s.c_apply(act)
            self._count()
            if chance:
                v = self._search(depth, -INFINITY, INFINITY, 1, &r)
            else:
                v = self._search(depth - 1, a, b, 1, &r)
            self.s.c_undo()
            if self.aborted:
                return
            self.it_vals[k] = v
            self.it_res[k] = r
            self.it_visits[k] = self.nodes - before
            self.root_done = k + 1
            if chance:
                continue
            if self.root_player == 0:
                if v > best:
                    best = v
                    self.root_best = k
                    if v > a:
                        a = v
            else:
                if v < best:
                    best = v
                    self.root_best = k
                    if v < b:
                        b = v

    cdef list _pv(self, int first, int depth):
        """Principal variation: the root action, then table moves (most likely outcome
        at chance nodes); the state is restored."""
        cdef int* buf = self.acts
        cdef double* probs = self.dbl
        cdef list pv = [first]
        cdef int applied = 1, n, i, k, limit = 2 * depth + 4
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int move
        self.s.c_apply(first)
        while applied < limit and not self.s.c_terminal():
            if self.s.c_player() == CHANCE:
                n = self.s.c_chance(buf, probs)
                if n <= 0:
                    break
                k = 0
                for i in range(1, n):
                    if probs[i] > probs[k]:
                        k = i
                move = buf[k]
            else:
                if not self.use_tt:
                    break
                e = self.tt.c_lookup(self._key(), &ent)
                if e == NULL or e.move < 0:
                    break
                move = e.move
                n = self.s.c_legal(buf)
                for i in range(n):
                    if buf[i] == move:
                        break
                else:
                    break
            pv.append(move)
            self.s.c_apply(move)
            applied += 1
        for i in range(applied):
            self.s.c_undo()
        return pv

    def run(self, GameState state, Stopper stopper) -> SearchResult:
        """Iterative deepening from depth 1 to params.max_depth until ``stopper`` fires.

        Blocks (without the GIL between stopper polls); ``stopper.stop()`` from another
        thread ends it at the next poll. At a player root depth 1 always completes,
        whatever the stopper says (a stop already asked for, a spent clock, a node limit
        under depth 1's nodes): no move without a search behind it; the stopper is heeded
        from then on (``_may_stop``). The result is the last completed depth's, unless
        the interrupted depth found a move better than that depth's best (searched first
        there): then it is that move, with its value and the searched moves as children
        (at a chance root, if depth 1 did not complete: the first outcome searched, else
        the first in order). ``depth`` stays the last completed depth. The state is
        restored.
        """
        cdef int cap, k, d, n, i, p
        cdef int reason = STOP_DEPTH
        cdef double value = 0.0, v
        cdef int best_action = -1
        cdef bint resolved = False, done_any = False
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int tt_move = -1
        cdef long long valued_before = self.evaluator.positions
        if state.c_terminal():
            raise ValueError("cannot search a terminal state")
        self.evaluator.c_discard()
        params = self.params
        cap = state.max_actions if state.max_actions > state.max_chance_outcomes \
            else state.max_chance_outcomes
        self._ensure_buffers(cap, state.max_chance_outcomes * state.max_actions)
        self.s = state
        self.stopper = stopper
        self.nodes = 0
        self.evals = 0
        self.iterations = 0
        self.aborted = False
        self.error = None
        self.max_nodes = stopper.max_nodes
        self.next_poll = POLL_EVERY
        if self.max_nodes > 0 and self.next_poll > self.max_nodes:
            self.next_poll = self.max_nodes
        self.max_plies = float(params.max_plies or state.game.max_game_length)
        depth_kind = self.kind == TERMINAL_DEPTH_ADD or self.kind == TERMINAL_DEPTH_MUL
        top = self.max_plies + 1.0 if depth_kind else 1.0
        self.L = min(self.evaluator.lo, -top)
        self.U = max(self.evaluator.hi, top)
        self.eps = 1e-9 * (self.U - self.L)
        self.ply_in_key = depth_kind      # the depth heuristics' values depend on the ply
        if self.helper:
            pass                      # the main search has aged or cleared the table
        elif params.keep_tree:
            self.tt.c_new_generation()
        else:
            self.tt.c_clear()
        for i in range(2 * HIST_SIZE):
            self.history[i] >>= 1

        stopper.c_start()
        p = state.c_player()
        self.root_player = p
        if p == CHANCE:
            n = state.c_chance(self.root_acts, self.root_probs)
        else:
            n = state.c_legal(self.root_acts)
            if self.use_tt:
                e = self.tt.c_lookup(self._key(), &ent)
                if e != NULL:
                    tt_move = e.move
            self._order(p, self.root_acts, self.scores, n, tt_move)
        if n <= 0:
            self.s = None
            self.stopper = None
            raise ValueError("the root has no action")
        self.root_n = n
        order = list(range(n))
        last = None
        helping = self._start_helpers(state) if self.threads > 1 else None
        try:
            for d in range(1, params.max_depth + 1):
                if stopper.c_check(self.nodes, self.iterations) and self._may_stop():
                    break
                if self.helper and ((d + self.skip_phase) // self.skip_size) % 2:
                    continue
                with nogil:
                    self._root(d)
                if self.error is not None:
                    raise self.error
                acts = [self.root_acts[k] for k in range(n)]
                vals = [self.it_vals[k] for k in range(self.root_done)]
                if self.aborted:
                    # the searched part of an interrupted depth counts once it holds the
                    # previous best move (searched first): a move that beat it there is
                    # better at the deeper depth (Stockfish's rule)
                    if self.root_done and (last is None or (
                            p != CHANCE and self.root_best > 0)):
                        last = self._commit(d - 1, acts, vals, partial=True)
                    break
                last = self._commit(d, acts, vals, partial=False)
                self.iterations = d
                if last["resolved"]:
                    reason = STOP_RESOLVED
                    break
                # next iteration: best first, then by this iteration's values (stable)
                order = sorted(range(n), key=lambda k: (k != last["index"],
                               -vals[k] if p == 0 else vals[k]))
                for k in range(n):
                    self.root_acts[k] = acts[order[k]]
            stopper.c_finish(reason)
            if last is None:              # a chance root or a helper, stopped at once
                last = {"action": self.root_acts[0], "value": 0.0, "depth": 0,
                        "resolved": False, "children": [], "index": 0}
            pv = self._pv(last["action"], max(last["depth"], 1))
        finally:
            if self.heur is not None:
                self.heur.positions += self.evals
            self.s = None
            self.stopper = None
            helped = self._stop_helpers(helping) if helping is not None else []
        result = SearchResult(
            action=last["action"], value=last["value"], pv=pv, nodes=self.nodes,
            iterations=self.iterations, depth=last["depth"], time=stopper.elapsed,
            stop_reason=stopper.reason_name, resolved=bool(last["resolved"]),
            evaluations=self.evaluator.positions - valued_before,
            children=[ChildStat(a, v, n, bool(r)) for a, v, n, r in last["children"]])
        if helped:
            result = self._vote(result, helped)
        return result

    # ------------------------------------------------------------------ Lazy SMP
    def _start_helpers(self, GameState state):
        """Starts the helper searches on their threads: (threads, stoppers, results)."""
        cdef Expectiminimax h
        cdef int i
        while len(self.helpers) < self.threads - 1:
            i = len(self.helpers) + 1
            h = Expectiminimax(self.evaluator.spawn(), replace(self.params, threads=1),
                               use_tt=self.use_tt, exact_depth=self.exact_depth,
                               table=self.tt)
            h.helper = True
            h.skip_size = SKIP_SIZE[i % 20]
            h.skip_phase = SKIP_PHASE[i % 20]
            self.helpers.append(h)
        self.tt.shared = True
        stoppers = [Stopper() for _ in self.helpers]
        results: list = [None] * len(self.helpers)
        threads = [threading.Thread(target=_help, daemon=True,
                                    args=(h, state.clone(), st, results, k))
                   for k, (h, st) in enumerate(zip(self.helpers, stoppers))]
        for th in threads:
            th.start()
        return threads, stoppers, results

    def _stop_helpers(self, helping):
        """Stops and joins the helpers; their results (an error of one is raised)."""
        threads, stoppers, results = helping
        for st in stoppers:
            st.stop()
        for th in threads:
            th.join()
        self.tt.shared = False
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return [r for r in results if r is not None]

    def _vote(self, main, helped):
        """The deepest completed iteration among the threads (the main's on a tie), with
        every thread's nodes and evaluations."""
        best = main
        for r in helped:
            if r.depth > best.depth:
                best = r
        nodes = main.nodes + sum(r.nodes for r in helped)
        evaluations = main.evaluations + sum(r.evaluations for r in helped)
        return replace(best, nodes=nodes, evaluations=evaluations, time=main.time,
                       stop_reason=main.stop_reason)

    cdef dict _commit(self, int depth, list acts, list vals, bint partial):
        """The result of an iteration (or of the searched part of an interrupted one)."""
        cdef int k, n = len(vals), best
        cdef double value
        children = [(acts[k], vals[k], self.it_visits[k], bool(self.it_res[k]))
                    for k in range(n)]
        if self.root_player == CHANCE:
            if partial:
                return {"action": acts[0], "value": vals[0], "depth": depth,
                        "resolved": False, "children": children, "index": 0}
            value = 0.0
            best = 0
            for k in range(n):
                value += self.root_probs[k] * vals[k]
                if self.root_probs[k] > self.root_probs[best]:
                    best = k
            resolved = all(self.it_res[k] for k in range(n))
            self.root_best = best
        else:
            best = self.root_best if self.root_best >= 0 else 0
            value = vals[best]
            resolved = not partial and (all(self.it_res[k] for k in range(n)) or (
                self.it_res[best] and self._extreme(self.root_player, value)))
        if not partial and self.use_tt:
            self.tt.c_store(self._key(), value, depth, TT_EXACT,
                            -1 if self.root_player == CHANCE else acts[best], resolved)
        return {"action": acts[best], "value": value, "depth": depth,
                "resolved": bool(resolved), "children": children, "index": best}


def _help(Expectiminimax helper, GameState state, Stopper stopper, list results, int k):
    """A helper thread's body: one search until its stopper is stopped."""
    try:
        results[k] = helper.run(state, stopper)
    except BaseException as exc:       # handed to the main search, which raises it
        results[k] = exc
