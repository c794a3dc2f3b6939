# cython: language_level=3
from libc.stdint cimport int8_t

cdef enum:
    RING_CODES = 729           # 3 ** 6: each neighbour empty, Black's or White's
    INF_KEEP = 0               # an empty cell worth playing
    INF_DEAD = 1               # its colour never changes the winner
    INF_BLACK = 2              # Black-captured: Black owns it whatever White does
    INF_WHITE = 3              # White-captured
    INF_VULNERABLE = 4         # the mover's stone there dies to a reply: its killer dominates it
    INF_STONE = 5              # not empty


cdef void ring_table(int n, int* out) noexcept nogil


cdef class HexInferior:
    cdef readonly int n
    cdef int ncells
    cdef int* nb               # 6 codes a cell, in cyclic order: a cell, or -1/-2 (an edge)
    cdef int8_t* work          # the board with the fill-in so far

    cdef int _code(self, int cell) noexcept nogil
    cdef int c_analyse(self, const int8_t* board, int mover, int8_t* out) noexcept nogil
