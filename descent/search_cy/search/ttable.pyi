"""Type stubs of ttable.pyx."""

from typing import Any, Self

from typing_extensions import disjoint_base

EXACT: int
LOWER: int
UPPER: int
ENTRY_BYTES: int
BUCKET_BYTES: int

@disjoint_base
class TranspositionTable:
    n_buckets: int
    bytes: int
    hash_mb: int
    stored: int
    probes: int
    hits: int
    writes: int
    replaced: int
    generation: int
    shared: bool
    def __new__(cls, hash_mb: int = 64) -> Self: ...
    @property
    def capacity(self) -> int: ...
    def __len__(self) -> int: ...
    def store(
        self,
        key: int,
        value: float,
        depth: int,
        bound: int,
        move: int = -1,
        resolved: bool = False,
    ) -> Self: ...
    def probe(self, key: int) -> dict[str, Any] | None: ...
    def bucket_of(self, key: int) -> int: ...
    def new_generation(self) -> None: ...
    def clear(self) -> None: ...
    def stats(self) -> dict[str, int]: ...
