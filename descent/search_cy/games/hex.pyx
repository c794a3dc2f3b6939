# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Hex on an n x n rhombus (RULES.md), with the canonical swap rule.

Win detection is incremental: a union-find over the cells plus four edge nodes, union by
rank and no path compression so that every union can be logged and reverted; undo pops
the log of the last move (O(1) amortised, at most a handful of unions per stone).
"""
from libc.stdint cimport uint64_t, int8_t, int16_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

from descent.search_cy.games.state cimport (GameState, CHANCE, TERMINAL, mobility_copy,
                                            mobility_count, mobility_restart)
from descent.search_cy.games.zobrist cimport fill_keys

from descent.search_cy.games.state import IllegalActionError, NotationError

cdef enum:
    MAXN = 25
    MAXCELLS = 625

cdef uint64_t STONE_KEYS[2][MAXCELLS]
cdef uint64_t SIDE_KEY
fill_keys(&STONE_KEYS[0][0], 2 * MAXCELLS, 0x4845580000000001)
fill_keys(&SIDE_KEY, 1, 0x4845580000000002)

cdef int DR[6]
cdef int DC[6]
DR[:] = [-1, -1, 0, 0, 1, 1]
DC[:] = [0, 1, -1, 1, -1, 0]

# edge node offsets after the cells
cdef enum:
    TOP = 0
    BOTTOM = 1
    LEFT = 2
    RIGHT = 3


cdef class HexState(GameState):
    """A Hex position. Move ids: r * n + c for cell (r, c); n * n is the swap; n * n + 1
    is a pass, never legal in play: GUIs place set-up stones of one colour (several GTP
    ``play`` of the same colour), which the kernel records as a pass of the other side so
    that side to move, hash and undo stay exact."""

    def __cinit__(self, game, int size, bint swap):
        if not 2 <= size <= MAXN:
            raise ValueError(f"hex size {size} out of range 2..{MAXN}")
        self.game = game
        self.n = size
        self.ncells = size * size
        self.swap_rule = swap
        self.max_actions = self.ncells + 1
        self.max_chance_outcomes = 1
        self.num_planes = 3
        self.height = size + 2
        self.width = size + 2
        self.num_symmetries = 2 if swap else 4
        cdef int nodes = self.ncells + 4
        # every stone may be preceded by one set-up pass
        cdef int hist_cap = 2 * self.ncells + 4
        self.cells = <int8_t*>malloc(self.ncells * sizeof(int8_t))
        self.parent = <int16_t*>malloc(nodes * sizeof(int16_t))
        self.rank = <int8_t*>malloc(nodes * sizeof(int8_t))
        self.log_child = <int*>malloc(8 * hist_cap * sizeof(int))
        self.log_bumped = <int8_t*>malloc(8 * hist_cap * sizeof(int8_t))
        self.hist_action = <int*>malloc(hist_cap * sizeof(int))
        self.hist_log = <int*>malloc(hist_cap * sizeof(int))
        self.hist_epos = <int16_t*>malloc(hist_cap * sizeof(int16_t))
        self.empties = <int16_t*>malloc(self.ncells * sizeof(int16_t))
        self.empty_pos = <int16_t*>malloc(self.ncells * sizeof(int16_t))
        if (not self.cells or not self.parent or not self.rank or not self.log_child
                or not self.log_bumped or not self.hist_action or not self.hist_log
                or not self.hist_epos or not self.empties or not self.empty_pos):
            raise MemoryError()
        memset(self.cells, 0, self.ncells)
        cdef int i
        for i in range(nodes):
            self.parent[i] = i
        for i in range(self.ncells):
            self.empties[i] = i
            self.empty_pos[i] = i
        self.n_empty = self.ncells
        memset(self.rank, 0, nodes)
        self.log_size = 0
        self.nhist = 0
        self._ply = 0
        mobility_restart(self)
        self.side = 0
        self.winner = -1
        self.key = 0

    def __dealloc__(self):
        free(self.cells)
        free(self.parent)
        free(self.rank)
        free(self.log_child)
        free(self.log_bumped)
        free(self.hist_action)
        free(self.hist_log)
        free(self.hist_epos)
        free(self.empties)
        free(self.empty_pos)

    # ---- union-find with a revert log ----
    cdef int _find(self, int x) noexcept nogil:
        while self.parent[x] != x:
            x = self.parent[x]
        return x

    cdef void _union(self, int a, int b) noexcept nogil:
        cdef int ra = self._find(a)
        cdef int rb = self._find(b)
        cdef int t
        if ra == rb:
            return
        if self.rank[ra] < self.rank[rb]:
            t = ra
            ra = rb
            rb = t
        self.parent[rb] = ra
        self.log_child[self.log_size] = rb
        if self.rank[ra] == self.rank[rb]:
            self.rank[ra] += 1
            self.log_bumped[self.log_size] = 1
        else:
            self.log_bumped[self.log_size] = 0
        self.log_size += 1

    cdef int _place(self, int cell, int colour) noexcept nogil:
        """Put a stone and join its groups; returns the empties index it came from."""
        cdef int n = self.n
        cdef int r = cell // n
        cdef int c = cell - r * n
        cdef int k, rr, cc, nb
        cdef int edges = self.ncells
        cdef int epos = self.empty_pos[cell]
        cdef int last
        # swap-remove from the empty list; _unplace reverses it exactly
        self.n_empty -= 1
        last = self.empties[self.n_empty]
        self.empties[epos] = last
        self.empty_pos[last] = epos
        self.empty_pos[cell] = -1
        self.cells[cell] = colour + 1
        self.key ^= STONE_KEYS[colour][cell]
        for k in range(6):
            rr = r + DR[k]
            cc = c + DC[k]
            if 0 <= rr < n and 0 <= cc < n:
                nb = rr * n + cc
                if self.cells[nb] == colour + 1:
                    self._union(cell, nb)
        if colour == 0:
            if r == 0:
                self._union(cell, edges + TOP)
            if r == n - 1:
                self._union(cell, edges + BOTTOM)
            if self._find(edges + TOP) == self._find(edges + BOTTOM):
                self.winner = 0
        else:
            if c == 0:
                self._union(cell, edges + LEFT)
            if c == n - 1:
                self._union(cell, edges + RIGHT)
            if self._find(edges + LEFT) == self._find(edges + RIGHT):
                self.winner = 1
        return epos

    cdef void _unplace(self, int cell, int log_start, int epos) noexcept nogil:
        cdef int child, root, moved
        while self.log_size > log_start:
            self.log_size -= 1
            child = self.log_child[self.log_size]
            root = self.parent[child]
            self.parent[child] = child
            if self.log_bumped[self.log_size]:
                self.rank[root] -= 1
        self.key ^= STONE_KEYS[self.cells[cell] - 1][cell]
        self.cells[cell] = 0
        self.winner = -1
        moved = self.empties[epos]
        self.empties[self.n_empty] = moved
        self.empty_pos[moved] = self.n_empty
        self.n_empty += 1
        self.empties[epos] = cell
        self.empty_pos[cell] = epos

    # ---- kernel interface ----
    cdef int c_player(self) noexcept nogil:
        if self.winner >= 0:
            return TERMINAL
        return self.side

    cdef int c_legal(self, int* out) noexcept nogil:
        cdef int i, k = self.n_empty
        if self.winner >= 0:
            return 0
        for i in range(k):
            out[i] = self.empties[i]
        if self.c_swap_legal():
            out[k] = self.ncells
            k += 1
        return k

    cdef bint c_swap_legal(self) noexcept nogil:
        """Whether the swap (action ncells) is legal: it answers Black's first stone only
        (not a set-up pass), under the swap rule."""
        return (self.swap_rule and self._ply == 1 and self.nhist == 1
                and self.hist_action[0] < self.ncells and self.winner < 0)

    cdef int c_chance(self, int* outcomes, double* probs) noexcept nogil:
        return 0

    cdef void c_apply(self, int action) noexcept nogil:
        cdef int first, r, c
        if self._mob_on and action != self.ncells + 1:
            mobility_count(self, 1)
        self.hist_action[self.nhist] = action
        self.hist_log[self.nhist] = self.log_size
        self.nhist += 1
        if action == self.ncells + 1:
            self.hist_epos[self.nhist - 1] = -1
        elif action == self.ncells:
            # canonical swap: Black's stone (r, c) becomes White's (c, r); Black to move
            first = self.hist_action[0]
            self._unplace(first, 0, self.hist_epos[0])
            self.hist_log[self.nhist - 1] = self.log_size
            r = first // self.n
            c = first - r * self.n
            self.hist_epos[self.nhist - 1] = self._place(c * self.n + r, 1)
        else:
            self.hist_epos[self.nhist - 1] = self._place(action, self.side)
        self.side ^= 1
        self.key ^= SIDE_KEY
        self._ply += 1

    cdef void c_undo(self) noexcept nogil:
        cdef int action, first, r, c
        self.nhist -= 1
        self._ply -= 1
        self.side ^= 1
        self.key ^= SIDE_KEY
        action = self.hist_action[self.nhist]
        if action == self.ncells + 1:
            return
        if action == self.ncells:
            first = self.hist_action[0]
            r = first // self.n
            c = first - r * self.n
            self._unplace(c * self.n + r, self.hist_log[self.nhist], self.hist_epos[self.nhist])
            self._place(first, 0)
        else:
            self._unplace(action, self.hist_log[self.nhist], self.hist_epos[self.nhist])
        if self._mob_on:
            mobility_count(self, -1)

    cdef uint64_t c_hash(self) noexcept nogil:
        return self.key

    cdef uint64_t c_full_hash(self) noexcept nogil:
        cdef uint64_t h = 0
        cdef int i
        for i in range(self.ncells):
            if self.cells[i]:
                h ^= STONE_KEYS[self.cells[i] - 1][i]
        if self.side:
            h ^= SIDE_KEY
        return h

    cdef bint c_terminal(self) noexcept nogil:
        return self.winner >= 0

    cdef double c_value(self) noexcept nogil:
        if self.winner < 0:
            return 0.0
        return 1.0 if self.winner == 0 else -1.0

    cdef int c_sym_action(self, int action, int sym) noexcept nogil:
        if action >= self.ncells:
            return action
        cdef int n = self.n
        cdef int r = action // n
        cdef int c = action - r * n
        if sym == 1:
            return (n - 1 - r) * n + (n - 1 - c)
        if sym == 2:
            return c * n + r
        if sym == 3:
            return (n - 1 - c) * n + (n - 1 - r)
        return action

    cdef bint c_sym_swaps_colours(self, int sym) noexcept nogil:
        return sym >= 2

    cdef void c_encode(self, float* out, int sym) noexcept nogil:
        # planes: 0 black stones, 1 white stones (each padded by its own edges), 2 side to move
        cdef int n = self.n
        cdef int w = n + 2
        cdef int plane = w * w
        cdef int i, j, cell, img, r, c, colour
        cdef bint exch = sym >= 2
        memset(out, 0, 3 * plane * sizeof(float))
        for j in range(1, w - 1):
            out[0 * plane + 0 * w + j] = 1.0
            out[0 * plane + (w - 1) * w + j] = 1.0
            out[1 * plane + j * w + 0] = 1.0
            out[1 * plane + j * w + (w - 1)] = 1.0
        for cell in range(self.ncells):
            if self.cells[cell]:
                colour = self.cells[cell] - 1
                if exch:
                    colour ^= 1
                img = self.c_sym_action(cell, sym)
                r = img // n
                c = img - r * n
                out[colour * plane + (r + 1) * w + (c + 1)] = 1.0
        if (self.side == 0) != exch:
            for i in range(plane):
                out[2 * plane + i] = 1.0

    cdef int c_history_length(self) noexcept nogil:
        return self.nhist

    cdef GameState c_clone(self):
        cdef HexState s = HexState.__new__(HexState, self.game, self.n, self.swap_rule)
        memcpy(s.cells, self.cells, self.ncells * sizeof(int8_t))
        memcpy(s.parent, self.parent, (self.ncells + 4) * sizeof(int16_t))
        memcpy(s.rank, self.rank, (self.ncells + 4) * sizeof(int8_t))
        memcpy(s.log_child, self.log_child, self.log_size * sizeof(int))
        memcpy(s.log_bumped, self.log_bumped, self.log_size * sizeof(int8_t))
        memcpy(s.hist_action, self.hist_action, self.nhist * sizeof(int))
        memcpy(s.hist_log, self.hist_log, self.nhist * sizeof(int))
        memcpy(s.hist_epos, self.hist_epos, self.nhist * sizeof(int16_t))
        memcpy(s.empties, self.empties, self.ncells * sizeof(int16_t))
        memcpy(s.empty_pos, self.empty_pos, self.ncells * sizeof(int16_t))
        s.n_empty = self.n_empty
        s.log_size = self.log_size
        s.nhist = self.nhist
        s._ply = self._ply
        mobility_copy(self, s)
        s.side = self.side
        s.winner = self.winner
        s.key = self.key
        return s

    # ---- Python API ----
    @property
    def size(self) -> int:
        return self.n

    def history(self) -> list:
        return [self.hist_action[i] for i in range(self.nhist)]

    def cell(self, int row, int col) -> int:
        """0 empty, 1 black, 2 white at 0-based (row, col)."""
        if not (0 <= row < self.n and 0 <= col < self.n):
            raise IndexError(f"cell ({row}, {col}) is off the {self.n}x{self.n} board")
        return self.cells[row * self.n + col]

    def winner_colour(self) -> int:
        """-1 while the game goes on, else 0 (Black) or 1 (White)."""
        return self.winner

    def pass_turn(self) -> int:
        """Hands the move to the other side without a stone (set-up positions). Refused
        after the end of the game, twice in a row, or before the swap of a swap game's
        first stone would be decided; returns the pass's action id."""
        if self.winner >= 0:
            raise IllegalActionError("the game is over")
        if self.nhist and self.hist_action[self.nhist - 1] == self.ncells + 1:
            raise IllegalActionError("two passes in a row")
        self.c_apply(self.ncells + 1)
        return self.ncells + 1

    def apply_move(self, str text) -> int:
        if text.strip().lower() == "pass":
            return self.pass_turn()
        return GameState.apply_move(self, text)

    def action_to_string(self, int action) -> str:
        if action == self.ncells + 1:
            return "pass"
        if action == self.ncells:
            return "swap"
        if not 0 <= action < self.ncells:
            raise NotationError(f"action {action} is not a cell of the {self.n}x{self.n} board")
        return cell_name(action, self.n)

    def string_to_action(self, str text) -> int:
        return parse_move(text, self.n)

    def snapshot(self) -> tuple:
        nodes = self.ncells + 4
        return (
            bytes([self.cells[i] for i in range(self.ncells)]),
            tuple(self.parent[i] for i in range(nodes)),
            tuple(self.rank[i] for i in range(nodes)),
            self.side, self.winner, self._ply, self.key, tuple(self.history()),
            self.log_size,
            tuple(self.empties[i] for i in range(self.n_empty)),
            tuple(self.empty_pos[i] for i in range(self.ncells)),
        )

    def to_text(self) -> str:
        return " ".join(self.action_to_string(a) for a in self.history())

    def __str__(self) -> str:
        n = self.n
        letters = " ".join(chr(ord("a") + c) for c in range(n))
        lines = ["  " + letters]
        for r in range(n):
            row = " ".join(".XO"[self.cells[r * n + c]] for c in range(n))
            lines.append(" " * r + f"{r + 1:2d}\\" + row + f"\\{r + 1}")
        lines.append(" " * (n + 3) + letters)
        to_move = "game over, " + ("Black" if self.winner == 0 else "White") + " wins" \
            if self.winner >= 0 else ("Black" if self.side == 0 else "White") + " to move"
        lines.append(to_move)
        return "\n".join(lines)


def cell_name(int cell, int n) -> str:
    """Cell id -> HexGui name, column letter then 1-based row (a1 is the top-left corner)."""
    r = cell // n
    c = cell % n
    return f"{chr(ord('a') + c)}{r + 1}"


def parse_move(str text, int n) -> int:
    """Parse a cell or a swap spelling on an n x n board into a move id."""
    t = text.strip().lower()
    if t in ("swap", "swap-pieces", "swap-sides"):
        return n * n
    if len(t) < 2 or not t.isascii() or not t[0].isalpha() or not t[1:].isdigit():
        raise NotationError(f"malformed hex move {text!r}: expected a cell like 'c3' or 'swap'")
    c = ord(t[0]) - ord("a")
    r = int(t[1:]) - 1
    if not (0 <= c < n and 0 <= r < n):
        raise NotationError(f"cell {text!r} is off the {n}x{n} board")
    return r * n + c
