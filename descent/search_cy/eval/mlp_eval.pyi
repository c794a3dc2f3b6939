"""Type stubs of mlp_eval.pyx."""

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.games.state import GameState

@disjoint_base
class MLPEvaluator(HeuristicEvaluator):
    symmetry: int
    list_form: bool
    tanh_output: bool
    scale: float
    def __init__(self, prototype: GameState,
                 layers: Iterable[tuple[npt.ArrayLike, npt.ArrayLike]], *, tanh_output: bool,
                 scale: float = ..., lo: float = ..., hi: float = ...,
                 to_move_plane: int = ..., symmetry: int = ...,
                 list_form: bool = ...) -> None: ...
    def load(self, layers: Iterable[tuple[npt.ArrayLike, npt.ArrayLike]]) -> None: ...
    @property
    def widths_(self) -> tuple[int, ...]: ...
    def forward(self, batch: npt.ArrayLike) -> npt.NDArray[np.float32]: ...
