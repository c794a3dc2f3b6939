# cython: language_level=3
"""Dice chess move generation (dicechess_movegen.pyx): pseudo-legal moves by die roll,
and their counts by popcount."""
from descent.search_cy.games.dicechess_board cimport DiceChessBoard

cdef int gen_die(DiceChessBoard s, int die, int* out) noexcept nogil
cdef int gen_all(DiceChessBoard s, int* out) noexcept nogil
cdef void count_moves(DiceChessBoard s, int* cnt) noexcept nogil
