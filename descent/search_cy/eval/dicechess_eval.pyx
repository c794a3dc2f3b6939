# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Dice chess heuristic: material, piece-square tables, and what the next rolls can take.

The static part is Michniewski's "simplified evaluation function" (material and one
piece-square table per piece, in centipawns) plus a little mobility. On top of it come the
dice: a side that rolls a piece type attacking the enemy king wins on the spot, so each
side's chance of a king capture is the probability of rolling one of the attacking types
(uniform over the types that can move under ``nomove=reroll``, over all six otherwise).
Ordinary captures enter as the expected gain of the coming roll: per die value the best
capture of that type, less the attacker's value times the chance the victim's side rolls
a type that recaptures. The result mixes the king-capture chances with tanh of the score.
"""
from libc.math cimport tanh
from libc.stdint cimport uint64_t

from descent.search_cy.games.state cimport GameState
from descent.search_cy.games.dicechess cimport (
    DiceChessState, PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING, NOMOVE_REROLL, NOMOVE_FREE)
from descent.search_cy.games.dicechess_attacks cimport DCAttacks, build_attacks, piece_att
from descent.search_cy.eval.evaluator cimport HeuristicEvaluator

cdef extern from *:
    """
    #if defined(__x86_64__) && defined(__GNUC__)
    #pragma GCC target("popcnt")
    #endif
    static inline int dce_popcount(unsigned long long x) { return __builtin_popcountll(x); }
    static inline int dce_ctz(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int dce_popcount(uint64_t x) noexcept nogil
    int dce_ctz(uint64_t x) noexcept nogil


cdef uint64_t RANK_1 = 0xFF
cdef uint64_t RANK_8 = 0xFF00000000000000

# The tunable weights (DiceChessEvaluator.WEIGHTS; an instance's own values in self.w).
# The expected capture gains: the roller's own gain is likely (it chooses its best capture
# of the rolled type), the reply comes after a move that may defuse it. The king-capture
# chance of the opponent survives our move, less so when our die is a 6 and the king can
# step away. Centipawns per unit of atanh: dice chess is so random that even a queen
# (900) is far from a sure win, and a softer scale keeps the king-capture chances
# decisive (a 1-ply greedy player with 2500 beats one with 700 in about 56% of games).
cdef enum:
    GAIN_ROLL = 0        # chance node: the roller's expected gain
    GAIN_REPLY = 1       # chance node: the other side's gain after the roller
    GAIN_DIE = 2         # move node: the mover's best capture with its die
    GAIN_AFTER = 3       # move node: the opponent's expected gain on its roll
    KING_REPLY = 4       # the opponent's king-capture chance survives our move
    KING_FLEE = 5        # ... unless our die is a 6 and the king can step away
    SCALE_CP = 6         # centipawns per unit of atanh
    MOBILITY_CP = 7      # per pseudo-legal move of a knight, bishop, rook or queen
cdef double WIN = 0.98           # a king capture one roll away, short of a real terminal
cdef double CLIP = 0.99

# Victim values; as an attacker the king is worth far more: losing it loses the game.
cdef int VALUE[7]
VALUE[:] = [0, 100, 320, 330, 500, 900, 0]
cdef int RISK[7]
RISK[:] = [0, 100, 320, 330, 500, 900, 5000]

cdef int PST[7][64]                # White's view, index sq ^ 56 for White, sq for Black
cdef DCAttacks ATT                 # the game's attack tables (the rules' own lookups)
build_attacks(&ATT)

_PST_ROWS = {  # rank 8 first, as the tables are usually printed
    PAWN: [0, 0, 0, 0, 0, 0, 0, 0,
           50, 50, 50, 50, 50, 50, 50, 50,
           10, 10, 20, 30, 30, 20, 10, 10,
           5, 5, 10, 25, 25, 10, 5, 5,
           0, 0, 0, 20, 20, 0, 0, 0,
           5, -5, -10, 0, 0, -10, -5, 5,
           5, 10, 10, -20, -20, 10, 10, 5,
           0, 0, 0, 0, 0, 0, 0, 0],
    KNIGHT: [-50, -40, -30, -30, -30, -30, -40, -50,
             -40, -20, 0, 0, 0, 0, -20, -40,
             -30, 0, 10, 15, 15, 10, 0, -30,
             -30, 5, 15, 20, 20, 15, 5, -30,
             -30, 0, 15, 20, 20, 15, 0, -30,
             -30, 5, 10, 15, 15, 10, 5, -30,
             -40, -20, 0, 5, 5, 0, -20, -40,
             -50, -40, -30, -30, -30, -30, -40, -50],
    BISHOP: [-20, -10, -10, -10, -10, -10, -10, -20,
             -10, 0, 0, 0, 0, 0, 0, -10,
             -10, 0, 5, 10, 10, 5, 0, -10,
             -10, 5, 5, 10, 10, 5, 5, -10,
             -10, 0, 10, 10, 10, 10, 0, -10,
             -10, 10, 10, 10, 10, 10, 10, -10,
             -10, 5, 0, 0, 0, 0, 5, -10,
             -20, -10, -10, -10, -10, -10, -10, -20],
    ROOK: [0, 0, 0, 0, 0, 0, 0, 0,
           5, 10, 10, 10, 10, 10, 10, 5,
           -5, 0, 0, 0, 0, 0, 0, -5,
           -5, 0, 0, 0, 0, 0, 0, -5,
           -5, 0, 0, 0, 0, 0, 0, -5,
           -5, 0, 0, 0, 0, 0, 0, -5,
           -5, 0, 0, 0, 0, 0, 0, -5,
           0, 0, 0, 5, 5, 0, 0, 0],
    QUEEN: [-20, -10, -10, -5, -5, -10, -10, -20,
            -10, 0, 0, 0, 0, 0, 0, -10,
            -10, 0, 5, 5, 5, 5, 0, -10,
            -5, 0, 5, 5, 5, 5, 0, -5,
            0, 0, 5, 5, 5, 5, 0, -5,
            -10, 5, 5, 5, 5, 5, 0, -10,
            -10, 0, 5, 0, 0, 0, 0, -10,
            -20, -10, -10, -5, -5, -10, -10, -20],
    KING: [-30, -40, -40, -50, -50, -40, -40, -30,
           -30, -40, -40, -50, -50, -40, -40, -30,
           -30, -40, -40, -50, -50, -40, -40, -30,
           -30, -40, -40, -50, -50, -40, -40, -30,
           -20, -30, -30, -40, -40, -30, -30, -20,
           -10, -20, -20, -20, -20, -20, -20, -10,
           20, 20, 0, 0, 0, 0, 20, 20,
           20, 30, 10, 0, 0, 10, 30, 20],
}


def _init_tables():
    cdef int sq, typ
    for typ in range(PAWN, KING + 1):
        for sq in range(64):
            # the printed table's index i is rank 8 - i // 8: flipping the rank of the
            # square (sq ^ 56) reads White's view, sq itself Black's
            PST[typ][sq] = _PST_ROWS[typ][sq]


_init_tables()


cdef class DiceChessEvaluator(HeuristicEvaluator):
    """Material, piece-square and dice-threat evaluator (player 0 = White).

    Works at chance nodes (the side to roll) and at move nodes (the pending die decides
    which captures are available right now). Values lie within (-0.99, 0.99); a king that
    the mover can take with the rolled die is worth +-0.98. Stateless between calls.
    """

    # Tuned by SPSA (descent tune, 5000 matches of 32 games at depth 2; docs/results/
    # dicechess.md, the tuned weights): +27 Elo over the hand-set weights at depth 2, +17
    # at depth 3.
    # The hand-set ones were 0.7, 0.3, 0.9, 0.5, 0.8, 0.3, 2500 and 3.
    WEIGHTS = (
        ("gain_roll", 0.926, 0.0, 1.5),
        ("gain_reply", 0.063, 0.0, 1.5),
        ("gain_die", 0.996, 0.0, 1.5),
        ("gain_after", 0.551, 0.0, 1.5),
        ("king_reply", 0.785, 0.0, 1.0),
        ("king_flee", 0.53, 0.0, 1.0),
        ("scale_cp", 4339.0, 300.0, 6000.0),
        ("mobility_cp", 15.1, 0.0, 20.0),
    )

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        return _value(<DiceChessState>s, self.w)


cdef void _attack_sets(DiceChessState s, int c, uint64_t occ, double mobility_cp,
                       uint64_t* att, int* moves, long* cp) noexcept nogil:
    """One walk over side c's pieces, for both evaluations: att[t] the squares its pieces
    of type t attack; moves[t] their moves to squares c does not hold (pawns: 0, their
    pushes and captures are counted by the callers); cp[0] += material, piece-square
    values and mobility_cp a move (pieces other than the king, truncated per piece)."""
    cdef uint64_t own = s.bb[c * 8]
    cdef uint64_t pieces, a
    cdef int t, sq, n
    for t in range(PAWN, KING + 1):
        att[t] = 0
        moves[t] = 0
        pieces = s.bb[c * 8 + t]
        while pieces:
            sq = dce_ctz(pieces)
            pieces &= pieces - 1
            cp[0] += VALUE[t] + PST[t][sq ^ 56 if c == 0 else sq]
            if t == PAWN:
                att[t] |= ATT.pawn[c][sq]
                continue
            a = piece_att(&ATT, t, sq, occ)
            att[t] |= a
            n = dce_popcount(a & ~own)
            moves[t] += n
            if t != KING and n:
                cp[0] += <long>(mobility_cp * n)


cdef double _value(DiceChessState s, const double* w) noexcept nogil:
    cdef uint64_t occ = s.bb[0] | s.bb[8]
    cdef uint64_t att[2][7]             # squares attacked per side and piece type
    cdef uint64_t enemy, pieces, push, caps, last, king, targets
    cdef int has_move[2][7]
    cdef int moves[7]
    cdef int king_types[2]              # bit t: rolling t lets that side take the king
    cdef bint promotes[2]
    cdef double prob[2][7]              # each side's roll distribution
    cdef double gain[2][7]              # best capture (centipawns) per side and die
    cdef double expected[2]
    cdef double kill[2]
    cdef double g, pdef, score, vs, reply
    cdef long cp[2]
    cdef int c, o, t, u, sq, v, n_moving, x, d
    cdef double sign_x, win_x, win_o
    for c in range(2):
        cp[c] = 0
        _attack_sets(s, c, occ, w[MOBILITY_CP], att[c], moves, &cp[c])
        for t in range(PAWN, KING + 1):
            has_move[c][t] = moves[t] > 0
        pieces = s.bb[c * 8 + PAWN]
        if c == 0:
            push = (pieces << 8) & ~occ
            last = RANK_8
        else:
            push = (pieces >> 8) & ~occ
            last = RANK_1
        caps = att[c][PAWN] & s.bb[(c ^ 1) * 8]
        if push or caps:
            has_move[c][PAWN] = 1
        promotes[c] = ((push | caps) & last) != 0
        if promotes[c]:
            for t in range(KNIGHT, KING):
                has_move[c][t] = 1
    for c in range(2):
        n_moving = 0
        if s.nomove == NOMOVE_REROLL:
            for t in range(PAWN, KING + 1):
                n_moving += has_move[c][t]
        for t in range(PAWN, KING + 1):
            if n_moving:
                prob[c][t] = has_move[c][t] / <double>n_moving
            else:
                prob[c][t] = 1.0 / 6.0
    for c in range(2):
        o = c ^ 1
        enemy = s.bb[o * 8]
        king = s.bb[o * 8 + KING]
        last = RANK_8 if c == 0 else RANK_1
        king_types[c] = 0
        kill[c] = 0.0
        expected[c] = 0.0
        for t in range(PAWN, KING + 1):
            if att[c][t] & king:
                king_types[c] |= 1 << t
        if (att[c][PAWN] & king & last) != 0:
            # a pawn taking on the last rank may do it on rolls 2..5 as well (promotion)
            king_types[c] |= 0x3C
        for t in range(PAWN, KING + 1):
            if king_types[c] & (1 << t):
                kill[c] += prob[c][t]
            g = 0.0
            targets = att[c][t] & enemy & ~king
            while targets:
                sq = dce_ctz(targets)
                targets &= targets - 1
                v = s.board[sq] & 7
                pdef = 0.0
                for u in range(PAWN, KING + 1):
                    if att[o][u] & ((<uint64_t>1) << sq):
                        pdef += prob[o][u]
                if VALUE[v] - pdef * RISK[t] > g:
                    g = VALUE[v] - pdef * RISK[t]
            if promotes[c] and t < KING:
                if t == PAWN and g < VALUE[QUEEN] - VALUE[PAWN]:
                    g = VALUE[QUEEN] - VALUE[PAWN]
                elif t > PAWN and g < VALUE[t] - VALUE[PAWN]:
                    g = VALUE[t] - VALUE[PAWN]
            gain[c][t] = g
            expected[c] += prob[c][t] * g
    x = s.side
    o = x ^ 1
    sign_x = 1.0 if x == 0 else -1.0
    win_x = WIN * sign_x
    win_o = -win_x
    score = <double>(cp[0] - cp[1])
    if s.die == 0:
        score += sign_x * (w[GAIN_ROLL] * expected[x] - w[GAIN_REPLY] * expected[o])
        vs = tanh(score / w[SCALE_CP])
        reply = w[KING_REPLY] * kill[o]
        vs = kill[x] * win_x + (1.0 - kill[x]) * (reply * win_o + (1.0 - reply) * vs)
    else:
        d = s.die
        if king_types[x] & (1 << d):
            return win_x
        g = gain[x][d]
        if s.nomove == NOMOVE_FREE and not has_move[x][d]:
            # no move for the die: any piece may move, so the best gain of any type
            for t in range(PAWN, KING + 1):
                if gain[x][t] > g:
                    g = gain[x][t]
        score += sign_x * (w[GAIN_DIE] * g - w[GAIN_AFTER] * expected[o])
        vs = tanh(score / w[SCALE_CP])
        reply = (w[KING_FLEE] if d == KING else w[KING_REPLY]) * kill[o]
        vs = reply * win_o + (1.0 - reply) * vs
    if vs > CLIP:
        return CLIP
    if vs < -CLIP:
        return -CLIP
    return vs


# -- the dice-chess study's agent: a linear evaluation over classical features ------------
#
# The study's strongest agent (Expecti-300) searched two plies of expectiminimax and valued
# the leaves with a 37-feature linear evaluation whose weights were the mean of 300
# winning chromosomes of a genetic algorithm. The study names its features only by group
# (section 3.3.4: weak squares, pawn position, piece counts, king safety, queen mobility,
# bishop control, rook control); every group has features here: weak squares (the third
# and fourth ranks' squares no pawn of ours can ever attack), pawn structure, the counts
# (not the king's: it is on the board in every position the evaluation values), the
# king's pawn shield, attacks and defenders beside it, the mobility of each piece, the
# bishop pair and the rooks' files, seventh rank and pair; the rest are the classical
# control and threat terms, 37 in all, each White's count minus Black's. The weights are
# tuned the study's way (descent tune --method genetic). Nothing here reads the pending
# die: the search's chance nodes see the dice.

cdef enum:
    # indices into the feature vector, in FEATURE_NAMES order (a test holds them together)
    F_PAWNS = 0
    F_KNIGHTS
    F_BISHOPS
    F_ROOKS
    F_QUEENS
    F_KNIGHT_MOVES
    F_BISHOP_MOVES
    F_ROOK_MOVES
    F_QUEEN_MOVES
    F_KING_MOVES
    F_DOUBLED_PAWNS
    F_ISOLATED_PAWNS
    F_PASSED_PAWNS
    F_PASSED_ADVANCE
    F_WEAK_SQUARES
    F_CENTRE_PAWNS
    F_PAWN_CHAIN
    F_KNIGHTS_CENTRE
    F_BISHOP_PAIR
    F_ROOKS_OPEN
    F_ROOKS_SEMI_OPEN
    F_ROOKS_SEVENTH
    F_ROOK_PAIR
    F_KING_SHIELD
    F_KING_ZONE_ATTACKS
    F_KING_OPEN_FILES
    F_KING_HOME
    F_KING_ZONE_DEFENDED
    F_SQUARES_ATTACKED
    F_CENTRE_CONTROL
    F_ENEMY_HALF_CONTROL
    F_PIECES_ATTACKED
    F_HANGING_MATERIAL
    F_PIECES_DEFENDED
    F_KING_ATTACK_TYPES
    F_MOVABLE_TYPES
    F_BEST_CAPTURE
    N_FEATURES
cdef double FEATURE_SCALE = 1000.0   # centipawns per unit of atanh

FEATURE_NAMES = (
    "pawns", "knights", "bishops", "rooks", "queens",
    "knight_moves", "bishop_moves", "rook_moves", "queen_moves", "king_moves",
    "doubled_pawns", "isolated_pawns", "passed_pawns", "passed_advance", "weak_squares",
    "centre_pawns", "pawn_chain",
    "knights_centre", "bishop_pair", "rooks_open", "rooks_semi_open", "rooks_seventh",
    "rook_pair",
    "king_shield", "king_zone_attacks", "king_open_files", "king_home",
    "king_zone_defended",
    "squares_attacked", "centre_control", "enemy_half_control", "pieces_attacked",
    "hanging_material", "pieces_defended", "king_attack_types", "movable_types",
    "best_capture",
)

cdef uint64_t FILE_MASK[8]
cdef uint64_t ADJ_FILES[8]          # the files beside file f (not f itself)
cdef uint64_t FRONT_SPAN[2][64]     # squares ahead of a pawn on its file and both beside
cdef uint64_t SHIELD[2][64]         # one and two ranks ahead of a king, its file and beside
cdef uint64_t CENTRE4 = 0x0000001818000000
cdef uint64_t CENTRE16 = 0x00003C3C3C3C0000
cdef uint64_t ENEMY_HALF[2]
ENEMY_HALF[:] = [0xFFFFFFFF00000000, 0x00000000FFFFFFFF]
cdef uint64_t WEAK_ZONE[2]          # a side's third and fourth ranks, where holes count
WEAK_ZONE[:] = [0x00000000FFFF0000, 0x0000FFFF00000000]
cdef int PAWN_UNITS[7]
PAWN_UNITS[:] = [0, 1, 3, 3, 5, 9, 0]


def _init_feature_tables():
    cdef int sq, r, f, rr, ff, c
    for f in range(8):
        FILE_MASK[f] = 0
        for r in range(8):
            FILE_MASK[f] |= (<uint64_t>1) << (r * 8 + f)
    for f in range(8):
        ADJ_FILES[f] = (FILE_MASK[f - 1] if f > 0 else 0) | (FILE_MASK[f + 1] if f < 7 else 0)
    for sq in range(64):
        r = sq >> 3
        f = sq & 7
        for c in range(2):
            FRONT_SPAN[c][sq] = 0
            SHIELD[c][sq] = 0
            for ff in range(max(f - 1, 0), min(f + 1, 7) + 1):
                for rr in range(8):
                    if (c == 0 and rr > r) or (c == 1 and rr < r):
                        FRONT_SPAN[c][sq] |= (<uint64_t>1) << (rr * 8 + ff)
                    if (c == 0 and r < rr <= r + 2) or (c == 1 and r - 2 <= rr < r):
                        SHIELD[c][sq] |= (<uint64_t>1) << (rr * 8 + ff)


_init_feature_tables()


cdef void _features(DiceChessState s, double* out) noexcept nogil:
    """The N_FEATURES features, each White's minus Black's, into out."""
    cdef uint64_t occ = s.bb[0] | s.bb[8]
    cdef uint64_t att[2][7]
    cdef uint64_t all_att[2]
    cdef uint64_t piece_att[2]          # squares attacked by the pieces other than the king
    cdef double f[2][N_FEATURES]
    cdef int movable[2]                 # piece types other than pawns with a move
    cdef int moves[7]
    cdef long material = 0              # the walk's material count, not a feature here
    cdef uint64_t own, enemy, pieces, pawns, theirs, a, push, k, files, span
    cdef int c, o, t, sq, rel, r, fl, ksq, n, best
    for c in range(2):
        all_att[c] = 0
        piece_att[c] = 0
        movable[c] = 0
        for t in range(N_FEATURES):
            f[c][t] = 0.0
        _attack_sets(s, c, occ, 0.0, att[c], moves, &material)
        for t in range(PAWN, KING + 1):
            if t != PAWN:
                # mobility: pseudo-legal moves of knights, bishops, rooks, queens, king
                f[c][F_KNIGHT_MOVES + t - KNIGHT] = moves[t]
                movable[c] += moves[t] > 0
            all_att[c] |= att[c][t]
            if t != KING:
                piece_att[c] |= att[c][t]
    for c in range(2):
        o = c ^ 1
        own = s.bb[c * 8]
        enemy = s.bb[o * 8]
        pawns = s.bb[c * 8 + PAWN]
        theirs = s.bb[o * 8 + PAWN]
        for t in range(PAWN, QUEEN + 1):
            f[c][F_PAWNS + t - PAWN] = dce_popcount(s.bb[c * 8 + t])
        # pawn structure
        for fl in range(8):
            n = dce_popcount(pawns & FILE_MASK[fl])
            if n > 1:
                f[c][F_DOUBLED_PAWNS] += n - 1
            if n and not (pawns & ADJ_FILES[fl]):
                f[c][F_ISOLATED_PAWNS] += n
        pieces = pawns
        span = 0                        # squares some pawn of ours may attack one day
        while pieces:
            sq = dce_ctz(pieces)
            pieces &= pieces - 1
            span |= FRONT_SPAN[c][sq] & ADJ_FILES[sq & 7]
            if not (FRONT_SPAN[c][sq] & theirs):
                rel = (sq >> 3) if c == 0 else 7 - (sq >> 3)
                f[c][F_PASSED_PAWNS] += 1
                f[c][F_PASSED_ADVANCE] += rel - 1
        f[c][F_WEAK_SQUARES] = dce_popcount(WEAK_ZONE[c] & ~span)
        f[c][F_CENTRE_PAWNS] = dce_popcount(pawns & CENTRE4)
        f[c][F_PAWN_CHAIN] = dce_popcount(pawns & att[c][PAWN])
        # pieces
        f[c][F_KNIGHTS_CENTRE] = dce_popcount(s.bb[c * 8 + KNIGHT] & CENTRE16)
        f[c][F_BISHOP_PAIR] = 1.0 if dce_popcount(s.bb[c * 8 + BISHOP]) >= 2 else 0.0
        pieces = s.bb[c * 8 + ROOK]
        while pieces:
            sq = dce_ctz(pieces)
            pieces &= pieces - 1
            files = FILE_MASK[sq & 7]
            if not (files & pawns):
                if files & theirs:
                    f[c][F_ROOKS_SEMI_OPEN] += 1
                else:
                    f[c][F_ROOKS_OPEN] += 1
            rel = (sq >> 3) if c == 0 else 7 - (sq >> 3)
            if rel == 6:
                f[c][F_ROOKS_SEVENTH] += 1
        f[c][F_ROOK_PAIR] = 1.0 if dce_popcount(s.bb[c * 8 + ROOK]) >= 2 else 0.0
        # the king (none once captured: the game is over, its features stay 0)
        k = s.bb[c * 8 + KING]
        if k:
            ksq = dce_ctz(k)
            r = ksq >> 3
            fl = ksq & 7
            f[c][F_KING_SHIELD] = dce_popcount(pawns & SHIELD[c][ksq])
            f[c][F_KING_ZONE_ATTACKS] = dce_popcount(ATT.king[ksq] & all_att[o])
            for n in range(max(fl - 1, 0), min(fl + 1, 7) + 1):
                if not (pawns & FILE_MASK[n]):
                    f[c][F_KING_OPEN_FILES] += 1
            f[c][F_KING_HOME] = 1.0 if r == (0 if c == 0 else 7) else 0.0
            f[c][F_KING_ZONE_DEFENDED] = dce_popcount(ATT.king[ksq] & piece_att[c])
        # control and threats
        f[c][F_SQUARES_ATTACKED] = dce_popcount(all_att[c])
        f[c][F_CENTRE_CONTROL] = dce_popcount(all_att[c] & CENTRE4)
        f[c][F_ENEMY_HALF_CONTROL] = dce_popcount(all_att[c] & ENEMY_HALF[c])
        pieces = own & ~s.bb[c * 8 + KING]
        f[c][F_PIECES_ATTACKED] = dce_popcount(pieces & all_att[o])
        f[c][F_PIECES_DEFENDED] = dce_popcount(pieces & all_att[c])
        a = pieces & all_att[o] & ~all_att[c]
        while a:
            sq = dce_ctz(a)
            a &= a - 1
            f[c][F_HANGING_MATERIAL] += PAWN_UNITS[s.board[sq] & 7]
        n = 0
        for t in range(PAWN, KING + 1):
            if att[c][t] & s.bb[o * 8 + KING]:
                n += 1
        f[c][F_KING_ATTACK_TYPES] = n
        # piece types a roll of theirs could move (pawns: a push or a capture)
        push = ((pawns << 8) if c == 0 else (pawns >> 8)) & ~occ
        f[c][F_MOVABLE_TYPES] = movable[c] + (1 if (push or (att[c][PAWN] & enemy)) else 0)
        best = 0
        a = all_att[c] & enemy & ~s.bb[o * 8 + KING]
        while a:
            sq = dce_ctz(a)
            a &= a - 1
            if PAWN_UNITS[s.board[sq] & 7] > best:
                best = PAWN_UNITS[s.board[sq] & 7]
        f[c][F_BEST_CAPTURE] = best
    for t in range(N_FEATURES):
        out[t] = f[0][t] - f[1][t]


cdef class DiceChessFeatureEvaluator(HeuristicEvaluator):
    """The dice-chess study's kind of evaluation (player 0 = White): tanh of a weighted
    sum of 37 classical features over 1000 centipawns, clipped to (-0.99, 0.99). Blind
    to the pending die. ``features(state)`` reads the features themselves."""

    # (name, default, lo, hi) in centipawns per unit of the feature (hanging material and
    # the best capture count pawns: 1, 3, 3, 5, 9). The defaults are the study's
    # Expecti-300 weights: the mean of the 300 generations' winners of the genetic
    # algorithm run with the study's settings (descent tune --method genetic: 20
    # chromosomes in a round robin, parents from the best 10, one cut point at a quarter,
    # 5 elites, mutation rate 0.007; 114,000 games at depth 2; docs/results/papers.md,
    # the dice-chess study). Some signs are the population's drift along flat directions,
    # not chess knowledge (pieces_defended).
    WEIGHTS = (
        ("pawns", 115.58, 50.0, 200.0),
        ("knights", 337.07, 150.0, 500.0),
        ("bishops", 330.34, 150.0, 500.0),
        ("rooks", 508.68, 250.0, 800.0),
        ("queens", 947.77, 500.0, 1500.0),
        ("knight_moves", 7.91, -100.0, 100.0),
        ("bishop_moves", -18.11, -100.0, 100.0),
        ("rook_moves", 22.64, -100.0, 100.0),
        ("queen_moves", 0.22, -100.0, 100.0),
        ("king_moves", -10.72, -100.0, 100.0),
        ("doubled_pawns", 4.79, -100.0, 100.0),
        ("isolated_pawns", -4.54, -100.0, 100.0),
        ("passed_pawns", -1.74, -100.0, 100.0),
        ("passed_advance", -16.31, -100.0, 100.0),
        ("weak_squares", -6.64, -100.0, 100.0),
        ("centre_pawns", 12.75, -100.0, 100.0),
        ("pawn_chain", -6.74, -100.0, 100.0),
        ("knights_centre", 7.87, -100.0, 100.0),
        ("bishop_pair", 18.83, -100.0, 100.0),
        ("rooks_open", 7.0, -100.0, 100.0),
        ("rooks_semi_open", 7.59, -100.0, 100.0),
        ("rooks_seventh", -7.48, -100.0, 100.0),
        ("rook_pair", 0.09, -100.0, 100.0),
        ("king_shield", 12.64, -100.0, 100.0),
        ("king_zone_attacks", -9.39, -100.0, 100.0),
        ("king_open_files", 10.68, -100.0, 100.0),
        ("king_home", 7.7, -100.0, 100.0),
        ("king_zone_defended", 0.02, -100.0, 100.0),
        ("squares_attacked", 9.21, -100.0, 100.0),
        ("centre_control", -13.19, -100.0, 100.0),
        ("enemy_half_control", 4.57, -100.0, 100.0),
        ("pieces_attacked", -10.79, -100.0, 100.0),
        ("hanging_material", -9.1, -100.0, 100.0),
        ("pieces_defended", -25.67, -100.0, 100.0),
        ("king_attack_types", 735.43, 0.0, 1000.0),
        ("movable_types", -14.6, -100.0, 100.0),
        ("best_capture", 10.44, -100.0, 100.0),
    )

    def features(self, DiceChessState state):
        """The 37 features of ``state`` (White's minus Black's), in FEATURE_NAMES order."""
        cdef double buf[N_FEATURES]
        _features(state, buf)
        return [buf[i] for i in range(N_FEATURES)]

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        cdef double buf[N_FEATURES]
        cdef double score = 0.0, v
        cdef int i
        _features(<DiceChessState>s, buf)
        for i in range(N_FEATURES):
            score += self.w[i] * buf[i]
        v = tanh(score / FEATURE_SCALE)
        if v > CLIP:
            return CLIP
        if v < -CLIP:
            return -CLIP
        return v
