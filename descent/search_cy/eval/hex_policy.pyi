"""Type stubs of hex_policy.pyx."""

from typing import Any, Self

import numpy as np
from typing_extensions import disjoint_base

from descent.search_cy.games.hex import HexState

@disjoint_base
class HexPolicy:
    n: int
    residual: bool
    has_values: bool
    def __new__(cls, n: int, convs: list[tuple[Any, Any]], head_weight: Any,
                head_bias: float, residual: bool = False,
                values: dict[str, Any] | None = None) -> Self: ...
    def logits(self, state: HexState) -> np.ndarray: ...
    def probabilities(self, state: HexState) -> np.ndarray: ...
    def values(self, state: HexState) -> tuple[np.ndarray, float]: ...
    def _check(self, state: HexState) -> None: ...
