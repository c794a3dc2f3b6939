# cython: language_level=3
from libc.stdint cimport int8_t, int16_t, int32_t, uint64_t

from descent.search_cy.games.hex cimport HexState
from descent.search_cy.games.hex_inferior cimport HexInferior

cdef enum:
    VC_WORDS = 4               # carriers are 256-bit sets: boards up to 16x16
    VC_MAXCELLS = 256
    VC_MAXNODES = 258          # every cell, and the player's two edges
    VC_NONE = 0                # nothing proven
    VC_WIN = 1                 # the player to move wins
    VC_LOSS = 2                # the player to move loses
    VC_MUSTPLAY = 3            # the player to move loses unless it plays in ``keep``

ctypedef struct VCEntry:
    uint64_t bits[VC_WORDS]    # the carrier: empty cells (a semi's key among them)
    int32_t next               # the next entry of the same pair and kind, or -1
    int16_t x, y               # its endpoints (nodes)
    int16_t key                # a semi's key cell (the cell that completes it), or -1
    int16_t size               # cells in the carrier


cdef class HexVC:
    cdef readonly int n
    cdef int ncells
    cdef int* nb                  # 6 a cell: the neighbour cell, or -1..-4 for an edge
    cdef public int max_fulls     # full connections kept a pair (the smallest first)
    cdef public int max_semis     # semi-connections kept a pair
    cdef public int max_entries   # connections in all: the search stops there
    cdef public bint fill_in      # the search reads the board after the fill-in
    cdef int nnodes
    cdef int* node_of             # a cell's node: its group's, its own (empty), or -1
    cdef int* node_cell           # a node's empty cell, or -1 for stones or an edge
    cdef int32_t* full_head       # pair -> its first full entry (-1 none)
    cdef int32_t* semi_head
    cdef int16_t* nfull
    cdef int16_t* nsemi
    cdef int16_t* adj             # a node's nodes with at least one full to it
    cdef int16_t* nadj
    cdef VCEntry* pool
    cdef int npool
    cdef int32_t* queue           # full entries whose AND combinations are pending
    cdef int qhead, qtail
    cdef bint stop_at_semi        # the search stops at the edges' first semi
    cdef bint overflow            # max_entries reached: the search stopped early
    cdef int8_t* labels           # the fill-in's labels (``hex_inferior``)
    cdef HexInferior inferior
    cdef int stack[VC_MAXCELLS]
    cdef int members[VC_MAXCELLS]

    cdef int _pair(self, int x, int y) noexcept nogil
    cdef const int8_t* _board(self, const int8_t* board, int mover) noexcept nogil
    cdef list _cells(self, int32_t e)
    cdef bint _done(self) noexcept nogil
    cdef void _build(self, const int8_t* board, int player) noexcept nogil
    cdef bint _within(self, int32_t e, const uint64_t* bits) noexcept nogil
    cdef int32_t _insert(self, int32_t* head, int16_t* count, int limit, int x, int y,
                         const uint64_t* bits, int key) noexcept nogil
    cdef bint _add_full(self, int x, int y, const uint64_t* bits) noexcept nogil
    cdef bint _drop_largest(self, int32_t* head, int size) noexcept nogil
    cdef void _add_semi(self, int x, int y, const uint64_t* bits, int key) noexcept nogil
    cdef void _and(self, int32_t e) noexcept nogil
    cdef void _or(self, int x, int y, int32_t e) noexcept nogil
    cdef int c_knowledge(self, const int8_t* board, int mover, bint swap_legal,
                         int8_t* keep) noexcept nogil
    cdef int c_maintenance(self, int16_t* out, int cap) noexcept nogil
