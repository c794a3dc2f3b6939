"""Type stubs of rminimax.pyx."""

from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.state import GameState

RANDOMISED: int
OPPONENT: int
CHANCE: int
LEAF: int

def log_partition(
    kind: Any, first: Any, count: Any, value: Any, edge_to: Any, edge_p: Any,
    theta: float, arc_cost: float = 1.0,
) -> npt.NDArray[np.float64]: ...
def root_policy(
    kind: Any, first: Any, count: Any, value: Any, edge_to: Any, edge_p: Any,
    theta: float, arc_cost: float = 1.0,
) -> npt.NDArray[np.float64]: ...

@disjoint_base
class TreeBuilder:
    n_nodes: int
    n_edges: int
    root_actions: list[int]
    def arrays(self, arc_cost: float = 0.0) -> tuple[npt.NDArray[Any], ...]: ...
    def policy(self, theta: float, arc_cost: float = 1.0) -> npt.NDArray[np.float64]: ...

def full_width_tree(
    root: GameState, evaluator: Evaluator, depth: int, *, terminal: int = 0,
    max_plies: float = 0.0, scale: float = 1.0, max_nodes: int = 2000000,
) -> TreeBuilder | None: ...
