# cython: language_level=3
from libc.stdint cimport int8_t, int16_t, int32_t, uint64_t

from descent.search_cy.games.hex_patterns cimport HexPatterns
from descent.search_cy.games.hex_inferior cimport HexInferior

cdef enum:
    EDGE_TOP = -1              # ring codes of the off-board neighbours
    EDGE_BOTTOM = -2
    EDGE_LEFT = -3
    EDGE_RIGHT = -4
    NO_CELL = -100


cdef class HexPlayout:
    cdef int n, ncells
    cdef int* ring                    # 6 ring codes a cell
    cdef int8_t* root_board           # the position every playout starts from
    cdef int8_t* board                # the board being filled
    cdef int16_t* emp                 # its empty cells
    cdef int16_t* epos                # each cell's place among them, -1 for a stone
    cdef int16_t* stack
    cdef int8_t* seen
    cdef int8_t* labels               # the inferior-cell analysis' labels of a board
    cdef uint64_t rng
    cdef HexPatterns pat              # the patterns (the move prior's; pattern playouts'), or None
    cdef HexInferior inferior         # the inferior-cell analysis, or None
    cdef bint pp                      # pattern playouts (needs pat)
    cdef double pp_cap                # their largest gamma
    cdef int nblk                     # blocks of 16 cells in the weight sums
    cdef int32_t* pkey                # per cell and player to move: both pattern readings
    cdef float* pw                    # per player to move and cell: its playout weight
    cdef double* pblk                 # per player to move and block: the weights' sum
    cdef double ptot[2]
    cdef int32_t* root_pkey           # the same at the root, copied before each playout
    cdef float* root_pw
    cdef double* root_pblk
    cdef double root_ptot[2]
    cdef bint fill_playouts           # playouts start from the fill-in (needs inferior)
    cdef public long long moves       # stones placed by the playouts (and the tree's walks)

    cdef void c_set_root(self, const int8_t* cells) noexcept nogil
    cdef void c_pp_init(self, const int8_t* board) noexcept nogil
    cdef void c_pp_moved(self, int m, int colour) noexcept nogil
    cdef int c_pp_sample(self, int side) noexcept nogil
    cdef int c_from_root(self) noexcept nogil
    cdef int c_empties(self) noexcept nogil
    cdef void c_fill_in(self, int side, int* ne) noexcept nogil
    cdef void c_place(self, int m, int colour, int* ne) noexcept nogil
    cdef bint c_connects(self, int m, int colour) noexcept nogil
    cdef int c_black_wins(self) noexcept nogil
    cdef int c_bridge_reply(self, int last, int colour) noexcept nogil
    cdef void c_play_out(self, int side, int last, int* ne) noexcept nogil
