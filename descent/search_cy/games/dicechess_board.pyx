# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The dice chess position and its make/unmake (dicechess_board.pxd; the rules and the
notation: dicechess.pyx's module docstring).

DiceChessBoard holds the bitboards and the mailbox, the side to roll or to move, castling
rights, the normalised en passant square, the move counters, the pending die and the
result; c_apply/c_undo play and take back a die outcome or a move in O(1) from
per-action records. The Zobrist key covers pieces, side, castling rights, en passant
file and the pending die. Repetitions are counted over the position keys (die excluded)
back to the last capture or pawn move. Moves are not checked here: DiceChessState
generates them.
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, realloc, free, abort
from libc.string cimport memcpy, memset

from descent.search_cy.games.dicechess_types cimport PAWN, ROOK, KING
from descent.search_cy.games.state cimport mobility_copy, mobility_count, mobility_restart
from descent.search_cy.games.zobrist cimport fill_keys

cdef uint64_t FILE_A = 0x0101010101010101
cdef uint64_t FILE_H = 0x8080808080808080

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

cdef int _sq
for _sq in range(64):
    CASTLE_MASK[_sq] = 15
CASTLE_MASK[0] = 15 & ~2
CASTLE_MASK[4] = 15 & ~3
CASTLE_MASK[7] = 15 & ~1
CASTLE_MASK[56] = 15 & ~8
CASTLE_MASK[60] = 15 & ~12
CASTLE_MASK[63] = 15 & ~4


cdef inline int _put(DiceChessBoard s, int sq, int pc) noexcept nogil:
    cdef uint64_t b = (<uint64_t>1) << sq
    s.board[sq] = pc
    s.bb[pc] |= b
    s.bb[pc & 8] |= b
    if s.nnue != NULL:
        dc_nnue_piece(s.nnue, s.nnue_acc, pc, sq, 1)
    return pc


cdef inline int _take(DiceChessBoard s, int sq) noexcept nogil:
    cdef int pc = s.board[sq]
    cdef uint64_t b = ~((<uint64_t>1) << sq)
    s.board[sq] = 0
    s.bb[pc] &= b
    s.bb[pc & 8] &= b
    if s.nnue != NULL:
        dc_nnue_piece(s.nnue, s.nnue_acc, pc, sq, -1)
    return pc


cdef inline uint64_t _beside(int sq) noexcept nogil:
    """The squares left and right of sq on its rank: where an enemy pawn stands that can
    take a pawn that just double-stepped to sq en passant."""
    cdef uint64_t b = (<uint64_t>1) << sq
    return ((b & ~FILE_A) >> 1) | ((b & ~FILE_H) << 1)


cdef inline void _end_rules(DiceChessBoard s, int us, int cap) noexcept nogil:
    """The result after a move by us that took cap (0 none): a king capture wins; bare
    kings, the fifty-move rule and threefold repetition draw."""
    cdef int seen, i
    cdef uint64_t key = s.key
    if cap & 7 == KING:
        s.result = us
    elif cap and (s.bb[0] | s.bb[8]) == (s.bb[KING] | s.bb[8 + KING]):
        s.result = DRAW
    elif s.halfmove >= 100:
        s.result = DRAW
    elif s.halfmove >= 4:
        # same side to move two plies apart; nothing before the last irreversible move
        seen = 1
        i = s.nreps - 3
        while i >= 0 and i >= s.nreps - 1 - s.halfmove:
            if s.reps[i] == key:
                seen += 1
                if seen >= 3:
                    s.result = DRAW
                    break
            i -= 2


cdef inline void _make(DiceChessBoard s, int action) noexcept nogil:
    """Play move action (0: the pass) for the side with the pending die; the record on
    top of s.undo already holds the state before it."""
    cdef DCUndo* rec = &s.undo[s.nundo - 1]
    cdef int us = s.side
    cdef int them = us ^ 1
    cdef int frm, to, promo, pc, typ, cap = 0, capsq, mid, i
    cdef uint64_t key = s.key ^ DIE_KEYS[s.die] ^ SIDE_KEY ^ CASTLE_KEYS[s.castling]
    if s.ep >= 0:
        key ^= EP_KEYS[s.ep & 7]
    s.die = 0
    s.ep = -1
    s.halfmove += 1
    if action != 0:
        frm = action & 63
        to = (action >> 6) & 63
        promo = action >> 12
        pc = s.board[frm]
        typ = pc & 7
        capsq = to
        if typ == PAWN and to == rec.ep:
            capsq = to - 8 if us == 0 else to + 8
        if s.board[capsq]:
            cap = _take(s, capsq)
            key ^= PIECE_KEYS[cap][capsq]
        _take(s, frm)
        key ^= PIECE_KEYS[pc][frm]
        if promo:
            pc = us * 8 + promo + 1
        _put(s, to, pc)
        key ^= PIECE_KEYS[pc][to]
        if typ == KING and (to - frm == 2 or frm - to == 2):
            # castling: the rook jumps over the king
            mid = (frm + to) >> 1
            i = to + 1 if to > frm else to - 2
            _take(s, i)
            _put(s, mid, us * 8 + ROOK)
            key ^= PIECE_KEYS[us * 8 + ROOK][i] ^ PIECE_KEYS[us * 8 + ROOK][mid]
        s.castling &= CASTLE_MASK[frm] & CASTLE_MASK[to]
        if typ == PAWN:
            s.halfmove = 0
            if to - frm == 16 or frm - to == 16:
                mid = (frm + to) >> 1
                if _beside(to) & s.bb[them * 8 + PAWN]:
                    s.ep = mid
                    key ^= EP_KEYS[mid & 7]
        if cap:
            s.halfmove = 0
        rec.captured = cap
    if us == 1:
        s.fullmove += 1
    s.side = them
    key ^= CASTLE_KEYS[s.castling]
    s.key = key
    s.reps[s.nreps] = key
    s.nreps += 1
    _end_rules(s, us, cap)


