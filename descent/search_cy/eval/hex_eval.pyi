"""Type stubs of hex_eval.pyx."""

from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.games.hex import HexState
from descent.search_cy.games.state import GameState

VC_VALUES: dict[str, float]

@disjoint_base
class HexEvaluator(HeuristicEvaluator):
    def __init__(self) -> None: ...
    def two_distances(
        self, s: HexState, player: int
    ) -> tuple[list[int | None], list[int | None]]: ...
    def potential(self, s: HexState, player: int) -> tuple[int, int]: ...
    def move_priors(self, s: GameState) -> list[float] | None: ...

@disjoint_base
class HexVCEvaluator(HexEvaluator):
    fill_in: bool
    def __init__(self) -> None: ...
    def spawn(self) -> HexVCEvaluator: ...
    def virtual_connection(self, s: HexState, player: int) -> bool: ...

def ziggurat_carriers() -> list[list[tuple[int, int]]]: ...
