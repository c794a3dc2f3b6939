"""Type stubs of bestfirst.pyx."""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.state import GameState
from descent.search_cy.search.result import SearchResult
from descent.search_cy.search.rminimax import TreeBuilder
from descent.search_cy.search.stopper import Stopper
from descent.search_cy.search.tree import TreeTable

def fixed_outcome(state: GameState, seed: int) -> int: ...

TERMINAL_KINDS: dict[str, int]

@disjoint_base
class BestFirstSearch:
    table: TreeTable
    params: Any
    mode: int
    def __init__(self, evaluator: Evaluator, params: Any, mode: str = "ubfms") -> None: ...
    def clear(self) -> None: ...
    def run(self, state: GameState, stopper: Stopper) -> SearchResult: ...
    threads: int
    gatherer: Any
    def audit(self) -> list[str]: ...
    def rminimax_tree(self, state: GameState, scale: float = 1.0) -> TreeBuilder: ...
    def rminimax_policy(
        self, state: GameState, theta: float, arc_cost: float = 0.0, scale: float = 1.0
    ) -> list[tuple[int, float]]: ...
    def walk_tree(
        self,
        root: GameState,
        terminal_value: Callable[[GameState], float],
        emit: Callable[[GameState, float, bool], None],
        *,
        recompute: bool,
        completion: bool = True,
        terminals: bool = True,
        fixed: Mapping[int, int] | None = None,
        limit: int = 1 << 60,
    ) -> float | None: ...
    def learning_data(
        self,
        root: GameState,
        limit: int = 1000000,
        terminals: bool = True,
        symmetries: Iterable[int] | None = None,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]]: ...
