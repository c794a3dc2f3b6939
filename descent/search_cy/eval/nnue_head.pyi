"""Type stubs of nnue_head.pyx."""

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import HeuristicEvaluator

MAX_LAYERS: int

@disjoint_base
class NNUEHead(HeuristicEvaluator):
    tanh_output: bool
    scale: float
    @staticmethod
    def _transformer(ft_weight: npt.ArrayLike, ft_bias: npt.ArrayLike, features: int,
                     what: str, max_width: int, q: int
                     ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64],
                                npt.NDArray[np.int16], npt.NDArray[np.int16]]: ...
    def _setup_head(self, width: int, context: int,
                    layers: Iterable[tuple[npt.ArrayLike, npt.ArrayLike]], *,
                    tanh_output: bool, scale: float, lo: float, hi: float) -> None: ...
    @property
    def widths_(self) -> tuple[int, ...]: ...
