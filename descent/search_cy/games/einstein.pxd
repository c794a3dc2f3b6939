# cython: language_level=3
from libc.stdint cimport uint64_t, int8_t
from descent.search_cy.games.state cimport GameState

cdef enum:
    EWN_CELLS = 25
    # Every move advances a cube by 1 or 2 in its distance to the target corner (at most 8
    # steps), so a game has at most 6 * 8 moves per side, one die per move and 2 set-ups:
    # 2 + 2 * 96 = 194 history entries. 256 leaves a margin for positions read from text.
    EWN_HIST = 256
    EWN_PERMS = 720

cdef class EinsteinState(GameState):
    cdef int setup_mode           # SETUP_RANDOM / SETUP_MIRROR / SETUP_FREE
    cdef int first                # side that rolls first after the set-up (0 Red, 1 Blue)
    cdef bint merge               # merge die values with the same movable cubes
    cdef int8_t board[EWN_CELLS]  # 0 empty, 1..6 Red cube k, 7..12 Blue cube k
    cdef int8_t pos[2][7]         # cell of each side's cube 1..6, -1 when off the board
    cdef int8_t count[2]          # cubes left per side
    cdef int side                 # to move (player node) / to roll / to set up
    cdef int phase                # PH_* below
    cdef int die                  # pending die 1..6 at a move node, else 0
    cdef int winner               # -1 none, else 0/1
    cdef uint64_t key
    # undo records, one per applied action (chance outcomes included)
    cdef int nhist
    cdef int hist_action[EWN_HIST]
    cdef int8_t hist_captured[EWN_HIST]   # piece code removed from the target cell, 0 none
    cdef int8_t hist_phase[EWN_HIST]      # phase, side and die before the action
    cdef int8_t hist_side[EWN_HIST]
    cdef int8_t hist_die[EWN_HIST]

    cdef void _put(self, int cell, int code) noexcept nogil
    cdef void _take(self, int cell) noexcept nogil
    cdef void _set_meta(self, int phase, int side, int die) noexcept nogil
    cdef void _arrange(self, int side, int rank, bint mirrored) noexcept nogil
    cdef int _movable(self, int side, int die) noexcept nogil
