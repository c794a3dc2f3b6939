"""Type stubs of nnue_eval.pyx."""

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.eval.nnue_head import NNUEHead
from descent.search_cy.games.state import GameState

FEATURES: int
MAX_WIDTH: int
Q: int
CONTEXT: int
PLANES: dict[str, int]

@disjoint_base
class NNUEEvaluator(NNUEHead):
    def __init__(self, ft_weight: npt.ArrayLike, ft_bias: npt.ArrayLike,
                 layers: Iterable[tuple[npt.ArrayLike, npt.ArrayLike]], *, tanh_output: bool,
                 scale: float = ..., lo: float = ..., hi: float = ...) -> None: ...
    def spawn(self) -> NNUEEvaluator: ...
    def check_state(self, s: GameState) -> None: ...
    def accumulator(self, s: GameState, fresh: bool = ...) -> npt.NDArray[np.int32]: ...
    def value(self, s: GameState) -> float: ...
    def forward(self, batch: npt.ArrayLike) -> npt.NDArray[np.float32]: ...
