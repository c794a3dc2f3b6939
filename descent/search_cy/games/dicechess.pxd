# cython: language_level=3
from libc.stdint cimport uint64_t, int8_t, int16_t
from descent.search_cy.games.state cimport GameState

# Piece types (the roll of a die names one), nomove rules: one table for the kernel and
# its evaluator. A piece code on the board is colour * 8 + type.
cdef enum:
    PAWN = 1
    KNIGHT = 2
    BISHOP = 3
    ROOK = 4
    QUEEN = 5
    KING = 6
    NOMOVE_REROLL = 0
    NOMOVE_PASS = 1
    NOMOVE_FREE = 2

# One record per applied action (chance outcome or move): what undo needs to restore the
# state in O(1) without replaying.
cdef struct DCUndo:
    uint64_t key        # Zobrist key before the action
    int action
    int fullmove
    int16_t halfmove
    int8_t captured     # piece code taken by the move, 0 none
    int8_t castling
    int8_t ep
    int8_t die
    int8_t chance       # 1 when the action was a die outcome

cdef class DiceChessState(GameState):
    cdef uint64_t bb[16]        # [colour * 8 + type]; type 0 holds all pieces of the colour
    cdef int8_t board[64]       # piece code colour * 8 + type (1 P .. 6 K), 0 empty
    cdef int side               # 0 White, 1 Black: the side to roll or to move
    cdef int castling           # bits: 1 K, 2 Q, 4 k, 8 q
    cdef int ep                 # en passant target square, -1 none
    cdef int halfmove, fullmove
    cdef int die                # pending die 1..6, 0 at a chance node
    cdef int result             # -1 running, 0 White won, 1 Black won, 2 draw
    cdef int nomove             # 0 reroll, 1 pass, 2 free
    cdef bint castle_rook       # castling also on a roll of 4
    cdef uint64_t key
    cdef DCUndo* undo
    cdef int nundo, cap_undo
    cdef uint64_t* reps         # position keys (no die) after each move, load position first
    cdef int nreps

    cdef void _grow(self) noexcept nogil
    cdef void _move(self, int action) noexcept nogil
    cdef void _unmove(self, DCUndo* rec) noexcept nogil
