# cython: language_level=3
"""Dice chess attack tables: leaper tables and magic bitboards for the sliders, built by
dicechess_attacks.pyx into a table the move generator owns; the lookups are inline so
that move generation pays no call for them."""
from libc.stdint cimport uint64_t

from descent.search_cy.games.dicechess_types cimport KNIGHT, BISHOP, ROOK, QUEEN

cdef struct DCAttacks:
    uint64_t knight[64]
    uint64_t king[64]
    uint64_t pawn[2][64]        # squares a pawn of that colour on sq attacks
    uint64_t rook_mask[64]
    uint64_t bishop_mask[64]
    uint64_t rook_magic[64]
    uint64_t bishop_magic[64]
    int rook_shift[64]
    int bishop_shift[64]
    uint64_t rook_tab[64][4096]
    uint64_t bishop_tab[64][512]

cdef void build_attacks(DCAttacks* t) noexcept nogil


cdef inline uint64_t rook_att(const DCAttacks* t, int sq, uint64_t occ) noexcept nogil:
    return t.rook_tab[sq][((occ & t.rook_mask[sq]) * t.rook_magic[sq]) >> t.rook_shift[sq]]


cdef inline uint64_t bishop_att(const DCAttacks* t, int sq, uint64_t occ) noexcept nogil:
    return t.bishop_tab[sq][
        ((occ & t.bishop_mask[sq]) * t.bishop_magic[sq]) >> t.bishop_shift[sq]]


cdef inline uint64_t piece_att(const DCAttacks* t, int typ, int sq, uint64_t occ) noexcept nogil:
    """Squares a knight, bishop, rook, queen or king (typ) on sq attacks over occ."""
    if typ == KNIGHT:
        return t.knight[sq]
    if typ == BISHOP:
        return bishop_att(t, sq, occ)
    if typ == ROOK:
        return rook_att(t, sq, occ)
    if typ == QUEEN:
        return rook_att(t, sq, occ) | bishop_att(t, sq, occ)
    return t.king[sq]
