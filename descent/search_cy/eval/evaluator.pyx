# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Evaluators: heuristic (C, no GIL) and batch (one Python call per expanded node)."""
from libc.stdint cimport int8_t
from libc.stdlib cimport realloc, free

import math

import numpy as np

from descent.search_cy.games.state cimport GameState


cdef class Evaluator:
    """Values non-terminal states in player 0's view, within [lo, hi].

    Searches call the C methods; ``evaluate`` is the Python entry point (tests, tools).
    """

    def __cinit__(self, *args, **kwargs):
        self.lo = -1.0
        self.hi = 1.0
        self.pending = NULL
        self.capacity = 0
        self.n_pending = 0

    def __dealloc__(self):
        free(self.pending)

    cdef int c_reserve(self, int n) except -1:
        cdef double* grown
        if n <= self.capacity:
            return 0
        grown = <double*>realloc(self.pending, n * sizeof(double))
        if grown == NULL:
            raise MemoryError()
        self.pending = grown
        self.capacity = n
        return 0

    cdef int c_add(self, GameState s) except -1:
        raise NotImplementedError(f"{type(self).__name__} does not implement c_add")

    cdef int c_flush(self, double* out) except -1:
        raise NotImplementedError(f"{type(self).__name__} does not implement c_flush")

    cdef void c_discard(self) noexcept:
        """Drops the queued states: a search whose batch was cut short by an error
        starts its next run with an empty queue (a stale queue would flush more values
        than the caller's buffer holds)."""
        self.n_pending = 0

    cdef double c_eval(self, GameState s) except? -1e300:
        cdef double v
        self.c_add(s)
        self.c_flush(&v)
        return v

    cdef int c_knowledge(self, GameState s, int8_t* keep) noexcept nogil:
        """Proven facts about ``s`` for its player to move (a Knowledge code): KNOW_WIN,
        KNOW_LOSS, or KNOW_MUSTPLAY with ``keep[a]`` set to 1 for the actions that may
        avoid a loss and 0 for those proven to lose (``keep`` holds max_actions bytes,
        filled only then). Sound or silent: a claim is never wrong. The base knows
        nothing (KNOW_NONE); Hex's VC evaluator knows virtual connections."""
        return KNOW_NONE

    cdef bint c_move_codes(self, GameState s, int8_t* codes) noexcept nogil:
        """The evaluator's reading of each action of ``s`` as a small code (``codes``
        holds max_actions bytes; codes of occupied cells are left as they were), for a
        move prior that weighs them; False when it has none. The base has none; Hex's
        evaluator gives each empty cell its route code (``games/hex_patterns.pyx``)."""
        return False

    def move_codes(self, GameState s):
        """c_move_codes as an int8 array of max_actions codes (0 where none was set), or
        None: for the fitting tool and the tests."""
        import numpy as np
        codes = np.zeros(s.max_actions, np.int8)
        cdef signed char[::1] view = codes
        if not self.c_move_codes(s, <int8_t*>&view[0]):
            return None
        return codes

    def knowledge(self, GameState s) -> tuple:
        """(code name, actions kept or None): c_knowledge for tests and tools."""
        cdef int cap = s.max_actions
        keep = bytearray(cap)
        cdef unsigned char[::1] view = keep
        cdef int code = self.c_knowledge(s, <int8_t*>&view[0])
        names = {KNOW_NONE: "none", KNOW_WIN: "win", KNOW_LOSS: "loss",
                 KNOW_MUSTPLAY: "mustplay"}
        if code == KNOW_MUSTPLAY:
            return names[code], [a for a in s.legal_actions() if keep[a]]
        return names[code], None

    def spawn(self):
        """An independent evaluator giving the same values, for another search thread:
        evaluators keep scratch buffers and queues, so one instance serves one thread.
        Raises TypeError for an evaluator that cannot be duplicated."""
        raise TypeError(f"{type(self).__name__} cannot be spawned for another search thread")

    def move_priors(self, GameState s):
        """A score per legal action of ``s`` (in ``legal_actions()`` order, higher first)
        that orders moves the values cannot tell apart, or None when this evaluator knows
        no such order. Called at most once per search, at its end: never on the search
        path."""
        return None

    def evaluate(self, states) -> np.ndarray:
        """Values (float64, player 0's view) of non-terminal states, in one batch. Blocks."""
        cdef GameState s
        states = list(states)
        out = np.empty(len(states), dtype=np.float64)
        cdef double[::1] o = out
        for s in states:
            if s.c_terminal():
                raise ValueError("evaluators value non-terminal states only")
        try:
            for s in states:
                self.c_add(s)
        except BaseException:
            self.c_discard()
            raise
        if len(states):
            self.c_flush(&o[0])
        return out

    @property
    def bounds(self) -> tuple:
        return (self.lo, self.hi)


