# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Base class of every rules kernel and its checked Python API.

Subclasses implement the ``c_*`` methods declared in state.pxd; everything here is
written once against them, so the Python view of every game behaves the same way.
"""
from libc.stdint cimport uint64_t
from libc.math cimport NAN
from libc.stdlib cimport malloc, free
from libc.string cimport memset

import numpy as np
cimport numpy as cnp

cnp.import_array()

PLAYER_CHANCE = CHANCE
PLAYER_TERMINAL = TERMINAL


class IllegalActionError(ValueError):
    """An action or move text that is not legal in the current state (state unchanged)."""


class NotationError(ValueError):
    """Malformed move, cell or position text (state unchanged)."""


cdef void encode_features(float* out, const int* features, int n, int planes,
                          int cells) noexcept nogil:
    """Writes the planes that a list form (GameState.c_features) stands for: a game that
    has a list form encodes through it, so the two cannot disagree."""
    cdef int i, c, f
    memset(out, 0, planes * cells * sizeof(float))
    for i in range(n):
        f = features[i]
        if f < planes * cells:
            out[f] = 1.0
        else:
            f = (f - planes * cells) * cells
            for c in range(cells):
                out[f + c] = 1.0


cdef class GameState:
    """One position of a game, mutated in place by apply/undo.

    Actions are integers whose meaning depends on the node type: at a player node they
    are the game's move ids, at a chance node the outcome ids (die values, set-up ranks).
    Values are from the first player's view (+1 win, -1 loss, 0 draw).
    """

    # ---- fast interface: subclasses override every method below ----
    cdef int c_player(self) noexcept nogil:
        return TERMINAL

    cdef int c_legal(self, int* out) noexcept nogil:
        return 0

    cdef int c_chance(self, int* outcomes, double* probs) noexcept nogil:
        return 0

    cdef void c_apply(self, int action) noexcept nogil:
        pass

    cdef void c_undo(self) noexcept nogil:
        pass

    cdef uint64_t c_hash(self) noexcept nogil:
        return 0

    cdef uint64_t c_full_hash(self) noexcept nogil:
        return 0

    cdef bint c_terminal(self) noexcept nogil:
        return True

    cdef double c_value(self) noexcept nogil:
        return 0.0

    cdef double c_balance(self, bint material) noexcept nogil:
        # What is left on the board, player 0's minus player 1's, over the most either
        # side can have: the pieces (presence) or, with material, their values (score),
        # in [-1, 1]. NaN where the game has no such count (Hex: stones never leave).
        return NAN

    cdef void c_encode(self, float* out, int sym) noexcept nogil:
        pass

    cdef int c_features(self, int* out, int sym) noexcept nogil:
        # The encoding as a list, for evaluators that sum weight rows (mlp_eval.pyx): the
        # flat index (plane * H * W + cell) of each input that is 1, and planes * H * W + p
        # for each plane p that is all ones; every other input is 0. Any order, at most
        # planes * (H * W + 1) entries. -1: this game has no list form (read c_encode).
        return -1

    cdef bint c_sym_swaps_colours(self, int sym) noexcept nogil:
        return False

    cdef int c_sym_action(self, int action, int sym) noexcept nogil:
        return action

    cdef int c_history_length(self) noexcept nogil:
        return -1   # kernels override; -1 makes the Python wrapper count the history

    cdef GameState c_clone(self):
        raise NotImplementedError(type(self).__name__ + " does not implement c_clone")

    # ---- Python API ----
    def current_player(self) -> int:
        """0 or 1 for a player node, PLAYER_CHANCE (-1), or PLAYER_TERMINAL (-4)."""
        return self.c_player()

    def is_chance_node(self) -> bool:
        return self.c_player() == CHANCE

    def is_terminal(self) -> bool:
        return self.c_terminal()

    def terminal_value(self) -> float:
        """Outcome from the first player's view; only meaningful at a terminal state."""
        if not self.c_terminal():
            raise ValueError("terminal_value() of a state that is not terminal")
        return self.c_value()

    def balance(self, bint material=False) -> float:
        """What is left on the board, player 0's minus player 1's, in [-1, 1]: the pieces
        over the most a side has (``material``: their values, pawn 1 to queen 9), the
        presence and score reinforcement heuristics' term; NaN where the game has no such
        count (Hex)."""
        return self.c_balance(material)

    def legal_actions(self) -> list:
        """Legal move ids at a player node, sorted ascending; [] at chance/terminal."""
        if self.c_player() < 0:
            return []
        cdef int* buf = <int*>malloc(self.max_actions * sizeof(int))
        cdef int n, i
        try:
            n = self.c_legal(buf)
            return sorted([buf[i] for i in range(n)])
        finally:
            free(buf)

    def chance_outcomes(self) -> list:
        """(outcome, probability) pairs at a chance node; [] elsewhere."""
        if self.c_player() != CHANCE:
            return []
        cdef int* acts = <int*>malloc(self.max_chance_outcomes * sizeof(int))
        cdef double* probs = <double*>malloc(self.max_chance_outcomes * sizeof(double))
        cdef int n, i
        try:
            n = self.c_chance(acts, probs)
            return [(acts[i], probs[i]) for i in range(n)]
        finally:
            free(acts)
            free(probs)

    def apply_action(self, int action) -> None:
        """Apply a legal move or chance outcome; raises IllegalActionError otherwise."""
        cdef int p = self.c_player()
        if p == TERMINAL:
            raise IllegalActionError(f"action {action}: the game is over")
        if p == CHANCE:
            if action not in [a for a, _ in self.chance_outcomes()]:
                raise IllegalActionError(f"chance outcome {action} is not possible here")
        elif action not in self.legal_actions():
            raise IllegalActionError(
                f"action {action} ({self._describe_action(action)}) is not legal here")
        self.c_apply(action)

    def _describe_action(self, int action) -> str:
        try:
            return self.action_to_string(action)
        except Exception:
            return "unknown action id"

    def apply_move(self, str text) -> int:
        """Parse a move in the game's notation, check it, apply it; returns its id."""
        cdef int action = self.string_to_action(text)
        self.apply_action(action)
        return action

    def undo(self) -> None:
        """Take back the last applied action (move or chance outcome) in O(1)."""
        if self.history_length == 0:
            raise IndexError("undo: nothing to undo")
        self.c_undo()

    @property
    def history_length(self) -> int:
        """Number of actions (moves and chance outcomes) that undo can take back. O(1)."""
        cdef int n = self.c_history_length()
        return n if n >= 0 else len(self.history())

    @property
    def ply(self) -> int:
        """Number of player moves made since the initial state."""
        return self._ply

    @property
    def hash(self) -> int:
        """Incrementally maintained 64-bit Zobrist key of the state."""
        return self.c_hash()

    def recompute_hash(self) -> int:
        """The Zobrist key computed from scratch (for tests of the incremental one)."""
        return self.c_full_hash()

    @property
    def encoding_shape(self) -> tuple:
        return (self.num_planes, self.height, self.width)

    def encode(self, out=None, int symmetry=0):
        """Write the network input (planes x height x width, float32) and return it."""
        if not 0 <= symmetry < self.num_symmetries:
            raise ValueError(f"symmetry {symmetry} out of range 0..{self.num_symmetries - 1}")
        if out is None:
            out = np.zeros(self.encoding_shape, dtype=np.float32)
        cdef float[:, :, ::1] view = out
        if tuple(out.shape) != self.encoding_shape:
            raise ValueError(f"encode: buffer shape {tuple(out.shape)}, expected {self.encoding_shape}")
        self.c_encode(&view[0, 0, 0], symmetry)
        return out

    def features(self, int symmetry=0):
        """The encoding as a list (see c_features): an int32 array, or None when the game
        has no list form."""
        if not 0 <= symmetry < self.num_symmetries:
            raise ValueError(f"symmetry {symmetry} out of range 0..{self.num_symmetries - 1}")
        planes, height, width = self.encoding_shape
        out = np.empty(planes * (height * width + 1), dtype=np.int32)
        cdef int[::1] view = out
        cdef int n = self.c_features(&view[0], symmetry)
        if n < 0:
            return None
        return out[:n].copy()

    def symmetry_swaps_colours(self, int symmetry) -> bool:
        """True when symmetry exchanges the players (the value changes sign)."""
        return self.c_sym_swaps_colours(symmetry)

    def symmetry_action(self, int action, int symmetry) -> int:
        """The image of a move id under a symmetry."""
        return self.c_sym_action(action, symmetry)

    def clone(self):
        """An independent copy, history included (undo works on the copy)."""
        return self.c_clone()

    def __copy__(self):
        return self.c_clone()

    def track_mobility(self) -> None:
        """Keep each player's turns and the actions available on them from here on, for
        the cumulative mobility heuristic (search/terminal.pxd); the counts since the
        start of the history are found once, by taking the history back on a copy and
        playing it again. Clones inherit the counts and the tracking. A no-op when the
        state already tracks them; ValueError for a game whose nodes have more than
        MOBILITY_MAX_ACTIONS actions."""
        cdef GameState replay
        cdef int a
        if self._mob_on:
            return
        if self.max_actions > MOBILITY_MAX_ACTIONS:
            raise ValueError(f"cumulative mobility counts at most {MOBILITY_MAX_ACTIONS} "
                             f"actions a node; this game has {self.max_actions}")
        actions = self.history()
        replay = self.c_clone()
        for _ in actions:
            replay.c_undo()
        mobility_restart(replay)
        replay._mob_on = True
        for a in actions:
            replay.c_apply(a)
        mobility_copy(replay, self)

    @property
    def mobility(self) -> tuple | None:
        """((turns, actions) of player 0, (turns, actions) of player 1) since the start
        of the history, or None while the state does not track them (track_mobility)."""
        if not self._mob_on:
            return None
        return ((self._mob_turns[0], self._mob_actions[0]),
                (self._mob_turns[1], self._mob_actions[1]))

    # ---- per-game Python API, overridden by each kernel ----
    def history(self) -> list:
        """Actions applied since the initial state, chance outcomes included."""
        raise NotImplementedError

    def action_to_string(self, int action) -> str:
        raise NotImplementedError

    def string_to_action(self, str text) -> int:
        raise NotImplementedError

    def snapshot(self) -> tuple:
        """Every field of the state, for exact-equality tests of undo and clone."""
        raise NotImplementedError

    def to_text(self) -> str:
        """The position in the game's text notation (Game.state_from_text reads it)."""
        raise NotImplementedError
