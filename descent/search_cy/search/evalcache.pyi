"""Type stubs of evalcache.pyx."""

from typing import Any

from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import Evaluator

@disjoint_base
class CachedEvaluator(Evaluator):
    inner: Evaluator
    entries: int
    hits: int
    misses: int
    stores: int
    def __init__(self, inner: Evaluator, cache_mb: float = 16.0, entries: int = 0) -> None: ...
    @property
    def hit_rate(self) -> float: ...
    @property
    def memory_bytes(self) -> int: ...
    def occupied(self) -> int: ...
    def clear(self) -> None: ...
    def reset_stats(self) -> None: ...
    def stats(self) -> dict[str, Any]: ...
