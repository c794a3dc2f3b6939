# cython: language_level=3
"""Dice chess codes shared by the kernel's modules and its evaluator (declarations only):
piece types, the nomove rules, and the bit scans of the bitboards."""
from libc.stdint cimport uint64_t

cdef extern from *:
    """
    #if defined(__x86_64__) && defined(__GNUC__)
    #pragma GCC target("popcnt")
    #endif
    static inline int dc_popcount(unsigned long long x) { return __builtin_popcountll(x); }
    static inline int dc_ctz(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int dc_popcount(uint64_t x) noexcept nogil
    int dc_ctz(uint64_t x) noexcept nogil

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
