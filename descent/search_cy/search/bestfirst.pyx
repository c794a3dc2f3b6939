# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One tree engine for UBFM, UBFM_s, descent and the MCTS baseline, with completion,
resolution stop, chance nodes (Descent Expectiminimax) and the Rminimax strength layer.

The algorithms are Cohen-Solal's (2020): an iteration walks from the root along the best
actions; UBFM stops at the first state not yet in the table and expands it (every child
valued by the evaluator in one batch, terminal children by f_t), descent expands it and
goes on down the best line until a terminal state. Values are then backed up along the
path only. UBFM_s is UBFM deciding by the safest action (most explored).

Completion (lexicographic (c, v), c = +1/-1 for states solved as a win of player 0/1)
makes the searches complete: an iteration descends only into unresolved children, so
it never wastes itself on a solved line, and a node is resolved when the side to move
has a resolved win or every child is resolved. With completion off the searches are
exactly the plain published ones (they may walk into terminal states repeatedly).

At a chance node the value is the probability-weighted mean of the outcomes and an
iteration descends into an outcome sampled by probability: that is Descent
Expectiminimax (Cohen-Solal and Cazenave). The paper draws among all the outcomes, so an
iteration that draws a solved one ends there (``chance_sampling = "all"``, the default);
``"unresolved"`` draws among the unsolved outcomes only, renormalised, so that no
iteration is spent on a solved outcome but the unsolved ones are visited more often than
their probability says. With
``params.determinize_seed`` > 0 the search plays the determinized game of the stochastic
paper instead: a chance state gets one child, the outcome ``fixed_outcome`` draws for it
from a hash of (state, seed), so every search of a match and the match itself (the
learner draws its real chance events with the same function) meet the same outcome there,
drawn lazily the first time and fixed for the rest of the match, with no table to keep.

MCTS (the papers' baseline: UCT with value leaves and no policy) shares the table, the
expansion and the chance handling: an expansion values the new state and all its children
in one batch; the state's own value is the simulation's return, the children's values are
their priors (one pseudo-visit each); selection maximises mean + C sqrt(ln N / n); the
decision is the most visited child. Under completion MCTS also skips solved children and
takes a solved win, as an MCTS-Solver does.

Why paths are explicit arrays rather than recursion: descent lines run to the end of the
game, hundreds of plies in dice chess.

With ``params.threads`` > 1 the search is a parallel tree search over the one table
(tree parallelisation, Chaslot et al. 2008): each thread walks from the root with its own
copy of the state and its own evaluator, valuing an expansion's children outside the
table lock (the expensive part, without the GIL for the C heuristics) and selecting,
inserting and backing up under it. A thread marks each action it descends into (a
pending count beside the child record, the "virtual loss" of value-based best-first
search): selection prefers the children fewest threads are inside, so the threads
spread over the best lines instead of queueing on one; MCTS counts the pending visits
as losses, as in virtual-loss UCT. Completion and resolution stay exact (every backup
is the serial one, under the lock). One thread is the serial search, bit for bit;
several threads make the result depend on the scheduling.
"""
import threading
import time

from libc.math cimport exp, log, sqrt, INFINITY, NAN
from libc.stdint cimport uint64_t, int8_t, uint16_t, int16_t, int32_t, int64_t
from libc.stdlib cimport malloc, calloc, free, realloc

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.games.zobrist cimport splitmix64
from descent.search_cy.search.rminimax cimport (
    TreeBuilder, K_RANDOMISED, K_OPPONENT, K_CHANCE, K_LEAF)
from descent.search_cy.search.evaluator cimport Evaluator, HeuristicEvaluator, BatchEvaluator
from descent.search_cy.search.stopper cimport (
    Stopper, monotonic, STOP_NONE, STOP_RESOLVED, STOP_MEMORY, STOP_TIME, STOP_NODES,
    STOP_ITERATIONS, STOP_EXTERNAL)
from descent.search_cy.search.terminal cimport terminal_value
from descent.search_cy.search.tree cimport TreeTable, Node, Child

import numpy as np

from descent.search_cy.search.api import TERMINAL_KINDS
from descent.search_cy.search.gather import BatchGatherer
from descent.search_cy.search.result import ChildStat, SearchResult

cdef enum:
    MODE_UBFM = 0
    MODE_UBFMS = 1
    MODE_DESCENT = 2
    MODE_MCTS = 3
    MAX_PATH = 4096      # deeper lines are cut: the node at the cut is a leaf
    GC_MAX_DEPTH = 2048
    PAR_OK = 0           # a parallel iteration's outcome
    PAR_FULL = 1         # the table had no room for an expansion
    PAR_ERROR = 2        # the evaluator raised (kept in self.errors)


cdef extern from *:
    """
    #include <sched.h>
    /* The tree lock: a test-and-test-and-set spinlock. The sections it guards are short
       (a walk down the tree, a backup), and a sleeping mutex made a contended lock cost
       a system call each time; after a while of spinning the thread yields its core. */
    static inline void descent_spin_lock(char* lock) {
        int spins = 0;
        while (__atomic_test_and_set(lock, __ATOMIC_ACQUIRE)) {
            while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
                if (++spins >= 2048) { sched_yield(); spins = 0; }
    #if defined(__x86_64__) || defined(__i386__)
                else __builtin_ia32_pause();
    #endif
            }
        }
    }
    static inline void descent_spin_unlock(char* lock) {
        __atomic_clear(lock, __ATOMIC_RELEASE);
    }
    """
    void descent_spin_lock(char* lock) noexcept nogil
    void descent_spin_unlock(char* lock) noexcept nogil


ctypedef struct Worker:
    # one search thread's own buffers and counters (the serial search keeps the same
    # buffers on the object)
    int* acts
    double* probs
    double* vals
    int8_t* term
    int64_t* path_node
    int32_t* path_child
    uint64_t rng
    long long nodes
    long long evaluations
    long long batches
    double leaf_value
    int max_depth

_MODES = {"ubfm": MODE_UBFM, "ubfms": MODE_UBFMS, "descent": MODE_DESCENT, "mcts": MODE_MCTS}


cdef inline double _uniform(uint64_t* rng) noexcept nogil:
    return (splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0)


cdef inline int _fixed_outcome(uint64_t key, uint64_t seed, double* probs,
                               int n) noexcept nogil:
    """The index of the outcome a determinized game fixes at chance state ``key``: drawn
    by probability with the uniform number a hash of (key, seed) gives."""
    cdef uint64_t x = key ^ seed
    cdef double u = _uniform(&x)
    cdef double total = 0.0
    cdef int i
    for i in range(n):
        total += probs[i]
    u *= total
    for i in range(n - 1):
        u -= probs[i]
        if u < 0.0:
            return i
    return n - 1


def fixed_outcome(GameState state not None, uint64_t seed) -> int:
    """The outcome (an action) the determinized game with ``seed`` fixes at the chance
    node ``state``: what a search with ``determinize_seed=seed`` sees there."""
    cdef int cap = max(state.max_chance_outcomes, 1)
    cdef int n, i
    cdef int* outs
    cdef double* probs
    if seed == 0:
        raise ValueError("a determinized game needs a seed > 0")
    if state.c_player() != CHANCE:
        raise ValueError("fixed_outcome: the state is not a chance node")
    outs = <int*>malloc(cap * sizeof(int))
    probs = <double*>malloc(cap * sizeof(double))
    if not outs or not probs:
        free(outs)
        free(probs)
        raise MemoryError()
    try:
        n = state.c_chance(outs, probs)
        i = _fixed_outcome(state.c_hash(), seed, probs, n)
        return outs[i]
    finally:
        free(outs)
        free(probs)


cdef inline int8_t _sign(double x) noexcept nogil:
    return 1 if x > 0.0 else (-1 if x < 0.0 else 0)


cdef void* _grow(void* block, size_t size) except NULL:
    cdef void* grown = realloc(block, size)
    if grown == NULL:
        raise MemoryError()
    return grown


cdef tuple _backed_up(Node* node, Child* kids, double* v, int8_t* r, int8_t* c, int64_t n,
                      bint recompute, bint completion, int realised):
    """(value, resolved, completion) of a stored node from its children's results: the
    realised child's at a determinized chance state, the stored value without
    ``recompute``, else the search's backup rule."""
    cdef int64_t k, best = 0
    cdef bint all_r = True
    cdef double total = 0.0
    cdef int64_t csum = 0
    cdef int sign, win
    cdef double key_c, key_v, best_c, best_v
    if node.player == CHANCE and realised >= 0:
        for k in range(n):
            if kids[k].action == realised:
                return v[k], r[k], c[k]
    if not recompute:
        return <double>node.v, node.r, node.c
    for k in range(n):
        all_r = all_r and r[k] != 0
    if node.player == CHANCE:
        for k in range(n):
            total += <double>kids[k].p * v[k]
            csum += c[k]
        return total, all_r, (c[0] if all_r and (csum == n or csum == -n) else 0)
    sign = 1 if node.player == 0 else -1
    best_c = sign * c[0] if completion else 0.0
    best_v = sign * v[0]
    for k in range(1, n):
        key_c = sign * c[k] if completion else 0.0
        key_v = sign * v[k]
        if key_c > best_c or (key_c == best_c and key_v > best_v):
            best, best_c, best_v = k, key_c, key_v
    win = 1 if node.player == 0 else -1
    return v[best], (all_r or (r[best] != 0 and c[best] == win)), c[best]


