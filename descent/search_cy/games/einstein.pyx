# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""EinStein wurfelt nicht! on the 5x5 board (RULES.md), with its three set-up modes.

Players: 0 = Red (top-left, heads for e5), 1 = Blue (bottom-right, heads for a1), always;
the ``first`` option only says who rolls first after the set-up. Cell id = row * 5 + col,
row 0 is row "1" (the top), col 0 is column "a".

Node sequence: Red's set-up, Blue's set-up (chance nodes of 720 ranks for
``setup=random``; player nodes of 720 rank actions for ``free``; for ``mirror`` Red's
player node places both sides), then per turn a die chance node (outcomes 1..6, or the
merged groups) followed by the mover's player node with the die pending.

Action ids by node type:

* set-up node: the permutation rank 0..719, lexicographic over the cube-number sequence
  on that side's home cells in row-major order (Red a1 b1 c1 a2 b2 a3, Blue e3 d4 e4 c5
  d5 e5); OpenSpiel uses the same ranks. Text: six cells, cube 1 first, or the rank.
* die chance node: the die value 1..6 (with ``merge_dice`` the smallest die of a group of
  values that leave the same movable cubes). Text: ``d3``.
* move node: ``from_cell * 3 + dir``; dir 0 horizontal (Red right, Blue left), 1 vertical
  (Red down, Blue up), 2 diagonal. Text: from-cell + to-cell, ``b2c3``.

Position text (one line, three fields separated by spaces)::

    <board> <side> <phase>      e.g.  ABC2/DE3/F3a/3bc/2def r roll

* board: rows 1..5 top to bottom separated by ``/``, each row from column a to e; ``A``..
  ``F`` are Red cubes 1..6, ``a``..``f`` Blue cubes 1..6, a digit 1..5 a run of empty cells.
* side: ``r`` or ``b``, the side to set up, to roll, or to move with the pending die (after
  the winning move: the side that would be next).
* phase: ``setup`` (that side's arrangement is pending), ``roll`` (its die is about to be
  rolled), ``d1``..``d6`` (that die is rolled, the side must move), ``over`` (finished).

