"""Type stubs of stopper.pyx."""

from typing_extensions import disjoint_base

@disjoint_base
class Stopper:
    time_limit: float
    max_time: float
    max_nodes: int
    max_iterations: int
    reason: int
    def __init__(
        self,
        time: float | None = None,
        nodes: int | None = None,
        iterations: int | None = None,
        max_time: float | None = None,
    ) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    @property
    def reason_name(self) -> str: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def has_time_limit(self) -> bool: ...
    @property
    def deadline_seconds(self) -> float: ...
    def extend(self, factor: float) -> bool: ...
