# cython: language_level=3
from libc.stdint cimport int8_t, int32_t

cdef enum:
    PATTERN_POINTS = 12        # the six neighbours, then the six bridge points
    PATTERN_KEYS = 531441      # 3 ** 12: each point empty, the mover's or the opponent's
    LOCAL_CODES = 3            # a cell's place by the last move: elsewhere, adjacent, bridge
    ROUTE_GAP = 4              # a cell's two-distance route past the player's shortest, capped
    ROUTE_OFF = 5              # ... or no route through it
    ROUTE_CODES = 36           # (mover's gap) * 6 + (opponent's gap)


cdef class HexPatterns:
    cdef readonly int n
    cdef int* pts              # PATTERN_POINTS codes a cell: a cell, or an off-board code
    cdef readonly object weights   # (pattern, local, route gammas) as float32 arrays
    cdef const float[::1] gp
    cdef const float[::1] gl
    cdef const float[::1] gr

    cdef int c_key(self, const int8_t* board, int cell, int side) noexcept nogil
    cdef int c_local(self, int cell, int last) noexcept nogil
    cdef double c_gamma(self, const int8_t* board, int cell, int side, int last) noexcept nogil
    cdef double c_route_gamma(self, int code) noexcept nogil
    cdef void c_readings(self, const int8_t* board, int cell, int side, int32_t* ab) noexcept nogil
    cdef void c_moved(self, int j, int side, int colour, int32_t* ab) noexcept nogil
