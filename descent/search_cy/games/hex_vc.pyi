"""Type stubs of hex_vc.pyx."""

from typing import Self

from typing_extensions import disjoint_base

from descent.search_cy.games.hex import HexState

DEFAULT_MAX_FULLS: int
DEFAULT_MAX_SEMIS: int
DEFAULT_MAX_ENTRIES: int
CODES: tuple[str, ...]

@disjoint_base
class HexVC:
    n: int
    max_fulls: int
    max_semis: int
    max_entries: int
    fill_in: bool
    def __new__(cls, n: int, max_fulls: int = ..., max_semis: int = ...,
                max_entries: int = ..., fill_in: bool = ...) -> Self: ...
    def _check(self, s: HexState) -> None: ...
    def connections(
        self, s: HexState, player: int
    ) -> tuple[list[list[int]], list[tuple[int, list[int]]]]: ...
    def knowledge(self, s: HexState) -> tuple[str, list[int] | None]: ...
    def maintenance(self, s: HexState) -> list[tuple[int, int, int, int]]: ...
    @property
    def entries(self) -> int: ...
    @property
    def overflowed(self) -> bool: ...