Undo is O(1) from per-action records (captured piece, phase, side and die before the
action); the Zobrist key covers pieces on cells, side, pending die and set-up phase.
"""
from itertools import permutations

from libc.math cimport NAN
from libc.stdint cimport uint64_t, int8_t, int16_t
from libc.string cimport memcpy, memset

from descent.search_cy.games.state cimport (GameState, CHANCE, TERMINAL, encode_features,
                                            mobility_copy, mobility_count,
                                            mobility_restart)
from descent.search_cy.games.zobrist cimport fill_keys

from descent.search_cy.games.state import IllegalActionError, NotationError

cdef enum:
    PH_SETUP_RED = 0     # phases 0 and 1 double as the index of the side setting up
    PH_SETUP_BLUE = 1
    PH_ROLL = 2
    PH_MOVE = 3
    PH_OVER = 4
    SETUP_RANDOM = 0
    SETUP_MIRROR = 1
    SETUP_FREE = 2
    NUM_PLANES = 19
    NUM_MOVE_IDS = 75

SETUP_MODES = ("random", "mirror", "free")
SIDES = ("red", "blue")
PHASE_NAMES = ("setup", "setup", "roll", "move", "over")
SIDE_NAMES = ("Red", "Blue")

# ---- tables, filled once at import ----
cdef int HOME[2][6]
HOME[0][:] = [0, 1, 2, 5, 6, 10]          # a1 b1 c1 a2 b2 a3 (row-major)
HOME[1][:] = [14, 18, 19, 22, 23, 24]     # e3 d4 e4 c5 d5 e5 (row-major)
cdef int GOAL[2]
GOAL[:] = [24, 0]

cdef int8_t PERM[EWN_PERMS][6]            # rank -> cube numbers over the home cells
cdef int16_t SYM_RANK[2][EWN_PERMS]       # rank -> rank of the transposed arrangement
cdef int8_t SYM_CELL[4][EWN_CELLS]        # identity, transpose, point reflection, anti-transpose
cdef int8_t TARGET[2][EWN_CELLS][3]       # (side, from, dir) -> target cell, -1 off the board

cdef uint64_t PIECE_KEYS[13][EWN_CELLS]   # by piece code 1..12 (row 0 unused)
cdef uint64_t SIDE_KEY
cdef uint64_t DIE_KEYS[7]                 # DIE_KEYS[0] = 0: no die pending
cdef uint64_t PHASE_KEYS[5]               # only the set-up phases carry a key of their own
fill_keys(&PIECE_KEYS[0][0], 13 * EWN_CELLS, 0x45574E0000000001)
fill_keys(&SIDE_KEY, 1, 0x45574E0000000002)
fill_keys(&DIE_KEYS[0], 7, 0x45574E0000000003)
fill_keys(&PHASE_KEYS[0], 5, 0x45574E0000000004)
DIE_KEYS[0] = 0
PHASE_KEYS[PH_ROLL] = 0
PHASE_KEYS[PH_MOVE] = 0    # the die key already tells a move node from its roll node
PHASE_KEYS[PH_OVER] = 0    # a finished game is told by its board

_PERMS = list(permutations(range(1, 7)))  # lexicographic, as std::next_permutation
_RANK = {p: i for i, p in enumerate(_PERMS)}


def _init_tables():
    cdef int r, c, cell, side, rank, i, j, dr, dc, tr, tc
    cdef int drow[2][3]
    cdef int dcol[2][3]
    drow[0][:] = [0, 1, 1]
    dcol[0][:] = [1, 0, 1]
    drow[1][:] = [0, -1, -1]
    dcol[1][:] = [-1, 0, -1]
    for rank in range(EWN_PERMS):
        for i in range(6):
            PERM[rank][i] = _PERMS[rank][i]
    for r in range(5):
        for c in range(5):
            cell = r * 5 + c
            SYM_CELL[0][cell] = cell
            SYM_CELL[1][cell] = c * 5 + r
            SYM_CELL[2][cell] = (4 - r) * 5 + (4 - c)
            SYM_CELL[3][cell] = (4 - c) * 5 + (4 - r)
            for side in range(2):
                for i in range(3):
                    tr = r + drow[side][i]
                    tc = c + dcol[side][i]
                    TARGET[side][cell][i] = tr * 5 + tc if 0 <= tr < 5 and 0 <= tc < 5 else -1
    # The transpose maps each home triangle onto itself; express the image as a rank.
    for side in range(2):
        home = [HOME[side][i] for i in range(6)]
        for rank in range(EWN_PERMS):
            seq = [0] * 6
            for i in range(6):
                j = home.index(SYM_CELL[1][home[i]])
                seq[j] = PERM[rank][i]
            SYM_RANK[side][rank] = _RANK[tuple(seq)]


_init_tables()


# ---- notation helpers (Python level, never on the search path) ----
def cell_name(int cell) -> str:
    """Cell id -> name: column letter, then 1-based row (a1 top-left, e5 bottom-right)."""
    if not 0 <= cell < EWN_CELLS:
        raise NotationError(f"cell id {cell} is off the 5x5 board (0..24)")
    return f"{chr(ord('a') + cell % 5)}{cell // 5 + 1}"


def parse_cell(str text) -> int:
    """Cell name (any case) -> cell id; NotationError when malformed or off the board."""
    t = text.strip().lower()
    if len(t) != 2 or not ("a" <= t[0] <= "z") or not (t[1].isascii() and t[1].isdigit()):
        raise NotationError(f"malformed cell {text!r}: expected a column a..e and a row 1..5")
    c = ord(t[0]) - ord("a")
    r = int(t[1]) - 1
    if not (0 <= c < 5 and 0 <= r < 5):
        raise NotationError(f"cell {text!r} is off the 5x5 board (a1..e5)")
    return r * 5 + c


def home_cells(int side) -> tuple:
    """The six home cells of a side (0 Red, 1 Blue) in row-major order."""
    _check_side(side)
    return tuple(HOME[side][i] for i in range(6))


def _check_side(int side):
    if side not in (0, 1):
        raise ValueError(f"side {side} is neither 0 (Red) nor 1 (Blue)")


def rank_to_cells(int side, int rank) -> tuple:
    """Set-up rank -> the cells of that side's cubes 1..6 (cube 1's cell first)."""
    _check_side(side)
    if not 0 <= rank < EWN_PERMS:
        raise ValueError(f"set-up rank {rank} out of range 0..719")
    cells = [0] * 6
    for i in range(6):
        cells[PERM[rank][i] - 1] = HOME[side][i]
    return tuple(cells)


def cells_to_rank(int side, cells) -> int:
    """The cells of a side's cubes 1..6 (cube 1 first) -> set-up rank 0..719."""
    _check_side(side)
    cells = tuple(cells)
    home = home_cells(side)
    if len(cells) != 6:
        raise ValueError(f"an arrangement names 6 cells (cubes 1..6), got {len(cells)}")
    if len(set(cells)) != 6:
        raise ValueError("an arrangement puts two cubes on one cell: "
                         + " ".join(cell_name(c) if 0 <= c < 25 else str(c) for c in cells))
    seq = [0] * 6
    for k, cell in enumerate(cells):
        if cell not in home:
            where = cell_name(cell) if 0 <= cell < 25 else str(cell)
            raise ValueError(f"{SIDE_NAMES[side]} cube {k + 1} on {where}: not one of "
                             f"{SIDE_NAMES[side]}'s home cells "
                             + " ".join(cell_name(h) for h in home))
        seq[home.index(cell)] = k + 1
    return _RANK[tuple(seq)]


