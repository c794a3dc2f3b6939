"""Type stubs of hex_patterns.pyx."""

from os import PathLike
from typing import Any, Self, TypeAlias

import numpy as np
from typing_extensions import disjoint_base

from descent.search_cy.games.state import GameState

PATTERN_COUNT: int
LOCAL_COUNT: int
ROUTE_COUNT: int
ROUTE_GAP_CAP: int
ROUTE_NONE: int
SHIPPED_FILE: str

_Weights: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray]

def load_weights(path: str | PathLike[str]) -> _Weights: ...
def save_weights(path: str | PathLike[str], gp: Any, gl: Any, gr: Any = None) -> None: ...
def shipped_weights() -> _Weights: ...
def unit_weights() -> _Weights: ...

@disjoint_base
class HexPatterns:
    n: int
    weights: _Weights
    def __new__(cls, n: int, weights: tuple[np.ndarray, ...] | None = None) -> Self: ...
    def key(self, state: GameState, cell: int) -> int: ...
    def features(self, state: GameState, last: int = -1) -> tuple[
        np.ndarray, np.ndarray, np.ndarray]: ...
    def keys_after(self, state: GameState, moves: list[int]) -> list[tuple[int, int]]: ...
    def prior(self, state: GameState, last: int = -1) -> dict[int, float]: ...
