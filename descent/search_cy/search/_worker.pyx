# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A best-first search thread's buffers and the valuation of an expansion's children.

bestfirst.pyx runs one iteration routine over workers: the serial search is one worker
(on the caller's state and evaluator), a parallel search one per thread. An expansion
lists the state's actions (a determinized game keeps the one outcome ``fixed_outcome``
draws at a chance state), leaves out those a C heuristic's knowledge proves lost, and
values every child: terminal children by the terminal rule, the others by the evaluator
in one batch (with MCTS the state itself first, the simulation's return). A C heuristic
is called without the GIL, once a child or once for all of them (``c_children``); any
other evaluator queues and flushes with it (a BatchEvaluator's encodings are written
without it).
"""
from libc.stdint cimport uint64_t, int8_t, int32_t, int64_t
from libc.stdlib cimport malloc, calloc, free

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.eval.evaluator cimport (
    Evaluator, HeuristicEvaluator, BatchEvaluator, KNOW_MUSTPLAY)
from descent.search_cy.search.terminal cimport terminal_value


cdef inline int _fixed_outcome(uint64_t key, uint64_t seed, double* probs,
                               int n) noexcept nogil:
    """The index of the outcome a determinized game fixes at chance state ``key``: drawn
    by probability with the uniform number a hash of (key, seed) gives."""
    cdef uint64_t x = key ^ seed
    cdef double u = uniform(&x)
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


cdef Worker* new_workers(int n, int cap) except NULL:
    """n workers with buffers for ``cap`` actions and paths of MAX_PATH plies."""
    cdef int t
    cdef Worker* w
    cdef Worker* workers = <Worker*>calloc(n, sizeof(Worker))
    if workers == NULL:
        raise MemoryError()
    for t in range(n):
        w = &workers[t]
        w.acts = <int*>malloc(cap * sizeof(int))
        w.probs = <double*>malloc(cap * sizeof(double))
        w.vals = <double*>malloc(cap * sizeof(double))
        w.out = <double*>malloc((cap + 1) * sizeof(double))
        w.term = <int8_t*>malloc(cap * sizeof(int8_t))
        w.keep = <int8_t*>malloc(cap * sizeof(int8_t))
        w.path_node = <int64_t*>malloc(MAX_PATH * sizeof(int64_t))
        w.path_child = <int32_t*>malloc(MAX_PATH * sizeof(int32_t))
        if not (w.acts and w.probs and w.vals and w.out and w.term and w.keep
                and w.path_node and w.path_child):
            free_workers(workers, n)
            raise MemoryError()
    return workers


cdef void free_workers(Worker* workers, int n) noexcept:
    cdef int t
    if workers == NULL:
        return
    for t in range(n):
        free(workers[t].acts)
        free(workers[t].probs)
        free(workers[t].vals)
        free(workers[t].out)
        free(workers[t].term)
        free(workers[t].keep)
        free(workers[t].path_node)
        free(workers[t].path_child)
    free(workers)


cdef void reset_workers(Worker* workers, int n, uint64_t rng) noexcept:
    """Each worker's random stream from the search's ``rng`` (a single worker, the serial
    search, draws from it unchanged) and counters at zero."""
    cdef int t
    cdef uint64_t mix
    cdef Worker* w
    for t in range(n):
        w = &workers[t]
        if n == 1:
            w.rng = rng
        else:
            mix = <uint64_t>(t + 1)
            w.rng = rng ^ splitmix64(&mix)
        w.nodes = w.evaluations = w.batches = 0
        w.max_depth = 0


cdef int settle_workers(Worker* workers, int n, list evaluators, bint heuristic) except -1:
    """The counts of C heuristics (kept by the workers) into the evaluators (one per
    worker); the counters at zero. Returns the deepest line the workers walked."""
    cdef int t, depth = 0
    cdef Worker* w
    cdef Evaluator e
    for t in range(n):
        w = &workers[t]
        e = evaluators[t]
        if heuristic:
            e.positions += w.evaluations
            e.batches += w.batches
        if w.max_depth > depth:
            depth = w.max_depth
        w.nodes = w.evaluations = w.batches = 0
    return depth


cdef int worker_actions(Worker* w, GameState s, uint64_t det_seed) noexcept nogil:
    """The actions of s (not terminal) into w.acts (with their probabilities at a chance
    state, into w.probs): their number."""
    cdef int n, i
    if s.c_player() == CHANCE:
        n = s.c_chance(w.acts, w.probs)
        if det_seed and n > 1:
            i = _fixed_outcome(s.c_hash(), det_seed, w.probs, n)
            w.acts[0] = w.acts[i]
            w.probs[0] = 1.0
            n = 1
        return n
    return s.c_legal(w.acts)


cdef inline bint _terminal_child(Worker* w, GameState s, Rules* rules, int i) noexcept nogil:
    """Values child i (applied to s) if it is terminal; whether it was."""
    if not s.c_terminal():
        w.term[i] = 0
        return False
    w.vals[i] = terminal_value(s, rules.terminal_kind, rules.max_plies)
    w.term[i] = 2 + sign_of(s.c_value())
    return True


cdef int _must_play(Worker* w, GameState s, HeuristicEvaluator hev, int n) noexcept nogil:
    """The actions of s (w.acts) cut to those the evaluator's knowledge keeps where it
    proves every other loses (a KNOW_MUSTPLAY: Hex's VC evaluator, when the opponent is
    one move from a connection); their number. Sound: only proven losses go, so the
    node's exact value is unchanged; nothing goes if nothing would be left."""
    cdef int i, k = 0
    if s.c_player() == CHANCE or hev.c_knowledge(s, w.keep) != KNOW_MUSTPLAY:
        return n
    for i in range(n):       # k <= i: a kept action moves down, none is lost
        if w.keep[w.acts[i]]:
            w.acts[k] = w.acts[i]
            k += 1
    return k if k else n     # nothing kept: nothing was written either


cdef int value_heuristic(Worker* w, GameState s, HeuristicEvaluator hev, Rules* rules,
                         int n) noexcept nogil:
    """The n children of s (w.acts) valued into w.vals and w.term by a C heuristic, and
    (MCTS) s itself into w.leaf_value; the counts are the worker's, added to the
    evaluator's when the search ends (a batch is an expansion that valued a state). The
    children its knowledge proves lost are left out first (_must_play); an evaluator that
    values children from one pass over s (c_children) values them so. Returns the
    number of children kept."""
    cdef int i
    cdef long long before = w.evaluations
    cdef bint pooled
    n = _must_play(w, s, hev, n)
    if rules.mcts:
        w.leaf_value = hev.c_heuristic(s)
        w.evaluations += 1
    pooled = hev.c_children(s, n, w.acts, w.out)
    for i in range(n):
        s.c_apply(w.acts[i])
        w.nodes += 1
        if not _terminal_child(w, s, rules, i):
            # a NaN (x != x) is a child the one pass could not value
            w.vals[i] = w.out[i] if pooled and w.out[i] == w.out[i] else hev.c_heuristic(s)
            w.evaluations += 1
        s.c_undo()
    if w.evaluations != before:
        w.batches += 1
    return n


cdef int _value_encoded(Worker* w, GameState s, BatchEvaluator ev, Rules* rules,
                        int n) except -1:
    """value_batch for a BatchEvaluator: the states are encoded straight into its buffer
    without the GIL (other threads walk, encode and call the backend meanwhile); the GIL
    is taken for the backend call alone."""
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
        if rules.mcts:
            s.c_encode(&view[0, 0, 0, 0], sym)
            sign[0] = -1.0 if s.c_sym_swaps_colours(sym) else 1.0
            npend = 1
        for i in range(n):
            s.c_apply(w.acts[i])
            w.nodes += 1
            if not _terminal_child(w, s, rules, i):
                s.c_encode(&view[npend, 0, 0, 0], sym)
                sign[npend] = -1.0 if s.c_sym_swaps_colours(sym) else 1.0
                npend += 1
            s.c_undo()
    ev.n_pending = npend
    if npend:
        ev.c_flush(w.out)
    return npend


cdef int _value_queued(Worker* w, GameState s, Evaluator ev, Rules* rules,
                       int n) except -1:
    """value_batch through the evaluator's queue (c_add, then one c_flush)."""
    cdef int i, npend = 0
    if rules.mcts:
        ev.c_add(s)
        npend = 1
    for i in range(n):
        s.c_apply(w.acts[i])
        w.nodes += 1
        if not _terminal_child(w, s, rules, i):
            try:
                ev.c_add(s)
            finally:
                s.c_undo()
            npend += 1
            continue
        s.c_undo()
    if npend:
        ev.c_flush(w.out)
    return npend


cdef int value_batch(Worker* w, GameState s, Evaluator ev, Rules* rules, int n) except -1:
    """value_heuristic for any other evaluator, with the GIL (the backend releases it
    while it computes); the evaluator counts its own positions and batches."""
    cdef int i, k = 0
    if type(ev) is BatchEvaluator:
        _value_encoded(w, s, <BatchEvaluator>ev, rules, n)
    else:
        _value_queued(w, s, ev, rules, n)
    if rules.mcts:
        w.leaf_value = w.out[0]
        k = 1
    for i in range(n):
        if w.term[i] == 0:
            w.vals[i] = w.out[k]
            k += 1
    return 0
