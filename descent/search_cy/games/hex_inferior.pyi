"""Type stubs of hex_inferior.pyx."""

from typing import Self

from typing_extensions import disjoint_base

from descent.search_cy.games.hex import HexState

LABELS: tuple[str, ...]

def dead_ring(code: int) -> bool: ...

@disjoint_base
class HexInferior:
    n: int
    def __new__(cls, n: int) -> Self: ...
    def labels(self, s: HexState) -> list[str]: ...
    def kept(self, s: HexState) -> list[int]: ...
