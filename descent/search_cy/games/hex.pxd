# cython: language_level=3
from libc.stdint cimport uint64_t, int8_t, int16_t
from descent.search_cy.games.state cimport GameState

cdef class HexState(GameState):
    cdef int n, ncells
    cdef bint swap_rule
    cdef int8_t* cells          # 0 empty, 1 black, 2 white
    cdef int16_t* parent        # union-find over cells + 4 edge nodes, no path compression
    cdef int8_t* rank
    cdef int* log_child         # union log: the root whose parent was set
    cdef int8_t* log_bumped     # whether the new root's rank was incremented
    cdef int log_size
    cdef int* hist_action
    cdef int* hist_log          # log_size before each history entry
    cdef int nhist
    cdef int16_t* empties       # empty cells in no particular order (swap-remove)
    cdef int16_t* empty_pos     # index of each empty cell in empties, -1 when occupied
    cdef int n_empty
    cdef int16_t* hist_epos     # empties index each history entry's stone came from
    cdef int side               # player to move: 0 black, 1 white
    cdef int winner             # -1 none, else 0/1
    cdef uint64_t key

    cdef int _place(self, int cell, int colour) noexcept nogil
    cdef void _unplace(self, int cell, int log_start, int epos) noexcept nogil
    cdef bint c_swap_legal(self) noexcept nogil
    cdef int _find(self, int x) noexcept nogil
    cdef void _union(self, int a, int b) noexcept nogil