def parse_arrangement(int side, str text) -> int:
    """Six cells (cube 1 first; spaces, commas or nothing between) or a rank -> rank."""
    t = text.strip()
    if t.isascii() and t.isdigit():
        rank = int(t)
        if not 0 <= rank < EWN_PERMS:
            raise NotationError(f"set-up rank {t} out of range 0..719")
        return rank
    compact = "".join(t.replace(",", " ").split())
    if len(compact) != 12:
        raise NotationError(f"malformed arrangement {text!r}: expected six cells, cube 1 "
                            "first (e.g. 'a1 b1 c1 a2 b2 a3'), or a rank 0..719")
    cells = [parse_cell(compact[i:i + 2]) for i in range(0, 12, 2)]
    try:
        return cells_to_rank(side, cells)
    except ValueError as exc:
        raise NotationError(f"arrangement {text!r}: {exc}") from None


cdef inline int _code_char(int code):
    # 'A'..'F' Red cubes 1..6, 'a'..'f' Blue cubes 1..6
    return (ord("A") + code - 1) if code <= 6 else (ord("a") + code - 7)


def parse_position(str text, str setup="random"):
    """Position text -> (board codes (25), side, phase, die); see the module docstring.

    Raises NotationError naming the first problem found (malformed field, duplicate cube,
    a phase that the board contradicts).
    """
    fields = text.split()
    if len(fields) != 3:
        raise NotationError(f"position {text!r}: expected 3 fields 'board side phase', "
                            f"got {len(fields)}")
    board_text, side_text, phase_text = fields
    rows = board_text.split("/")
    if len(rows) != 5:
        raise NotationError(f"position board {board_text!r}: expected 5 rows separated "
                            f"by '/', got {len(rows)}")
    codes = []
    seen = set()
    for r, row in enumerate(rows):
        width = 0
        for ch in row:
            if ch in "12345":
                codes.extend([0] * int(ch))
                width += int(ch)
            elif "A" <= ch <= "F" or "a" <= ch <= "f":
                code = ord(ch) - ord("A") + 1 if ch <= "F" else ord(ch) - ord("a") + 7
                if code in seen:
                    raise NotationError(f"position board {board_text!r}: "
                                        f"{SIDE_NAMES[code > 6]} cube {(code - 1) % 6 + 1} "
                                        f"({ch}) appears twice")
                seen.add(code)
                codes.append(code)
                width += 1
            else:
                raise NotationError(f"position board {board_text!r}: bad character {ch!r} "
                                    "(A-F Red cubes, a-f Blue cubes, 1-5 empty cells)")
        if width != 5:
            raise NotationError(f"position board {board_text!r}: row {r + 1} ({row!r}) "
                                f"covers {width} cells, not 5")
    s = side_text.lower()
    if s not in ("r", "b", "red", "blue"):
        raise NotationError(f"position side {side_text!r}: expected 'r' or 'b'")
    side = 0 if s.startswith("r") else 1
    p = phase_text.lower()
    die = 0
    if p == "setup":
        phase = side
    elif p == "roll":
        phase = PH_ROLL
    elif p == "over":
        phase = PH_OVER
    elif len(p) == 2 and p[0] == "d" and p[1] in "123456":
        phase = PH_MOVE
        die = int(p[1])
    else:
        raise NotationError(f"position phase {phase_text!r}: expected setup, roll, d1..d6 "
                            "or over")
    red = [i for i in range(25) if 1 <= codes[i] <= 6]
    blue = [i for i in range(25) if codes[i] > 6]
    red_wins = 24 in red or not blue
    blue_wins = 0 in blue or not red
    if phase == PH_SETUP_RED:
        if red or blue:
            raise NotationError(f"position {text!r}: Red's set-up needs an empty board")
    elif phase == PH_SETUP_BLUE:
        if setup == "mirror":
            raise NotationError(f"position {text!r}: with setup=mirror Blue never sets up "
                                "(its arrangement mirrors Red's)")
        if blue or len(red) != 6 or sorted(red) != [HOME[0][i] for i in range(6)]:
            raise NotationError(f"position {text!r}: Blue's set-up needs Red's six cubes "
                                "on a1 b1 c1 a2 b2 a3 and no Blue cube")
    elif phase == PH_OVER:
        if red_wins == blue_wins:
            raise NotationError(f"position {text!r}: 'over' needs exactly one winner on "
                                "the board (a cube on its target corner, or a side with "
                                "no cube left)")
    elif red_wins or blue_wins:
        raise NotationError(f"position {text!r}: the board shows a finished game "
                            "(a cube on its target corner or a side without cubes); "
                            "write 'over'")
    return tuple(codes), side, phase, die