cdef inline void _unmake(DiceChessBoard s, DCUndo* rec) noexcept nogil:
    cdef int action = rec.action
    cdef int us = s.side ^ 1
    cdef int frm, to, promo, pc, capsq, mid, rsq
    s.nreps -= 1
    s.side = us
    s.castling = rec.castling
    s.ep = rec.ep
    s.halfmove = rec.halfmove
    s.fullmove = rec.fullmove
    s.die = rec.die
    s.key = rec.key
    s.result = -1
    if action == 0:
        return
    frm = action & 63
    to = (action >> 6) & 63
    promo = action >> 12
    pc = _take(s, to)
    if promo:
        pc = us * 8 + PAWN
    _put(s, frm, pc)
    if pc & 7 == KING and (to - frm == 2 or frm - to == 2):
        mid = (frm + to) >> 1
        rsq = to + 1 if to > frm else to - 2
        _take(s, mid)
        _put(s, rsq, us * 8 + ROOK)
    if rec.captured:
        capsq = to
        if pc & 7 == PAWN and to == rec.ep:
            capsq = to - 8 if us == 0 else to + 8
        _put(s, capsq, rec.captured)


cdef class DiceChessBoard(GameState):
    """A dice chess position with its history (dicechess_board's module docstring);
    DiceChessState adds the rules."""

    def __cinit__(self, *args, **kwargs):
        if type(self) is DiceChessBoard:
            raise TypeError("DiceChessBoard holds DiceChessState's position: create a "
                            "DiceChessState")
        self.cap_undo = 256
        self.undo = <DCUndo*>malloc(self.cap_undo * sizeof(DCUndo))
        self.reps = <uint64_t*>malloc((self.cap_undo + 1) * sizeof(uint64_t))
        if not self.undo or not self.reps:
            raise MemoryError()

    def __dealloc__(self):
        free(self.undo)
        free(self.reps)
        dc_nnue_release(self.nnue)

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

    cdef int _install(self, tuple pos) except -1:
        """Install a parsed position (board codes, side, castling, ep, halfmove, fullmove,
        die: dicechess_notation.parse_position); history and counters restart."""
        cdef int sq
        board, side, castling, ep, halfmove, fullmove, die = pos
        self.c_nnue_attach(NULL)
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
        mobility_restart(self)
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
        return 0

    cdef void _copy_to(self, DiceChessBoard s) noexcept nogil:
        """Copy position and history into s (same options; its arrays grow to fit)."""
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
        mobility_copy(self, s)
        dc_nnue_retain(self.nnue)
        dc_nnue_release(s.nnue)
        s.nnue = self.nnue
        if self.nnue != NULL:
            memcpy(s.nnue_acc, self.nnue_acc, sizeof(self.nnue_acc))

    cdef void c_nnue_attach(self, dc_nnue* net) noexcept nogil:
        """Keeps net's accumulator from now on (summed afresh here), or none (NULL)."""
        if net == self.nnue:
            return
        dc_nnue_retain(net)
        dc_nnue_release(self.nnue)
        self.nnue = net
        if net != NULL:
            dc_nnue_refresh(net, self.nnue_acc, self.board)

    # ---- make / unmake (the kernel interface's half that changes the position) ----
    cdef void c_apply(self, int action) noexcept nogil:
        if self._mob_on and self.die != 0:
            mobility_count(self, 1)      # a move (a die outcome is nobody's turn)
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
        _make(self, action)

    cdef void c_undo(self) noexcept nogil:
        self.nundo -= 1
        cdef DCUndo* rec = &self.undo[self.nundo]
        if rec.chance:
            self.die = 0
            self.key = rec.key
            return
        self._ply -= 1
        _unmake(self, rec)
        if self._mob_on:
            mobility_count(self, -1)

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

    cdef int c_history_length(self) noexcept nogil:
        return self.nundo
