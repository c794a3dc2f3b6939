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
is the serial one, under the lock). One iteration routine serves both: the serial
search is one worker (_worker.pyx: its buffers and the valuation of its expansions) in
the calling thread, without the lock; several threads make the result depend on the
scheduling.

Beside this module: _tree_gc.pyx (the table's garbage collection and audit),
_tree_export.pyx (the stored tree's states and values for learning) and rminimax.pyx
(``table_tree``: the stored tree in Rminimax's form, for the strength layer's policy).
"""
import threading

from libc.math cimport log, sqrt, INFINITY
from libc.stdint cimport uint64_t, int8_t, uint16_t, int16_t, int32_t, int64_t
from libc.stdlib cimport calloc, free

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.search._decision cimport (
    better, best_child, decide, children_stats, principal_variation)
from descent.search_cy.search._tree_export cimport walk_tree as _walk_tree
from descent.search_cy.search._tree_export cimport learning_data as _learning_data
from descent.search_cy.search._tree_gc cimport collect_garbage, audit_table
from descent.search_cy.search._worker cimport (
    Worker, Rules, MAX_PATH, new_workers, free_workers, reset_workers, settle_workers,
    worker_actions, value_heuristic, value_batch, uniform, sign_of)
from descent.search_cy.search.rminimax cimport TreeBuilder, table_tree
from descent.search_cy.eval.evaluator cimport Evaluator, HeuristicEvaluator, BatchEvaluator
from descent.search_cy.search.stopper cimport (
    Stopper, monotonic, STOP_NONE, STOP_RESOLVED, STOP_MEMORY, STOP_TIME, STOP_NODES,
    STOP_ITERATIONS, STOP_EXTERNAL)
from descent.search_cy.search.terminal cimport terminal_value
from descent.search_cy.search.tree cimport TreeTable, Node, Child

from descent.search_cy.search._worker import fixed_outcome  # noqa: F401  (its home before)
from descent.search_cy.search.api import TERMINAL_KINDS
from descent.search_cy.search.terminal import prepare as prepare_terminal
from descent.search_cy.search.gather import BatchGatherer
from descent.search_cy.search.result import SearchResult

cdef enum:
    MODE_UBFM = 0
    MODE_UBFMS = 1
    MODE_DESCENT = 2
    MODE_MCTS = 3
    ITER_OK = 0          # an iteration's outcome
    ITER_FULL = 1        # the table had no room for an expansion
    ITER_ERROR = 2       # the evaluator raised (kept in self.errors)
    EXPAND_FULL = -1     # _expand's answers other than an index
    EXPAND_ERROR = -2

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

_MODES = {"ubfm": MODE_UBFM, "ubfms": MODE_UBFMS, "descent": MODE_DESCENT, "mcts": MODE_MCTS}


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
    cdef Rules rules                  # what the valuation of children needs
    cdef uint64_t rng
    cdef object game_spec
    cdef int cap                      # actions of the largest expansion met
    cdef long long nodes, iterations
    cdef int max_depth
    cdef bint full
    cdef double exploration
    cdef readonly int threads
    cdef Worker* workers                 # one per thread, buffers of wcap actions
    cdef int wcap
    cdef bint heuristic                  # the evaluators are C heuristics (no GIL)
    cdef list errors                     # what the evaluators raised
    # parallel search (threads > 1)
    cdef bint locking                    # the lock and the pending counts are live
    cdef list wstates                    # each thread's copy of the root state
    cdef list wevs                       # each thread's evaluator (the first is ev)
    cdef uint16_t* pending               # threads inside each child record (virtual loss)
    cdef object pending_table            # the table ``pending`` was sized for
    cdef char lock                       # guards the table, pending and the counters
    cdef int stop_all, stop_reason
    cdef uint64_t root_key
    cdef long long limit_nodes, limit_iterations, started
    cdef bint gathering                  # the threads' expansions share backend calls
    cdef readonly object gatherer        # the BatchGatherer they share (gathering only)

    def __cinit__(self, *args, **kwargs):
        self.cap = 0
        self.wcap = 0
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
        self.rules.mcts = self.mode == MODE_MCTS
        self.rules.terminal_kind = TERMINAL_KINDS[params.terminal]
        self.rules.det_seed = getattr(params, "determinize_seed", 0)
        self.exploration = params.exploration
        self.table = None
        self.game_spec = None
        threads = getattr(params, "threads", 1)
        if not 1 <= threads <= 1024:
            raise ValueError(f"threads must be in 1..1024; got {threads!r}")
        self.threads = threads
        self.locking = threads > 1
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
        free_workers(self.workers, self.threads)
        free(self.pending)

    def clear(self) -> None:
        """Forgets the tree (a new game). Must not block."""
        if self.table is not None:
            self.table.c_clear()

    cdef int _prepare(self, GameState state) except -1:
        """The table (kept for the same game under ``keep_tree``) and the workers'
        buffers, sized for the largest expansion met."""
        spec = getattr(state.game, "spec", None)
        cdef int cap = max(state.max_actions, state.max_chance_outcomes, 1)
        prepare_terminal(state, self.rules.terminal_kind)
        if self.table is None or spec != self.game_spec:
            self.table = TreeTable(self.params.hash_mb)
            self.game_spec = spec
        elif not self.keep_tree:
            self.table.c_clear()
        if cap > self.cap:
            self.cap = cap
        if self.wcap < self.cap:
            free_workers(self.workers, self.threads)
            self.workers = NULL
            self.wcap = 0
            self.workers = new_workers(self.threads, self.cap)
            self.wcap = self.cap
        self.rules.max_plies = self.params.max_plies or state.game.max_game_length
        return 0

    # -- node values ---------------------------------------------------------------

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
        best = best_child(self.table.children, node, self.completion)
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
        u = uniform(rng) * total
        for i in range(node.nchild):
            if not (skip and ch[i].r):
                best = i
                u -= ch[i].p
                if u < 0.0:
                    return i
        return best

    cdef int _select(self, Node* node, uint64_t* rng) noexcept nogil:
        """The child an iteration descends into (-1 if none is left to explore)."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best = -1
        if node.player == CHANCE:
            return self._sample(node, rng)
        for i in range(node.nchild):
            if self.completion and ch[i].r:
                continue
            # best_action_dual: the best value among unresolved children, ties to the
            # least explored so that equal lines share the effort
            if best < 0 or better(&ch[i], &ch[best], node.player, self.completion) or (
                    not better(&ch[best], &ch[i], node.player, self.completion)
                    and ch[i].n < ch[best].n):
                best = i
        return best

    cdef int _select_uct(self, Node* node, uint64_t* rng) noexcept nogil:
        """MCTS's selection: mean + C sqrt(ln N / n) among the unresolved children."""
        cdef Child* ch = &self.table.children[node.first]
        cdef int i, best = -1
        cdef double score, top = -INFINITY, q
        cdef double log_n = log(node.n + 1.0)
        if node.player == CHANCE:
            return self._select(node, rng)
        for i in range(node.nchild):
            if self.completion and ch[i].r:
                continue
            q = ch[i].v if node.player == 0 else -ch[i].v
            score = q + self.exploration * sqrt(log_n / (ch[i].n + 1.0))
            if score > top:
                top = score
                best = i
        return best


    cdef int _choose(self, Worker* w, Node* node) noexcept nogil:
        """The child worker w descends into: the serial rule alone, or with the other
        threads' pending visits when several search."""
        if self.locking:
            return self._select_par(w, node)
        if self.mode == MODE_MCTS:
            return self._select_uct(node, &w.rng)
        return self._select(node, &w.rng)

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
                    better(&ch[i], &ch[best], node.player, self.completion) or (
                        not better(&ch[best], &ch[i], node.player, self.completion)
                        and ch[i].n < ch[best].n))):
                best = i
        return best

    # -- expansion -----------------------------------------------------------------

    cdef inline void _lock(self) noexcept nogil:
        if self.locking:
            descent_spin_lock(&self.lock)

    cdef inline void _unlock(self) noexcept nogil:
        if self.locking:
            descent_spin_unlock(&self.lock)

    cdef int _value_batch(self, Worker* w, GameState s, Evaluator ev,
                          int n) noexcept with gil:
        # a function of its own: a nogil function holding a Python variable takes the
        # GIL at every exit, which would serialise the threads on the heuristic path
        try:
            value_batch(w, s, ev, &self.rules, n)
        except BaseException as exc:
            ev.c_discard()
            self.errors.append(exc)
            return -1
        return n

    cdef int64_t _expand(self, Worker* w, GameState s, Evaluator ev,
                         HeuristicEvaluator hev) noexcept nogil:
        """Adds s (not terminal, not in the table) with every child valued: its index,
        EXPAND_FULL when the table has no room, EXPAND_ERROR when the evaluator raised.
        Called with the lock held; the children are valued outside it, and a state
        another thread inserted meanwhile keeps that thread's node."""
        cdef uint64_t key = s.c_hash()
        cdef int player = s.c_player()
        cdef int n = worker_actions(w, s, self.rules.det_seed)
        cdef int64_t idx
        if not self.table.c_has_room(n):
            return EXPAND_FULL
        self._unlock()
        if self.heuristic:
            n = value_heuristic(w, s, hev, &self.rules, n)
        else:
            n = self._value_batch(w, s, ev, n)
        self._lock()
        if n < 0:
            return EXPAND_ERROR
        if self.locking:
            idx = self.table.c_find_index(key)
            if idx >= 0:
                return idx
            if not self.table.c_has_room(n):
                return EXPAND_FULL
        return self._store(key, player, n, w.acts, w.probs, w.vals, w.term, w.leaf_value)

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
        best = best_child(self.table.children, node, self.completion)
        if all_r or (ch[best].r and ch[best].c == win):
            node.r = 1
            node.c = ch[best].c
            node.v = ch[best].v
            node.d = self._proof_depth(node)

    # -- one iteration -------------------------------------------------------------

    cdef int _iterate(self, Worker* w, GameState s, Evaluator ev,
                      HeuristicEvaluator hev) noexcept nogil:
        """One iteration of worker w from the root ``s`` (restored on return): the walk
        down the best line, the expansion, the backup. With several threads it is called
        with the lock held and returns with it released. ITER_OK, ITER_FULL (the table
        had no room: the parent's record of the child stands for the leaf) or ITER_ERROR
        (the evaluator raised; the path is undone, nothing backed up)."""
        cdef int depth = 0, k, i, status = ITER_OK
        cdef int64_t idx
        cdef Node* node
        cdef Child* ch
        cdef float v = 0.0
        cdef int8_t r = 0, c = 0
        cdef int32_t d = 0
        cdef long long nodes_before = w.nodes
        while True:
            if s.c_terminal():
                v = <float>terminal_value(s, self.rules.terminal_kind, self.rules.max_plies)
                r = 1
                c = sign_of(s.c_value())
                d = 0
                break
            idx = self.table.c_find_index(s.c_hash())
            if idx < 0:
                idx = self._expand(w, s, ev, hev)
                if idx == EXPAND_ERROR:
                    status = ITER_ERROR
                    break
                if idx == EXPAND_FULL:
                    status = ITER_FULL
                    if depth == 0:
                        break
                    ch = &self.table.children[self.table.nodes[w.path_node[depth - 1]].first
                                              + w.path_child[depth - 1]]
                    v, r, c, d = ch.v, ch.r, ch.c, ch.d
                    break
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
            k = -1 if depth >= MAX_PATH - 1 else self._choose(w, node)
            if k < 0:
                v, r, c, d = node.v, node.r, node.c, node.d
                break
            w.path_node[depth] = idx
            w.path_child[depth] = k
            if self.locking:
                self.pending[node.first + k] += 1
            s.c_apply(self.table.children[node.first + k].action)
            w.nodes += 1
            depth += 1
        if depth > w.max_depth:
            w.max_depth = depth
        if self.locking:
            for i in range(depth):
                self.pending[self.table.nodes[w.path_node[i]].first + w.path_child[i]] -= 1
        if status == ITER_ERROR:
            while depth > 0:
                depth -= 1
                s.c_undo()
        elif self.mode == MODE_MCTS:
            self._backup_mcts(s, w.path_node, w.path_child, depth, v, r, c, d)
        else:
            self._backup(s, w.path_node, w.path_child, depth, v, r, c, d)
        if status != ITER_ERROR:
            self.iterations += 1
        self.nodes += w.nodes - nodes_before
        self._unlock()
        return status

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

    # -- the search ----------------------------------------------------------------

    def run(self, GameState state, Stopper stopper) -> SearchResult:
        """Searches until the stopper fires or the root is resolved, on ``params.threads``
        threads. Blocks. Unless the root is resolved already, one iteration always completes
        (at a fresh root: its expansion, every child valued), whatever the stopper says
        (a stop already asked for, a spent clock): no move without a search behind it."""
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
        self.errors = []
        self.rng = <uint64_t>self.params.seed ^ state.c_hash()
        if self.table.c_usage() > 0.5:
            collect_garbage(self.table, state, self.cap)
        stopper.c_start()
        if self.threads == 1:
            self._run_serial(state, stopper)
        else:
            self._run_parallel(state, stopper)
        valued = -valued_before
        for e in self.wevs:
            valued += e.positions
        return self._result(state, stopper, valued)

    cdef int _run_serial(self, GameState state, Stopper stopper) except -1:
        """One worker on the caller's state and evaluator, in the calling thread: the
        stopper is asked between iterations; a full table is compacted at once."""
        cdef Worker* w = &self.workers[0]
        cdef HeuristicEvaluator hev = self.ev if self.heuristic else None
        cdef int64_t ridx
        cdef int status
        reset_workers(self.workers, self.threads, self.rng)
        try:
            while True:
                ridx = self.table.c_find_index(state.c_hash())
                if ridx >= 0 and self.table.nodes[ridx].r and (
                        self.resolution_stop or self.completion):
                    stopper.c_finish(STOP_RESOLVED)
                    break
                if self.iterations > 0 and stopper.c_check(self.nodes, self.iterations):
                    break
                status = self._iterate(w, state, self.ev, hev)
                if status == ITER_ERROR:
                    raise self.errors[0]
                if status == ITER_FULL and not collect_garbage(self.table, state, self.cap):
                    stopper.c_finish(STOP_MEMORY)
                    break
        finally:
            self.max_depth = max(self.max_depth, settle_workers(
                self.workers, self.threads, self.wevs, self.heuristic))
        return 0

    cdef object _result(self, GameState state, Stopper stopper, long long valued):
        """The decision at the root, its value, line and statistics."""
        cdef Node* root
        cdef int64_t ridx = self.table.c_find_index(state.c_hash())
        cdef int best
        if ridx < 0:
            raise MemoryError(f"hash_mb={self.params.hash_mb} cannot hold the root's children")
        root = &self.table.nodes[ridx]
        # once the root is solved its children's values are exact: the best action is
        # then the safest one too, whatever the visit counts say
        if root.r or self.mode in (MODE_UBFM, MODE_DESCENT):
            best = best_child(self.table.children, root, self.completion)
        else:
            best = self._safest(root)          # UBFM_s; MCTS's robust child
        best = decide(self.table, self.ev, state, root, best)
        return SearchResult(
            action=self.table.children[root.first + best].action, value=float(root.v),
            pv=principal_variation(self.table, state, best, self.completion),
            nodes=self.nodes, iterations=self.iterations,
            depth=self.max_depth, time=stopper.elapsed, stop_reason=stopper.reason_name,
            resolved=bool(root.r), evaluations=valued,
            children=children_stats(self.table, root))

    # -- parallel search (threads > 1) ---------------------------------------------


    cdef int _prepare_threads(self, GameState state) except -1:
        """Each thread's state copy and evaluator; the pending counts sized for the
        table."""
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
        reset_workers(self.workers, self.threads, self.rng)
        return 0

    cdef int _run_parallel(self, GameState state, Stopper stopper) except -1:
        """The threads search until a limit, the root's resolution or an evaluator's
        error; a full table is compacted between rounds of threads. The calling thread
        watches the clock and the stop flag."""
        self._prepare_threads(state)
        self.root_key = state.c_hash()
        self.limit_nodes = stopper.max_nodes
        self.limit_iterations = stopper.max_iterations
        self.started = 0
        try:
            while True:
                self.stop_all = 0
                self.stop_reason = STOP_NONE
                self._run_threads(stopper)
                if self.errors:
                    raise self.errors[0]
                if self.full and self.stop_reason == STOP_NONE:
                    self.full = False
                    if not collect_garbage(self.table, state, self.cap):
                        stopper.c_finish(STOP_MEMORY)
                        break
                    continue
                self.full = False
                if self.stop_reason != STOP_NONE:
                    stopper.c_finish(self.stop_reason)
                break
        finally:
            self.max_depth = max(self.max_depth, settle_workers(
                self.workers, self.threads, self.wevs, self.heuristic))
        return 0

    cdef int _run_threads(self, Stopper stopper) except -1:
        """One round of threads, until they stop; meanwhile the clock and the stop flag
        are watched."""
        cdef int t, reason
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
        return 0

    def _work(self, int tid):
        """One search thread (``threading.Thread`` target): iterations without the GIL
        until the search stops."""
        cdef GameState s = self.wstates[tid]
        cdef Evaluator ev = self.wevs[tid]
        cdef HeuristicEvaluator hev = ev if self.heuristic else None
        cdef Worker* w = &self.workers[tid]
        with nogil:
            self._thread_loop(w, s, ev, hev)

    cdef void _thread_loop(self, Worker* w, GameState s, Evaluator ev,
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
            status = self._iterate(w, s, ev, hev)     # releases the lock
            if status != ITER_OK:
                descent_spin_lock(&self.lock)
                self.stop_all = 1
                if status == ITER_FULL:
                    self.full = True
                descent_spin_unlock(&self.lock)
                return

    # -- the table's audit, Rminimax, tree learning ----------------------------------

    def audit(self) -> list:
        """The table's invariants, as a list of violations (empty when sound; tests): a
        node's visits are the sum of its children's, no thread is left inside a child
        (virtual loss), a resolved decision node has every child resolved or a resolved
        win for its mover. Blocks."""
        if self.table is None:
            return []
        return audit_table(self.table, self.pending if self.pending_table is self.table
                           else NULL)

    def rminimax_tree(self, GameState state, double scale=1.0) -> TreeBuilder:
        """The stored tree below ``state`` (the root of the last search) in Rminimax's
        flat form (rminimax.pyx): values in the root player's view divided by ``scale``.
        Blocks (one pass over the stored tree)."""
        if self.table is None:
            raise ValueError("no search has been run")
        return table_tree(self.table, state, scale)

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
        return _walk_tree(self.table, root, terminal_value, emit, recompute, completion,
                          terminals, fixed, limit)

    def learning_data(self, GameState root, int limit=1000000, bint terminals=True,
                      symmetries=None):
        """Tree learning (Descent): every state of the stored tree below ``root``, with
        its value v(s) in player 0's view, and (``terminals``) the terminal states the
        search reached with their terminal values. Returns (planes float32
        (n, planes, H, W), values float32 (n,), resolved bool (n,)); with ``symmetries``
        (a list of symmetry ids) each state is encoded once per symmetry, values negated
        for the colour-swapping ones. At most ``limit`` rows. Blocks; the state is
        restored."""
        return _learning_data(self.table, root, limit, terminals, symmetries)
