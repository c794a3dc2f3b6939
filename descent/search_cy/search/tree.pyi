"""Type stubs of tree.pyx."""

from collections.abc import Iterable
from typing import Any, Self

from typing_extensions import disjoint_base

@disjoint_base
class TreeTable:
    max_nodes: int
    arena_children: int
    n_nodes: int
    child_top: int
    bytes_allocated: int
    lookups: int
    hits: int
    compactions: int
    def __new__(cls, hash_mb: float = 64.0) -> Self: ...
    def clear(self) -> Self: ...
    def __len__(self) -> int: ...
    def usage(self) -> float: ...
    def node(self, key: int) -> tuple[Any, ...] | None: ...
    def insert_for_test(self, key: int, nchild: int) -> bool: ...
    def keep_only(self, keys: Iterable[int]) -> None: ...
