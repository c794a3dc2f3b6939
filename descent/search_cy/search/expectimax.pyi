"""Type stubs of expectimax.pyx."""

from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.state import GameState
from descent.search_cy.search._expectimax_nodes import ExpectiNodes
from descent.search_cy.search.api import SearchParams
from descent.search_cy.search.result import SearchResult
from descent.search_cy.search.stopper import Stopper
from descent.search_cy.search.ttable import TranspositionTable

TERMINAL_KINDS: dict[str, int]

RMINIMAX_DEPTH: int
RMINIMAX_NODES: int

@disjoint_base
class Expectiminimax(ExpectiNodes):
    evaluator: Evaluator
    heuristic_path: bool
    params: SearchParams
    tt: TranspositionTable
    use_tt: bool
    exact_depth: bool
    threads: int
    def __init__(
        self,
        evaluator: Evaluator,
        params: SearchParams | None = None,
        *,
        use_tt: bool = True,
        table: TranspositionTable | None = None,
        exact_depth: bool = False,
    ) -> None: ...
    def run(self, state: GameState, stopper: Stopper) -> SearchResult: ...
    def clear(self) -> None: ...
    def rminimax_policy(
        self, state: GameState, theta: float, arc_cost: float = 0.0, scale: float = 1.0,
        depth: int = 3,
    ) -> list[tuple[int, float]]: ...
    @property
    def bounds(self) -> tuple[float, float]: ...
