# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Dice chess move generation (dicechess_movegen.pxd): the pseudo-legal moves a roll
gives the side to move (RULES.md, "Dice chess"; ids: dicechess.pyx's module docstring),
every move (nomove=free), and the per-roll move counts from popcounts alone (perft's bulk
counting and the reroll distribution). The attack tables are this module's, built at
import (dicechess_attacks); their lookups are inlined here.

There is no check: a king may stand on an attacked square. Castling needs the right,
king and rook at home and empty squares between; attacked squares do not matter.
"""
from libc.stdint cimport uint64_t, int8_t

from descent.search_cy.games.dicechess_types cimport (
    dc_popcount, dc_ctz, PAWN, KNIGHT, ROOK, KING)
from descent.search_cy.games.dicechess_attacks cimport DCAttacks, build_attacks, piece_att

cdef uint64_t FILE_A = 0x0101010101010101
cdef uint64_t FILE_H = 0x8080808080808080
cdef uint64_t RANK_1 = 0xFF
cdef uint64_t RANK_8 = 0xFF00000000000000
cdef uint64_t RANK_3 = 0xFF0000
cdef uint64_t RANK_6 = 0xFF0000000000

cdef DCAttacks T                    # the attack tables, filled once at import
build_attacks(&T)


cdef inline int _emit(int* out, int n, int frm, uint64_t targets, int promo) noexcept nogil:
    cdef int to
    while targets:
        to = dc_ctz(targets)
        targets &= targets - 1
        out[n] = frm | (to << 6) | (promo << 12)
        n += 1
    return n


cdef inline int _emit_shifted(int* out, int n, uint64_t targets, int delta, int promo_lo,
                              int promo_hi) noexcept nogil:
    """Pawn targets whose origin is to - delta; one action per promo in lo..hi."""
    cdef int to, p
    while targets:
        to = dc_ctz(targets)
        targets &= targets - 1
        for p in range(promo_lo, promo_hi + 1):
            out[n] = (to - delta) | (to << 6) | (p << 12)
            n += 1
    return n


cdef struct PawnTargets:
    uint64_t push, dbl, cap_w, cap_e    # target sets (promotions included)
    int d_push, d_w, d_e                # to - from for each set
    uint64_t last                       # the mover's promotion rank


cdef inline void _pawn_targets(DiceChessBoard s, PawnTargets* t) noexcept nogil:
    cdef int us = s.side
    cdef uint64_t pawns = s.bb[us * 8 + PAWN]
    cdef uint64_t opp = s.bb[(us ^ 1) * 8]
    cdef uint64_t empty = ~(s.bb[0] | s.bb[8])
    if us == 0:
        t.push = (pawns << 8) & empty
        t.dbl = ((t.push & RANK_3) << 8) & empty
        t.cap_w = ((pawns & ~FILE_A) << 7) & opp
        t.cap_e = ((pawns & ~FILE_H) << 9) & opp
        t.d_push = 8
        t.d_w = 7
        t.d_e = 9
        t.last = RANK_8
    else:
        t.push = (pawns >> 8) & empty
        t.dbl = ((t.push & RANK_6) >> 8) & empty
        t.cap_w = ((pawns & ~FILE_A) >> 9) & opp
        t.cap_e = ((pawns & ~FILE_H) >> 7) & opp
        t.d_push = -8
        t.d_w = -9
        t.d_e = -7
        t.last = RANK_1


cdef int _gen_pawns(DiceChessBoard s, int* out, int n, int promo_only) noexcept nogil:
    """Pawn moves. promo_only 0: every pawn move (promotions to n, b, r, q); 1..4: only
    the moves onto the last rank, promoting to that piece (rolls 2..5)."""
    cdef PawnTargets t
    cdef uint64_t caps
    cdef int lo = 1, hi = 4
    _pawn_targets(s, &t)
    if promo_only:
        lo = promo_only
        hi = promo_only
    else:
        n = _emit_shifted(out, n, t.push & ~t.last, t.d_push, 0, 0)
        n = _emit_shifted(out, n, t.dbl, 2 * t.d_push, 0, 0)
        n = _emit_shifted(out, n, t.cap_w & ~t.last, t.d_w, 0, 0)
        n = _emit_shifted(out, n, t.cap_e & ~t.last, t.d_e, 0, 0)
        if s.ep >= 0:
            caps = T.pawn[s.side ^ 1][s.ep] & s.bb[s.side * 8 + PAWN]
            while caps:
                out[n] = dc_ctz(caps) | (s.ep << 6)
                caps &= caps - 1
                n += 1
    n = _emit_shifted(out, n, t.push & t.last, t.d_push, lo, hi)
    n = _emit_shifted(out, n, t.cap_w & t.last, t.d_w, lo, hi)
    n = _emit_shifted(out, n, t.cap_e & t.last, t.d_e, lo, hi)
    return n


cdef int _gen_pieces(DiceChessBoard s, int typ, int* out, int n) noexcept nogil:
    cdef uint64_t pieces = s.bb[s.side * 8 + typ]
    cdef uint64_t own = s.bb[s.side * 8]
    cdef uint64_t occ = s.bb[0] | s.bb[8]
    cdef int sq
    while pieces:
        sq = dc_ctz(pieces)
        pieces &= pieces - 1
        n = _emit(out, n, sq, piece_att(&T, typ, sq, occ) & ~own, 0)
    return n


cdef inline int _castles(DiceChessBoard s, int* out, int n) noexcept nogil:
    """Castling moves (king's two-square move); attacked squares do not matter. out NULL:
    count only."""
    cdef uint64_t occ = s.bb[0] | s.bb[8]
    cdef int base = 56 * s.side
    cdef int rights = (s.castling >> (2 * s.side)) & 3
    cdef int8_t king = s.side * 8 + KING
    cdef int8_t rook = s.side * 8 + ROOK
    if rights and s.board[base + 4] == king:
        if (rights & 1) and s.board[base + 7] == rook \
                and not (occ & ((<uint64_t>0x60) << base)):
            if out:
                out[n] = (base + 4) | ((base + 6) << 6)
            n += 1
        if (rights & 2) and s.board[base] == rook \
                and not (occ & ((<uint64_t>0x0E) << base)):
            if out:
                out[n] = (base + 4) | ((base + 2) << 6)
            n += 1
    return n


cdef int gen_die(DiceChessBoard s, int die, int* out) noexcept nogil:
    """Moves for a roll (RULES.md): pieces of the rolled type, plus promotions to it on
    rolls 2..5, plus castling on 6 (and on 4 with castle=king-or-rook)."""
    cdef int n = 0
    if die == PAWN:
        return _gen_pawns(s, out, 0, 0)
    if die == KING:
        n = _gen_pieces(s, KING, out, 0)
        return _castles(s, out, n)
    n = _gen_pieces(s, die, out, 0)
    n = _gen_pawns(s, out, n, die - 1)
    if die == ROOK and s.castle_rook:
        n = _castles(s, out, n)
    return n


cdef int gen_all(DiceChessBoard s, int* out) noexcept nogil:
    """Every move of every piece (nomove=free): promotions offer n, b, r, q."""
    cdef int n = _gen_pawns(s, out, 0, 0)
    cdef int typ
    for typ in range(KNIGHT, KING + 1):
        n = _gen_pieces(s, typ, out, n)
    return _castles(s, out, n)


cdef void count_moves(DiceChessBoard s, int* cnt) noexcept nogil:
    """cnt[d] = number of moves for roll d (1..6), cnt[0] = every move (nomove=free);
    popcounts only, no move list (perft's bulk counting and the reroll distribution)."""
    cdef PawnTargets t
    cdef uint64_t own = s.bb[s.side * 8]
    cdef uint64_t occ = s.bb[0] | s.bb[8]
    cdef uint64_t pieces
    cdef int promos, typ, sq, castles, plain = 0
    _pawn_targets(s, &t)
    # pushes and captures never share a target (empty vs enemy square), and the two
    # capture directions come from different origins: plain popcounts are exact
    promos = dc_popcount(t.push & t.last) + dc_popcount(t.cap_w & t.last) + \
        dc_popcount(t.cap_e & t.last)
    cnt[PAWN] = dc_popcount(t.push & ~t.last) + dc_popcount(t.dbl) + \
        dc_popcount(t.cap_w & ~t.last) + dc_popcount(t.cap_e & ~t.last) + 4 * promos
    if s.ep >= 0:
        cnt[PAWN] += dc_popcount(T.pawn[s.side ^ 1][s.ep] & s.bb[s.side * 8 + PAWN])
    for typ in range(KNIGHT, KING + 1):
        pieces = s.bb[s.side * 8 + typ]
        cnt[typ] = 0
        while pieces:
            sq = dc_ctz(pieces)
            pieces &= pieces - 1
            cnt[typ] += dc_popcount(piece_att(&T, typ, sq, occ) & ~own)
        if typ != KING:
            plain += cnt[typ]
            cnt[typ] += promos
    castles = _castles(s, NULL, 0)
    cnt[KING] += castles
    if s.castle_rook:
        cnt[ROOK] += castles
    cnt[0] = cnt[PAWN] + plain + cnt[KING]
