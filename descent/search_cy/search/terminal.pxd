# cython: language_level=3
"""Terminal evaluation f_t: the game's result turned into a learning target.

GAIN is the classic gain (the kernel's terminal value, player 0's view). The depth
heuristics of the Descent paper reward quick wins and slow losses: with p the number of
plies played and P the game's maximum length, the additive one gives P - p + 1 for a
win of player 0 (negated for a loss), the multiplicative one gain * (P - p + 1) / P, so
the value stays within [-1, 1]. Draws are 0 under all of them.
"""
from descent.search_cy.games.state cimport GameState

cdef enum TerminalKind:
    TERMINAL_GAIN = 0
    TERMINAL_DEPTH_ADD = 1
    TERMINAL_DEPTH_MUL = 2


cdef inline double terminal_value(GameState s, int kind, double max_plies) noexcept nogil:
    cdef double gain = s.c_value()
    cdef double rest
    if kind == TERMINAL_GAIN or gain == 0.0:
        return gain
    rest = max_plies - s._ply + 1.0
    if rest < 1.0:
        rest = 1.0
    if kind == TERMINAL_DEPTH_ADD:
        return gain * rest
    return gain * rest / (max_plies + 1.0)
