"""Type stubs of hex_nnue_eval.pyx."""

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.eval.nnue_head import NNUEHead
from descent.search_cy.games.state import GameState

Q: int
MAX_WIDTH: int
PATTERNS: int
LINES: int

def features(size: int) -> int: ...

@disjoint_base
class HexNNUEEvaluator(NNUEHead):
    size: int
    know: HeuristicEvaluator | None
    def __init__(self, ft_weight: npt.ArrayLike, ft_bias: npt.ArrayLike,
                 layers: Iterable[tuple[npt.ArrayLike, npt.ArrayLike]], *, size: int,
                 tanh_output: bool, scale: float = ..., lo: float = ...,
                 hi: float = ...) -> None: ...
    def spawn(self) -> HexNNUEEvaluator: ...
    def check_state(self, s: GameState) -> None: ...
    def accumulator(self, s: GameState, fresh: bool = ...) -> npt.NDArray[np.int32]: ...
    def indices(self, s: GameState, view: int) -> npt.NDArray[np.int32]: ...
    def value(self, s: GameState) -> float: ...
    def forward(self, batch: npt.ArrayLike) -> npt.NDArray[np.float32]: ...
