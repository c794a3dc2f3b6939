"""Type stubs of evaluator.pyx."""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.games.state import GameState

@disjoint_base
class Evaluator:
    lo: float
    hi: float
    positions: int
    batches: int
    def evaluate(self, states: Iterable[GameState]) -> npt.NDArray[np.float64]: ...
    def spawn(self) -> Evaluator: ...
    def move_priors(self, s: GameState) -> list[float] | None: ...
    def knowledge(self, s: GameState) -> tuple[str, list[int] | None]: ...
    def move_codes(self, s: GameState) -> np.ndarray | None: ...
    @property
    def bounds(self) -> tuple[float, float]: ...

@disjoint_base
class HeuristicEvaluator(Evaluator):
    WEIGHTS: tuple[tuple[str, float, float, float], ...]
    @property
    def weights(self) -> dict[str, float]: ...
    def set_weights(self, values: Mapping[str, float]) -> None: ...

class ZeroEvaluator(HeuristicEvaluator): ...

@disjoint_base
class BatchEvaluator(Evaluator):
    symmetry: int
    fn: Callable[[npt.NDArray[np.float32]], Any]
    def spawn(self, fn: Callable[[npt.NDArray[np.float32]], Any] | None = None) -> Evaluator: ...
    def __init__(
        self,
        fn: Callable[[npt.NDArray[np.float32]], Any],
        prototype: GameState,
        capacity: int = 256,
        symmetry: int = 0,
        lo: float = -1.0,
        hi: float = 1.0,
    ) -> None: ...
