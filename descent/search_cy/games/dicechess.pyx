# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Dice chess (RULES.md, "Dice chess"): brainking's one-die chess and its options.

Players: 0 = White, 1 = Black. Squares a1 = 0 .. h8 = 63 (python-chess numbering).

Node sequence: a die chance node for the side to move (outcomes 1..6: 1 pawn, 2 knight,
3 bishop, 4 rook, 5 queen, 6 king), then that side's player node with the die pending,
then the next side's chance node. Under ``nomove=reroll`` the chance node is uniform over
the die values that have a move (all six, each leading to the pass, when none has one);
under ``pass`` and ``free`` it is uniform over 1..6.

Action ids by node type:

* chance node: the die value 1..6. Text: ``d1`` .. ``d6`` (``3`` and a piece letter such
  as ``b`` are read too).
* player node: ``from | to << 6 | promo << 12`` with promo 0 none, 1 N, 2 B, 3 R, 4 Q;
  the pass is 0 (``0000``; a real move never has from == to). Text: UCI, ``e2e4``,
  ``e7e8q``, castling as the king's move ``e1g1``.

Moves are pseudo-legal: there is no check, a king may stand on an attacked square and is
captured like any piece (that capture ends the game). Castling needs the right, king and
rook at home and empty squares between; attacked squares do not matter.

