"""Reinforcement heuristics: what a finished game is worth as a learning target.

Values are always in player 0's view and in the *value units* the searches compare: the
network's output is ``value / scale`` (``scale`` below), and the model file records the
scale so that nets.evaluator turns outputs back into values.

================  =====================================  ======  =======  ================
name              terminal value f_t(s)                  output  scale    games
================  =====================================  ======  =======  ================
gain              the game's result, -1 / 0 / +1         tanh    1        all
depth_add         gain * max(P - p + 1, 1)               linear  P + 1    all
depth_mul         gain * max(P - p + 1, 1) / (P + 1)     linear  1        all
presence          (gain + d / (2 D)) / 1.5               linear  1        einstein, dicechess
score             (gain + m / (2 M)) / 1.5               linear  1        dicechess
================  =====================================  ======  =======  ================

``p`` is the ply of the terminal state, ``P`` the game's maximum length
(Game.max_game_length: Hex's cell count, EinStein 100, dice chess
1000; ``max_plies`` overrides it). The additive depth heuristic's values reach ``P + 1``,
so its targets are divided by ``P + 1`` before training: the network learns values in
[-1, 1] and the model file's value scale multiplies them back into depth units.

``d`` is the difference of pieces on the board (player 0's minus player 1's): EinStein's
cubes left (``D = 6``), dice chess's men (``D = 16``); ``m`` dice chess's material
difference (pawn 1, knight 3, bishop 3, rook 5, queen 9; ``M = 39``). The presence and
score values keep the sign of the result (a win lies in [1/3, 1], a loss in [-1, -1/3], a
draw in [-1/3, 1/3]) and rank wins by what is left on the board.

Not applicable, so refused: presence and score in Hex (stones never leave the board and
there is no score; Hex's "mobility", the empty cells at the end, *is* the depth
heuristic), score in EinStein (no score beyond the result). Cumulative mobility (the
papers' mean number of moves available along the game) is not offered: it needs the move
counts of every ply of a line, which the search tree does not keep.

The Cython searches know gain, depth_add and depth_mul only (search_cy/search/terminal.pxd);
with presence or score the searches see the classic gain at terminal states and the
learning targets are recomputed through the stored tree with f_t above (nets.learn.data).
"""

from __future__ import annotations

from dataclasses import dataclass

from descent.search_cy.games.state import GameState

SEARCH_KINDS: tuple[str, ...] = ("gain", "depth_add", "depth_mul")
CUSTOM_KINDS: tuple[str, ...] = ("presence", "score")
ALL_KINDS: tuple[str, ...] = SEARCH_KINDS + CUSTOM_KINDS

# Which heuristics a game has, by registry name.
APPLICABLE: dict[str, tuple[str, ...]] = {
    "hex": SEARCH_KINDS,
    "einstein": (*SEARCH_KINDS, "presence"),
    "dicechess": (*SEARCH_KINDS, "presence", "score"),
}

_MATERIAL = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9, "k": 0}
_DICECHESS_MEN = 16
_DICECHESS_MATERIAL = 39
_EINSTEIN_CUBES = 6


def _einstein_presence(state: GameState) -> float:
    left = getattr(state, "cubes_left", None)
    if left is None:
        raise ValueError("presence needs an EinStein state (cubes_left)")
    return float(left(0) - left(1)) / _EINSTEIN_CUBES


def _dicechess_pieces(state: GameState, material: bool) -> float:
    piece_at = getattr(state, "piece_at", None)
    if piece_at is None:
        raise ValueError("presence/score need a dice chess state (piece_at)")
    total = 0
    for square in range(64):
        letter = str(piece_at(square))
        if letter == ".":
            continue
        worth = _MATERIAL.get(letter.lower(), 0) if material else 1
        total += worth if letter.isupper() else -worth
    return float(total) / (_DICECHESS_MATERIAL if material else _DICECHESS_MEN)


@dataclass(frozen=True)
class Reinforcement:
    """One reinforcement heuristic bound to a game: terminal values, network output and
    scale, and the terminal kind the Cython searches are run with."""

    name: str
    game: str            # registry name
    max_plies: int       # P of the depth heuristics

    def __post_init__(self) -> None:
        if self.name not in ALL_KINDS:
            raise ValueError(f"unknown reinforcement heuristic {self.name!r} "
                             f"(known: {', '.join(ALL_KINDS)})")
        allowed = APPLICABLE.get(self.game, SEARCH_KINDS)
        if self.name not in allowed:
            raise ValueError(f"reinforcement heuristic {self.name!r} does not apply to "
                             f"{self.game} (it has: {', '.join(allowed)})")
        if self.max_plies < 1:
            raise ValueError("max_plies must be >= 1")

    @property
    def custom(self) -> bool:
        """True when the searches cannot compute it (targets are recomputed in Python)."""
        return self.name in CUSTOM_KINDS

    @property
    def search_terminal(self) -> str:
        """SearchParams.terminal for the learning and playing searches."""
        return self.name if self.name in SEARCH_KINDS else "gain"

    @property
    def output(self) -> str:
        """The network's output activation: tanh for the classic gain, else linear."""
        return "tanh" if self.name == "gain" else "linear"

    @property
    def scale(self) -> float:
        """value = scale * network output."""
        return float(self.max_plies + 1) if self.name == "depth_add" else 1.0

    @property
    def bounds(self) -> tuple[float, float]:
        return (-self.scale, self.scale)

    def terminal(self, state: GameState) -> float:
        """f_t(state) of a terminal state, player 0's view, value units."""
        gain = float(state.terminal_value())
        if self.name == "gain":
            return gain
        if self.name in ("depth_add", "depth_mul"):
            if gain == 0.0:
                return 0.0
            rest = max(float(self.max_plies - state.ply + 1), 1.0)
            return gain * rest if self.name == "depth_add" else \
                gain * rest / (self.max_plies + 1.0)
        if self.name == "presence":
            extra = (_einstein_presence(state) if self.game == "einstein"
                     else _dicechess_pieces(state, material=False))
        else:  # score
            extra = _dicechess_pieces(state, material=True)
        return (gain + 0.5 * max(-1.0, min(1.0, extra))) / 1.5


def game_max_plies(state: GameState, override: int = 0) -> int:
    """P: ``override`` when > 0, else the searches' default for the game."""
    return override if override > 0 else int(state.game.max_game_length)


def reinforcement_for(state: GameState, name: str, max_plies: int = 0) -> Reinforcement:
    """The heuristic ``name`` for a state's game (ValueError if it does not apply)."""
    game = getattr(state.game, "name", "")
    return Reinforcement(name, str(game), game_max_plies(state, max_plies))
