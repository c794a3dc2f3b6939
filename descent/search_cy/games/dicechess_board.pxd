# cython: language_level=3
"""The dice chess position (dicechess_board.pyx): bitboards and mailbox, the undo
records, Zobrist keys, make/unmake. The rules on top of it (moves, chance nodes,
encoding, the Python API) are DiceChessState's, in dicechess.pyx."""
from libc.stdint cimport uint64_t, int8_t, int16_t, int32_t
from descent.search_cy.games.state cimport GameState

cdef extern from "dicechess_nnue.h":
    # the NNUE feature transformer a position keeps up to date (dicechess_nnue.h)
    enum:
        DC_NNUE_FEATURES
        DC_NNUE_MAX_WIDTH
        DC_NNUE_Q
    ctypedef struct dc_nnue:
        int refs
        int width
        int16_t* ft
        int16_t* bias
    void dc_nnue_retain(dc_nnue* n) noexcept nogil
    void dc_nnue_release(dc_nnue* n) noexcept nogil
    int dc_nnue_feature(int pc, int sq, int persp) noexcept nogil
    void dc_nnue_piece(const dc_nnue* n, int32_t* acc, int pc, int sq, int sign) noexcept nogil
    void dc_nnue_refresh(const dc_nnue* n, int32_t* acc, const int8_t* board) noexcept nogil

cdef enum:
    DRAW = 2                # result of a drawn game (0 White won, 1 Black won)

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

cdef class DiceChessBoard(GameState):
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
    # An NNUE's accumulator (White's view, then Black's at DC_NNUE_MAX_WIDTH), kept by
    # _put/_take while a network is attached (c_nnue_attach), NULL otherwise.
    cdef dc_nnue* nnue
    cdef int32_t nnue_acc[2 * DC_NNUE_MAX_WIDTH]

    cdef void _grow(self) noexcept nogil
    cdef int _install(self, tuple pos) except -1
    cdef void _copy_to(self, DiceChessBoard s) noexcept nogil
    cdef void c_nnue_attach(self, dc_nnue* net) noexcept nogil