cdef class HeuristicEvaluator(Evaluator):
    """Base of the C heuristics: c_add values the state at once, without the GIL.

    A heuristic with tunable weights lists them in its class attribute ``WEIGHTS``, a
    tuple of ``(name, default, lo, hi)``; each instance holds its own values (``w``, in
    that order), so two players in one process may weigh differently. ``weights`` reads
    them, ``set_weights`` changes some (checked: known names, finite, within the bounds),
    ``spawn`` copies them.
    """

    WEIGHTS: tuple = ()

    def __cinit__(self, *args, **kwargs):
        cdef int i
        table = type(self).WEIGHTS
        if len(table) > MAX_WEIGHTS:
            raise ValueError(f"{type(self).__name__}: more than {MAX_WEIGHTS} weights")
        for i in range(MAX_WEIGHTS):
            self.w[i] = 0.0
        for i, entry in enumerate(table):
            self.w[i] = float(entry[1])

    @property
    def weights(self) -> dict:
        """{name: value} of the tunable weights, in the class's WEIGHTS order."""
        return {entry[0]: self.w[i] for i, entry in enumerate(type(self).WEIGHTS)}

    def set_weights(self, values) -> None:
        """Sets the named weights (a mapping; the others keep their values). ValueError
        names an unknown weight, a non-finite value or one outside its bounds, and
        changes nothing then."""
        table = {entry[0]: (i, float(entry[2]), float(entry[3]))
                 for i, entry in enumerate(type(self).WEIGHTS)}
        staged = []
        for name, value in dict(values).items():
            if name not in table:
                known = ", ".join(table) or "none"
                raise ValueError(f"{type(self).__name__} has no weight {name!r}; its "
                                 f"weights: {known}")
            i, lo, hi = table[name]
            x = float(value)
            if not math.isfinite(x) or not lo <= x <= hi:
                raise ValueError(f"weight {name} = {value!r} lies outside [{lo}, {hi}]")
            staged.append((i, x))
        for i, x in staged:
            self.w[i] = x

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        return 0.0

    cdef bint c_children(self, GameState s, int n, const int* actions,
                         double* out) noexcept nogil:
        """The values (player 0's view) of the children ``actions`` of ``s`` from one
        pass over ``s`` (a network's action values: MoHex 3HNN's head) into ``out``, NaN
        for a child it cannot value so; False when this evaluator values children one by
        one (c_heuristic on each). The base values them one by one."""
        return False

    cdef int c_add(self, GameState s) except -1:
        if self.n_pending >= self.capacity:
            self.c_reserve(2 * self.capacity + 64)
        self.pending[self.n_pending] = self.c_heuristic(s)
        self.n_pending += 1
        return 0

    def spawn(self):
        """A fresh instance of the same class (the C heuristics take no arguments and
        keep nothing but scratch between calls), with the same bounds and weights."""
        cdef HeuristicEvaluator fresh = type(self)()
        fresh.lo = self.lo
        fresh.hi = self.hi
        fresh.w = self.w
        return fresh

    cdef int c_flush(self, double* out) except -1:
        cdef int i
        for i in range(self.n_pending):
            out[i] = self.pending[i]
        if self.n_pending:
            self.positions += self.n_pending
            self.batches += 1
        self.n_pending = 0
        return 0


cdef class ZeroEvaluator(HeuristicEvaluator):
    """Values every state 0: the knowledge-free leaf (searches then rely on terminals)."""
    pass


cdef class BatchEvaluator(Evaluator):
    """Encodes queued states into one float32 buffer and calls ``fn`` once per flush.

    ``fn(batch)`` receives a float32 array of shape (n, planes, height, width), a view of
    the evaluator's own buffer valid only during the call, and returns n values in player
    0's view (any array-like of floats). ``symmetry`` selects the kernel's input symmetry;
    a colour-swapping symmetry negates the returned values back into player 0's view.
    """

    def __init__(self, fn, GameState prototype, int capacity=256, int symmetry=0,
                 double lo=-1.0, double hi=1.0):
        if not callable(fn):
            raise TypeError("fn must be callable")
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        if not 0 <= symmetry < prototype.num_symmetries:
            raise ValueError(f"symmetry {symmetry} out of range 0..{prototype.num_symmetries - 1}")
        if not lo < hi:
            raise ValueError("bounds need lo < hi")
        self.fn = fn
        self.prototype = prototype
        self.planes = prototype.num_planes
        self.height = prototype.height
        self.width = prototype.width
        self.symmetry = symmetry
        self.lo = lo
        self.hi = hi
        self._grow(capacity)

    def spawn(self, fn=None):
        """Another queue and buffer over the same ``fn`` (the backends are safe to call
        from several threads; each call releases the GIL while it computes), or over
        ``fn`` when given (a gatherer in front of the same function)."""
        return BatchEvaluator(self.fn if fn is None else fn, self.prototype, self.capacity,
                              self.symmetry, self.lo, self.hi)

    def _grow(self, int capacity):
        fresh = np.zeros((capacity, self.planes, self.height, self.width), dtype=np.float32)
        if self.buffer is not None and self.n_pending:
            fresh[:self.n_pending] = self.buffer[:self.n_pending]
        self.buffer = fresh
        self.view = fresh
        self.c_reserve(capacity)

    cdef int c_add(self, GameState s) except -1:
        if self.n_pending >= self.capacity:
            self._grow(2 * self.capacity)
        if s.num_planes != self.planes or s.height != self.height or s.width != self.width:
            raise ValueError("state encoding shape differs from the evaluator's")
        s.c_encode(&self.view[self.n_pending, 0, 0, 0], self.symmetry)
        self.pending[self.n_pending] = -1.0 if s.c_sym_swaps_colours(self.symmetry) else 1.0
        self.n_pending += 1
        return 0

    cdef int c_flush(self, double* out) except -1:
        cdef int i, n = self.n_pending
        if n == 0:
            return 0
        self.n_pending = 0
        values = np.asarray(self.fn(self.buffer[:n]), dtype=np.float64).reshape(-1)
        if values.shape[0] != n:
            raise ValueError(f"evaluator function returned {values.shape[0]} values for {n} states")
        cdef double[::1] v = np.ascontiguousarray(values)
        for i in range(n):
            out[i] = v[i] * self.pending[i]
        self.positions += n
        self.batches += 1
        return 0