Positions: FEN, and DFEN at a player node (a seventh field with the rolled piece letter,
upper case for White's roll, lower case for Black's; ``-`` or no seventh field: the die
is not rolled yet). The en passant field is normalised: a double push records its target
square only when an enemy pawn stands beside the pushed pawn (Stockfish's convention,
python-chess's ``en_passant="xfen"``), so equal positions get equal keys and the
repetition rule compares what matters. A position with one king missing is a finished
game (the other side captured it and won); FEN with both kings missing is rejected.

Undo is O(1) from per-action records; the Zobrist key covers pieces, side, castling
rights, en passant file and the pending die. Repetitions are counted over the position
keys (die excluded) back to the last capture or pawn move.
"""
cimport cython
from libc.stdint cimport uint64_t, int8_t
from libc.stdlib cimport malloc, realloc, free, abort
from libc.string cimport memcpy, memset

from descent.search_cy.games.state cimport GameState, CHANCE, TERMINAL, encode_features
from descent.search_cy.games.zobrist cimport fill_keys, splitmix64

from descent.search_cy.games.state import NotationError

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

cdef enum:
    MAX_ACTIONS = 320
    NUM_PLANES = 24
    DRAW = 2

NOMOVE_MODES = ("reroll", "pass", "free")
CASTLE_MODES = ("king", "king-or-rook")
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
PIECE_LETTERS = ".PNBRQK"

cdef uint64_t FILE_A = 0x0101010101010101
cdef uint64_t FILE_H = 0x8080808080808080
cdef uint64_t RANK_1 = 0xFF
cdef uint64_t RANK_8 = 0xFF00000000000000
cdef uint64_t RANK_3 = 0xFF0000
cdef uint64_t RANK_6 = 0xFF0000000000

# ---- attack tables, filled once at import ----
cdef uint64_t KNIGHT_ATT[64]
cdef uint64_t KING_ATT[64]
cdef uint64_t PAWN_ATT[2][64]       # squares a pawn of that colour on sq attacks
cdef uint64_t ROOK_MASK[64]
cdef uint64_t BISHOP_MASK[64]
cdef uint64_t ROOK_MAGIC[64]
cdef uint64_t BISHOP_MAGIC[64]
cdef int ROOK_SHIFT[64]
cdef int BISHOP_SHIFT[64]
cdef uint64_t ROOK_TAB[64][4096]
cdef uint64_t BISHOP_TAB[64][512]
cdef int CASTLE_MASK[64]            # rights kept when a piece leaves or lands on sq

cdef uint64_t PIECE_KEYS[16][64]    # by piece code; rows 0, 7, 8, 15 unused
cdef uint64_t SIDE_KEY
cdef uint64_t CASTLE_KEYS[16]
cdef uint64_t EP_KEYS[8]
cdef uint64_t DIE_KEYS[7]           # DIE_KEYS[0] = 0: no die pending
fill_keys(&PIECE_KEYS[0][0], 16 * 64, 0x4443480000000001)
fill_keys(&SIDE_KEY, 1, 0x4443480000000002)
fill_keys(&CASTLE_KEYS[0], 16, 0x4443480000000003)
fill_keys(&EP_KEYS[0], 8, 0x4443480000000004)
fill_keys(&DIE_KEYS[0], 7, 0x4443480000000005)
CASTLE_KEYS[0] = 0
DIE_KEYS[0] = 0


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


cdef void _find_magic(int sq, bint rook, uint64_t* rng) noexcept nogil:
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
            ROOK_TAB[sq][idx] = _ATTS[i]
        else:
            BISHOP_TAB[sq][idx] = _ATTS[i]
    if rook:
        ROOK_MASK[sq] = mask
        ROOK_MAGIC[sq] = magic
        ROOK_SHIFT[sq] = shift
    else:
        BISHOP_MASK[sq] = mask
        BISHOP_MAGIC[sq] = magic
        BISHOP_SHIFT[sq] = shift


cdef void _init_tables() noexcept nogil:
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
        KNIGHT_ATT[sq] = 0
        KING_ATT[sq] = 0
        for k in range(8):
            rr = r + kdr[k]
            ff = f + kdf[k]
            if 0 <= rr < 8 and 0 <= ff < 8:
                KING_ATT[sq] |= (<uint64_t>1) << (rr * 8 + ff)
            rr = r + ndr[k]
            ff = f + ndf[k]
            if 0 <= rr < 8 and 0 <= ff < 8:
                KNIGHT_ATT[sq] |= (<uint64_t>1) << (rr * 8 + ff)
        PAWN_ATT[0][sq] = 0
        PAWN_ATT[1][sq] = 0
        for ff in range(f - 1, f + 2, 2):
            if 0 <= ff < 8:
                if r < 7:
                    PAWN_ATT[0][sq] |= (<uint64_t>1) << ((r + 1) * 8 + ff)
                if r > 0:
                    PAWN_ATT[1][sq] |= (<uint64_t>1) << ((r - 1) * 8 + ff)
        CASTLE_MASK[sq] = 15
        _find_magic(sq, True, &rng)
        _find_magic(sq, False, &rng)
    CASTLE_MASK[0] = 15 & ~2
    CASTLE_MASK[4] = 15 & ~3
    CASTLE_MASK[7] = 15 & ~1
    CASTLE_MASK[56] = 15 & ~8
    CASTLE_MASK[60] = 15 & ~12
    CASTLE_MASK[63] = 15 & ~4


_init_tables()


cdef inline uint64_t rook_att(int sq, uint64_t occ) noexcept nogil:
    return ROOK_TAB[sq][((occ & ROOK_MASK[sq]) * ROOK_MAGIC[sq]) >> ROOK_SHIFT[sq]]


cdef inline uint64_t bishop_att(int sq, uint64_t occ) noexcept nogil:
    return BISHOP_TAB[sq][((occ & BISHOP_MASK[sq]) * BISHOP_MAGIC[sq]) >> BISHOP_SHIFT[sq]]


cdef inline uint64_t piece_att(int typ, int sq, uint64_t occ) noexcept nogil:
    if typ == KNIGHT:
        return KNIGHT_ATT[sq]
    if typ == BISHOP:
        return bishop_att(sq, occ)
    if typ == ROOK:
        return rook_att(sq, occ)
    if typ == QUEEN:
        return rook_att(sq, occ) | bishop_att(sq, occ)
    return KING_ATT[sq]


# ---- move generation ----
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


cdef inline void _pawn_targets(DiceChessState s, PawnTargets* t) noexcept nogil:
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


cdef int _gen_pawns(DiceChessState s, int* out, int n, int promo_only) noexcept nogil:
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
            caps = PAWN_ATT[s.side ^ 1][s.ep] & s.bb[s.side * 8 + PAWN]
            while caps:
                out[n] = dc_ctz(caps) | (s.ep << 6)
                caps &= caps - 1
                n += 1
    n = _emit_shifted(out, n, t.push & t.last, t.d_push, lo, hi)
    n = _emit_shifted(out, n, t.cap_w & t.last, t.d_w, lo, hi)
    n = _emit_shifted(out, n, t.cap_e & t.last, t.d_e, lo, hi)
    return n


cdef int _gen_pieces(DiceChessState s, int typ, int* out, int n) noexcept nogil:
    cdef uint64_t pieces = s.bb[s.side * 8 + typ]
    cdef uint64_t own = s.bb[s.side * 8]
    cdef uint64_t occ = s.bb[0] | s.bb[8]
    cdef int sq
    while pieces:
        sq = dc_ctz(pieces)
        pieces &= pieces - 1
        n = _emit(out, n, sq, piece_att(typ, sq, occ) & ~own, 0)
    return n


cdef inline int _castles(DiceChessState s, int* out, int n) noexcept nogil:
    """Castling moves (king's two-square move); attacked squares do not matter."""
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


cdef int _gen_die(DiceChessState s, int die, int* out) noexcept nogil:
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


cdef int _gen_all(DiceChessState s, int* out) noexcept nogil:
    """Every move of every piece (nomove=free): promotions offer n, b, r, q."""
    cdef int n = _gen_pawns(s, out, 0, 0)
    cdef int typ
    for typ in range(KNIGHT, KING + 1):
        n = _gen_pieces(s, typ, out, n)
    return _castles(s, out, n)


cdef void _count_moves(DiceChessState s, int* cnt) noexcept nogil:
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
        cnt[PAWN] += dc_popcount(PAWN_ATT[s.side ^ 1][s.ep] & s.bb[s.side * 8 + PAWN])
    for typ in range(KNIGHT, KING + 1):
        pieces = s.bb[s.side * 8 + typ]
        cnt[typ] = 0
        while pieces:
            sq = dc_ctz(pieces)
            pieces &= pieces - 1
            cnt[typ] += dc_popcount(piece_att(typ, sq, occ) & ~own)
        if typ != KING:
            plain += cnt[typ]
            cnt[typ] += promos
    castles = _castles(s, NULL, 0)
    cnt[KING] += castles
    if s.castle_rook:
        cnt[ROOK] += castles
    cnt[0] = cnt[PAWN] + plain + cnt[KING]


cdef inline int _put(DiceChessState s, int sq, int pc) noexcept nogil:
    cdef uint64_t b = (<uint64_t>1) << sq
    s.board[sq] = pc
    s.bb[pc] |= b
    s.bb[pc & 8] |= b
    return pc


cdef inline int _take(DiceChessState s, int sq) noexcept nogil:
    cdef int pc = s.board[sq]
    cdef uint64_t b = ~((<uint64_t>1) << sq)
    s.board[sq] = 0
    s.bb[pc] &= b
    s.bb[pc & 8] &= b
    return pc


@cython.final
cdef class DiceChessState(GameState):
    """A dice chess position with its pending die (module docstring: ids and notation)."""

    def __cinit__(self, game, str nomove="reroll", str castle="king", bint blank=False):
        if nomove not in NOMOVE_MODES:
            raise ValueError(f"dice chess nomove={nomove!r} is not one of "
                             + "|".join(NOMOVE_MODES))
        if castle not in CASTLE_MODES:
            raise ValueError(f"dice chess castle={castle!r} is not one of "
                             + "|".join(CASTLE_MODES))
        self.game = game
        self.nomove = NOMOVE_MODES.index(nomove)
        self.castle_rook = castle == "king-or-rook"
        self.max_actions = MAX_ACTIONS
        self.max_chance_outcomes = 6
        self.num_planes = NUM_PLANES
        self.height = 8
        self.width = 8
        self.num_symmetries = 2
        self.cap_undo = 256
        self.undo = <DCUndo*>malloc(self.cap_undo * sizeof(DCUndo))
        self.reps = <uint64_t*>malloc((self.cap_undo + 1) * sizeof(uint64_t))
        if not self.undo or not self.reps:
            raise MemoryError()
        if not blank:  # c_clone overwrites every field: no position to parse
            self._load(_start_position())

    def __dealloc__(self):
        free(self.undo)
        free(self.reps)

    cdef void _grow(self) noexcept nogil:
        # records are reused, never freed per move: only a full array is reallocated
        cdef int cap = self.cap_undo * 2
        cdef DCUndo* u = <DCUndo*>realloc(self.undo, cap * sizeof(DCUndo))
        if not u:
            abort()
        self.undo = u
        cdef uint64_t* r = <uint64_t*>realloc(self.reps, (cap + 1) * sizeof(uint64_t))
        if not r:
            abort()
        self.reps = r
        self.cap_undo = cap

    # ---- make / unmake ----
    cdef void _move(self, int action) noexcept nogil:
        cdef DCUndo* rec = &self.undo[self.nundo - 1]
        cdef int us = self.side
        cdef int them = us ^ 1
        cdef int frm, to, promo, pc, typ, cap = 0, capsq, mid, i, seen
        cdef uint64_t key = self.key ^ DIE_KEYS[self.die] ^ SIDE_KEY ^ CASTLE_KEYS[self.castling]
        if self.ep >= 0:
            key ^= EP_KEYS[self.ep & 7]
        self.die = 0
        self.ep = -1
        self.halfmove += 1
        if action != 0:
            frm = action & 63
            to = (action >> 6) & 63
            promo = action >> 12
            pc = self.board[frm]
            typ = pc & 7
            capsq = to
            if typ == PAWN and to == rec.ep:
                capsq = to - 8 if us == 0 else to + 8
            if self.board[capsq]:
                cap = _take(self, capsq)
                key ^= PIECE_KEYS[cap][capsq]
            _take(self, frm)
            key ^= PIECE_KEYS[pc][frm]
            if promo:
                pc = us * 8 + promo + 1
            _put(self, to, pc)
            key ^= PIECE_KEYS[pc][to]
            if typ == KING and (to - frm == 2 or frm - to == 2):
                # castling: the rook jumps over the king
                mid = (frm + to) >> 1
                i = to + 1 if to > frm else to - 2
                _take(self, i)
                _put(self, mid, us * 8 + ROOK)
                key ^= PIECE_KEYS[us * 8 + ROOK][i] ^ PIECE_KEYS[us * 8 + ROOK][mid]
            self.castling &= CASTLE_MASK[frm] & CASTLE_MASK[to]
            if typ == PAWN:
                self.halfmove = 0
                if to - frm == 16 or frm - to == 16:
                    mid = (frm + to) >> 1
                    if PAWN_ATT[us][mid] & self.bb[them * 8 + PAWN]:
                        self.ep = mid
                        key ^= EP_KEYS[mid & 7]
            if cap:
                self.halfmove = 0
            rec.captured = cap
        if us == 1:
            self.fullmove += 1
        self.side = them
        key ^= CASTLE_KEYS[self.castling]
        self.key = key
        self.reps[self.nreps] = key
        self.nreps += 1
        if cap & 7 == KING:
            self.result = us
        elif cap and (self.bb[0] | self.bb[8]) == (self.bb[KING] | self.bb[8 + KING]):
            self.result = DRAW
        elif self.halfmove >= 100:
            self.result = DRAW
        elif self.halfmove >= 4:
            # same side to move two plies apart; nothing before the last irreversible move
            seen = 1
            i = self.nreps - 3
            while i >= 0 and i >= self.nreps - 1 - self.halfmove:
                if self.reps[i] == key:
                    seen += 1
                    if seen >= 3:
                        self.result = DRAW
                        break
                i -= 2

    cdef void _unmove(self, DCUndo* rec) noexcept nogil:
        cdef int action = rec.action
        cdef int us = self.side ^ 1
        cdef int frm, to, promo, pc, capsq, mid, rsq
        self.nreps -= 1
        self.side = us
        self.castling = rec.castling
        self.ep = rec.ep
        self.halfmove = rec.halfmove
        self.fullmove = rec.fullmove
        self.die = rec.die
        self.key = rec.key
        self.result = -1
        if action == 0:
            return
        frm = action & 63
        to = (action >> 6) & 63
        promo = action >> 12
        pc = _take(self, to)
        if promo:
            pc = us * 8 + PAWN
        _put(self, frm, pc)
        if pc & 7 == KING and (to - frm == 2 or frm - to == 2):
            mid = (frm + to) >> 1
            rsq = to + 1 if to > frm else to - 2
            _take(self, mid)
            _put(self, rsq, us * 8 + ROOK)
        if rec.captured:
            capsq = to
            if pc & 7 == PAWN and to == rec.ep:
                capsq = to - 8 if us == 0 else to + 8
            _put(self, capsq, rec.captured)

    # ---- kernel interface ----
    cdef int c_player(self) noexcept nogil:
        if self.result >= 0:
            return TERMINAL
        if self.die == 0:
            return CHANCE
        return self.side

    cdef int c_legal(self, int* out) noexcept nogil:
        cdef int n
        if self.result >= 0 or self.die == 0:
            return 0
        n = _gen_die(self, self.die, out)
        if n == 0 and self.nomove == NOMOVE_FREE:
            n = _gen_all(self, out)
        if n == 0:
            out[0] = 0
            n = 1
        return n

    cdef int c_chance(self, int* outcomes, double* probs) noexcept nogil:
        cdef int cnt[7]
        cdef int d, n = 0
        if self.result >= 0 or self.die != 0:
            return 0
        if self.nomove == NOMOVE_REROLL:
            _count_moves(self, cnt)
            for d in range(1, 7):
                if cnt[d]:
                    outcomes[n] = d
                    n += 1
        if n == 0:
            for d in range(1, 7):
                outcomes[d - 1] = d
            n = 6
        for d in range(n):
            probs[d] = 1.0 / n
        return n

    cdef void c_apply(self, int action) noexcept nogil:
        if self.nundo == self.cap_undo:
            self._grow()
        cdef DCUndo* rec = &self.undo[self.nundo]
        self.nundo += 1
        rec.key = self.key
        rec.action = action
        rec.fullmove = self.fullmove
        rec.halfmove = self.halfmove
        rec.captured = 0
        rec.castling = self.castling
        rec.ep = self.ep
        rec.die = self.die
        if self.die == 0:
            rec.chance = 1
            self.die = action
            self.key ^= DIE_KEYS[action]
            return
        rec.chance = 0
        self._ply += 1
        self._move(action)

    cdef void c_undo(self) noexcept nogil:
        self.nundo -= 1
        cdef DCUndo* rec = &self.undo[self.nundo]
        if rec.chance:
            self.die = 0
            self.key = rec.key
            return
        self._ply -= 1
        self._unmove(rec)

    cdef uint64_t c_hash(self) noexcept nogil:
        return self.key

    cdef uint64_t c_full_hash(self) noexcept nogil:
        cdef uint64_t h = CASTLE_KEYS[self.castling] ^ DIE_KEYS[self.die]
        cdef int sq
        for sq in range(64):
            if self.board[sq]:
                h ^= PIECE_KEYS[self.board[sq]][sq]
        if self.side:
            h ^= SIDE_KEY
        if self.ep >= 0:
            h ^= EP_KEYS[self.ep & 7]
        return h

    cdef bint c_terminal(self) noexcept nogil:
        return self.result >= 0

    cdef double c_balance(self, bint material) noexcept nogil:
        # men over the sixteen of a side, or material (pawn 1, knight and bishop 3, rook
        # 5, queen 9) over a side's 39
        cdef int t, c, n
        cdef double total = 0.0
        cdef int worth[7]
        worth[:] = [0, 1, 3, 3, 5, 9, 0]
        for c in range(2):
            for t in range(PAWN, KING + 1):
                n = dc_popcount(self.bb[c * 8 + t])
                total += (1 - 2 * c) * n * (worth[t] if material else 1)
        return total / (39.0 if material else 16.0)

    cdef double c_value(self) noexcept nogil:
        if self.result == 0:
            return 1.0
        if self.result == 1:
            return -1.0
        return 0.0

    cdef bint c_sym_swaps_colours(self, int sym) noexcept nogil:
        return sym == 1

    cdef int c_sym_action(self, int action, int sym) noexcept nogil:
        # die outcomes and the pass are their own images under the colour flip
        if sym == 0 or action == 0 or self.die == 0:
            return action
        return (action & ~4095) | ((action & 63) ^ 56) | ((((action >> 6) & 63) ^ 56) << 6)

    cdef void c_encode(self, float* out, int sym) noexcept nogil:
        cdef int features[NUM_PLANES * 65]
        encode_features(out, features, self.c_features(features, sym), NUM_PLANES, 64)

    cdef int c_features(self, int* out, int sym) noexcept nogil:
        # planes 0..5 White pawn..king, 6..11 Black, 12 White to move, 13..16 castling
        # rights, 17 the en-passant square, 18..23 pending die 1..6 (c_encode writes them)
        cdef int n = 0, sq, pc, colour, i, rights
        cdef int flip = 56 if sym == 1 else 0
        for sq in range(64):
            pc = self.board[sq]
            if pc:
                colour = (pc >> 3) ^ (sym == 1)
                out[n] = (colour * 6 + (pc & 7) - 1) * 64 + (sq ^ flip)
                n += 1
        if self.ep >= 0:
            out[n] = 17 * 64 + (self.ep ^ flip)
            n += 1
        rights = self.castling
        if sym == 1:
            rights = ((rights & 3) << 2) | (rights >> 2)
        if (self.side == 0) != (sym == 1):
            out[n] = NUM_PLANES * 64 + 12
            n += 1
        for i in range(4):
            if rights >> i & 1:
                out[n] = NUM_PLANES * 64 + 13 + i
                n += 1
        if self.die:
            out[n] = NUM_PLANES * 64 + 17 + self.die
            n += 1
        return n

    cdef int c_history_length(self) noexcept nogil:
        return self.nundo

    cdef GameState c_clone(self):
        cdef DiceChessState s = DiceChessState.__new__(
            DiceChessState, self.game, NOMOVE_MODES[self.nomove],
            CASTLE_MODES[<int>self.castle_rook], True)
        while s.cap_undo < self.nundo:
            s._grow()
        memcpy(s.bb, self.bb, sizeof(self.bb))
        memcpy(s.board, self.board, sizeof(self.board))
        memcpy(s.undo, self.undo, self.nundo * sizeof(DCUndo))
        memcpy(s.reps, self.reps, self.nreps * sizeof(uint64_t))
        s.side = self.side
        s.castling = self.castling
        s.ep = self.ep
        s.halfmove = self.halfmove
        s.fullmove = self.fullmove
        s.die = self.die
        s.result = self.result
        s.key = self.key
        s.nundo = self.nundo
        s.nreps = self.nreps
        s._ply = self._ply
        return s

    # ---- Python API ----
    def _load(self, tuple pos):
        """Install a parsed position (from _parse_fen); history and counters restart."""
        cdef int sq
        board, side, castling, ep, halfmove, fullmove, die = pos
        memset(self.bb, 0, sizeof(self.bb))
        memset(self.board, 0, sizeof(self.board))
        for sq in range(64):
            if board[sq]:
                _put(self, sq, board[sq])
        self.side = side
        self.castling = castling
        self.ep = ep
        self.halfmove = halfmove
        self.fullmove = fullmove
        self.die = die
        self.nundo = 0
        self._ply = 0
        self.key = self.c_full_hash()
        self.reps[0] = self.key ^ DIE_KEYS[die]
        self.nreps = 1
        self.result = -1
        if not self.bb[KING]:
            self.result = 1
        elif not self.bb[8 + KING]:
            self.result = 0
        elif (self.bb[0] | self.bb[8]) == (self.bb[KING] | self.bb[8 + KING]) \
                or self.halfmove >= 100:
            self.result = DRAW

    def set_fen(self, str text) -> None:
        """Set the position from FEN or DFEN (module docstring); NotationError naming the
        problem leaves the state unchanged. History restarts at this position."""
        self._load(_parse_fen(text, self.nomove, self.castle_rook))

    @property
    def nomove(self) -> str:
        return NOMOVE_MODES[self.nomove]

    @property
    def castle(self) -> str:
        return CASTLE_MODES[<int>self.castle_rook]

    @property
    def side_to_move(self) -> int:
        """0 White, 1 Black: the side that rolls or moves next."""
        return self.side

    @property
    def pending_die(self) -> int:
        """The rolled die 1..6, 0 at a chance node."""
        return self.die

    @property
    def halfmove_clock(self) -> int:
        return self.halfmove

    @property
    def fullmove_number(self) -> int:
        return self.fullmove

    @property
    def ep_square(self) -> int:
        """En passant target square (normalised, module docstring), -1 when none."""
        return self.ep

    def winner_colour(self) -> int:
        """-1 running, 0 White won, 1 Black won, 2 draw."""
        return self.result

    def piece_at(self, int square) -> str:
        """FEN letter of the piece on square 0..63 (upper case White), '.' when empty."""
        if not 0 <= square < 64:
            raise IndexError(f"square {square} is off the board (0..63)")
        pc = self.board[square]
        if not pc:
            return "."
        letter = PIECE_LETTERS[pc & 7]
        return letter if pc < 8 else letter.lower()

    def moves_for_die(self, int die) -> list:
        """Sorted move ids a roll of die (1..6) gives the side to move, ignoring the
        nomove option (empty when that piece type cannot move); the state is unchanged."""
        cdef int buf[MAX_ACTIONS]
        cdef int n
        if not 1 <= die <= 6:
            raise ValueError(f"die {die} out of range 1..6")
        n = _gen_die(self, die, buf)
        return sorted([buf[i] for i in range(n)])

    def move_counts(self) -> list:
        """[every move, roll 1, .., roll 6] counted without move lists (perft's bulk
        counter); the state is unchanged."""
        cdef int cnt[7]
        _count_moves(self, cnt)
        return [cnt[i] for i in range(7)]

    def history(self) -> list:
        return [self.undo[i].action for i in range(self.nundo)]

    def action_to_string(self, int action) -> str:
        if self.result < 0 and self.die == 0:
            if not 1 <= action <= 6:
                raise NotationError(f"die outcome {action} is not 1..6")
            return f"d{action}"
        return move_to_uci(action)

    def string_to_action(self, str text) -> int:
        if self.result < 0 and self.die == 0:
            return parse_die(text)
        return parse_uci(text)

    def snapshot(self) -> tuple:
        cdef DCUndo* r
        cdef int i
        records = []
        for i in range(self.nundo):
            r = &self.undo[i]
            records.append((r.key, r.action, r.fullmove, r.halfmove, r.captured, r.castling,
                            r.ep, r.die, r.chance))
        return (
            tuple(self.bb[i] for i in range(16)),
            bytes([self.board[i] for i in range(64)]),
            self.side, self.castling, self.ep, self.halfmove, self.fullmove, self.die,
            self.result, self._ply, self.key, tuple(self.history()), self.nundo,
            tuple(records), tuple(self.reps[i] for i in range(self.nreps)),
            self.nomove, self.castle_rook,
        )

    def fen(self) -> str:
        """Six-field FEN of the position (the pending die left out)."""
        rows = []
        for rank in range(7, -1, -1):
            row = ""
            empty = 0
            for f in range(8):
                letter = self.piece_at(rank * 8 + f)
                if letter == ".":
                    empty += 1
                    continue
                if empty:
                    row += str(empty)
                    empty = 0
                row += letter
            if empty:
                row += str(empty)
            rows.append(row)
        rights = "".join(c for i, c in enumerate("KQkq") if self.castling >> i & 1) or "-"
        ep = square_name(self.ep) if self.ep >= 0 else "-"
        return (f"{'/'.join(rows)} {'wb'[self.side]} {rights} {ep} "
                f"{self.halfmove} {self.fullmove}")

    def to_text(self) -> str:
        """FEN at a chance node or a finished game; DFEN (seventh field: the rolled piece
        letter, upper case for White) when a die is pending."""
        if self.die == 0 or self.result >= 0:
            return self.fen()
        letter = PIECE_LETTERS[self.die]
        return self.fen() + " " + (letter if self.side == 0 else letter.lower())

    def __str__(self) -> str:
        lines = []
        for rank in range(7, -1, -1):
            lines.append(f"{rank + 1} " + " ".join(self.piece_at(rank * 8 + f)
                                                   for f in range(8)))
        lines.append("  a b c d e f g h")
        who = ("White", "Black")[self.side]
        if self.result >= 0:
            lines.append("game over: " + ("White wins", "Black wins", "draw")[self.result])
        elif self.die == 0:
            lines.append(f"{who} to roll")
        else:
            lines.append(f"{who} to move a {PIECE_NAMES[self.die]} (rolled {self.die})")
        return "\n".join(lines)


PIECE_NAMES = ("", "pawn", "knight", "bishop", "rook", "queen", "king")
_START = []


def _start_position() -> tuple:
    if not _START:
        _START.append(_parse_fen(START_FEN))
    return _START[0]


# ---- notation (Python level, never on the search path) ----
def square_name(int sq) -> str:
    if not 0 <= sq < 64:
        raise NotationError(f"square id {sq} is off the board (0..63)")
    return "abcdefgh"[sq % 8] + str(sq // 8 + 1)


def parse_square(str text) -> int:
    t = text.strip().lower()
    if len(t) != 2 or t[0] not in "abcdefgh" or t[1] not in "12345678":
        raise NotationError(f"malformed square {text!r}: expected a file a..h and a rank 1..8")
    return (ord(t[1]) - ord("1")) * 8 + ord(t[0]) - ord("a")


def move_to_uci(int action) -> str:
    """Move id -> UCI text; 0 is the pass ``0000``."""
    if action == 0:
        return "0000"
    frm = action & 63
    to = (action >> 6) & 63
    promo = action >> 12
    if action < 0 or promo > 4 or frm == to:
        raise NotationError(f"action {action} is not a dice chess move id")
    return square_name(frm) + square_name(to) + ("", "n", "b", "r", "q")[promo]


def parse_uci(str text) -> int:
    """UCI text (``e2e4``, ``e7e8q``, ``0000``) -> move id; legality is not checked."""
    t = text.strip()
    if t == "0000":
        return 0
    if len(t) not in (4, 5):
        raise NotationError(f"malformed move {text!r}: expected UCI like e2e4, e7e8q or 0000")
    frm = parse_square(t[0:2])
    to = parse_square(t[2:4])
    if frm == to:
        raise NotationError(f"malformed move {text!r}: from and to squares are equal "
                            "(the pass is 0000)")
    promo = 0
    if len(t) == 5:
        p = t[4].lower()
        if p == "k":
            raise NotationError(f"move {text!r}: a pawn never promotes to a king")
        if p not in "nbrq":
            raise NotationError(f"move {text!r}: promotion piece {t[4]!r} is not n, b, r or q")
        promo = "nbrq".index(p) + 1
    return frm | (to << 6) | (promo << 12)


def parse_die(str text) -> int:
    """Die outcome text -> 1..6: ``d3``, ``3`` or the piece letter (p n b r q k)."""
    t = text.strip().lower()
    if len(t) == 2 and t[0] == "d":
        t = t[1]
    if len(t) == 1 and t in "123456":
        return int(t)
    if len(t) == 1 and t in "pnbrqk":
        return "pnbrqk".index(t) + 1
    raise NotationError(f"malformed die roll {text!r}: expected d1..d6, 1..6 or a piece "
                        "letter p n b r q k")


def _parse_fen(str text, int nomove=NOMOVE_REROLL, bint castle_rook=False) -> tuple:
    """FEN or DFEN -> (board codes, side, castling, ep, halfmove, fullmove, die), checked;
    NotationError names the first problem."""
    fields = text.split()
    if len(fields) not in (6, 7):
        raise NotationError(f"FEN {text!r} has {len(fields)} fields: expected 6 (FEN) or 7 "
                            "(DFEN: FEN + rolled piece letter)")
    placement, side_f, castle_f, ep_f, half_f, full_f = fields[:6]
    ranks = placement.split("/")
    if len(ranks) != 8:
        raise NotationError(f"FEN board {placement!r} has {len(ranks)} ranks, expected 8")
    board = [0] * 64
    for i, row in enumerate(ranks):
        rank = 7 - i
        f = 0
        for k, ch in enumerate(row):
            if ch in "12345678":
                if k and row[k - 1] in "12345678":
                    raise NotationError(f"FEN rank {rank + 1} {row!r}: two digits in a row")
                f += int(ch)
            elif ch.upper() in "PNBRQK":
                if f < 8:
                    board[rank * 8 + f] = (8 if ch.islower() else 0) + "PNBRQK".index(
                        ch.upper()) + 1
                f += 1
            else:
                raise NotationError(f"FEN rank {rank + 1} {row!r}: bad piece letter {ch!r} "
                                    "(expected PNBRQK, pnbrqk or a digit 1..8)")
            if f > 8:
                break
        if f != 8:
            raise NotationError(f"FEN rank {rank + 1} {row!r} covers {f} squares, expected 8")
    for colour, name in ((0, "White"), (1, "Black")):
        count = [sum(1 for c in board if c == colour * 8 + t) for t in range(7)]
        if count[KING] > 1:
            raise NotationError(f"FEN: {name} has {count[KING]} kings")
        total = sum(count[1:])
        if total > 16:
            raise NotationError(f"FEN: {name} has {total} pieces (at most 16)")
        if count[PAWN] > 8:
            raise NotationError(f"FEN: {name} has {count[PAWN]} pawns (at most 8)")
        promoted = (max(0, count[KNIGHT] - 2) + max(0, count[BISHOP] - 2)
                    + max(0, count[ROOK] - 2) + max(0, count[QUEEN] - 1))
        if promoted > 8 - count[PAWN]:
            raise NotationError(f"FEN: {name} has more promoted pieces ({promoted}) than "
                                f"missing pawns ({8 - count[PAWN]})")
    if KING not in board and 8 + KING not in board:
        raise NotationError("FEN: both kings are missing")
    for sq in list(range(8)) + list(range(56, 64)):
        if board[sq] & 7 == PAWN:
            raise NotationError(f"FEN: pawn on {square_name(sq)} (pawns never stand on the "
                                "first or last rank)")
    if side_f not in ("w", "b"):
        raise NotationError(f"FEN side to move {side_f!r}: expected w or b")
    side = 0 if side_f == "w" else 1
    castling = 0
    if castle_f != "-":
        for ch in castle_f:
            if ch not in "KQkq":
                raise NotationError(f"FEN castling field {castle_f!r}: bad letter {ch!r} "
                                    "(expected KQkq or -)")
            bit = 1 << "KQkq".index(ch)
            if castling & bit:
                raise NotationError(f"FEN castling field {castle_f!r}: {ch!r} given twice")
            castling |= bit
        if castle_f != "".join(c for c in "KQkq" if c in castle_f):
            raise NotationError(f"FEN castling field {castle_f!r}: letters out of order "
                                "(expected a subset of KQkq in that order)")
        for i, (ksq, rsq) in enumerate(((4, 7), (4, 0), (60, 63), (60, 56))):
            if castling >> i & 1:
                colour = i // 2
                if board[ksq] != colour * 8 + KING or board[rsq] != colour * 8 + ROOK:
                    raise NotationError(
                        f"FEN castling right {'KQkq'[i]!r} without the "
                        f"{('White', 'Black')[colour]} king on {square_name(ksq)} and rook "
                        f"on {square_name(rsq)}")
    ep = -1
    if ep_f != "-":
        try:
            ep = parse_square(ep_f)
        except NotationError:
            raise NotationError(f"FEN en passant field {ep_f!r}: expected a square or -") \
                from None
        want = 5 if side == 0 else 2
        if ep // 8 != want:
            raise NotationError(f"FEN en passant square {ep_f}: must be on rank {want + 1} "
                                f"with {('White', 'Black')[side]} to move")
        pushed = ep - 8 if side == 0 else ep + 8
        origin = ep + 8 if side == 0 else ep - 8
        if board[pushed] != (side ^ 1) * 8 + PAWN or board[ep] or board[origin]:
            raise NotationError(f"FEN en passant square {ep_f}: no pawn just made a double "
                                f"step there (needs a pawn on {square_name(pushed)} and "
                                f"{ep_f}, {square_name(origin)} empty)")
        # normalised: kept only when a pawn of the side to move can take en passant
        beside = [pushed + df for df in (-1, 1) if 0 <= pushed % 8 + df < 8]
        if not any(board[sq] == side * 8 + PAWN for sq in beside):
            ep = -1
    try:
        halfmove = int(half_f)
        fullmove = int(full_f)
    except ValueError:
        raise NotationError(f"FEN move counters {half_f!r} {full_f!r}: expected integers") \
            from None
    if not (half_f.isascii() and half_f.isdigit()) or halfmove < 0:
        raise NotationError(f"FEN halfmove clock {half_f!r}: expected an integer >= 0")
    if not (full_f.isascii() and full_f.isdigit()) or fullmove < 1:
        raise NotationError(f"FEN fullmove number {full_f!r}: expected an integer >= 1")
    if halfmove > 10000 or fullmove > 100000:
        raise NotationError(f"FEN move counters {half_f} {full_f} are out of range")
    die = 0
    if len(fields) == 7 and fields[6] != "-":
        d = fields[6]
        if len(d) != 1 or d.upper() not in "PNBRQK":
            raise NotationError(f"DFEN die field {d!r}: expected a piece letter "
                                "(PNBRQK for White's roll, pnbrqk for Black's) or -")
        if d.isupper() != (side == 0):
            raise NotationError(f"DFEN die field {d!r} is a {('White', 'Black')[side]}"
                                f"-to-move roll only in {('upper', 'lower')[side]} case")
        die = "PNBRQK".index(d.upper()) + 1
        if KING not in board or 8 + KING not in board:
            raise NotationError("DFEN: a die is given but a king is missing (game over)")
    pos = (tuple(board), side, castling, ep, halfmove, fullmove, die)
    if die and nomove == NOMOVE_REROLL:
        probe = DiceChessState.__new__(DiceChessState, None, NOMOVE_MODES[nomove],
                                       CASTLE_MODES[<int>castle_rook], True)
        probe._load(pos[:6] + (0,))
        counts = probe.move_counts()
        if counts[die] == 0 and any(counts[1:]) and probe.winner_colour() < 0:
            raise NotationError(f"DFEN die {fields[6]!r}: under nomove=reroll a "
                                f"{PIECE_NAMES[die]} that cannot move is never rolled")
    return pos


def parse_fen(str text, str nomove="reroll", str castle="king") -> tuple:
    """Checked FEN/DFEN -> (board codes, side, castling bits, ep, halfmove, fullmove, die)."""
    return _parse_fen(text, NOMOVE_MODES.index(nomove), castle == "king-or-rook")


# ---- perft ----
cdef long long _perft(DiceChessState s, int depth) noexcept nogil:
    """Leaves after depth player moves; chance nodes expand every outcome without using
    depth. A finished game before the horizon has no leaves."""
    cdef int moves[MAX_ACTIONS]
    cdef int cnt[7]
    cdef int n, i, d
    cdef long long total = 0
    if depth == 0:
        return 1
    if s.result >= 0:
        return 0
    if s.die == 0:
        if depth == 1:
            # bulk counting: every roll's move count from one popcount pass
            _count_moves(s, cnt)
            n = 0
            for d in range(1, 7):
                if cnt[d]:
                    total += cnt[d]
                    n += 1
                elif s.nomove == NOMOVE_PASS:
                    total += 1
                elif s.nomove == NOMOVE_FREE:
                    total += cnt[0] if cnt[0] else 1
            if n == 0 and s.nomove == NOMOVE_REROLL:
                total = 6
            return total
        # the outcomes of c_chance, without its probabilities
        _count_moves(s, cnt)
        n = 0
        if s.nomove == NOMOVE_REROLL:
            for d in range(1, 7):
                if cnt[d]:
                    n += 1
        for d in range(1, 7):
            if n == 0 or cnt[d]:
                s.c_apply(d)
                total += _perft(s, depth)
                s.c_undo()
        return total
    n = s.c_legal(moves)
    if depth == 1:
        return n
    for i in range(n):
        s.c_apply(moves[i])
        total += _perft(s, depth - 1)
        s.c_undo()
    return total


def perft(DiceChessState state, int depth) -> int:
    """Perft of a chance or player node: leaves after depth player moves (passes count
    as moves), every die outcome expanded, unweighted. Blocks; runs without the GIL."""
    cdef long long total
    if depth < 0:
        raise ValueError(f"perft depth {depth} < 0")
    with nogil:
        total = _perft(state, depth)
    return total


def perft_per_die(DiceChessState state, int depth) -> dict:
    """{die outcome: perft after that roll} at a chance node (outcomes as chance_outcomes
    gives them: under nomove=reroll only the dice that have a move)."""
    if state.c_player() != CHANCE:
        raise ValueError("perft_per_die needs a chance node (no die pending)")
    result = {}
    for die, _ in state.chance_outcomes():
        state.c_apply(die)
        try:
            result[die] = perft(state, depth)
        finally:
            state.c_undo()
    return result
