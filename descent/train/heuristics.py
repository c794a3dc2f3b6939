"""Reinforcement heuristics: what a finished game is worth, to the searches and as a
learning target (the Descent paper's terminal evaluations).

Values are always in player 0's view and in the *value units* the searches compare: the
network's output is ``value / scale`` (``scale`` below), and the model file records the
scale so that nets.evaluator turns outputs back into values.

================  =====================================  ======  =======  ================
name              terminal value f_t(s)                  output  scale    games
================  =====================================  ======  =======  ================
gain              the game's result, -1 / 0 / +1         tanh    1        all
depth_add         gain * max(P - p + 1, 1)               linear  P + 1    all
depth_mul         gain * (P + 1) / p                     linear  P + 1    all
presence          (gain + d / 2) / 1.5                   linear  1        einstein, dicechess
score             (gain + m / 2) / 1.5                   linear  1        dicechess
mobility          M0 / M1 (0 wins), -M1 / M0 (1 wins)    linear  1        all
================  =====================================  ======  =======  ================

``p`` is the ply of the terminal state, ``P`` the game's maximum length
(Game.max_game_length: Hex's cell count, EinStein 100, dice chess 1000; ``max_plies``
overrides it). The depth heuristics' values reach ``P + 1``, so their targets are divided
by ``P + 1`` before training: the network learns values in [-1, 1] and the model file's
value scale multiplies them back into depth units.

``d`` is the balance of pieces on the board (GameState.balance: player 0's minus player
1's, over the most a side has: EinStein's 6 cubes, dice chess's 16 men), ``m`` dice
chess's material balance (pawn 1, knight 3, bishop 3, rook 5, queen 9, over 39). The
presence and score values keep the sign of the result (a win lies in [1/3, 1], a loss in
[-1, -1/3], a draw in [-1/3, 1/3]) and rank wins by what is left on the board.

``Mi`` is the mean number of actions player i had on its turns since the start of the
game (the paper's cumulative mobility; in the dice games, the moves the die rolled
allowed, set-ups and die outcomes are nobody's turn). The states keep the counts along
every line (GameState.track_mobility, updated by the kernels' apply and undo), so no line
is replayed. A mean is taken as at least 1, so the values lie within +-max_actions; the
network learns them unscaled. In Hex the means follow from the game's length alone (the
empty cells at each turn): with N cells (no swap), a first player's win is worth exactly
1 and a second player's win after k moves of each -(N - k) / (N - k + 1), a faint
depth heuristic for one side only; the paper leaves it out of Hex as of no interest.

Every heuristic is computed by one function, terminal.pxd's ``terminal_value``: the
searches value terminal states with it, and the learning targets read it through
terminal.pyx, so what a search backs up is what the network learns.

Not applicable, so refused: presence and score in Hex (stones never leave the board and
there is no score; the empty cells left at the end are what the depth heuristics
count), score in EinStein (no score beyond the cubes).
"""

from __future__ import annotations

from dataclasses import dataclass

from descent.search_cy.games.state import GameState
from descent.search_cy.search.terminal import KINDS
from descent.search_cy.search.terminal import value as terminal_value

ALL_KINDS: tuple[str, ...] = KINDS        # terminal.pyx: every heuristic the searches know
DEPTH_KINDS: tuple[str, ...] = ("depth_add", "depth_mul")

# Which heuristics a game has, by registry name.
APPLICABLE: dict[str, tuple[str, ...]] = {
    "hex": ("gain", *DEPTH_KINDS, "mobility"),
    "einstein": ("gain", *DEPTH_KINDS, "presence", "mobility"),
    "dicechess": ALL_KINDS,
}


@dataclass(frozen=True)
class Reinforcement:
    """One reinforcement heuristic bound to a game: terminal values, network output and
    scale, and the terminal kind the Cython searches are run with."""

    name: str
    game: str            # registry name
    max_plies: int       # P of the depth heuristics
    max_actions: int = 1  # the game's bound on the actions of a node (mobility's bound)

    def __post_init__(self) -> None:
        if self.name not in ALL_KINDS:
            raise ValueError(f"unknown reinforcement heuristic {self.name!r} "
                             f"(known: {', '.join(ALL_KINDS)})")
        allowed = APPLICABLE.get(self.game, ALL_KINDS)
        if self.name not in allowed:
            raise ValueError(f"reinforcement heuristic {self.name!r} does not apply to "
                             f"{self.game} (it has: {', '.join(allowed)})")
        if self.max_plies < 1:
            raise ValueError("max_plies must be >= 1")

    @property
    def search_terminal(self) -> str:
        """SearchParams.terminal for the learning and playing searches."""
        return self.name

    @property
    def output(self) -> str:
        """The network's output activation: tanh for the classic gain, else linear."""
        return "tanh" if self.name == "gain" else "linear"

    @property
    def scale(self) -> float:
        """value = scale * network output."""
        return float(self.max_plies + 1) if self.name in DEPTH_KINDS else 1.0

    @property
    def bounds(self) -> tuple[float, float]:
        top = float(max(self.max_actions, 1)) if self.name == "mobility" else self.scale
        return (-top, top)

    def terminal(self, state: GameState) -> float:
        """f_t(state) of a terminal state, player 0's view, value units."""
        return terminal_value(state, self.name, float(self.max_plies))


def game_max_plies(state: GameState, override: int = 0) -> int:
    """P: ``override`` when > 0, else the searches' default for the game."""
    return override if override > 0 else int(state.game.max_game_length)


def reinforcement_for(state: GameState, name: str, max_plies: int = 0) -> Reinforcement:
    """The heuristic ``name`` for a state's game (ValueError if it does not apply)."""
    game = getattr(state.game, "name", "")
    return Reinforcement(name, str(game), game_max_plies(state, max_plies),
                         int(state.max_actions))
