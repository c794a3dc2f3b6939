"""Type stubs of rave.pyx."""

from typing import Any

from typing_extensions import disjoint_base

from descent.search_cy.games.hex import HexState
from descent.search_cy.games.hex_swap import SwapMap
from descent.search_cy.games.state import GameState
from descent.search_cy.search.evaluator import Evaluator
from descent.search_cy.search.result import SearchResult
from descent.search_cy.search.stopper import Stopper

DEFAULT_RAVE_K: float
DEFAULT_EXPLORATION: float
DEFAULT_EXPAND: int
DEFAULT_KNOW_AT: int
DEFAULT_PROGRESSIVE_BIAS: float
DEFAULT_PRUNE_RATIO: float
SHIPPED: object

@disjoint_base
class RaveSearch:
    params: Any
    evaluator: Evaluator
    trees: list[Any]
    K: float
    exploration: float
    expand_at: int
    know_at: int
    progressive_bias: float
    prune_ratio: float
    pattern_weights: Any
    swap_map: SwapMap | None
    def __init__(self, evaluator: Evaluator, params: Any, *, rave_k: float = ...,
                 exploration: float = ..., expand_at: int = ..., know_at: int = ...,
                 progressive_bias: float = ..., prune_ratio: float = ...,
                 pattern_weights: Any = ..., swap_map: Any = ...) -> None: ...
    def clear(self) -> None: ...
    def run(self, state: GameState, stopper: Stopper) -> SearchResult: ...

def bridge_reply(state: HexState, last: int, player: int, seed: int = 0) -> int: ...
def playout(state: HexState, seed: int) -> tuple[list[int], bool]: ...
