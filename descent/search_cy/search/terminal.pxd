# cython: language_level=3
"""Terminal evaluation f_t: the game's result as the searches value it, and so as the
learning targets see it (the Descent paper's reinforcement heuristics).

With p the plies played, P the game's maximum length, gain the kernel's result (player
0's view, -1 / 0 / +1) and b the board's balance (GameState.c_balance, in [-1, 1]):

- GAIN: gain, the classic terminal evaluation;
- DEPTH_ADD (the additive depth heuristic): gain * max(P - p + 1, 1), so a quick win is
  worth more and a loss is worth more the longer it takes; values within +-(P + 1);
- DEPTH_MUL (the multiplicative one, P~ / p with P~ = P + 1): gain * (P + 1) / p;
  values within +-(P + 1), falling off as 1 / p;
- PRESENCE / SCORE: (gain + b / 2) / 1.5 with b the pieces left (presence) or the
  material left (score), player 0's minus player 1's: the sign of the result is kept
  (a win lies in [1/3, 1]) and wins are ranked by what is left on the board.

Draws are 0 under the depth heuristics. The Python side reads the same function
(terminal.pyx: ``value``), so the rule is written once.
"""
from libc.math cimport isnan

from descent.search_cy.games.state cimport GameState

cdef enum TerminalKind:
    TERMINAL_GAIN = 0
    TERMINAL_DEPTH_ADD = 1
    TERMINAL_DEPTH_MUL = 2
    TERMINAL_PRESENCE = 3
    TERMINAL_SCORE = 4


cdef inline double terminal_value(GameState s, int kind, double max_plies) noexcept nogil:
    cdef double gain = s.c_value()
    cdef double rest, b
    if kind == TERMINAL_GAIN:
        return gain
    if kind == TERMINAL_PRESENCE or kind == TERMINAL_SCORE:
        b = s.c_balance(kind == TERMINAL_SCORE)
        if isnan(b):
            b = 0.0
        elif b > 1.0:
            b = 1.0
        elif b < -1.0:
            b = -1.0
        return (gain + 0.5 * b) / 1.5
    if gain == 0.0:
        return 0.0
    if kind == TERMINAL_DEPTH_ADD:
        rest = max_plies - s._ply + 1.0
        return gain * (rest if rest > 1.0 else 1.0)
    return gain * (max_plies + 1.0) / (s._ply if s._ply > 1 else 1.0)
