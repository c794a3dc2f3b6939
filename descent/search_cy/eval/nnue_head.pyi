"""Type stubs of nnue_head.pyx."""

from collections.abc import Iterable

import numpy.typing as npt
from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import HeuristicEvaluator

MAX_LAYERS: int

@disjoint_base
class NNUEHead(HeuristicEvaluator):
    tanh_output: bool
    scale: float
    def _setup_head(self, width: int, context: int,
                    layers: Iterable[tuple[npt.ArrayLike, npt.ArrayLike]], *,
                    tanh_output: bool, scale: float, lo: float, hi: float) -> None: ...
    @property
    def widths_(self) -> tuple[int, ...]: ...
