# cython: language_level=3
"""The game-kernel seam: one C-level interface that every rules kernel implements.

Searches cimport this file and call the ``c_*`` methods through the vtable, without the
GIL and without a Python object per node. The ``def`` wrappers in state.pyx are the
checked, documented Python API built once on top of them.
"""
from libc.stdint cimport uint64_t

cdef enum:
    CHANCE = -1      # current_player() at a chance node
    TERMINAL = -4    # current_player() at a terminal state

cdef void encode_features(float* out, const int* features, int n, int planes,
                          int cells) noexcept nogil


cdef class GameState:
    cdef readonly object game        # the Game descriptor this state belongs to
    cdef readonly int max_actions    # bound on legal_actions() at any player node
    cdef readonly int max_chance_outcomes
    cdef readonly int num_planes, height, width
    cdef readonly int num_symmetries
    cdef int _ply
    # Cumulative mobility (search/terminal.pxd): each player's turns and the actions
    # available on them since the start of the game, kept by the kernels' c_apply and
    # c_undo (mobility_count) while _mob_on; GameState.track_mobility turns it on.
    cdef bint _mob_on
    cdef int _mob_turns[2]
    cdef long long _mob_actions[2]

    # -- fast interface (no GIL, no checks: callers pass legal actions only) --
    cdef int c_player(self) noexcept nogil
    cdef int c_legal(self, int* out) noexcept nogil
    cdef int c_chance(self, int* outcomes, double* probs) noexcept nogil
    cdef void c_apply(self, int action) noexcept nogil
    cdef void c_undo(self) noexcept nogil
    cdef uint64_t c_hash(self) noexcept nogil
    cdef uint64_t c_full_hash(self) noexcept nogil
    cdef bint c_terminal(self) noexcept nogil
    cdef double c_value(self) noexcept nogil
    cdef double c_balance(self, bint material) noexcept nogil
    cdef void c_encode(self, float* out, int sym) noexcept nogil
    cdef int c_features(self, int* out, int sym) noexcept nogil
    cdef bint c_sym_swaps_colours(self, int sym) noexcept nogil
    cdef int c_sym_action(self, int action, int sym) noexcept nogil
    cdef int c_history_length(self) noexcept nogil
    cdef GameState c_clone(self)


cdef enum:
    MOBILITY_MAX_ACTIONS = 1024   # track_mobility refuses games with more actions a node


cdef inline void mobility_count(GameState s, int sign) noexcept nogil:
    """Counts (sign +1) or takes back (-1) the mover's turn at the player node ``s`` is
    at: the kernels call it first thing in c_apply before a move, and last in c_undo
    once the move is taken back, so the state is the same both times."""
    cdef int buf[MOBILITY_MAX_ACTIONS]
    cdef int p = s.c_player()
    if p == 0 or p == 1:
        s._mob_actions[p] += sign * s.c_legal(buf)
        s._mob_turns[p] += sign


cdef inline void mobility_copy(GameState src, GameState dst) noexcept nogil:
    dst._mob_on = src._mob_on
    dst._mob_turns[0] = src._mob_turns[0]
    dst._mob_turns[1] = src._mob_turns[1]
    dst._mob_actions[0] = src._mob_actions[0]
    dst._mob_actions[1] = src._mob_actions[1]


cdef inline void mobility_restart(GameState s) noexcept nogil:
    """Where a kernel restarts its history (a new position), the counts restart too."""
    s._mob_turns[0] = 0
    s._mob_turns[1] = 0
    s._mob_actions[0] = 0
    s._mob_actions[1] = 0
