# cython: language_level=3
"""The evaluator seam: what a search calls to value non-terminal states.

A search queues the states it wants valued with ``c_add`` (typically every non-terminal
child of the node it expands) and then calls ``c_flush`` once: a heuristic evaluator has
already computed each value in C, a network evaluator encodes every queued state into one
float32 buffer and makes one Python call for the whole batch. Values are in player 0's
view, within [lo, hi] (the declared bounds Star1/Star2 prune with).
"""
from libc.stdint cimport int8_t

from descent.search_cy.games.state cimport GameState

# What an evaluator's game knowledge says of a position (c_knowledge), for the player to
# move: nothing, a proven win, a proven loss, or the moves outside a set that lose.
cdef enum Knowledge:
    KNOW_NONE = 0
    KNOW_WIN = 1
    KNOW_LOSS = 2
    KNOW_MUSTPLAY = 3


cdef class Evaluator:
    cdef readonly double lo, hi          # declared bounds of every value returned
    cdef readonly long long positions    # states valued so far
    cdef readonly long long batches      # c_flush calls that valued at least one state
    cdef int n_pending
    cdef int capacity
    cdef double* pending                 # values of queued states (heuristic evaluators)

    cdef int c_reserve(self, int n) except -1
    cdef int c_add(self, GameState s) except -1
    cdef int c_flush(self, double* out) except -1
    cdef void c_discard(self) noexcept
    cdef double c_eval(self, GameState s) except? -1e300
    cdef int c_knowledge(self, GameState s, int8_t* keep) noexcept nogil
    cdef bint c_move_codes(self, GameState s, int8_t* codes) noexcept nogil


cdef enum:
    MAX_WEIGHTS = 40                     # the dice-chess study agent has 37


cdef class HeuristicEvaluator(Evaluator):
    """Subclasses implement c_heuristic, called without the GIL."""
    cdef double w[MAX_WEIGHTS]           # tunable weights, in the class's WEIGHTS order
    cdef double c_heuristic(self, GameState s) noexcept nogil
    cdef bint c_children(self, GameState s, int n, const int* actions,
                         double* out) noexcept nogil


cdef class BatchEvaluator(Evaluator):
    cdef readonly object fn              # callable: float32 array (n, planes, H, W) -> n values
    cdef object buffer                   # numpy float32 (capacity, planes, H, W)
    cdef object prototype                # a state of the game (its encoding shape), for spawn
    cdef float[:, :, :, ::1] view
    cdef readonly int symmetry
    cdef int planes, height, width
