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
  (a win lies in [1/3, 1]) and wins are ranked by what is left on the board;
- MOBILITY (cumulative mobility): M0 / M1 when player 0 wins, -M1 / M0 when player 1
  wins, 0 for a draw, with Mi the mean number of actions player i had on its turns since
  the start of the game (GameState.track_mobility keeps the counts along the path; the
  searches turn it on with ``prepare``). A mean is taken as at least 1 (a player with no
  turn yet, or turns without a move), so values lie within +-max_actions; a state that
  does not track the counts is valued by the gain.

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
    TERMINAL_MOBILITY = 5


cdef inline double _mean_actions(GameState s, int p) noexcept nogil:
    cdef double m = 0.0
    if s._mob_turns[p] > 0:
        m = <double>s._mob_actions[p] / s._mob_turns[p]
    return m if m > 1.0 else 1.0


cdef inline double terminal_bound(GameState s, int kind, double max_plies) noexcept nogil:
    """The largest magnitude terminal_value takes under ``kind``."""
    if kind == TERMINAL_DEPTH_ADD or kind == TERMINAL_DEPTH_MUL:
        return max_plies + 1.0
    if kind == TERMINAL_MOBILITY:
        return s.max_actions if s.max_actions > 1 else 1.0
    return 1.0


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
    if kind == TERMINAL_MOBILITY:
        return gain * _mean_actions(s, 0 if gain > 0.0 else 1) / _mean_actions(
            s, 1 if gain > 0.0 else 0) if s._mob_on else gain
    if kind == TERMINAL_DEPTH_ADD:
        rest = max_plies - s._ply + 1.0
        return gain * (rest if rest > 1.0 else 1.0)
    return gain * (max_plies + 1.0) / (s._ply if s._ply > 1 else 1.0)
