# cython: language_level=3
"""The game-kernel seam: one C-level interface that every rules kernel implements.

Searches cimport this file and call the ``c_*`` methods through the vtable, without the
GIL and without a Python object per node. The ``def`` wrappers in state.pyx are the
checked, documented Python API built once on top of them.
"""
from libc.stdint cimport uint64_t

cdef enum:
    CHANCE = -1      # current_player() at a chance node
    TERMINAL = -4    # current_player() at a terminal state

cdef void encode_features(float* out, const int* features, int n, int planes,
                          int cells) noexcept nogil


cdef class GameState:
    cdef readonly object game        # the Game descriptor this state belongs to
    cdef readonly int max_actions    # bound on legal_actions() at any player node
    cdef readonly int max_chance_outcomes
    cdef readonly int num_planes, height, width
    cdef readonly int num_symmetries
    cdef int _ply

    # -- fast interface (no GIL, no checks: callers pass legal actions only) --
    cdef int c_player(self) noexcept nogil
    cdef int c_legal(self, int* out) noexcept nogil
    cdef int c_chance(self, int* outcomes, double* probs) noexcept nogil
    cdef void c_apply(self, int action) noexcept nogil
    cdef void c_undo(self) noexcept nogil
    cdef uint64_t c_hash(self) noexcept nogil
    cdef uint64_t c_full_hash(self) noexcept nogil
    cdef bint c_terminal(self) noexcept nogil
    cdef double c_value(self) noexcept nogil
    cdef double c_balance(self, bint material) noexcept nogil
    cdef void c_encode(self, float* out, int sym) noexcept nogil
    cdef int c_features(self, int* out, int sym) noexcept nogil
    cdef bint c_sym_swaps_colours(self, int sym) noexcept nogil
    cdef int c_sym_action(self, int action, int sym) noexcept nogil
    cdef int c_history_length(self) noexcept nogil
    cdef GameState c_clone(self)
