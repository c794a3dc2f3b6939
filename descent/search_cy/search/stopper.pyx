# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Stopper: time, node, iteration and external limits, polled cheaply by the searches."""
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

_REASONS = {
    STOP_NONE: "none", STOP_TIME: "time", STOP_NODES: "nodes",
    STOP_ITERATIONS: "iterations", STOP_EXTERNAL: "stopped", STOP_RESOLVED: "resolved",
    STOP_MEMORY: "memory", STOP_DEPTH: "depth", STOP_DECIDED: "decided",
}


cdef double monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef class Stopper:
    """Limits of one search: ``time`` seconds, ``nodes``, ``iterations`` (None = none).

    The search polls ``c_check`` once per iteration (and the long ones per node); the
    clock is read every 64 polls, and at each clock read the GIL is released for a moment
    so that a protocol thread can call ``stop()`` during a search. Node and iteration
    limits make a search deterministic, whatever the machine's speed.

    ``max_time`` (at least ``time``; default ``time``) is how far a search may extend its
    deadline when the clock allows more than the move's target (a main-time clock or a
    Canadian block: the time manager's maximum): a search whose best move is unstable at
    ``time`` asks for more with ``extend`` (MCTS's "unstable evaluation" rule), and one
    whose move cannot change before ``max_time`` stops early ("decided").
    """

    def __init__(self, time=None, nodes=None, iterations=None, max_time=None):
        if time is not None and time < 0:
            raise ValueError("time limit must be >= 0")
        if max_time is not None and (time is None or max_time < time):
            raise ValueError("max_time needs a time limit and must be >= it")
        if nodes is not None and nodes < 1:
            raise ValueError("node limit must be >= 1")
        if iterations is not None and iterations < 1:
            raise ValueError("iteration limit must be >= 1")
        self.time_limit = float(time) if time is not None else 0.0
        self.max_time = float(max_time) if max_time is not None else self.time_limit
        self.max_nodes = nodes or 0
        self.max_iterations = iterations or 0
        self.flag = 0
        self.reason = STOP_NONE

    def start(self) -> None:
        """Starts the clock (each search does it when it starts; for callers that poll a
        stopper of their own)."""
        self.c_start()

    def stop(self) -> None:
        """Asks the running search to stop at its next poll. Must not block."""
        self.flag = 1

    @property
    def reason_name(self) -> str:
        return _REASONS[self.reason]

    @property
    def elapsed(self) -> float:
        """Seconds since the search started."""
        return monotonic() - self.started

    @property
    def has_time_limit(self) -> bool:
        return self.time_limit > 0.0

    @property
    def deadline_seconds(self) -> float:
        """The current deadline, seconds from the start (0: none): the time limit, or
        later once extended."""
        return self.deadline - self.started if self.deadline > 0.0 else 0.0

    def extend(self, factor: float) -> bool:
        """Moves the deadline to ``factor`` times the time limit, at most ``max_time``
        from the start; a search stopped for time resumes. False when there is no room."""
        return self.c_extend(factor)

    cdef void c_start(self) noexcept:
        self.started = monotonic()
        self.deadline = self.started + self.time_limit if self.time_limit > 0.0 else 0.0
        self.counter = 0
        self.last_nodes = 0
        self.reason = STOP_NONE

    cdef bint c_check(self, long long nodes, long long iterations) noexcept:
        if self.reason != STOP_NONE:
            return True
        if self.max_nodes and nodes >= self.max_nodes:
            self.reason = STOP_NODES
        elif self.max_iterations and iterations >= self.max_iterations:
            self.reason = STOP_ITERATIONS
        else:
            self.counter += 1
            # read the clock every 64 polls or every 1024 nodes, whichever comes first:
            # iterations range from microseconds (EinStein) to tens of milliseconds
            # (descent on Hex), and a protocol thread waits on the GIL release here
            if self.counter & 63 == 0 or nodes - self.last_nodes >= 1024:
                self.last_nodes = nodes
                with nogil:
                    pass
                if self.deadline > 0.0 and monotonic() >= self.deadline:
                    self.reason = STOP_TIME
            if self.flag:
                self.reason = STOP_EXTERNAL
        return self.reason != STOP_NONE

    cdef void c_finish(self, int reason) noexcept:
        if self.reason == STOP_NONE:
            self.reason = reason

    cdef bint c_extend(self, double factor) noexcept:
        cdef double later
        if self.time_limit <= 0.0 or self.deadline <= 0.0:
            return False
        if self.reason != STOP_NONE and self.reason != STOP_TIME:
            return False
        later = self.started + min(self.time_limit * factor, self.max_time)
        if later <= self.deadline:
            return False
        self.deadline = later
        if self.reason == STOP_TIME:
            self.reason = STOP_NONE
        return True

    cdef double c_remaining(self) noexcept:
        """Seconds to the latest deadline an extension could reach (-1: no clock)."""
        if self.time_limit <= 0.0:
            return -1.0
        return self.started + self.max_time - monotonic()