cdef class EinsteinState(GameState):
    """An EinStein wurfelt nicht! position (see the module docstring for ids and text)."""

    def __cinit__(self, game, str setup="random", str first="red", bint merge_dice=False):
        if setup not in SETUP_MODES:
            raise ValueError(f"einstein setup {setup!r} is not one of random|mirror|free")
        if first not in SIDES:
            raise ValueError(f"einstein first {first!r} is not one of red|blue")
        self.game = game
        self.setup_mode = SETUP_MODES.index(setup)
        self.first = SIDES.index(first)
        self.merge = merge_dice
        self.max_actions = EWN_PERMS
        self.max_chance_outcomes = EWN_PERMS
        self.num_planes = NUM_PLANES
        self.height = 5
        self.width = 5
        self.num_symmetries = 4
        memset(self.board, 0, sizeof(self.board))
        memset(self.pos, -1, sizeof(self.pos))
        self.count[0] = 0
        self.count[1] = 0
        self.side = 0
        self.phase = PH_SETUP_RED
        self.die = 0
        self.winner = -1
        self.nhist = 0
        self._ply = 0
        mobility_restart(self)
        self.key = PHASE_KEYS[PH_SETUP_RED]

    # Fixed-size arrays live inside the object (the sizes are compile-time bounds), so
    # there is nothing to malloc or free and c_clone is a few memcpy calls.

    # ---- board and key helpers ----
    cdef void _put(self, int cell, int code) noexcept nogil:
        cdef int s = code > 6
        self.board[cell] = code
        self.pos[s][code - 6 * s] = cell
        self.count[s] += 1
        self.key ^= PIECE_KEYS[code][cell]

    cdef void _take(self, int cell) noexcept nogil:
        cdef int code = self.board[cell]
        cdef int s = code > 6
        self.board[cell] = 0
        self.pos[s][code - 6 * s] = -1
        self.count[s] -= 1
        self.key ^= PIECE_KEYS[code][cell]

    cdef void _set_meta(self, int phase, int side, int die) noexcept nogil:
        # XOR out the old phase/side/die keys, XOR in the new ones
        self.key ^= PHASE_KEYS[self.phase] ^ DIE_KEYS[self.die] ^ PHASE_KEYS[phase] \
            ^ DIE_KEYS[die]
        if self.side != side:
            self.key ^= SIDE_KEY
        self.phase = phase
        self.side = side
        self.die = die

    cdef void _arrange(self, int side, int rank, bint mirrored) noexcept nogil:
        """Place a side's cubes by rank; mirrored: Blue's cubes as the point image of the
        Red arrangement `rank` (Red's cube on (r,c) -> Blue's on (4-r,4-c))."""
        cdef int i
        if mirrored:
            for i in range(6):
                self._put(SYM_CELL[2][HOME[0][i]], 6 + PERM[rank][i])
        else:
            for i in range(6):
                self._put(HOME[side][i], 6 * side + PERM[rank][i])

    cdef int _movable(self, int side, int die) noexcept nogil:
        """Bit mask (bits 1..6) of the cubes that may move on this die."""
        cdef int k
        cdef int mask = 0
        if self.pos[side][die] >= 0:
            return 1 << die
        k = die - 1
        while k >= 1:
            if self.pos[side][k] >= 0:
                mask = 1 << k
                break
            k -= 1
        k = die + 1
        while k <= 6:
            if self.pos[side][k] >= 0:
                mask |= 1 << k
                break
            k += 1
        return mask

    # ---- kernel interface ----
    cdef int c_player(self) noexcept nogil:
        if self.phase == PH_MOVE:
            return self.side
        if self.phase == PH_ROLL:
            return CHANCE
        if self.phase == PH_OVER:
            return TERMINAL
        # set-up phases: chance for random, else the side setting up
        return CHANCE if self.setup_mode == SETUP_RANDOM else self.phase

    cdef int c_legal(self, int* out) noexcept nogil:
        cdef int n = 0, i, k, cell, s = self.side
        cdef int mask
        if self.phase == PH_MOVE:
            mask = self._movable(s, self.die)
            for k in range(1, 7):
                if mask & (1 << k):
                    cell = self.pos[s][k]
                    for i in range(3):
                        if TARGET[s][cell][i] >= 0:
                            out[n] = cell * 3 + i
                            n += 1
            return n
        if self.phase <= PH_SETUP_BLUE and self.setup_mode != SETUP_RANDOM:
            for i in range(EWN_PERMS):
                out[i] = i
            return EWN_PERMS
        return 0

    cdef int c_chance(self, int* outcomes, double* probs) noexcept nogil:
        cdef int i, j, n, d
        cdef int masks[7]
        if self.phase == PH_ROLL:
            if not self.merge:
                for i in range(6):
                    outcomes[i] = i + 1
                    probs[i] = 1.0 / 6.0
                return 6
            # merged: one outcome per distinct movable set, named by its smallest die
            n = 0
            for d in range(1, 7):
                masks[d] = self._movable(self.side, d)
                for j in range(n):
                    if masks[outcomes[j]] == masks[d]:
                        probs[j] += 1.0 / 6.0
                        break
                else:
                    outcomes[n] = d
                    probs[n] = 1.0 / 6.0
                    n += 1
            return n
        if self.phase <= PH_SETUP_BLUE and self.setup_mode == SETUP_RANDOM:
            for i in range(EWN_PERMS):
                outcomes[i] = i
                probs[i] = 1.0 / EWN_PERMS
            return EWN_PERMS
        return 0

    cdef void c_apply(self, int action) noexcept nogil:
        cdef int h = self.nhist
        cdef int s = self.side
        cdef int frm, d, to, code, mover
        if self._mob_on and self.phase == PH_MOVE:
            mobility_count(self, 1)      # moves only: a set-up is not a turn's choice of move
        self.hist_action[h] = action
        self.hist_phase[h] = self.phase
        self.hist_side[h] = s
        self.hist_die[h] = self.die
        self.hist_captured[h] = 0
        self.nhist = h + 1
        if self.phase == PH_MOVE:
            frm = action // 3
            d = action - 3 * frm
            to = TARGET[s][frm][d]
            code = self.board[to]
            if code:
                self.hist_captured[h] = code
                self._take(to)
            mover = self.board[frm]
            self.board[frm] = 0
            self.board[to] = mover
            self.pos[s][mover - 6 * s] = to
            self.key ^= PIECE_KEYS[mover][frm] ^ PIECE_KEYS[mover][to]
            self._ply += 1
            if to == GOAL[s] or self.count[s ^ 1] == 0:
                self.winner = s
                self._set_meta(PH_OVER, s ^ 1, 0)
            else:
                self._set_meta(PH_ROLL, s ^ 1, 0)
        elif self.phase == PH_ROLL:
            self._set_meta(PH_MOVE, s, action)
        else:
            # set-up: phase 0/1 is the side placing its cubes
            self._arrange(self.phase, action, False)
            if self.setup_mode != SETUP_RANDOM:
                self._ply += 1
            if self.phase == PH_SETUP_RED and self.setup_mode != SETUP_MIRROR:
                self._set_meta(PH_SETUP_BLUE, 1, 0)
            else:
                if self.setup_mode == SETUP_MIRROR:
                    self._arrange(1, action, True)
                self._set_meta(PH_ROLL, self.first, 0)

    cdef void c_undo(self) noexcept nogil:
        cdef int h = self.nhist - 1
        cdef int action = self.hist_action[h]
        cdef int ph = self.hist_phase[h]
        cdef int s = self.hist_side[h]
        cdef int frm, d, to, mover, k
        self.nhist = h
        if ph == PH_MOVE:
            frm = action // 3
            d = action - 3 * frm
            to = TARGET[s][frm][d]
            mover = self.board[to]
            self.board[to] = 0
            self.board[frm] = mover
            self.pos[s][mover - 6 * s] = frm
            self.key ^= PIECE_KEYS[mover][frm] ^ PIECE_KEYS[mover][to]
            if self.hist_captured[h]:
                self._put(to, self.hist_captured[h])
            self.winner = -1
            self._ply -= 1
        elif ph <= PH_SETUP_BLUE:
            # nothing has moved yet: take back every cube the set-up placed
            for k in range(1, 7):
                if self.pos[1][k] >= 0:
                    self._take(self.pos[1][k])
                if ph == PH_SETUP_RED and self.pos[0][k] >= 0:
                    self._take(self.pos[0][k])
            if self.setup_mode != SETUP_RANDOM:
                self._ply -= 1
        self._set_meta(ph, s, self.hist_die[h])
        if self._mob_on and ph == PH_MOVE:
            mobility_count(self, -1)

    cdef uint64_t c_hash(self) noexcept nogil:
        return self.key

    cdef uint64_t c_full_hash(self) noexcept nogil:
        cdef uint64_t h = PHASE_KEYS[self.phase] ^ DIE_KEYS[self.die]
        cdef int i
        if self.side:
            h ^= SIDE_KEY
        for i in range(EWN_CELLS):
            if self.board[i]:
                h ^= PIECE_KEYS[self.board[i]][i]
        return h

    cdef bint c_terminal(self) noexcept nogil:
        return self.phase == PH_OVER

    cdef double c_balance(self, bint material) noexcept nogil:
        # cubes left over the six a side starts with; EinStein has no score beyond them
        if material:
            return NAN
        return (self.count[0] - self.count[1]) / 6.0

    cdef double c_value(self) noexcept nogil:
        if self.winner < 0:
            return 0.0
        return 1.0 if self.winner == 0 else -1.0

    cdef bint c_sym_swaps_colours(self, int sym) noexcept nogil:
        return sym >= 2

    cdef int c_sym_action(self, int action, int sym) noexcept nogil:
        cdef int frm, d
        if sym <= 0 or sym > 3:
            return action
        if self.phase == PH_MOVE:
            if action < 0 or action >= NUM_MOVE_IDS:
                return action
            frm = action // 3
            d = action - 3 * frm
            if d < 2 and (sym & 1):
                d ^= 1      # transpose and anti-transpose exchange horizontal and vertical
            return SYM_CELL[sym][frm] * 3 + d
        if self.phase <= PH_SETUP_BLUE and (sym & 1) and 0 <= action < EWN_PERMS:
            # A set-up rank maps to the rank of the transposed arrangement. Colour-exchanging
            # images are read in the mirror frame (the other side's arrangement seen through
            # the point reflection, as setup=mirror does): the point reflection then fixes
            # ranks and the anti-transpose (= reflection o transpose) maps them as the
            # transpose does, so every map stays an involution.
            return SYM_RANK[self.phase][action]
        return action

    cdef void c_encode(self, float* out, int sym) noexcept nogil:
        # planes 0..5 Red cubes 1..6, 6..11 Blue cubes 1..6, 12 Red to move/roll/set up,
        # 13..18 pending die 1..6
        cdef int features[NUM_PLANES * (EWN_CELLS + 1)]
        encode_features(out, features, self.c_features(features, sym), NUM_PLANES, EWN_CELLS)

    cdef int c_features(self, int* out, int sym) noexcept nogil:
        # each cube, then the planes that are all ones (c_encode writes them)
        cdef int n = 0, cell, code, colour, k
        cdef bint exch = sym >= 2
        for cell in range(EWN_CELLS):
            code = self.board[cell]
            if code:
                colour = code > 6
                k = code - 6 * colour
                if exch:
                    colour ^= 1
                out[n] = (6 * colour + k - 1) * EWN_CELLS + SYM_CELL[sym][cell]
                n += 1
        if (self.side == 0) != exch:
            out[n] = NUM_PLANES * EWN_CELLS + 12
            n += 1
        if self.die:
            out[n] = NUM_PLANES * EWN_CELLS + 12 + self.die
            n += 1
        return n

    cdef int c_history_length(self) noexcept nogil:
        return self.nhist

    cdef GameState c_clone(self):
        cdef EinsteinState s = EinsteinState.__new__(
            EinsteinState, self.game, SETUP_MODES[self.setup_mode], SIDES[self.first],
            self.merge)
        memcpy(s.board, self.board, sizeof(self.board))
        memcpy(s.pos, self.pos, sizeof(self.pos))
        s.count[0] = self.count[0]
        s.count[1] = self.count[1]
        s.side = self.side
        s.phase = self.phase
        s.die = self.die
        s.winner = self.winner
        s.key = self.key
        s._ply = self._ply
        s.nhist = self.nhist
        mobility_copy(self, s)
        memcpy(s.hist_action, self.hist_action, self.nhist * sizeof(int))
        memcpy(s.hist_captured, self.hist_captured, self.nhist * sizeof(int8_t))
        memcpy(s.hist_phase, self.hist_phase, self.nhist * sizeof(int8_t))
        memcpy(s.hist_side, self.hist_side, self.nhist * sizeof(int8_t))
        memcpy(s.hist_die, self.hist_die, self.nhist * sizeof(int8_t))
        return s

    # ---- Python API ----
    @property
    def setup(self) -> str:
        return SETUP_MODES[self.setup_mode]

    @property
    def first_player(self) -> int:
        """The side (0 Red, 1 Blue) that rolls first after the set-up."""
        return self.first

    @property
    def merge_dice(self) -> bool:
        return self.merge

    @property
    def phase_name(self) -> str:
        """'setup', 'roll', 'move' or 'over'."""
        return PHASE_NAMES[self.phase]

    @property
    def side_to_act(self) -> int:
        """The side to set up, to roll or to move (0 Red, 1 Blue)."""
        return self.side

    @property
    def pending_die(self) -> int:
        """The rolled die at a move node, 0 elsewhere."""
        return self.die

    def winner_colour(self) -> int:
        """-1 while the game goes on, else 0 (Red) or 1 (Blue)."""
        return self.winner

    def piece_at(self, int cell):
        """(side, cube number) on a cell, or None when it is empty."""
        if not 0 <= cell < EWN_CELLS:
            raise NotationError(f"cell id {cell} is off the 5x5 board (0..24)")
        code = self.board[cell]
        if not code:
            return None
        return (int(code > 6), (code - 1) % 6 + 1)

    def cube_cell(self, int side, int cube) -> int:
        """Cell of a side's cube 1..6, -1 when it has been removed (or is not placed yet)."""
        _check_side(side)
        if not 1 <= cube <= 6:
            raise ValueError(f"cube {cube} out of range 1..6")
        return self.pos[side][cube]

    def cubes_left(self, int side) -> int:
        _check_side(side)
        return self.count[side]

    def history(self) -> list:
        return [self.hist_action[i] for i in range(self.nhist)]

    def action_to_string(self, int action) -> str:
        """Text of an action at this node: 'b2c3', 'a1 b1 c1 a2 b2 a3' or 'd3'."""
        cdef int frm, to
        if self.phase == PH_OVER:
            raise IllegalActionError(f"action {action}: the game is over")
        if self.phase == PH_ROLL:
            if not 1 <= action <= 6:
                raise NotationError(f"die outcome {action} out of range 1..6")
            return f"d{action}"
        if self.phase <= PH_SETUP_BLUE:
            if not 0 <= action < EWN_PERMS:
                raise NotationError(f"set-up rank {action} out of range 0..719")
            return " ".join(cell_name(c) for c in rank_to_cells(self.phase, action))
        if not 0 <= action < NUM_MOVE_IDS:
            raise NotationError(f"move id {action} out of range 0..74")
        frm = action // 3
        to = TARGET[self.side][frm][action % 3]
        if to < 0:
            raise NotationError(f"move id {action} leaves the board from {cell_name(frm)}")
        return cell_name(frm) + cell_name(to)

    def string_to_action(self, str text) -> int:
        """Parse an action for this node; legality is checked by apply_action."""
        cdef int frm, to, dr, dc, d
        if self.phase == PH_OVER:
            raise IllegalActionError(f"move {text!r}: the game is over")
        t = text.strip().lower()
        if self.phase == PH_ROLL:
            if len(t) != 2 or t[0] != "d" or t[1] not in "123456":
                raise NotationError(f"malformed die roll {text!r}: expected d1..d6")
            d = int(t[1])
            if self.merge:
                # the record shows the real die; the node's outcome is its group's smallest
                for k in range(1, d + 1):
                    if self._movable(self.side, k) == self._movable(self.side, d):
                        return k
            return d
        if self.phase <= PH_SETUP_BLUE:
            return parse_arrangement(self.phase, text)
        if len(t) != 4:
            raise NotationError(f"malformed move {text!r}: expected from-cell + to-cell "
                                "like 'b2c3'")
        frm = parse_cell(t[:2])
        to = parse_cell(t[2:])
        dr = to // 5 - frm // 5
        dc = to % 5 - frm % 5
        if self.side == 1:
            dr = -dr
            dc = -dc
        if dr == 0 and dc == 1:
            d = 0
        elif dr == 1 and dc == 0:
            d = 1
        elif dr == 1 and dc == 1:
            d = 2
        else:
            raise IllegalActionError(
                f"move {text!r} is not a one-cell step of a {SIDE_NAMES[self.side]} cube ("
                + ("right, down or diagonally down-right)" if self.side == 0
                   else "left, up or diagonally up-left)"))
        return frm * 3 + d

    def snapshot(self) -> tuple:
        return (
            bytes([self.board[i] for i in range(EWN_CELLS)]),
            tuple(self.pos[s][k] for s in range(2) for k in range(7)),
            (self.count[0], self.count[1]),
            self.side, self.phase, self.die, self.winner, self._ply, self.key,
            self.nhist, tuple(self.history()),
            tuple((self.hist_captured[i], self.hist_phase[i], self.hist_side[i],
                   self.hist_die[i]) for i in range(self.nhist)),
            self.setup_mode, self.first, self.merge,
        )

    def to_text(self) -> str:
        rows = []
        for r in range(5):
            row = []
            empty = 0
            for c in range(5):
                code = self.board[r * 5 + c]
                if code:
                    if empty:
                        row.append(str(empty))
                        empty = 0
                    row.append(chr(_code_char(code)))
                else:
                    empty += 1
            if empty:
                row.append(str(empty))
            rows.append("".join(row))
        if self.phase <= PH_SETUP_BLUE:
            phase = "setup"
        elif self.phase == PH_MOVE:
            phase = f"d{self.die}"
        else:
            phase = PHASE_NAMES[self.phase]
        return f"{'/'.join(rows)} {'rb'[self.side]} {phase}"

    def set_position(self, str text) -> None:
        """Replace this state by a position in the text notation; the history is cleared.

        The text is checked completely first: on error (NotationError) the state is unchanged.
        """
        cdef int i
        codes, side, phase, die = parse_position(text, SETUP_MODES[self.setup_mode])
        memset(self.board, 0, sizeof(self.board))
        memset(self.pos, -1, sizeof(self.pos))
        self.count[0] = 0
        self.count[1] = 0
        self.key = 0
        for i in range(EWN_CELLS):
            if codes[i]:
                self._put(i, codes[i])
        self.side = side
        self.phase = phase
        self.die = die
        self.key ^= PHASE_KEYS[phase] ^ DIE_KEYS[die] ^ (SIDE_KEY if side else 0)
        self.winner = -1
        if phase == PH_OVER:
            # parse_position checked that exactly one side has won
            red_wins = 1 <= self.board[24] <= 6 or self.count[1] == 0
            self.winner = 0 if red_wins else 1
        self.nhist = 0
        self._ply = 0
        mobility_restart(self)

    def __str__(self) -> str:
        lines = ["    a  b  c  d  e"]
        for r in range(5):
            cells = []
            for c in range(5):
                code = self.board[r * 5 + c]
                cells.append(" . " if not code else
                             f"{'RB'[code > 6]}{(code - 1) % 6 + 1} ")
            lines.append(f" {r + 1} " + "".join(cells).rstrip())
        name = SIDE_NAMES[self.side]
        if self.phase == PH_OVER:
            lines.append(f"game over, {SIDE_NAMES[self.winner]} wins")
        elif self.phase <= PH_SETUP_BLUE:
            lines.append(f"{name} to set up")
        elif self.phase == PH_ROLL:
            lines.append(f"{name} to roll")
        else:
            lines.append(f"{name} to move, die {self.die}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<EinsteinState {self.to_text()!r}>"
