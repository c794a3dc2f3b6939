# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Expectiminimax's node routines: one for player nodes (alpha-beta), one for chance
nodes (the exact expectation at star=0, Star1, Star2's probing), whatever the evaluator.

The search (values in player 0's view, depth in player plies) is described in
``expectimax.pyx``, the driver. Here a node's depth-1 children are valued through one
inline helper, ``_child_value``: a ``HeuristicEvaluator``'s ``c_heuristic`` called in C
(no GIL), or the value a batch filled in. A network (batch) evaluator values every child
of a player node with one ply left in one ``c_flush`` (``_batch_children``), and every
outcome's moves of a chance node with one ply left in one flush (``_batch_outcomes``):
that chance node is then the exact expectation, its outcomes' player nodes valued by the
same player loop from the filled values, in star=0's order (every star mode returns the
same bits). The search's arrays are one ``Buffers`` (one allocation).
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, free
from libc.math cimport INFINITY

from descent.search_cy.search.terminal cimport terminal_value
from descent.search_cy.search.ttable cimport (
    TTEntry, TT_EXACT, TT_LOWER, TT_UPPER, TT_BOUND_MASK, TT_RESOLVED)

cdef enum:
    TT_MOVE_SCORE = 0x7FFFFFFF
    # what _batch_outcomes does with an outcome
    B_VALUED = 0               # terminal, or an exact table entry
    B_PLAYER0 = 1              # player 0 to move: its moves join the batch
    B_PLAYER1 = 2              # player 1 to move: its moves join the batch
    B_SEARCH = 3               # anything else: the general search after the flush


# ---------------------------------------------------------------------- the buffers
cdef inline size_t _take(size_t* at, size_t nbytes) noexcept nogil:
    """The offset of ``nbytes`` more in a block being laid out (16-byte aligned)."""
    cdef size_t here = at[0]
    at[0] = here + ((nbytes + 15) & ~(<size_t>15))
    return here


cdef int buffers_alloc(Buffers* b, int levels, int cap, int batch_cap) except -1:
    """Lays out and allocates every array of ``b`` in one block (the old one freed)."""
    cdef size_t at = 0, lc = <size_t>levels * cap, bc = <size_t>batch_cap, c = <size_t>cap
    cdef size_t o_acts = _take(&at, lc * sizeof(int))
    cdef size_t o_scores = _take(&at, lc * sizeof(int))
    cdef size_t o_dbl = _take(&at, <size_t>levels * DBL_BLOCKS * (c + 1) * sizeof(double))
    cdef size_t o_racts = _take(&at, c * sizeof(int))
    cdef size_t o_rprobs = _take(&at, c * sizeof(double))
    cdef size_t o_vals = _take(&at, c * sizeof(double))
    cdef size_t o_res = _take(&at, c * sizeof(char))
    cdef size_t o_visits = _take(&at, c * sizeof(long long))
    cdef size_t o_bacts = _take(&at, bc * sizeof(int))
    cdef size_t o_bvals = _take(&at, bc * sizeof(double))
    cdef size_t o_bflushed = _take(&at, bc * sizeof(double))
    cdef size_t o_bterm = _take(&at, bc * sizeof(char))
    cdef size_t o_bcount = _take(&at, c * sizeof(int))
    cdef size_t o_bkind = _take(&at, c * sizeof(char))
    cdef size_t o_bkey = _take(&at, c * sizeof(uint64_t))
    cdef char* block
    buffers_free(b)
    block = <char*>malloc(at)
    if block == NULL:
        raise MemoryError("expectiminimax buffers")
    b.block = block
    b.levels = levels
    b.cap = cap
    b.batch_cap = batch_cap
    b.acts = <int*>(block + o_acts)
    b.scores = <int*>(block + o_scores)
    b.dbl = <double*>(block + o_dbl)
    b.root_acts = <int*>(block + o_racts)
    b.root_probs = <double*>(block + o_rprobs)
    b.it_vals = <double*>(block + o_vals)
    b.it_res = block + o_res
    b.it_visits = <long long*>(block + o_visits)
    b.b_acts = <int*>(block + o_bacts)
    b.b_vals = <double*>(block + o_bvals)
    b.b_flushed = <double*>(block + o_bflushed)
    b.b_term = block + o_bterm
    b.b_count = <int*>(block + o_bcount)
    b.b_kind = block + o_bkind
    b.b_key = <uint64_t*>(block + o_bkey)
    return 0


cdef void buffers_free(Buffers* b) noexcept nogil:
    free(b.block)
    b.block = NULL
    b.cap = 0
    b.batch_cap = 0


# ---------------------------------------------------------------------- inline helpers
cdef inline double _clamp(ExpectiNodes t, double v) noexcept nogil:
    if v < t.L:
        return t.L
    if v > t.U:
        return t.U
    return v


cdef inline double* _block(ExpectiNodes t, int level, int k) noexcept nogil:
    """Level ``level``'s double array ``k`` (of DBL_BLOCKS, cap + 1 each)."""
    return t.buf.dbl + (<size_t>level * DBL_BLOCKS + k) * (t.buf.cap + 1)


# ------------------------------------------------------------ a chance node's arrays
cdef struct ChanceView:
    int* outs           # the outcomes (this level's row of acts)
    double* probs       # their probabilities
    double* lb          # bounds on each outcome's value
    double* ub
    double* suf_lb      # Star1: the sums of p * lb and p * ub over the outcomes after i
    double* suf_ub
    double* sufp        # Star2: the sums of p over the outcomes after i
    char* known         # the outcome's value is lb (terminal, batched, exact entry)


cdef inline ChanceView _chance_view(ExpectiNodes t, int level) noexcept nogil:
    """Level ``level``'s outcome arrays, laid over its double blocks 0-6."""
    cdef ChanceView c
    c.outs = t.buf.acts + <size_t>level * t.buf.cap
    c.probs = _block(t, level, 0)
    c.lb = _block(t, level, 1)
    c.ub = _block(t, level, 2)
    c.suf_lb = _block(t, level, 3)
    c.suf_ub = _block(t, level, 4)
    c.sufp = _block(t, level, 5)
    c.known = <char*>_block(t, level, 6)
    return c


cdef inline void _reward(ExpectiNodes t, int p, int action, int depth) noexcept nogil:
    cdef unsigned int* h = &t.history[p * HIST_SIZE + (action & (HIST_SIZE - 1))]
    if h[0] < 0x3FFFFFFF:
        h[0] += <unsigned int>(depth * depth)


cdef inline bint _usable(ExpectiNodes t, TTEntry* e, int depth) noexcept nogil:
    """Whether an entry's value may stand for a search to ``depth``: its own depth,
    a deeper one (unless exact_depth), any when resolved."""
    if e.depth == depth:
        return True
    if e.flags & TT_RESOLVED:
        return True
    return e.depth > depth and not t.exact_depth


cdef inline bint _tt_cut(ExpectiNodes t, TTEntry* e, int depth, double alpha, double beta,
                         double* value, bint* res) noexcept nogil:
    """Whether a table entry decides the node (sets value and res)."""
    cdef int bound = e.flags & TT_BOUND_MASK
    cdef bint resolved = (e.flags & TT_RESOLVED) != 0
    if not _usable(t, e, depth):
        return False
    if bound == TT_EXACT or (bound == TT_LOWER and e.value >= beta) \
            or (bound == TT_UPPER and e.value <= alpha):
        value[0] = e.value
        res[0] = resolved
        return True
    return False


cdef inline double _child_value(ExpectiNodes t, int act, double* vals, char* term, int i,
                                bint* r) noexcept nogil:
    """The value of child ``i`` (by ``act``) of a node with one ply left: the one a batch
    filled in (``vals``, ``term``), else the heuristic's, called in C (or the terminal
    value); ``r``: resolved (terminal)."""
    cdef double v
    if vals != NULL:
        r[0] = term[i]
        return vals[i]
    t.s.c_apply(act)
    count_node(t)
    if t.s.c_terminal():
        v = terminal_value(t.s, t.kind, t.max_plies)
        r[0] = True
    else:
        v = _clamp(t, t.heur.c_heuristic(t.s))
        t.evals += 1
        r[0] = False
    t.s.c_undo()
    return v


cdef inline double _chance_cut(ExpectiNodes t, uint64_t key, double lim, int depth, int bound,
                               bint allres, bint* res) noexcept nogil:
    """A Star1/Star2 cutoff at a chance node: ``lim`` is a proven bound on its value
    (TT_LOWER: it fails high, TT_UPPER: it fails low). The bound is weakened by a
    quarter eps, so that the rounding of the probability-weighted sums cannot make
    it claim more than was proven."""
    if bound == TT_LOWER:
        lim -= 0.25 * t.eps
    else:
        lim += 0.25 * t.eps
    if t.use_tt:
        t.tt.c_store(key, lim, depth, bound, -1, allres)
    res[0] = allres
    return lim


# ---------------------------------------------------------------------- node loops
# (inline module functions: no call from the node routines)
cdef inline double player_loop(ExpectiNodes t, int p, uint64_t key, int* acts, int n,
                               int depth, double alpha, double beta, int level,
                               double* vals, char* term, bint* res) noexcept nogil:
    """The player node loop (max for player 0, min for player 1): alpha-beta over the
    ordered moves ``acts``; the table entry stored. With one ply left the children
    come from ``_child_value``: where a batch filled ``vals`` every child is read (the
    exact best, no cutoff; the best move rewarded when it fails high), else a cutoff
    rewards its move."""
    cdef int i, act, best_move, bound
    cdef double best, v, a = alpha, b = beta
    cdef bint r = False, allres = True, bestres = False
    best = -INFINITY if p == 0 else INFINITY
    best_move = acts[0]
    for i in range(n):
        act = acts[i]
        if depth == 1:
            v = _child_value(t, act, vals, term, i, &r)
        else:
            t.s.c_apply(act)
            count_node(t)
            v = t._search(depth - 1, a, b, level + 1, &r)
            t.s.c_undo()
        if t.aborted:
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
        if a >= b and vals == NULL:
            _reward(t, p, act, depth)
            break
    allres = allres or (bestres and extreme(t, p, best))
    bound = TT_EXACT
    if best <= alpha:
        bound = TT_UPPER
        best_move = -1
    elif best >= beta:
        bound = TT_LOWER
        if vals != NULL:
            _reward(t, p, best_move, 1)
    if t.use_tt:
        t.tt.c_store(key, best, depth, bound, best_move, allres)
    res[0] = allres
    return best


cdef inline double star1(ExpectiNodes t, uint64_t key, int depth, double alpha, double beta,
                         int level, int n, bint allres, bint batched,
                         bint* res) noexcept nogil:
    """Ballard's Star1 over the outcomes, with the bounds [lb, ub] of this level's
    blocks (a known outcome's value is lb): each unknown outcome searched with the
    window that would let the node fail. At star=0 and at a ``batched`` node (its
    outcomes counted already) the exact expectation: every outcome searched with the
    full window."""
    cdef ChanceView c = _chance_view(t, level)
    cdef int i
    cdef double eps = t.eps, v, pi, ca = -INFINITY, cb = INFINITY, lim, total = 0.0
    cdef bint r = False, full = batched or t.star == 0
    if not full:
        c.suf_lb[n] = 0.0
        c.suf_ub[n] = 0.0
        for i in range(n - 1, -1, -1):
            c.suf_lb[i] = c.suf_lb[i + 1] + c.probs[i] * c.lb[i]
            c.suf_ub[i] = c.suf_ub[i + 1] + c.probs[i] * c.ub[i]
    for i in range(n):
        pi = c.probs[i]
        if c.known[i]:
            v = c.lb[i]                   # a terminal, batched or exact table value
        else:
            if not full:
                ca = (alpha - eps - total - c.suf_ub[i + 1]) / pi
                cb = (beta + eps - total - c.suf_lb[i + 1]) / pi
                if ca <= c.lb[i]:
                    ca = -INFINITY
                if cb >= c.ub[i]:
                    cb = INFINITY
            t.s.c_apply(c.outs[i])
            if not batched:
                count_node(t)
            while True:
                v = t._search(depth, ca, cb, level + 1, &r)
                if t.aborted:
                    t.s.c_undo()
                    return 0.0
                if full:
                    break
                if v <= ca:
                    lim = total + pi * v + c.suf_ub[i + 1]
                    if lim <= alpha - 0.5 * eps:
                        t.s.c_undo()
                        return _chance_cut(t, key, lim, depth, TT_UPPER,
                                           allres and r, res)
                    ca = -INFINITY          # rounding: search the outcome again
                elif v >= cb:
                    lim = total + pi * v + c.suf_lb[i + 1]
                    if lim >= beta + 0.5 * eps:
                        t.s.c_undo()
                        return _chance_cut(t, key, lim, depth, TT_LOWER,
                                           allres and r, res)
                    cb = INFINITY
                else:
                    break
            t.s.c_undo()
            allres = allres and r
        total += pi * v
    if t.use_tt:
        t.tt.c_store(key, total, depth, TT_EXACT, -1, allres)
    res[0] = allres
    return total


cdef class ExpectiNodes:
    """The search's state and node routines (the base of ``Expectiminimax``)."""

    def __dealloc__(self):
        buffers_free(&self.buf)

    cdef int _ensure_buffers(self, int cap, int batch_cap) except -1:
        """``cap``: actions or outcomes of one node; ``batch_cap``: grandchildren of one
        chance node (outcomes x actions)."""
        if batch_cap < 1:
            batch_cap = 1
        if cap <= self.buf.cap and batch_cap <= self.buf.batch_cap:
            return 0
        if batch_cap < self.buf.batch_cap:
            batch_cap = self.buf.batch_cap
        if cap < self.buf.cap:
            cap = self.buf.cap
        return buffers_alloc(&self.buf, self.levels, cap, batch_cap)

    cdef bint _may_stop(self) noexcept nogil:
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

    cdef double _leaf(self) noexcept nogil:
        """The evaluator's value of the current (non-terminal) state."""
        self.evals += 1
        if self.heuristic_path:
            return _clamp(self, self.heur.c_heuristic(self.s))
        return _clamp(self, self._leaf_batch())

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

    # ------------------------------------------------------------------ player nodes
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
            return self._chance(depth, alpha, beta, level, res)
        return self._player(p, depth, alpha, beta, level, res)

    cdef double _player(self, int p, int depth, double alpha, double beta, int level,
                        bint* res) noexcept nogil:
        """A player node: the table, its moves in order, then the player loop (with one
        ply left and a batch evaluator, its children valued in one flush first)."""
        cdef int* acts = self.buf.acts + <size_t>level * self.buf.cap
        cdef int* scores = self.buf.scores + <size_t>level * self.buf.cap
        cdef double* vals = NULL
        cdef char* term = NULL
        cdef uint64_t key = 0
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int tt_move = -1, n
        cdef double v
        if self.use_tt:
            key = node_key(self)
            e = self.tt.c_lookup(key, &ent)
            if e != NULL:
                tt_move = e.move
                if _tt_cut(self, e, depth, alpha, beta, &v, res):
                    return v
        n = self.s.c_legal(acts)
        if n <= 0:
            res[0] = False
            return self._leaf()
        self._order(p, acts, scores, n, tt_move)
        if depth == 1 and not self.heuristic_path:
            if not self._batch_children(acts, n, level):
                return 0.0
            vals = _block(self, level, 0)
            term = <char*>_block(self, level, 2)
        return player_loop(self, p, key, acts, n, depth, alpha, beta, level, vals, term, res)

    # ------------------------------------------------------------------ batches
    cdef int _add_children(self, int* acts, int n, double* vals, char* term,
                           int* applied) except -1:
        """(GIL held) Visits the ``n`` moves ``acts``: a terminal child's value goes to
        ``vals``, the others join the evaluator's batch; returns how many joined.
        ``applied`` counts the moves on the state (an error leaves one to undo)."""
        cdef int j, pending = 0
        for j in range(n):
            self.s.c_apply(acts[j])
            applied[0] += 1
            self.nodes += 1
            if self.s.c_terminal():
                term[j] = 1
                vals[j] = terminal_value(self.s, self.kind, self.max_plies)
            else:
                term[j] = 0
                self.evaluator.c_add(self.s)
                pending += 1
            self.s.c_undo()
            applied[0] -= 1
        return pending

    cdef void _scatter(self, double* vals, char* term, int n, double* flushed) noexcept nogil:
        """The flushed values (clamped), in order, into ``vals`` at the non-terminal
        children."""
        cdef int j, k = 0
        for j in range(n):
            if not term[j]:
                vals[j] = _clamp(self, flushed[k])
                k += 1

    cdef bint _batch_children(self, int* acts, int n, int level) noexcept nogil:
        """Values the ``n`` children of a node with one ply left in one flush, into this
        level's blocks 0 (values) and 2 (terminal flags); False when the search aborted."""
        cdef double* vals = _block(self, level, 0)
        cdef double* flushed = _block(self, level, 1)
        cdef char* term = <char*>_block(self, level, 2)
        cdef int pending = 0, applied = 0
        with gil:
            try:
                pending = self._add_children(acts, n, vals, term, &applied)
                self._flush(pending, flushed)
            except BaseException as exc:
                return self._abort(exc, applied)
            if self.nodes >= self.next_poll:
                self._poll()
        if self.aborted:
            return False
        self._scatter(vals, term, n, flushed)
        return True

    cdef void _flush(self, int pending, double* flushed) except *:
        """The evaluator's values of the ``pending`` positions added, into ``flushed``."""
        if pending:
            self.evaluator.c_flush(flushed)
            self.evals += pending

    cdef bint _abort(self, BaseException exc, int applied):
        """The evaluator raised during a batch fill: the ``applied`` moves are taken back,
        the error kept for ``run`` to raise, and the search aborted. Returns False."""
        while applied > 0:
            self.s.c_undo()
            applied -= 1
        self.error = exc
        self.aborted = True
        return False

    cdef int _batch_outcome(self, int i, int off, int level, bint* allres,
                            int* applied) except -1:
        """(GIL held, outcome ``i`` applied) Classifies the outcome (b_kind): valued now
        (terminal, an exact table entry: its bounds set, known), a player node whose
        ordered moves join the batch at ``off`` (b_count; returns how many of them the
        evaluator values), or left to search."""
        cdef ChanceView c = _chance_view(self, level)
        cdef int* scores = self.buf.scores + <size_t>(level + 1) * self.buf.cap
        cdef int* acts = self.buf.b_acts + off
        cdef TTEntry* e
        cdef TTEntry ent
        cdef uint64_t okey
        cdef int q, m, tt_move = -1
        cdef double v
        cdef bint r = True
        self.buf.b_count[i] = 0
        self.buf.b_kind[i] = B_SEARCH
        if self.s.c_terminal():
            v = terminal_value(self.s, self.kind, self.max_plies)
        else:
            q = self.s.c_player()
            m = self.s.c_legal(acts) if q == 0 or q == 1 else 0
            if m <= 0:
                return 0
            okey = node_key(self) if self.use_tt else 0
            e = self.tt.c_lookup(okey, &ent) if self.use_tt else NULL
            if e != NULL:
                tt_move = e.move
            if e == NULL or not _tt_cut(self, e, 1, -INFINITY, INFINITY, &v, &r):
                self.buf.b_kind[i] = B_PLAYER0 if q == 0 else B_PLAYER1
                self.buf.b_key[i] = okey
                self.buf.b_count[i] = m
                self._order(q, acts, scores, m, tt_move)
                return self._add_children(acts, m, self.buf.b_vals + off,
                                          self.buf.b_term + off, applied)
        self.buf.b_kind[i] = B_VALUED
        c.lb[i] = v
        c.ub[i] = v
        c.known[i] = 1
        allres[0] = allres[0] and r
        return 0

    cdef bint _batch_outcomes(self, int n, int level, bint* allres) noexcept nogil:
        """A chance node with one player ply left, under a batch evaluator: the moves of
        every outcome are valued in one flush. A network then sees one batch of about
        outcomes x moves positions instead of one call per outcome and one per Star2
        probe; its per-call cost, not its per-position cost, dominates at these sizes.
        The outcomes' player nodes are then valued (``_batched_players``); the rest is
        left to ``star1``. False when the search aborted."""
        cdef int* outs = self.buf.acts + <size_t>level * self.buf.cap
        cdef int i, off = 0, pending = 0, applied = 0
        with gil:
            try:
                for i in range(n):
                    self.s.c_apply(outs[i])
                    applied = 1
                    self.nodes += 1
                    pending += self._batch_outcome(i, off, level, allres, &applied)
                    off += self.buf.b_count[i]
                    self.s.c_undo()
                    applied = 0
                self._flush(pending, self.buf.b_flushed)
            except BaseException as exc:
                return self._abort(exc, applied)
            if self.nodes >= self.next_poll:
                self._poll()
        if self.aborted:
            return False
        self._scatter(self.buf.b_vals, self.buf.b_term, off, self.buf.b_flushed)
        self._batched_players(n, level, allres)
        return True

    cdef void _batched_players(self, int n, int level, bint* allres) noexcept nogil:
        """The batched outcomes' player nodes, valued by the player loop from the batch
        (exact: full window), known at once: a general search below may run another
        chance batch (EinStein's two random set-ups, then a roll), which reuses the b_
        buffers."""
        cdef ChanceView c = _chance_view(self, level)
        cdef int i, m, off = 0
        cdef bint r = False
        cdef char kind
        for i in range(n):
            kind = self.buf.b_kind[i]
            if kind != B_PLAYER0 and kind != B_PLAYER1:
                continue
            m = self.buf.b_count[i]
            c.lb[i] = player_loop(self, 0 if kind == B_PLAYER0 else 1, self.buf.b_key[i],
                                  self.buf.b_acts + off, m, 1, -INFINITY, INFINITY,
                                  level + 1, self.buf.b_vals + off,
                                  self.buf.b_term + off, &r)
            c.ub[i] = c.lb[i]
            c.known[i] = 1
            allres[0] = allres[0] and r
            off += m

    # ------------------------------------------------------------------ chance nodes
    cdef double _chance(self, int depth, double alpha, double beta, int level,
                        bint* res) noexcept nogil:
        """A chance node: the table; with one ply left and a batch evaluator, the exact
        expectation from one flush (every window accepts it); else Star2's probes
        (star == 2) and Star1 (star=0: the exact expectation, every outcome searched
        with the full window)."""
        cdef ChanceView c = _chance_view(self, level)
        cdef bint batch = depth == 1 and not self.heuristic_path and level + 1 < self.levels
        cdef uint64_t key = 0
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int n, i
        cdef double v
        cdef bint allres = True
        if self.star == 0 and not batch:
            alpha = -INFINITY
            beta = INFINITY
        if self.use_tt:
            key = node_key(self)
            e = self.tt.c_lookup(key, &ent)
            if e != NULL and _tt_cut(self, e, depth, alpha, beta, &v, res):
                return v
        n = self.s.c_chance(c.outs, c.probs)
        for i in range(n):
            c.known[i] = 0
        if self.star != 0 and not batch:          # the bounds Star1 and Star2 prune with
            c.sufp[n] = 0.0
            for i in range(n - 1, -1, -1):
                c.sufp[i] = c.sufp[i + 1] + c.probs[i]
                c.lb[i] = self.L
                c.ub[i] = self.U
        if batch:
            if not self._batch_outcomes(n, level, &allres):
                return 0.0
        elif self.star == 2 and self._star2(key, depth, alpha, beta, level, n, &allres, &v,
                                            res):
            return v
        return star1(self, key, depth, alpha, beta, level, n, allres, batch, res)

    cdef double _probe(self, int q, int depth, double a, double b, int level,
                       bint* res) noexcept nogil:
        """Star2 probe of the current player node: its first move only (table move,
        else the best by history), searched to depth - 1 within (a, b)."""
        cdef int* acts = self.buf.acts + <size_t>level * self.buf.cap
        cdef int* scores = self.buf.scores + <size_t>level * self.buf.cap
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int tt_move = -1, n
        cdef double v
        if self.aborted:
            res[0] = False
            return -INFINITY if q == 0 else INFINITY
        if self.use_tt:
            e = self.tt.c_lookup(node_key(self), &ent)
            if e != NULL:
                tt_move = e.move
        n = self.s.c_legal(acts)
        if n <= 0:
            res[0] = False
            return -INFINITY if q == 0 else INFINITY    # no information
        self._order(q, acts, scores, n, tt_move)
        self.s.c_apply(acts[0])
        count_node(self)
        v = self._search(depth - 1, a, b, level + 1, res)
        self.s.c_undo()
        return v

    cdef int _star2(self, uint64_t key, int depth, double alpha, double beta, int level,
                    int n, bint* allres, double* value, bint* res) noexcept nogil:
        """Star2's probing phase: each outcome's successor bounded by its table entry or
        its first move; 1 (``value`` set) when the bounds cut the node or the search
        aborted, else 0 with the bounds in this level's blocks."""
        cdef ChanceView c = _chance_view(self, level)
        cdef TTEntry* e
        cdef TTEntry ent
        cdef int i, q, bound
        cdef double L = self.L, U = self.U, eps = self.eps
        cdef double v, w, pi, pa, pb, lim, done_lb = 0.0, done_ub = 0.0
        cdef bint r = False
        for i in range(n):
            pi = c.probs[i]
            self.s.c_apply(c.outs[i])
            count_node(self)
            if self.s.c_terminal():
                v = terminal_value(self.s, self.kind, self.max_plies)
                c.lb[i] = v
                c.ub[i] = v
                c.known[i] = 1
            else:
                q = self.s.c_player()
                if q == 0 or q == 1:
                    r = True
                    if self.use_tt:
                        e = self.tt.c_lookup(node_key(self), &ent)
                        if e != NULL and _usable(self, e, depth):
                            bound = e.flags & TT_BOUND_MASK
                            if bound == TT_EXACT:
                                c.known[i] = 1
                            if bound != TT_UPPER and e.value > c.lb[i]:
                                c.lb[i] = e.value
                            if bound != TT_LOWER and e.value < c.ub[i]:
                                c.ub[i] = e.value
                            r = (e.flags & TT_RESOLVED) != 0
                    if not c.known[i] and level + 2 < self.levels and (
                            (q == 0 and c.lb[i] == L) or (q == 1 and c.ub[i] == U)):
                        pa = (alpha - eps - done_ub - c.sufp[i + 1] * U) / pi
                        pb = (beta + eps - done_lb - c.sufp[i + 1] * L) / pi
                        if pa <= c.lb[i]:
                            pa = -INFINITY
                        if pb >= c.ub[i]:
                            pb = INFINITY
                        w = self._probe(q, depth, pa, pb, level + 1, &r)
                        if q == 0 and w > pa and w > c.lb[i]:
                            c.lb[i] = w
                        elif q == 1 and w < pb and w < c.ub[i]:
                            c.ub[i] = w
                    allres[0] = allres[0] and r
            self.s.c_undo()
            if self.aborted:
                value[0] = 0.0
                return 1
            done_lb += pi * c.lb[i]
            done_ub += pi * c.ub[i]
            lim = done_lb + c.sufp[i + 1] * L
            if lim >= beta + 0.5 * eps:
                value[0] = _chance_cut(self, key, lim, depth, TT_LOWER, allres[0], res)
                return 1
            lim = done_ub + c.sufp[i + 1] * U
            if lim <= alpha - 0.5 * eps:
                value[0] = _chance_cut(self, key, lim, depth, TT_UPPER, allres[0], res)
                return 1
        return 0

