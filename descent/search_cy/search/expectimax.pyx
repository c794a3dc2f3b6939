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

This module is the driver (iterative deepening, the root, the principal variation,
Lazy SMP); the node routines, one per node type whatever the evaluator, and the search's
buffers (one allocation) are ``_expectimax_nodes.pyx``'s ``ExpectiNodes``, its base.
"""
import threading
from dataclasses import replace

from libc.math cimport INFINITY

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.eval.evaluator cimport Evaluator, HeuristicEvaluator
from descent.search_cy.search.stopper cimport Stopper, STOP_DEPTH, STOP_RESOLVED
from descent.search_cy.search.terminal cimport (TERMINAL_DEPTH_ADD, TERMINAL_DEPTH_MUL,
                                                terminal_bound)
from descent.search_cy.search.ttable cimport TranspositionTable, TTEntry, TT_EXACT
from descent.search_cy.search._expectimax_nodes cimport (
    ExpectiNodes, HIST_SIZE, POLL_EVERY, node_key, count_node, extreme)

from descent.search_cy.search.api import TERMINAL_KINDS, SearchParams
from descent.search_cy.search.terminal import prepare as prepare_terminal
from descent.search_cy.search.rminimax import full_width_tree

# Rminimax (rminimax_policy): the full-width tree's depth in player plies, and its size
# bound (a tree that would pass it is built one ply shallower).
RMINIMAX_DEPTH = 3
RMINIMAX_NODES = 1_000_000
from descent.search_cy.search.result import ChildStat, SearchResult

# Stockfish's Lazy SMP skip pattern (helper i skips depth d when
# ((d + SKIP_PHASE[i]) // SKIP_SIZE[i]) is odd), indexed by helper number modulo 20
cdef int SKIP_SIZE[20]
cdef int SKIP_PHASE[20]
SKIP_SIZE[:] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4]
SKIP_PHASE[:] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7]

cdef class Expectiminimax(ExpectiNodes):
    """ID expectiminimax bound to an evaluator and SearchParams (star, max_depth,
    hash_mb, terminal, max_plies, keep_tree).

    ``use_tt=False`` disables the transposition table (tests: the values must not
    change). The object keeps its table and history scores between runs when
    ``params.keep_tree``; ``clear()`` forgets them. One run at a time; ``params.threads``
    > 1 runs Lazy SMP helpers (see the module docstring). ``table``: a transposition
    table to share (the helpers take their main search's). The node routines and the
    search's state are its base's, ``ExpectiNodes`` (``_expectimax_nodes.pyx``).
    """
    cdef readonly object params
    # Lazy SMP
    cdef readonly int threads
    cdef list helpers                    # the helper searches (threads - 1)
    cdef int skip_size, skip_phase
    # the root of the current run
    cdef int root_n, root_done, root_best

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
            act = self.buf.root_acts[k]
            before = self.nodes
            self.s.c_apply(act)
            count_node(self)
            if chance:
                v = self._search(depth, -INFINITY, INFINITY, 1, &r)
            else:
                v = self._search(depth - 1, a, b, 1, &r)
            self.s.c_undo()
            if self.aborted:
                return
            self.buf.it_vals[k] = v
            self.buf.it_res[k] = r
            self.buf.it_visits[k] = self.nodes - before
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
        cdef int* buf = self.buf.acts
        cdef double* probs = self.buf.dbl
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
                e = self.tt.c_lookup(node_key(self), &ent)
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
        cdef int n
        cdef long long valued_before = self.evaluator.positions
        if state.c_terminal():
            raise ValueError("cannot search a terminal state")
        self.evaluator.c_discard()
        self._prepare(state, stopper)
        stopper.c_start()
        n = self._root_actions(state)
        if n <= 0:
            self.s = None
            self.stopper = None
            raise ValueError("the root has no action")
        self.root_n = n
        helping = self._start_helpers(state) if self.threads > 1 else None
        try:
            last = self._deepen(stopper)
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

    cdef int _prepare(self, GameState state, Stopper stopper) except -1:
        """The run's state: buffers, counters, value bounds, the table aged or cleared,
        the history scores halved."""
        cdef int cap, i
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
        prepare_terminal(state, self.kind)
        top = terminal_bound(state, self.kind, self.max_plies)
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
        return 0

    cdef int _root_actions(self, GameState state) noexcept:
        """The root's actions (outcomes and probabilities at a chance root; moves in
        order at a player root): how many."""
        cdef int n, p
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int tt_move = -1
        p = state.c_player()
        self.root_player = p
        if p == CHANCE:
            return state.c_chance(self.buf.root_acts, self.buf.root_probs)
        n = state.c_legal(self.buf.root_acts)
        if self.use_tt:
            e = self.tt.c_lookup(node_key(self), &ent)
            if e != NULL:
                tt_move = e.move
        self._order(p, self.buf.root_acts, self.buf.scores, n, tt_move)
        return n

    def _deepen(self, Stopper stopper):
        """The iterations, depth 1 up, until the stopper fires or the root is resolved:
        the last one's result (``_commit``)."""
        cdef int k, d, n = self.root_n, p = self.root_player
        cdef int reason = STOP_DEPTH
        order = list(range(n))
        last = None
        for d in range(1, self.params.max_depth + 1):
            if stopper.c_check(self.nodes, self.iterations) and self._may_stop():
                break
            if self.helper and ((d + self.skip_phase) // self.skip_size) % 2:
                continue
            with nogil:
                self._root(d)
            if self.error is not None:
                raise self.error
            acts = [self.buf.root_acts[k] for k in range(n)]
            vals = [self.buf.it_vals[k] for k in range(self.root_done)]
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
                self.buf.root_acts[k] = acts[order[k]]
        stopper.c_finish(reason)
        if last is None:              # a chance root or a helper, stopped at once
            last = {"action": self.buf.root_acts[0], "value": 0.0, "depth": 0,
                    "resolved": False, "children": [], "index": 0}
        return last

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
        children = [(acts[k], vals[k], self.buf.it_visits[k], bool(self.buf.it_res[k]))
                    for k in range(n)]
        if self.root_player == CHANCE:
            if partial:
                return {"action": acts[0], "value": vals[0], "depth": depth,
                        "resolved": False, "children": children, "index": 0}
            value = 0.0
            best = 0
            for k in range(n):
                value += self.buf.root_probs[k] * vals[k]
                if self.buf.root_probs[k] > self.buf.root_probs[best]:
                    best = k
            resolved = all(self.buf.it_res[k] for k in range(n))
            self.root_best = best
        else:
            best = self.root_best if self.root_best >= 0 else 0
            value = vals[best]
            resolved = not partial and (all(self.buf.it_res[k] for k in range(n)) or (
                self.buf.it_res[best] and extreme(self, self.root_player, value)))
        if not partial and self.use_tt:
            self.tt.c_store(node_key(self), value, depth, TT_EXACT,
                            -1 if self.root_player == CHANCE else acts[best], resolved)
        return {"action": acts[best], "value": value, "depth": depth,
                "resolved": bool(resolved), "children": children, "index": best}


def _help(Expectiminimax helper, GameState state, Stopper stopper, list results, int k):
    """A helper thread's body: one search until its stopper is stopped."""
    try:
        results[k] = helper.run(state, stopper)
    except BaseException as exc:       # handed to the main search, which raises it
        results[k] = exc
