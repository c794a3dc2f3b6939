# cython: language_level=3
"""Search limits polled cheaply from inside the C search loops."""

cdef enum StopReason:
    STOP_NONE = 0
    STOP_TIME = 1
    STOP_NODES = 2
    STOP_ITERATIONS = 3
    STOP_EXTERNAL = 4
    STOP_RESOLVED = 5     # the root is solved: searching further cannot change anything
    STOP_MEMORY = 6       # the tree table is full and could not be compacted
    STOP_DEPTH = 7        # a depth-limited search reached its maximum depth
    STOP_DECIDED = 8      # the move cannot change before the latest deadline


cdef double monotonic() noexcept nogil


cdef class Stopper:
    cdef readonly double time_limit      # seconds from start(); 0 = none
    cdef readonly double max_time        # the most an extension may reach (>= time_limit)
    cdef readonly long long max_nodes    # 0 = none
    cdef readonly long long max_iterations
    cdef double started, deadline
    cdef int counter
    cdef long long last_nodes
    cdef int flag                        # set by stop() from another thread (read after a GIL release)
    cdef public int reason

    cdef void c_start(self) noexcept
    cdef bint c_check(self, long long nodes, long long iterations) noexcept
    cdef void c_finish(self, int reason) noexcept
    cdef bint c_extend(self, double factor) noexcept
    cdef double c_remaining(self) noexcept
