# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Dice chess attack tables (dicechess_attacks.pxd): knight, king and pawn attacks by
square, and magic bitboards for rooks and bishops. build_attacks fills a DCAttacks once
(the move generator's, at import); the magic multipliers come from a fixed-seed search,
so the tables are the same on every run."""
from libc.stdint cimport uint64_t
from libc.string cimport memset

from descent.search_cy.games.dicechess_types cimport dc_popcount
from descent.search_cy.games.zobrist cimport splitmix64


cdef uint64_t _ray_attacks(int sq, uint64_t occ, bint rook, bint mask_only) noexcept nogil:
    """Slow sliding attacks (table construction only). mask_only: the relevant-occupancy
    mask, i.e. the rays without their last square (an edge blocker changes nothing)."""
    cdef int drs[4]
    cdef int dfs[4]
    cdef int k, r, f
    cdef uint64_t att = 0, b
    if rook:
        drs[0] = 1; dfs[0] = 0; drs[1] = -1; dfs[1] = 0
        drs[2] = 0; dfs[2] = 1; drs[3] = 0; dfs[3] = -1
    else:
        drs[0] = 1; dfs[0] = 1; drs[1] = 1; dfs[1] = -1
        drs[2] = -1; dfs[2] = 1; drs[3] = -1; dfs[3] = -1
    for k in range(4):
        r = sq // 8 + drs[k]
        f = sq % 8 + dfs[k]
        while 0 <= r < 8 and 0 <= f < 8:
            if mask_only and not (0 <= r + drs[k] < 8 and 0 <= f + dfs[k] < 8):
                break
            b = (<uint64_t>1) << (r * 8 + f)
            att |= b
            if occ & b:
                break
            r += drs[k]
            f += dfs[k]
    return att


cdef uint64_t _OCCS[4096]
cdef uint64_t _ATTS[4096]
cdef uint64_t _USED[4096]
cdef int _EPOCH[4096]


cdef void _find_magic(DCAttacks* t, int sq, bint rook, uint64_t* rng) noexcept nogil:
    """Search a magic multiplier for sq with a fixed-seed generator (deterministic)."""
    cdef uint64_t mask = _ray_attacks(sq, 0, rook, True)
    cdef int bits = dc_popcount(mask)
    cdef int n = 1 << bits
    cdef int shift = 64 - bits
    cdef int i, idx, attempt = 0
    cdef uint64_t occ = 0, magic = 0
    cdef bint ok
    # carry-rippler: every subset of the mask
    for i in range(n):
        _OCCS[i] = occ
        _ATTS[i] = _ray_attacks(sq, occ, rook, False)
        occ = (occ - mask) & mask
    memset(_EPOCH, 0, sizeof(_EPOCH))
    while True:
        magic = splitmix64(rng) & splitmix64(rng) & splitmix64(rng)
        if dc_popcount((mask * magic) & <uint64_t>0xFF00000000000000) < 6:
            continue
        attempt += 1
        ok = True
        for i in range(n):
            idx = <int>((_OCCS[i] * magic) >> shift)
            if _EPOCH[idx] != attempt:
                _EPOCH[idx] = attempt
                _USED[idx] = _ATTS[i]
            elif _USED[idx] != _ATTS[i]:
                ok = False
                break
        if ok:
            break
    for i in range(n):
        idx = <int>((_OCCS[i] * magic) >> shift)
        if rook:
            t.rook_tab[sq][idx] = _ATTS[i]
        else:
            t.bishop_tab[sq][idx] = _ATTS[i]
    if rook:
        t.rook_mask[sq] = mask
        t.rook_magic[sq] = magic
        t.rook_shift[sq] = shift
    else:
        t.bishop_mask[sq] = mask
        t.bishop_magic[sq] = magic
        t.bishop_shift[sq] = shift


cdef void build_attacks(DCAttacks* t) noexcept nogil:
    """Fill every table of t (leapers, pawns, magic sliders); not thread-safe (shared
    scratch), called once at import."""
    cdef int sq, r, f, k, rr, ff
    cdef int kdr[8]
    cdef int kdf[8]
    cdef int ndr[8]
    cdef int ndf[8]
    cdef uint64_t rng = 0x4443480000000010
    kdr[:] = [1, 1, 1, 0, 0, -1, -1, -1]
    kdf[:] = [1, 0, -1, 1, -1, 1, 0, -1]
    ndr[:] = [2, 2, 1, 1, -1, -1, -2, -2]
    ndf[:] = [1, -1, 2, -2, 2, -2, 1, -1]
    for sq in range(64):
        r = sq // 8
        f = sq % 8
        t.knight[sq] = 0
        t.king[sq] = 0
        for k in range(8):
            rr = r + kdr[k]
            ff = f + kdf[k]
            if 0 <= rr < 8 and 0 <= ff < 8:
                t.king[sq] |= (<uint64_t>1) << (rr * 8 + ff)
            rr = r + ndr[k]
            ff = f + ndf[k]
            if 0 <= rr < 8 and 0 <= ff < 8:
                t.knight[sq] |= (<uint64_t>1) << (rr * 8 + ff)
        t.pawn[0][sq] = 0
        t.pawn[1][sq] = 0
        for ff in range(f - 1, f + 2, 2):
            if 0 <= ff < 8:
                if r < 7:
                    t.pawn[0][sq] |= (<uint64_t>1) << ((r + 1) * 8 + ff)
                if r > 0:
                    t.pawn[1][sq] |= (<uint64_t>1) << ((r - 1) * 8 + ff)
        _find_magic(t, sq, True, &rng)
        _find_magic(t, sq, False, &rng)
