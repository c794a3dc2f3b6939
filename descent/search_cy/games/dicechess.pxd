# cython: language_level=3
"""DiceChessState (dicechess.pyx): the dice chess rules over DiceChessBoard's position.
The piece and option codes are re-exported for the evaluator."""
cimport cython

from descent.search_cy.games.dicechess_types cimport (
    PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING, NOMOVE_REROLL, NOMOVE_PASS, NOMOVE_FREE)
from descent.search_cy.games.dicechess_board cimport DiceChessBoard


@cython.final
cdef class DiceChessState(DiceChessBoard):
    pass
