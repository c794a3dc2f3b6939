"""Type stubs of hex_playout.pyx."""

from typing import Any, Self

from typing_extensions import disjoint_base

from descent.search_cy.games.hex import HexState

@disjoint_base
class HexPlayout:
    moves: int
    def __new__(cls, n: int, *args: Any, **kwargs: Any) -> Self: ...

def bridge_reply(state: HexState, last: int, player: int, seed: int = 0) -> int: ...
def playout_value(state: HexState, playouts: int, seed: int, weights: Any = ...,
                  cap: float = ..., fill_in: bool = ...) -> float: ...
def pattern_weights_followed(
    state: HexState, moves: list[int], weights: Any, cap: float
) -> tuple[tuple[list[float], list[float], float, float],
           tuple[list[float], list[float], float, float]]: ...
def pattern_draws(state: HexState, weights: Any, cap: float, draws: int,
                  seed: int) -> list[int]: ...