cdef class BestFirstSearch:
    """UBFM / UBFM_s / descent over any kernel; see the module docstring.

    ``run`` blocks (holding the GIL but creating no Python object per node; the stopper
    releases the GIL briefly at its clock polls). The table survives between runs when
    ``params.keep_tree`` is set and the game is the same, so consecutive moves of a game
    reuse the tree below the new root.
    """
    cdef Evaluator ev
    cdef readonly TreeTable table
    cdef readonly object params
    cdef readonly int mode
    cdef bint completion, resolution_stop, keep_tree
    cdef bint sample_unresolved       # chance nodes draw among unresolved outcomes only
    cdef int terminal_kind
    cdef double max_plies
    cdef uint64_t rng
    cdef uint64_t det_seed
    cdef object game_spec
    cdef int cap
    cdef int* acts
    cdef double* probs
    cdef double* vals
    cdef double* evvals
    cdef int* pend
    cdef int8_t* term
    cdef int64_t* path_node
    cdef int32_t* path_child
    cdef long long nodes, iterations
    cdef int max_depth
    cdef bint full
    cdef double exploration
    cdef double leaf_value
    # parallel search (threads > 1)
    cdef readonly int threads
    cdef Worker* workers                 # one per thread, buffers of wcap actions
    cdef int wcap
    cdef list wstates                    # each thread's copy of the root state
    cdef list wevs                       # each thread's evaluator (the first is ev)
    cdef bint heuristic                  # the evaluators are C heuristics (no GIL)
    cdef uint16_t* pending               # threads inside each child record (virtual loss)
    cdef object pending_table            # the table ``pending`` was sized for
    cdef char lock                       # guards the table, pending and the counters
    cdef int stop_all, stop_reason
    cdef uint64_t root_key
    cdef long long limit_nodes, limit_iterations, started
    cdef list errors
    cdef bint gathering                  # the threads' expansions share backend calls
    cdef readonly object gatherer        # the BatchGatherer they share (gathering only)

    def __cinit__(self, *args, **kwargs):
        self.cap = 0
        self.path_node = <int64_t*>malloc(MAX_PATH * sizeof(int64_t))
        self.path_child = <int32_t*>malloc(MAX_PATH * sizeof(int32_t))
        if not self.path_node or not self.path_child:
            raise MemoryError()
        self.workers = NULL
        self.pending = NULL
        self.threads = 1
        self.lock = 0

    def __init__(self, Evaluator evaluator, params, str mode="ubfms"):
        if mode not in _MODES:
            raise ValueError(f"unknown best-first mode {mode!r}")
        self.ev = evaluator
        self.params = params
        self.mode = _MODES[mode]
        self.completion = params.completion
        self.sample_unresolved = params.chance_sampling == "unresolved"
        self.resolution_stop = params.resolution_stop
        self.keep_tree = params.keep_tree
        self.terminal_kind = TERMINAL_KINDS[params.terminal]
        self.exploration = params.exploration
        self.det_seed = getattr(params, "determinize_seed", 0)
        self.table = None
        self.game_spec = None
        threads = getattr(params, "threads", 1)
        if not 1 <= threads <= 1024:
            raise ValueError(f"threads must be in 1..1024; got {threads!r}")
        self.threads = threads
        self.heuristic = isinstance(evaluator, HeuristicEvaluator)
        self.wstates = []
        # with gathering every thread's evaluator is a spawn over one gatherer (made at
        # the first parallel run); otherwise the first thread uses the evaluator itself
        self.gatherer = None
        self.gathering = (threads > 1 and getattr(params, "gather", False)
                          and type(evaluator) is BatchEvaluator)
        self.wevs = [] if self.gathering else [evaluator]
        self.errors = []

    def __dealloc__(self):
        self._free_buffers()
        self._free_workers()
        free(self.pending)
        free(self.path_node)
        free(self.path_child)

    cdef void _free_buffers(self) noexcept:
        free(self.acts)
        free(self.probs)
        free(self.vals)
        free(self.evvals)
        free(self.pend)
        free(self.term)
        self.acts = NULL
        self.probs = NULL
        self.vals = NULL
        self.evvals = NULL
        self.pend = NULL
        self.term = NULL

    def clear(self) -> None:
        """Forgets the tree (a new game). Must not block."""
        if self.table is not None:
            self.table.c_clear()

    cdef int _prepare(self, GameState state) except -1:
        spec = getattr(state.game, "spec", None)
        cdef int cap = max(state.max_actions, state.max_chance_outcomes, 1)
        if self.table is None or spec != self.game_spec:
            self.table = TreeTable(self.params.hash_mb)
            self.game_spec = spec
        elif not self.keep_tree:
            self.table.c_clear()
        if cap > self.cap:
            self._free_buffers()
            self.acts = <int*>malloc(cap * sizeof(int))
            self.probs = <double*>malloc(cap * sizeof(double))
            self.vals = <double*>malloc(cap * sizeof(double))
            self.evvals = <double*>malloc(cap * sizeof(double))
            self.pend = <int*>malloc(cap * sizeof(int))
            self.term = <int8_t*>malloc(cap * sizeof(int8_t))
            if not (self.acts and self.probs and self.vals and self.evvals and self.pend
                    and self.term):
                raise MemoryError()
            self.cap = cap
        self.max_plies = self.params.max_plies or state.game.max_game_length
        return 0

    # -- node values ---------------------------------------------------------------

    cdef inline bint _better(self, Child* a, Child* b, int player) noexcept nogil:
        """Whether child a is strictly better than b for ``player`` by (c, v)."""
        if self.completion and a.c != b.c:
            return a.c > b.c if player == 0 else a.c < b.c
        return a.v > b.v if player == 0 else a.v < b.v

    cdef int _best(self, Node* node) noexcept nogil:
        """completed_best_action: best (c, v) for the side to move, then most visits."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best = 0
        for i in range(1, node.nchild):
            if self._better(&ch[i], &ch[best], node.player) or (
                    not self._better(&ch[best], &ch[i], node.player) and ch[i].n > ch[best].n):
                best = i
        return best

    cdef int _safest(self, Node* node) noexcept nogil:
        """UBFM_s's safest action: best completion, then most visits, then best value."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best = 0, sgn = 1 if node.player == 0 else -1
        for i in range(1, node.nchild):
            if self.completion and ch[i].c != ch[best].c:
                if sgn * ch[i].c > sgn * ch[best].c:
                    best = i
            elif ch[i].n != ch[best].n:
                if ch[i].n > ch[best].n:
                    best = i
            elif sgn * ch[i].v > sgn * ch[best].v:
                best = i
        return best

    cdef void _update(self, Node* node) noexcept nogil:
        """Backs the children's (v, r, c) up into the node."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best
        cdef bint all_r = True
        cdef int8_t win
        cdef double total
        cdef int c_sum = 0
        for i in range(node.nchild):
            if not ch[i].r:
                all_r = False
        if node.player == CHANCE:
            total = 0.0
            for i in range(node.nchild):
                total += ch[i].p * ch[i].v
                c_sum += ch[i].c
            node.v = <float>total
            node.r = all_r
            node.c = 0
            if all_r and (c_sum == node.nchild or c_sum == -node.nchild):
                node.c = ch[0].c
            node.d = self._proof_depth(node)
            return
        best = self._best(node)
        win = 1 if node.player == 0 else -1
        node.v = ch[best].v
        node.c = ch[best].c
        node.r = all_r or (ch[best].r and ch[best].c == win)
        node.d = self._proof_depth(node)

    cdef int32_t _proof_depth(self, Node* node) noexcept nogil:
        """Plies from a resolved node to the proven end (0 when unresolved): one more than
        its quickest resolved win when the mover wins, than its longest child otherwise
        (a loss or a draw is resolved only once every child is)."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i
        cdef int32_t d = -1
        cdef int8_t win = 1 if node.player == 0 else -1
        if not node.r:
            return 0
        for i in range(node.nchild):
            if not ch[i].r:
                continue
            if node.player != CHANCE and node.c == win:
                if ch[i].c == win and (d < 0 or ch[i].d < d):
                    d = ch[i].d
            elif ch[i].d > d:
                d = ch[i].d
        return d + 1 if d < 32766 else 32767

    cdef int _tie_break(self, GameState s, Node* root, int chosen) except -1:
        """Among the root's children that equal ``chosen`` in completion, value and
        visits, the one the evaluator's move priors put first (``chosen`` when it has
        none): equal statistics must not leave the choice to move order."""
        cdef Child* ch = &self.table.children[root.first]
        cdef int i
        ties = [i for i in range(root.nchild)
                if ch[i].c == ch[chosen].c and ch[i].v == ch[chosen].v
                and ch[i].n == ch[chosen].n and ch[i].r == ch[chosen].r]
        if len(ties) < 2:
            return chosen
        priors = self.ev.move_priors(s)
        if priors is None:
            return chosen
        prior = dict(zip(s.legal_actions(), priors))
        return max(ties, key=lambda k: (prior.get(ch[k].action, -INFINITY), k == chosen))

    cdef int _resist(self, GameState s, Node* root, int chosen) except -1:
        """At a root proven lost, among the moves that resist as long as ``chosen``, the
        one the evaluator likes best: resolved values are all -1, so without this the
        choice fell to move order (``a1``). Values each such child once."""
        cdef Child* ch = &self.table.children[root.first]
        cdef int i, best = chosen
        cdef int8_t win = 1 if root.player == 0 else -1
        cdef double value, top = -INFINITY, sign = 1.0 if root.player == 0 else -1.0
        if root.player == CHANCE or root.c == win or root.c == 0:
            return chosen
        for i in range(root.nchild):
            if not ch[i].r or ch[i].c != ch[chosen].c or ch[i].d != ch[chosen].d:
                continue
            s.c_apply(ch[i].action)
            try:
                value = 0.0 if s.c_terminal() else sign * self.ev.c_eval(s)
            finally:
                s.c_undo()
            if value > top:
                best, top = i, value
        return best

    cdef int _proof_choice(self, Node* node, int best) noexcept nogil:
        """The move at a solved root: the quickest win found, or when every move loses
        the one that resists longest (not the first legal one); ties keep ``best``."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, chosen = best
        cdef int8_t win = 1 if node.player == 0 else -1
        if node.player == CHANCE or node.c == 0:
            return best         # an exact value that is no proven result: values decide
        for i in range(node.nchild):
            if not ch[i].r or ch[i].c != ch[chosen].c:
                continue
            if (ch[i].d < ch[chosen].d) if node.c == win else (ch[i].d > ch[chosen].d):
                chosen = i
        return chosen

    cdef int _sample(self, Node* node, uint64_t* rng) noexcept nogil:
        """A chance node's outcome drawn by probability (with ``sample_unresolved`` under
        completion: among the unresolved ones), -1 if none is left."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best = -1
        cdef double u, total = 0.0
        cdef bint skip = self.sample_unresolved and self.completion
        for i in range(node.nchild):
            if not (skip and ch[i].r):
                total += ch[i].p
        if total <= 0.0:
            return -1
        u = _uniform(rng) * total
        for i in range(node.nchild):
            if not (skip and ch[i].r):
                best = i
                u -= ch[i].p
                if u < 0.0:
                    return i
        return best

    cdef int _select(self, Node* node) noexcept nogil:
        """The child an iteration descends into (-1 if none is left to explore)."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best = -1
        if node.player == CHANCE:
            return self._sample(node, &self.rng)
        for i in range(node.nchild):
            if self.completion and ch[i].r:
                continue
            # best_action_dual: the best value among unresolved children, ties to the
            # least explored so that equal lines share the effort
            if best < 0 or self._better(&ch[i], &ch[best], node.player) or (
                    not self._better(&ch[best], &ch[i], node.player) and ch[i].n < ch[best].n):
                best = i
        return best

    # -- expansion -----------------------------------------------------------------

    cdef int64_t _expand(self, GameState s) except -2:
        """Adds s (not terminal, not in the table) with every child valued: its index,
        or -1 when the table is full."""
        cdef int player = s.c_player()
        cdef int n, i, npend = 0
        cdef double gain
        cdef Node* node
        cdef Child* ch
        cdef uint64_t key = s.c_hash()
        if player == CHANCE:
            n = s.c_chance(self.acts, self.probs)
            if self.det_seed and n > 1:
                i = _fixed_outcome(key, self.det_seed, self.probs, n)
                self.acts[0] = self.acts[i]
                self.probs[0] = 1.0
                n = 1
        else:
            n = s.c_legal(self.acts)
        if not self.table.c_has_room(n):
            return -1
        if self.mode == MODE_MCTS:
            self.ev.c_add(s)        # the simulation's return, valued in the same batch
        for i in range(n):
            s.c_apply(self.acts[i])
            self.nodes += 1
            if s.c_terminal():
                self.vals[i] = terminal_value(s, self.terminal_kind, self.max_plies)
                self.term[i] = 2 + _sign(s.c_value())   # 1, 2, 3: resolved with c = -1, 0, 1
            else:
                self.ev.c_add(s)
                self.pend[npend] = i
                npend += 1
                self.term[i] = 0
            s.c_undo()
        if self.mode == MODE_MCTS:
            self.ev.c_flush(self.evvals)
            self.leaf_value = self.evvals[0]
            for i in range(npend):
                self.vals[self.pend[i]] = self.evvals[i + 1]
        elif npend:
            self.ev.c_flush(self.evvals)
            for i in range(npend):
                self.vals[self.pend[i]] = self.evvals[i]
        return self._store(key, player, n, self.acts, self.probs, self.vals, self.term,
                           self.leaf_value)

    cdef int64_t _store(self, uint64_t key, int player, int n, int* acts, double* probs,
                        double* vals, int8_t* term, double leaf_value) noexcept nogil:
        """Inserts the node of ``key`` with its n valued children (the caller checked
        the room and the key's absence); its index."""
        cdef int i
        cdef Node* node = self.table.c_insert(key, n)
        cdef Child* ch
        node.player = <int8_t>player
        ch = &self.table.children[node.first]
        for i in range(n):
            ch[i].action = acts[i]
            ch[i].v = <float>vals[i]
            ch[i].p = <float>probs[i] if player == CHANCE else 0.0
            ch[i].r = term[i] != 0
            ch[i].c = term[i] - 2 if term[i] else 0
            ch[i].d = 0
        if self.mode == MODE_MCTS:
            node.v = <float>leaf_value
            self._resolve(node)
        else:
            self._update(node)
        return node - self.table.nodes

    # -- MCTS ------------------------------------------------------------------------

    cdef void _resolve(self, Node* node) noexcept nogil:
        """MCTS: resolution and completion from the children, leaving the mean alone."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best
        cdef bint all_r = True
        cdef int8_t win = 1 if node.player == 0 else -1
        for i in range(node.nchild):
            if not ch[i].r:
                all_r = False
        node.r = 0
        node.c = 0
        node.d = 0
        if node.player == CHANCE:
            if all_r:
                self._update(node)      # exact when every outcome is
            return
        best = self._best(node)
        if all_r or (ch[best].r and ch[best].c == win):
            node.r = 1
            node.c = ch[best].c
            node.v = ch[best].v
            node.d = self._proof_depth(node)

    cdef int _select_uct(self, Node* node) noexcept nogil:
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best = -1
        cdef double score, top = -INFINITY, q
        cdef double log_n = log(node.n + 1.0)
        if node.player == CHANCE:
            return self._select(node)
        for i in range(node.nchild):
            if self.completion and ch[i].r:
                continue
            q = ch[i].v if node.player == 0 else -ch[i].v
            score = q + self.exploration * sqrt(log_n / (ch[i].n + 1.0))
            if score > top:
                top = score
                best = i
        return best

    # -- one iteration -------------------------------------------------------------

    cdef int _iteration(self, GameState s) except -1:
        cdef int depth = 0, k
        cdef int64_t idx
        cdef Node* node
        cdef Child* ch
        cdef float v = 0.0
        cdef int8_t r = 0, c = 0
        cdef int32_t d = 0
        cdef bint leaf_set = False
        while True:
            if s.c_terminal():
                v = <float>terminal_value(s, self.terminal_kind, self.max_plies)
                r = 1
                c = _sign(s.c_value())
                d = 0
                break
            idx = self.table.c_find_index(s.c_hash())
            if idx < 0:
                idx = self._expand(s)
                if idx < 0:
                    # full: the parent's record of this child stays as it was
                    self.full = True
                    if depth == 0:
                        return 0
                    ch = &self.table.children[self.table.nodes[self.path_node[depth - 1]].first
                                              + self.path_child[depth - 1]]
                    v, r, c, d = ch.v, ch.r, ch.c, ch.d
                    break
                if self.mode != MODE_DESCENT:
                    node = &self.table.nodes[idx]
                    v, r, c, d = node.v, node.r, node.c, node.d
                    if self.mode == MODE_MCTS and not node.r:
                        v = <float>self.leaf_value
                    break
            node = &self.table.nodes[idx]
            if depth > 0 and node.r and self.completion:
                v, r, c, d = node.v, node.r, node.c, node.d
                break
            if depth >= MAX_PATH - 1:
                k = -1
            elif self.mode == MODE_MCTS:
                k = self._select_uct(node)
            else:
                k = self._select(node)
            if k < 0:
                v, r, c, d = node.v, node.r, node.c, node.d
                break
            self.path_node[depth] = idx
            self.path_child[depth] = k
            s.c_apply(self.table.children[node.first + k].action)
            self.nodes += 1
            depth += 1
        if depth > self.max_depth:
            self.max_depth = depth
        if self.mode == MODE_MCTS:
            self._backup_mcts(s, self.path_node, self.path_child, depth, v, r, c, d)
        else:
            self._backup(s, self.path_node, self.path_child, depth, v, r, c, d)
        return 0

    cdef void _backup(self, GameState s, int64_t* path_node, int32_t* path_child, int depth,
                      float v, int8_t r, int8_t c, int32_t d) noexcept nogil:
        """The leaf's (v, r, c, d) up the path, each node re-valued from its children;
        the moves are undone on the way."""
        cdef Node* node
        cdef Child* ch
        while depth > 0:
            depth -= 1
            s.c_undo()
            node = &self.table.nodes[path_node[depth]]
            ch = &self.table.children[node.first + path_child[depth]]
            ch.v = v
            ch.r = r
            ch.c = c
            ch.d = <int16_t>(d if d < 32767 else 32767)
            ch.n += 1
            node.n += 1
            self._update(node)
            v, r, c, d = node.v, node.r, node.c, node.d

    cdef void _backup_mcts(self, GameState s, int64_t* path_node, int32_t* path_child,
                           int depth, float x, int8_t r, int8_t c, int32_t d) noexcept nogil:
        """Running means of the simulation's return x; exact values where solved."""
        cdef Node* node
        cdef Child* ch
        while depth > 0:
            depth -= 1
            s.c_undo()
            node = &self.table.nodes[path_node[depth]]
            ch = &self.table.children[node.first + path_child[depth]]
            ch.n += 1
            if r:
                ch.v = x
                ch.r = 1
                ch.c = c
                ch.d = <int16_t>(d if d < 32767 else 32767)
            else:
                # the prior counts as one visit
                ch.v += (x - ch.v) / (ch.n + 1.0)
            node.n += 1
            node.v += (x - node.v) / (node.n + 1.0)
            self._resolve(node)
            r = node.r
            c = node.c
            d = node.d
            if r:
                x = node.v

    # -- memory --------------------------------------------------------------------

    cdef void _mark(self, GameState s, int depth, int threshold,
                    int64_t* kept_nodes, int64_t* kept_children) noexcept:
        cdef int64_t idx = self.table.c_find_index(s.c_hash())
        cdef Node* node
        cdef int k, nchild
        cdef int64_t first
        if idx < 0:
            return
        node = &self.table.nodes[idx]
        if node.mark or (depth > 0 and node.n < threshold):
            return
        node.mark = 1
        kept_nodes[0] += 1
        kept_children[0] += node.nchild
        if depth >= GC_MAX_DEPTH:
            return
        first = node.first
        nchild = node.nchild
        for k in range(nchild):
            s.c_apply(self.table.children[first + k].action)
            if not s.c_terminal():
                self._mark(s, depth + 1, threshold, kept_nodes, kept_children)
            s.c_undo()

    cdef bint _collect_garbage(self, GameState root) noexcept:
        """Keeps the tree below ``root``, dropping its least visited nodes until at most
        half of the table is used. False when even the root cannot be kept with room."""
        cdef int threshold = 0
        cdef int64_t kept_nodes, kept_children, i
        while True:
            kept_nodes = 0
            kept_children = 0
            self._mark(root, 0, threshold, &kept_nodes, &kept_children)
            if (2 * kept_nodes <= self.table.max_nodes
                    and 2 * (kept_nodes * sizeof(Node) + kept_children * sizeof(Child))
                    <= self.table.arena_children * sizeof(Child)) or threshold > (1 << 28):
                break
            for i in range(self.table.n_nodes):
                self.table.nodes[i].mark = 0
            threshold = 1 if threshold == 0 else 2 * threshold
        self.table.c_compact()
        return self.table.c_has_room(self.cap)

    # -- the search ----------------------------------------------------------------

    def run(self, GameState state, Stopper stopper) -> SearchResult:
        """Searches until the stopper fires or the root is resolved, on ``params.threads``
        threads. Blocks. Unless the root is resolved already, one iteration always completes
        (at a fresh root: its expansion, every child valued), whatever the stopper says
        (a stop already asked for, a spent clock): no move without a search behind it."""
        cdef Node* root
        cdef int64_t ridx
        cdef int best
        cdef Evaluator e
        cdef long long valued_before = 0
        for e in self.wevs:
            valued_before += e.positions
        if state.c_terminal():
            raise ValueError("cannot search a terminal state")
        self.ev.c_discard()
        self._prepare(state)
        self.nodes = 0
        self.iterations = 0
        self.max_depth = 0
        self.full = False
        self.rng = <uint64_t>self.params.seed ^ state.c_hash()
        if self.table.c_usage() > 0.5:
            self._collect_garbage(state)
        stopper.c_start()
        while self.threads == 1:
            ridx = self.table.c_find_index(state.c_hash())
            if ridx >= 0 and self.table.nodes[ridx].r and (
                    self.resolution_stop or self.completion):
                stopper.c_finish(STOP_RESOLVED)
                break
            if self.iterations > 0 and stopper.c_check(self.nodes, self.iterations):
                break
            self._iteration(state)
            self.iterations += 1
            if self.full:
                self.full = False
                if not self._collect_garbage(state):
                    stopper.c_finish(STOP_MEMORY)
                    break
        if self.threads > 1:
            self._run_parallel(state, stopper)
        valued = -valued_before
        for e in self.wevs:
            valued += e.positions
        ridx = self.table.c_find_index(state.c_hash())
        if ridx < 0:
            raise MemoryError(f"hash_mb={self.params.hash_mb} cannot hold the root's children")
        root = &self.table.nodes[ridx]
        # once the root is solved its children's values are exact: the best action is
        # then the safest one too, whatever the visit counts say
        if root.r or self.mode in (MODE_UBFM, MODE_DESCENT):
            best = self._best(root)
        else:
            best = self._safest(root)          # UBFM_s; MCTS's robust child
        if root.r:
            best = self._proof_choice(root, best)
            best = self._resist(state, root, best)
        best = self._tie_break(state, root, best)
        return SearchResult(
            action=self.table.children[root.first + best].action, value=float(root.v),
            pv=self._pv(state, best), nodes=self.nodes, iterations=self.iterations,
            depth=self.max_depth, time=stopper.elapsed, stop_reason=stopper.reason_name,
            resolved=bool(root.r), evaluations=valued,
            children=self._children(root))

    cdef list _children(self, Node* node):
        cdef Child* ch = &self.table.children[node.first]
        return [ChildStat(ch[i].action, float(ch[i].v), ch[i].n, bool(ch[i].r),
                          int(ch[i].c) if ch[i].r else None)
                for i in range(node.nchild)]

    cdef list _pv(self, GameState s, int first_choice):
        """The principal variation: the decision, then best actions (the most visited
        outcome at chance nodes) while the line stays in the table."""
        pv = []
        cdef int64_t idx = self.table.c_find_index(s.c_hash())
        cdef Node* node
        cdef Child* ch
        cdef int k, i, applied = 0
        while idx >= 0 and applied < 64:
            node = &self.table.nodes[idx]
            if applied == 0:
                k = first_choice
            elif node.player == CHANCE:
                ch = &self.table.children[node.first]
                k = 0
                for i in range(1, node.nchild):
                    if ch[i].n > ch[k].n:
                        k = i
            else:
                k = self._best(node)
            pv.append(self.table.children[node.first + k].action)
            s.c_apply(self.table.children[node.first + k].action)
            applied += 1
            if s.c_terminal():
                break
            idx = self.table.c_find_index(s.c_hash())
        for i in range(applied):
            s.c_undo()
        return pv

    # -- parallel search (threads > 1) ---------------------------------------------

    cdef void _free_workers(self) noexcept:
        cdef int t
        if self.workers == NULL:
            return
        for t in range(self.threads):
            free(self.workers[t].acts)
            free(self.workers[t].probs)
            free(self.workers[t].vals)
            free(self.workers[t].term)
            free(self.workers[t].path_node)
            free(self.workers[t].path_child)
        free(self.workers)
        self.workers = NULL
        self.wcap = 0

    cdef int _prepare_workers(self, GameState state) except -1:
        """Each thread's buffers, state copy and evaluator; the pending counts sized for
        the table."""
        cdef int t
        cdef Worker* w
        if self.wcap < self.cap:
            self._free_workers()
            self.workers = <Worker*>calloc(self.threads, sizeof(Worker))
            if self.workers == NULL:
                raise MemoryError()
            for t in range(self.threads):
                w = &self.workers[t]
                w.acts = <int*>malloc(self.cap * sizeof(int))
                w.probs = <double*>malloc(self.cap * sizeof(double))
                w.vals = <double*>malloc(self.cap * sizeof(double))
                w.term = <int8_t*>malloc(self.cap * sizeof(int8_t))
                w.path_node = <int64_t*>malloc(MAX_PATH * sizeof(int64_t))
                w.path_child = <int32_t*>malloc(MAX_PATH * sizeof(int32_t))
                if not (w.acts and w.probs and w.vals and w.term and w.path_node
                        and w.path_child):
                    self._free_workers()
                    raise MemoryError()
            self.wcap = self.cap
        if self.gathering and self.gatherer is None:
            self.gatherer = BatchGatherer((<BatchEvaluator>self.ev).fn, self.threads)
        while len(self.wevs) < self.threads:
            self.wevs.append((<BatchEvaluator>self.ev).spawn(self.gatherer) if self.gathering
                             else self.ev.spawn())
        self.wstates = [state.clone() for _ in range(self.threads)]
        if self.pending_table is not self.table:
            free(self.pending)
            self.pending = <uint16_t*>calloc(self.table.arena_children, sizeof(uint16_t))
            if self.pending == NULL:
                self.pending_table = None
                raise MemoryError()
            self.pending_table = self.table
        cdef uint64_t mix
        for t in range(self.threads):
            w = &self.workers[t]
            mix = <uint64_t>(t + 1)
            w.rng = self.rng ^ splitmix64(&mix)
            w.nodes = w.evaluations = w.batches = 0
            w.max_depth = 0
        return 0

    cdef int _run_parallel(self, GameState state, Stopper stopper) except -1:
        """The threads search until a limit, the root's resolution or an evaluator's
        error; a full table is compacted between rounds of threads. The calling thread
        watches the clock and the stop flag."""
        cdef int t, reason
        cdef Worker* w
        cdef Evaluator e
        self._prepare_workers(state)
        self.root_key = state.c_hash()
        self.limit_nodes = stopper.max_nodes
        self.limit_iterations = stopper.max_iterations
        self.started = 0
        self.errors = []
        try:
            while True:
                self.stop_all = 0
                self.stop_reason = STOP_NONE
                threads = [threading.Thread(target=self._work, args=(t,), daemon=True)
                           for t in range(self.threads)]
                for th in threads:
                    th.start()
                while True:
                    threads[0].join(0.001)
                    if not any(th.is_alive() for th in threads):
                        break
                    reason = STOP_NONE
                    if self.iterations == 0:
                        pass          # no move without a search: one iteration first
                    elif stopper.flag:
                        reason = STOP_EXTERNAL
                    elif stopper.deadline > 0.0 and monotonic() >= stopper.deadline:
                        reason = STOP_TIME
                    if reason != STOP_NONE:
                        with nogil:
                            descent_spin_lock(&self.lock)
                            if not self.stop_all:
                                self.stop_all = 1
                                self.stop_reason = reason
                            descent_spin_unlock(&self.lock)
                for th in threads:
                    th.join()
                if self.errors:
                    raise self.errors[0]
                if self.full and self.stop_reason == STOP_NONE:
                    self.full = False
                    if not self._collect_garbage(state):
                        stopper.c_finish(STOP_MEMORY)
                        break
                    continue
                self.full = False
                if self.stop_reason != STOP_NONE:
                    stopper.c_finish(self.stop_reason)
                break
        finally:
            for t in range(self.threads):
                w = &self.workers[t]
                e = self.wevs[t]
                if self.heuristic:
                    e.positions += w.evaluations
                    e.batches += w.batches
                if w.max_depth > self.max_depth:
                    self.max_depth = w.max_depth
                w.nodes = w.evaluations = w.batches = 0
        return 0

    def _work(self, int tid):
        """One search thread (``threading.Thread`` target): iterations without the GIL
        until the search stops."""
        cdef GameState s = self.wstates[tid]
        cdef Evaluator ev = self.wevs[tid]
        cdef HeuristicEvaluator hev = ev if self.heuristic else None
        cdef Worker* w = &self.workers[tid]
        with nogil:
            self._par_loop(w, s, ev, hev)

    cdef void _par_loop(self, Worker* w, GameState s, Evaluator ev,
                        HeuristicEvaluator hev) noexcept nogil:
        cdef int64_t ridx
        cdef int status
        while True:
            descent_spin_lock(&self.lock)
            if not self.stop_all:
                ridx = self.table.c_find_index(self.root_key)
                if ridx >= 0 and self.table.nodes[ridx].r and (
                        self.resolution_stop or self.completion):
                    self.stop_all = 1
                    self.stop_reason = STOP_RESOLVED
                elif self.limit_iterations and self.started >= self.limit_iterations:
                    self.stop_all = 1
                    self.stop_reason = STOP_ITERATIONS
                elif self.limit_nodes and self.started and self.nodes >= self.limit_nodes:
                    self.stop_all = 1
                    self.stop_reason = STOP_NODES
            if self.stop_all:
                descent_spin_unlock(&self.lock)
                return
            self.started += 1
            status = self._par_iteration(w, s, ev, hev)     # releases the lock
            if status != PAR_OK:
                descent_spin_lock(&self.lock)
                self.stop_all = 1
                if status == PAR_FULL:
                    self.full = True
                descent_spin_unlock(&self.lock)
                return

    cdef int _par_children(self, Worker* w, GameState s, Evaluator ev,
                           HeuristicEvaluator hev) noexcept nogil:
        """The children of s (not terminal) valued into w's buffers, outside the lock:
        their number, or -1 when the evaluator raised (kept in self.errors)."""
        cdef int n, i
        if s.c_player() == CHANCE:
            n = s.c_chance(w.acts, w.probs)
            if self.det_seed and n > 1:
                i = _fixed_outcome(s.c_hash(), self.det_seed, w.probs, n)
                w.acts[0] = w.acts[i]
                w.probs[0] = 1.0
                n = 1
        else:
            n = s.c_legal(w.acts)
        if not self.heuristic:
            return self._par_batch_safe(w, s, ev, n)
        w.batches += 1
        if self.mode == MODE_MCTS:
            w.leaf_value = hev.c_heuristic(s)
            w.evaluations += 1
        for i in range(n):
            s.c_apply(w.acts[i])
            w.nodes += 1
            if s.c_terminal():
                w.vals[i] = terminal_value(s, self.terminal_kind, self.max_plies)
                w.term[i] = 2 + _sign(s.c_value())
            else:
                w.vals[i] = hev.c_heuristic(s)
                w.evaluations += 1
                w.term[i] = 0
            s.c_undo()
        return n

    cdef int _par_batch_safe(self, Worker* w, GameState s, Evaluator ev,
                             int n) noexcept with gil:
        # a function of its own: a nogil function holding a Python variable takes the
        # GIL at every exit, which would serialise the threads on the heuristic path
        try:
            self._par_batch(w, s, ev, n)
        except BaseException as exc:
            ev.c_discard()
            self.errors.append(exc)
            return -1
        return n

    cdef int _par_encode(self, Worker* w, GameState s, BatchEvaluator ev, int n,
                         double* out) except -1:
        """_par_batch for a BatchEvaluator: the children are encoded straight into its
        buffer without the GIL (other threads walk, encode and call the backend
        meanwhile); the GIL is taken for the backend call alone."""
        cdef int i, k = 0, npend = 0, sym = ev.symmetry
        cdef float[:, :, :, ::1] view
        cdef double* sign
        if ev.capacity < n + 1:
            ev._grow(max(n + 1, 2 * ev.capacity))
        if s.num_planes != ev.planes or s.height != ev.height or s.width != ev.width:
            raise ValueError("state encoding shape differs from the evaluator's")
        view = ev.view
        sign = ev.pending
        with nogil:
            if self.mode == MODE_MCTS:
                s.c_encode(&view[0, 0, 0, 0], sym)
                sign[0] = -1.0 if s.c_sym_swaps_colours(sym) else 1.0
                npend = 1
            for i in range(n):
                s.c_apply(w.acts[i])
                w.nodes += 1
                if s.c_terminal():
                    w.vals[i] = terminal_value(s, self.terminal_kind, self.max_plies)
                    w.term[i] = 2 + _sign(s.c_value())
                else:
                    s.c_encode(&view[npend, 0, 0, 0], sym)
                    sign[npend] = -1.0 if s.c_sym_swaps_colours(sym) else 1.0
                    npend += 1
                    w.term[i] = 0
                s.c_undo()
        ev.n_pending = npend
        if npend:
            ev.c_flush(out)
        if self.mode == MODE_MCTS:
            w.leaf_value = out[0]
            k = 1
        for i in range(n):
            if w.term[i] == 0:
                w.vals[i] = out[k]
                k += 1
        return 0

    cdef int _par_batch(self, Worker* w, GameState s, Evaluator ev, int n) except -1:
        """_par_children through a batch evaluator (with the GIL; the backend releases
        it while it computes)."""
        cdef int i, k = 0, npend = 0
        cdef double* out = <double*>malloc((n + 1) * sizeof(double))
        if out == NULL:
            raise MemoryError()
        if type(ev) is BatchEvaluator:
            try:
                return self._par_encode(w, s, <BatchEvaluator>ev, n, out)
            finally:
                free(out)
        try:
            if self.mode == MODE_MCTS:
                ev.c_add(s)
            for i in range(n):
                s.c_apply(w.acts[i])
                w.nodes += 1
                if s.c_terminal():
                    w.vals[i] = terminal_value(s, self.terminal_kind, self.max_plies)
                    w.term[i] = 2 + _sign(s.c_value())
                else:
                    try:
                        ev.c_add(s)
                    finally:
                        s.c_undo()
                    npend += 1
                    w.term[i] = 0
                    continue
                s.c_undo()
            if self.mode == MODE_MCTS:
                ev.c_flush(out)
                w.leaf_value = out[0]
                k = 1
            elif npend:
                ev.c_flush(out)
            for i in range(n):
                if w.term[i] == 0:
                    w.vals[i] = out[k]
                    k += 1
        finally:
            free(out)
        return 0

    cdef int _select_par(self, Worker* w, Node* node) noexcept nogil:
        """_select with the other threads' pending visits: the children fewest threads
        are inside first (then the serial rule); MCTS counts them as lost simulations."""
        cdef Child* ch = &self.table.children[node.first]
        cdef uint16_t* busy = &self.pending[node.first]
        cdef int i, best = -1
        cdef double q, score, top = -INFINITY, log_n
        if node.player == CHANCE:
            return self._sample(node, &w.rng)
        if self.mode == MODE_MCTS:
            log_n = log(node.n + 1.0)
            for i in range(node.nchild):
                if self.completion and ch[i].r:
                    continue
                q = ch[i].v if node.player == 0 else -ch[i].v
                if busy[i]:
                    q = (q * (ch[i].n + 1.0) - busy[i]) / (ch[i].n + 1.0 + busy[i])
                score = q + self.exploration * sqrt(log_n / (ch[i].n + busy[i] + 1.0))
                if score > top:
                    top = score
                    best = i
            return best
        for i in range(node.nchild):
            if self.completion and ch[i].r:
                continue
            if best < 0 or busy[i] < busy[best] or (busy[i] == busy[best] and (
                    self._better(&ch[i], &ch[best], node.player) or (
                        not self._better(&ch[best], &ch[i], node.player)
                        and ch[i].n < ch[best].n))):
                best = i
        return best

    cdef int _par_iteration(self, Worker* w, GameState s, Evaluator ev,
                            HeuristicEvaluator hev) noexcept nogil:
        """One iteration of a search thread; called with the lock held, returns with it
        released. Expansions are valued outside the lock; a state another thread
        inserted meanwhile keeps that thread's node. The walk mirrors _iteration's on
        purpose: the serial loop stays as it was, so one thread is bit-identical."""
        cdef int depth = 0, k, n, player, status = PAR_OK, i
        cdef int64_t idx
        cdef uint64_t key
        cdef Node* node
        cdef Child* ch
        cdef float v = 0.0
        cdef int8_t r = 0, c = 0
        cdef int32_t d = 0
        cdef long long nodes_before = w.nodes
        while True:
            if s.c_terminal():
                v = <float>terminal_value(s, self.terminal_kind, self.max_plies)
                r = 1
                c = _sign(s.c_value())
                d = 0
                break
            key = s.c_hash()
            idx = self.table.c_find_index(key)
            if idx < 0:
                player = s.c_player()
                descent_spin_unlock(&self.lock)
                n = self._par_children(w, s, ev, hev)
                descent_spin_lock(&self.lock)
                if n < 0:
                    status = PAR_ERROR
                    break
                idx = self.table.c_find_index(key)
                if idx < 0:
                    if not self.table.c_has_room(n):
                        status = PAR_FULL
                        if depth == 0:
                            break
                        ch = &self.table.children[
                            self.table.nodes[w.path_node[depth - 1]].first
                            + w.path_child[depth - 1]]
                        v, r, c, d = ch.v, ch.r, ch.c, ch.d
                        break
                    idx = self._store(key, player, n, w.acts, w.probs, w.vals, w.term,
                                      w.leaf_value)
                if self.mode != MODE_DESCENT:
                    node = &self.table.nodes[idx]
                    v, r, c, d = node.v, node.r, node.c, node.d
                    if self.mode == MODE_MCTS and not node.r:
                        v = <float>w.leaf_value
                    break
            node = &self.table.nodes[idx]
            if depth > 0 and node.r and self.completion:
                v, r, c, d = node.v, node.r, node.c, node.d
                break
            if depth >= MAX_PATH - 1:
                k = -1
            else:
                k = self._select_par(w, node)
            if k < 0:
                v, r, c, d = node.v, node.r, node.c, node.d
                break
            w.path_node[depth] = idx
            w.path_child[depth] = k
            self.pending[node.first + k] += 1
            s.c_apply(self.table.children[node.first + k].action)
            w.nodes += 1
            depth += 1
        if depth > w.max_depth:
            w.max_depth = depth
        for i in range(depth):
            self.pending[self.table.nodes[w.path_node[i]].first + w.path_child[i]] -= 1
        if status == PAR_ERROR:
            while depth > 0:
                depth -= 1
                s.c_undo()
        elif self.mode == MODE_MCTS:
            self._backup_mcts(s, w.path_node, w.path_child, depth, v, r, c, d)
        else:
            self._backup(s, w.path_node, w.path_child, depth, v, r, c, d)
        if status != PAR_ERROR:
            self.iterations += 1
        self.nodes += w.nodes - nodes_before
        descent_spin_unlock(&self.lock)
        return status

    def audit(self) -> list:
        """The table's invariants, as a list of violations (empty when sound; tests): a
        node's visits are the sum of its children's, no thread is left inside a child
        (virtual loss), a resolved decision node has every child resolved or a resolved
        win for its mover. Blocks."""
        cdef int64_t i
        cdef int k
        cdef long long total
        cdef Node* node
        cdef Child* ch
        cdef bint all_r, won
        out = []
        if self.table is None:
            return out
        for i in range(self.table.n_nodes):
            node = &self.table.nodes[i]
            ch = &self.table.children[node.first]
            total = 0
            all_r = True
            won = False
            for k in range(node.nchild):
                total += ch[k].n
                all_r = all_r and ch[k].r
                won = won or (ch[k].r and ch[k].c == (1 if node.player == 0 else -1))
                if self.pending != NULL and self.pending_table is self.table \
                        and self.pending[node.first + k]:
                    out.append(f"node {i} child {k}: {self.pending[node.first + k]} "
                               "threads left inside")
            if total != node.n:
                out.append(f"node {i}: {node.n} visits, its children {total}")
            if node.r and node.player != CHANCE and not (all_r or won):
                out.append(f"node {i}: resolved without a resolved win or all children")
        return out

    # -- Rminimax ------------------------------------------------------------------

    cdef int64_t _rminimax_node(self, GameState s, int64_t idx, int depth, int root_player,
                                double sv, TreeBuilder b, int64_t* ids) except -1:
        """Adds the stored subtree of table node ``idx`` (the state ``s``) to ``b``, once
        per table node (transpositions share theirs), and returns its id there. Children
        outside the table are leaves with their stored values."""
        cdef Node* node = &self.table.nodes[idx]
        cdef int64_t first = node.first, e, me, child, cidx
        cdef int nchild = node.nchild, k, player = node.player
        if ids[idx] >= 0:
            return ids[idx]
        me = b.c_node(K_CHANCE if player == CHANCE else
                      (K_RANDOMISED if player == root_player else K_OPPONENT),
                      sv * node.v, depth, False)
        ids[idx] = me
        e = b.c_edges(me, nchild)
        if depth == 0:
            b.root_actions = [self.table.children[first + k].action for k in range(nchild)]
        for k in range(nchild):
            if player == CHANCE:
                b.edge_p[e + k] = self.table.children[first + k].p
            s.c_apply(self.table.children[first + k].action)
            cidx = -1 if s.c_terminal() or depth >= GC_MAX_DEPTH \
                else self.table.c_find_index(s.c_hash())
            if cidx >= 0:
                child = self._rminimax_node(s, cidx, depth + 1, root_player, sv, b, ids)
            else:
                child = b.c_node(K_LEAF, sv * self.table.children[first + k].v, depth + 1,
                                 s.c_terminal())
            s.c_undo()
            b.edge_to[e + k] = child
        return me

    def rminimax_tree(self, GameState state, double scale=1.0) -> TreeBuilder:
        """The stored tree below ``state`` (the root of the last search) in Rminimax's
        flat form (rminimax.pyx): values in the root player's view divided by ``scale``.
        Blocks (one pass over the stored tree)."""
        cdef int64_t idx, i
        cdef int64_t* ids
        cdef TreeBuilder b = TreeBuilder()
        if self.table is None:
            raise ValueError("no search has been run")
        if not scale > 0:
            raise ValueError("scale must be > 0")
        idx = self.table.c_find_index(state.c_hash())
        if idx < 0:
            raise ValueError("the state is not the root of a search in the table")
        if self.table.nodes[idx].player == CHANCE:
            raise ValueError("the root is a chance node: there is no move to choose")
        ids = <int64_t*>malloc(self.table.n_nodes * sizeof(int64_t))
        if ids == NULL:
            raise MemoryError()
        for i in range(self.table.n_nodes):
            ids[i] = -1
        root_player = self.table.nodes[idx].player
        try:
            self._rminimax_node(state, idx, 0, root_player,
                                (1.0 if root_player == 0 else -1.0) / scale, b, ids)
        finally:
            free(ids)
        return b

    def rminimax_policy(self, GameState state, double theta, double arc_cost=0.0,
                        double scale=1.0) -> list:
        """[(action, probability)] of Rminimax's randomised policy (rminimax.pyx) at the
        root of the last search, over the stored tree: inverse temperature ``theta`` on
        values divided by ``scale`` (a win is 1), ``arc_cost`` per move. Blocks (one pass
        over the stored tree)."""
        cdef TreeBuilder b
        if not theta > 0:
            raise ValueError("theta must be > 0")
        b = self.rminimax_tree(state, scale)
        probs = b.policy(theta, arc_cost)
        return [(int(a), float(p)) for a, p in zip(b.root_actions, probs, strict=True)]


    # -- tree learning -------------------------------------------------------------

    cdef int _emit(self, GameState s, float v, bint r, list syms, list out) except -1:
        """Appends the encodings of s (one per symmetry) to out = [planes, values, solved,
        count], doubling the arrays when full."""
        cdef float[:, :, :, ::1] view
        cdef int k, count
        for k in range(len(syms)):
            count = out[3]
            if count >= out[0].shape[0]:
                for m in range(3):
                    out[m] = np.concatenate([out[m], np.zeros_like(out[m])])
            view = out[0]
            s.c_encode(&view[count, 0, 0, 0], syms[k])
            out[1][count] = -v if s.c_sym_swaps_colours(syms[k]) else v
            out[2][count] = r
            out[3] = count + 1
        return 0

    def walk_tree(self, GameState root, terminal_value, emit, *, bint recompute,
                  bint completion=True, bint terminals=True, fixed=None,
                  long long limit=1 << 60):
        """Walks the stored tree below ``root`` in post-order, calling ``emit(state, value,
        resolved)`` once for every stored state (after its subtree) and, with
        ``terminals``, once for every distinct terminal state reached (valued by
        ``terminal_value(state)``). Returns the root's value (player 0's view), or None
        when the root is not in the table. Blocks; ``root`` is restored.

        ``recompute``: values are backed up from the leaves (terminal states valued by
        ``terminal_value``, unexpanded children by their stored values) with this
        search's rule (completion first when ``completion``, then the value; the
        probability-weighted mean at chance states); otherwise every state keeps the value
        the search stored. ``fixed`` (determinization): chance state hash -> realised
        outcome; such a state takes the value of that child. ``limit`` caps the states
        emitted (deeper ones are not entered). Each state is valued once: a transposition
        reuses the first value, and a child already on the path (a repetition) keeps its
        stored value."""
        if self.table is None:
            raise ValueError("no search has been run")
        cdef int64_t ridx = self.table.c_find_index(root.c_hash())
        if ridx < 0:
            return None
        cdef dict done = {}
        cdef set terminal_seen = set()
        cdef set on_path = {root.c_hash()}
        cdef long long emitted = 0
        # frames: the node (table index), its key, the next child, where its children's
        # results start in the results stack
        cdef int64_t cap_f = 64, cap_r = 1024, top = 0, rtop = 0
        cdef int64_t* f_node = <int64_t*>malloc(cap_f * sizeof(int64_t))
        cdef uint64_t* f_key = <uint64_t*>malloc(cap_f * sizeof(uint64_t))
        cdef int* f_next = <int*>malloc(cap_f * sizeof(int))
        cdef int64_t* f_start = <int64_t*>malloc(cap_f * sizeof(int64_t))
        cdef double* r_v = <double*>malloc(cap_r * sizeof(double))
        cdef int8_t* r_r = <int8_t*>malloc(cap_r * sizeof(int8_t))
        cdef int8_t* r_c = <int8_t*>malloc(cap_r * sizeof(int8_t))
        cdef Node* node
        cdef Child* ch
        cdef int64_t cidx, start, n
        cdef uint64_t ckey, key
        cdef double value, tv
        cdef int8_t resolved, comp
        cdef int realised
        root_value = None
        try:
            if (f_node == NULL or f_key == NULL or f_next == NULL or f_start == NULL
                    or r_v == NULL or r_r == NULL or r_c == NULL):
                raise MemoryError()
            f_node[0] = ridx
            f_key[0] = root.c_hash()
            f_next[0] = 0
            f_start[0] = 0
            while top >= 0:
                node = &self.table.nodes[f_node[top]]
                if rtop + 1 >= cap_r:
                    cap_r *= 2
                    r_v = <double*>_grow(r_v, cap_r * sizeof(double))
                    r_r = <int8_t*>_grow(r_r, cap_r * sizeof(int8_t))
                    r_c = <int8_t*>_grow(r_c, cap_r * sizeof(int8_t))
                if f_next[top] < node.nchild:
                    ch = &self.table.children[node.first + f_next[top]]
                    f_next[top] += 1
                    root.c_apply(ch.action)
                    if root.c_terminal():
                        tv = terminal_value(root)
                        ckey = root.c_hash()
                        if terminals and ckey not in terminal_seen and emitted < limit:
                            terminal_seen.add(ckey)
                            emit(root, tv, True)
                            emitted += 1
                        r_v[rtop] = tv
                        r_r[rtop] = 1
                        r_c[rtop] = _sign(root.c_value())
                        rtop += 1
                        root.c_undo()
                        continue
                    ckey = root.c_hash()
                    cached = done.get(ckey)
                    if cached is not None:
                        r_v[rtop], r_r[rtop], r_c[rtop] = cached
                        rtop += 1
                        root.c_undo()
                        continue
                    cidx = -1 if (ckey in on_path or emitted >= limit) \
                        else self.table.c_find_index(ckey)
                    if cidx < 0:
                        r_v[rtop] = ch.v
                        r_r[rtop] = ch.r
                        r_c[rtop] = ch.c
                        rtop += 1
                        root.c_undo()
                        continue
                    on_path.add(ckey)
                    top += 1
                    if top >= cap_f:
                        cap_f *= 2
                        f_node = <int64_t*>_grow(f_node, cap_f * sizeof(int64_t))
                        f_key = <uint64_t*>_grow(f_key, cap_f * sizeof(uint64_t))
                        f_next = <int*>_grow(f_next, cap_f * sizeof(int))
                        f_start = <int64_t*>_grow(f_start, cap_f * sizeof(int64_t))
                    f_node[top] = cidx
                    f_key[top] = ckey
                    f_next[top] = 0
                    f_start[top] = rtop
                    continue
                # every child is known: value this state, emit it, return to the parent
                key = f_key[top]
                start = f_start[top]
                n = rtop - start
                realised = -1
                if fixed is not None and node.player == CHANCE:
                    realised = fixed.get(key, -1)
                value, resolved, comp = _backed_up(
                    node, &self.table.children[node.first], r_v + start, r_r + start,
                    r_c + start, n, recompute, completion, realised)
                done[key] = (value, resolved, comp)
                if emitted < limit:
                    emit(root, value, bool(resolved))
                    emitted += 1
                on_path.discard(key)
                top -= 1
                rtop = start
                if top >= 0:
                    root.c_undo()
                    r_v[rtop] = value
                    r_r[rtop] = resolved
                    r_c[rtop] = comp
                    rtop += 1
                else:
                    root_value = value
        finally:
            while top > 0:          # an exception inside: restore the state
                root.c_undo()
                top -= 1
            free(f_node)
            free(f_key)
            free(f_next)
            free(f_start)
            free(r_v)
            free(r_r)
            free(r_c)
        return root_value

    def learning_data(self, GameState root, int limit=1000000, bint terminals=True,
                      symmetries=None):
        """Tree learning (Descent): every state of the stored tree below ``root``, with
        its value v(s) in player 0's view, and (``terminals``) the terminal states the
        search reached with their terminal values. Returns (planes float32
        (n, planes, H, W), values float32 (n,), resolved bool (n,)); with ``symmetries``
        (a list of symmetry ids) each state is encoded once per symmetry, values negated
        for the colour-swapping ones. At most ``limit`` rows. Blocks; the state is
        restored."""
        cdef list syms = [0] if symmetries is None else list(symmetries)
        cdef int sym, top = 0, k
        cdef int64_t idx, i
        cdef Node* node
        cdef Child* ch
        cdef set terminal_seen = set()
        for sym in syms:
            if not 0 <= sym < root.num_symmetries:
                raise ValueError(f"symmetry {sym} out of range")
        if self.table is None:
            raise ValueError("no search has been run")
        shape = (root.num_planes, root.height, root.width)
        cdef list out = [np.zeros((64 * len(syms),) + shape, dtype=np.float32),
                         np.zeros(64 * len(syms), dtype=np.float32),
                         np.zeros(64 * len(syms), dtype=np.bool_), 0]
        idx = self.table.c_find_index(root.c_hash())
        if idx < 0:
            return out[0][:0], out[1][:0], out[2][:0]
        cdef unsigned char* seen = <unsigned char*>malloc(self.table.n_nodes + 1)
        cdef int64_t* stack_node = <int64_t*>malloc(GC_MAX_DEPTH * sizeof(int64_t))
        cdef int* stack_next = <int*>malloc(GC_MAX_DEPTH * sizeof(int))
        if seen == NULL or stack_node == NULL or stack_next == NULL:
            free(seen)
            free(stack_node)
            free(stack_next)
            raise MemoryError()
        for i in range(self.table.n_nodes):
            seen[i] = 0
        try:
            # iterative DFS: stack_node[d] is the node at depth d (d moves applied),
            # stack_next[d] the next child to visit from it
            seen[idx] = 1
            self._emit(root, self.table.nodes[idx].v, self.table.nodes[idx].r, syms, out)
            stack_node[0] = idx
            stack_next[0] = 0
            while top >= 0 and out[3] < limit:
                node = &self.table.nodes[stack_node[top]]
                if stack_next[top] >= node.nchild or top >= GC_MAX_DEPTH - 1:
                    top -= 1
                    if top >= 0:
                        root.c_undo()
                    continue
                ch = &self.table.children[node.first + stack_next[top]]
                stack_next[top] += 1
                root.c_apply(ch.action)
                if root.c_terminal():
                    key = root.c_hash()
                    if terminals and key not in terminal_seen:
                        terminal_seen.add(key)
                        self._emit(root, ch.v, True, syms, out)
                    root.c_undo()
                    continue
                idx = self.table.c_find_index(root.c_hash())
                if idx < 0 or seen[idx]:
                    root.c_undo()
                    continue
                seen[idx] = 1
                self._emit(root, self.table.nodes[idx].v, self.table.nodes[idx].r, syms, out)
                top += 1
                stack_node[top] = idx
                stack_next[top] = 0
            while top > 0:
                top -= 1
                root.c_undo()
        finally:
            free(seen)
            free(stack_node)
            free(stack_next)
        n = min(out[3], limit)
        return out[0][:n], out[1][:n], out[2][:n]
