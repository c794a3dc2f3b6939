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

The kernel's files, one job each: dicechess_board (the position, make/unmake, keys),
dicechess_attacks (attack tables, magic bitboards), dicechess_movegen (moves and move
counts by roll), dicechess_notation (squares, UCI, die text, FEN/DFEN); this module:
DiceChessState (the rules over the board: chance nodes, moves, results, encoding, the
Python API) and perft.
"""

cimport cython
from libc.stdint cimport uint64_t

from descent.search_cy.games.state cimport GameState, CHANCE, TERMINAL, encode_features
from descent.search_cy.games.dicechess_types cimport dc_popcount
from descent.search_cy.games.dicechess_board cimport DCUndo, DRAW
from descent.search_cy.games.dicechess_movegen cimport gen_die, gen_all, count_moves

from descent.search_cy.games.state import NotationError
from descent.search_cy.games.dicechess_notation import (  # noqa: F401 (re-exported)
    PIECE_LETTERS, format_fen, move_to_uci, parse_die, parse_position, parse_square,
    parse_uci, square_name)

cdef enum:
    MAX_ACTIONS = 320
    NUM_PLANES = 24

NOMOVE_MODES = ("reroll", "pass", "free")
CASTLE_MODES = ("king", "king-or-rook")
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
PIECE_NAMES = ("", "pawn", "knight", "bishop", "rook", "queen", "king")


@cython.final
cdef class DiceChessState(DiceChessBoard):
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
        if not blank:  # c_clone overwrites every field: no position to parse
            self._load(_start_position())

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
        n = gen_die(self, self.die, out)
        if n == 0 and self.nomove == NOMOVE_FREE:
            n = gen_all(self, out)
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
            count_moves(self, cnt)
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

    cdef GameState c_clone(self):
        cdef DiceChessState s = DiceChessState.__new__(
            DiceChessState, self.game, NOMOVE_MODES[self.nomove],
            CASTLE_MODES[<int>self.castle_rook], True)
        self._copy_to(s)
        return s

    # ---- Python API ----
    def _load(self, tuple pos):
        """Install a parsed position (from _parse_fen); history and counters restart."""
        self._install(pos)

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
        n = gen_die(self, die, buf)
        return sorted([buf[i] for i in range(n)])

    def move_counts(self) -> list:
        """[every move, roll 1, .., roll 6] counted without move lists (perft's bulk
        counter); the state is unchanged."""
        cdef int cnt[7]
        count_moves(self, cnt)
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
        return format_fen([self.board[i] for i in range(64)], self.side, self.castling,
                          self.ep, self.halfmove, self.fullmove)

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


_START = []


def _start_position() -> tuple:
    if not _START:
        _START.append(_parse_fen(START_FEN))
    return _START[0]


def _parse_fen(str text, int nomove=NOMOVE_REROLL, bint castle_rook=False) -> tuple:
    """FEN or DFEN -> (board codes, side, castling, ep, halfmove, fullmove, die), checked;
    NotationError names the first problem (dicechess_notation.parse_position, and
    under nomove=reroll a die that has no move)."""
    pos = parse_position(text)
    die = pos[6]
    if die and nomove == NOMOVE_REROLL:
        probe = DiceChessState.__new__(DiceChessState, None, NOMOVE_MODES[nomove],
                                       CASTLE_MODES[<int>castle_rook], True)
        probe._load(pos[:6] + (0,))
        counts = probe.move_counts()
        if counts[die] == 0 and any(counts[1:]) and probe.winner_colour() < 0:
            letter = PIECE_LETTERS[die] if pos[1] == 0 else PIECE_LETTERS[die].lower()
            raise NotationError(f"DFEN die {letter!r}: under nomove=reroll a "
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
            count_moves(s, cnt)
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
        count_moves(s, cnt)
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
