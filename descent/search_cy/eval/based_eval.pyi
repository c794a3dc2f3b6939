"""Type stubs of based_eval.pyx."""

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.games.state import GameState

@disjoint_base
class BasedEvaluator(HeuristicEvaluator):
    network: HeuristicEvaluator
    base: HeuristicEvaluator
    base_scale: float
    base_clip: float
    scale: float
    def __init__(self, network: HeuristicEvaluator, base: HeuristicEvaluator, *,
                 base_scale: float, base_clip: float, scale: float = ..., lo: float = ...,
                 hi: float = ...) -> None: ...
    def spawn(self) -> BasedEvaluator: ...
    @property
    def widths_(self) -> tuple[int, ...]: ...
    def check_state(self, s: GameState) -> None: ...
    def value(self, s: GameState) -> float: ...
    def forward(self, batch: npt.ArrayLike) -> npt.NDArray[np.float32]: ...
