# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""An evaluation cache keyed by the kernels' Zobrist hash, in front of any Evaluator.

Network evaluations dominate a search's time, and the same position comes back often:
transpositions inside one tree, the next move's search, the next iteration of iterative
deepening, two searches sharing one evaluator. ``CachedEvaluator`` answers those from a
fixed-size table and forwards only the misses to the inner evaluator, in one batch per
flush as before, so the network still sees one call per expanded node.

The table is 2-way set associative: ``entries`` (key, value) pairs of 16 bytes, a power of
two sized from ``cache_mb``, never grown, so memory is bounded by construction. A set's
first way holds the newest entry; a store into a full set moves the first way to the
second and drops the older second (a hit in the second way swaps the two), which keeps
recently used positions. Full 64-bit keys are compared, so a false hit needs two states
with equal Zobrist keys. Key 0 is the empty mark: a state hashing to 0 is never cached.

Values are stored as the inner evaluator returned them (player 0's view), so a cache must
wrap one evaluator (one network, one symmetry) for its whole life.
"""
from libc.stdint cimport int8_t, uint64_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memset

from descent.search_cy.games.state cimport GameState
from descent.search_cy.eval.evaluator cimport Evaluator


cdef struct Entry:
    uint64_t key
    double value


cdef class CachedEvaluator(Evaluator):
    """Wraps ``inner``; ``cache_mb`` (or ``entries``, rounded down to a power of two)
    bounds the table. Statistics: hits, misses, stores, hit_rate."""

    cdef readonly Evaluator inner
    cdef Entry* table
    cdef uint64_t set_mask
    cdef readonly long long entries
    cdef readonly long long hits, misses, stores
    cdef uint64_t* slot_key      # per queued state: its key
    cdef char* slot_hit          # per queued state: answered from the table
    cdef double* miss_values     # the inner evaluator's values of the misses
    cdef int slot_capacity
    cdef int n_miss

    def __init__(self, Evaluator inner, double cache_mb=16.0, long long entries=0):
        cdef long long want, sets = 1
        if inner is None:
            raise TypeError("inner evaluator must not be None")
        if entries <= 0:
            if cache_mb <= 0:
                raise ValueError("cache_mb must be > 0")
            want = <long long>(cache_mb * 1048576.0) // sizeof(Entry)
        else:
            want = entries
        if want < 2:
            raise ValueError("the cache needs room for at least 2 entries")
        while sets * 4 <= want:
            sets *= 2
        self.inner = inner
        self.lo = inner.lo
        self.hi = inner.hi
        self.entries = 2 * sets
        self.set_mask = <uint64_t>(sets - 1)
        self.table = <Entry*>calloc(self.entries, sizeof(Entry))
        if self.table == NULL:
            raise MemoryError()
        self.c_reserve(64)

    cdef int c_knowledge(self, GameState s, int8_t* keep) noexcept nogil:
        return self.inner.c_knowledge(s, keep)

    def spawn(self):
        """A cache of the same size in front of a spawn of the inner evaluator: each
        search thread keeps its own table (no lock on the hot path)."""
        return CachedEvaluator(self.inner.spawn(), entries=self.entries)

    def __dealloc__(self):
        free(self.table)
        free(self.slot_key)
        free(self.slot_hit)
        free(self.miss_values)

    cdef int c_reserve(self, int n) except -1:
        cdef uint64_t* keys
        cdef char* hit
        cdef double* vals
        Evaluator.c_reserve(self, n)
        if n <= self.slot_capacity:
            return 0
        keys = <uint64_t*>realloc(self.slot_key, n * sizeof(uint64_t))
        if keys == NULL:
            raise MemoryError()
        self.slot_key = keys
        hit = <char*>realloc(self.slot_hit, n * sizeof(char))
        if hit == NULL:
            raise MemoryError()
        self.slot_hit = hit
        vals = <double*>realloc(self.miss_values, n * sizeof(double))
        if vals == NULL:
            raise MemoryError()
        self.miss_values = vals
        self.slot_capacity = n
        return 0

    cdef inline Entry* _set(self, uint64_t key) noexcept:
        return &self.table[2 * (key & self.set_mask)]

    cdef int c_add(self, GameState s) except -1:
        cdef uint64_t key = s.c_hash()
        cdef Entry* ways
        cdef Entry tmp
        cdef int i = self.n_pending
        if i >= self.capacity or i >= self.slot_capacity:
            self.c_reserve(2 * i + 64)
        self.slot_key[i] = key
        self.slot_hit[i] = 0
        if key != 0:
            ways = self._set(key)
            if ways[0].key == key:
                self.slot_hit[i] = 1
                self.pending[i] = ways[0].value
            elif ways[1].key == key:
                self.slot_hit[i] = 1
                self.pending[i] = ways[1].value
                tmp = ways[0]
                ways[0] = ways[1]
                ways[1] = tmp
        if self.slot_hit[i]:
            self.hits += 1
        else:
            self.misses += 1
            self.inner.c_add(s)
            self.n_miss += 1
        self.n_pending += 1
        return 0

    cdef void c_discard(self) noexcept:
        self.n_pending = 0
        self.n_miss = 0
        self.inner.c_discard()

    cdef void _store(self, uint64_t key, double value) noexcept:
        cdef Entry* ways
        if key == 0:
            return
        ways = self._set(key)
        if ways[0].key != key and ways[0].key != 0:
            ways[1] = ways[0]
        ways[0].key = key
        ways[0].value = value
        self.stores += 1

    cdef int c_flush(self, double* out) except -1:
        cdef int i, j = 0, n = self.n_pending, misses = self.n_miss
        if n == 0:
            return 0
        # reset first: if the inner evaluator raises, the next batch starts clean
        self.n_pending = 0
        self.n_miss = 0
        if misses:
            self.inner.c_flush(self.miss_values)
        for i in range(n):
            if self.slot_hit[i]:
                out[i] = self.pending[i]
            else:
                out[i] = self.miss_values[j]
                self._store(self.slot_key[i], self.miss_values[j])
                j += 1
        self.positions += n
        self.batches += 1
        return 0

    @property
    def hit_rate(self) -> float:
        """Hits over lookups since creation (or the last reset_stats); 0 before any."""
        cdef long long total = self.hits + self.misses
        return self.hits / <double>total if total else 0.0

    @property
    def memory_bytes(self) -> int:
        """Bytes of the table (the bound ``cache_mb`` sets)."""
        return self.entries * sizeof(Entry)

    def occupied(self) -> int:
        """Entries holding a position (scans the table: for tests and statistics)."""
        cdef long long i, count = 0
        for i in range(self.entries):
            if self.table[i].key != 0:
                count += 1
        return count

    def clear(self) -> None:
        """Forgets every cached value (a new network, or a new game with another one)."""
        memset(self.table, 0, self.entries * sizeof(Entry))

    def reset_stats(self) -> None:
        self.hits = 0
        self.misses = 0
        self.stores = 0

    def stats(self) -> dict:
        return {"entries": self.entries, "memory_bytes": self.memory_bytes,
                "hits": self.hits, "misses": self.misses, "stores": self.stores,
                "hit_rate": self.hit_rate, "positions": self.positions,
                "inner_positions": self.inner.positions}
