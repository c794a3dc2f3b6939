# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Transposition table: fixed memory, two-entry buckets, depth-preferred + always-replace.

The searches call ``c_lookup`` / ``c_store`` without the GIL; the Python methods exist
for tests and statistics. See ttable.pxd for the entry layout and the policy.

Several search threads may share one table (Lazy SMP) with no lock: an entry's key is
stored XORed with a hash of its data (Hyatt and Mann's lockless hashing), and a lookup
copies the slot before checking it, so an entry torn by two concurrent writes, or read
while it is written, no longer matches its key and is a miss, never a wrong value. While
threads share the table (``shared``) the statistics are not counted: counters written
from every thread would sit in the cache line every lookup reads.
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset, memcpy

EXACT = TT_EXACT
LOWER = TT_LOWER
UPPER = TT_UPPER
ENTRY_BYTES = sizeof(TTEntry)
BUCKET_BYTES = sizeof(TTBucket)
_BOUND_NAMES = {TT_EXACT: "exact", TT_LOWER: "lower", TT_UPPER: "upper"}


cdef inline uint64_t _check(const TTEntry* e) noexcept nogil:
    """A hash of an entry's data (everything but the key)."""
    cdef uint64_t bits, rest
    memcpy(&bits, &e.value, sizeof(double))
    rest = ((<uint64_t><unsigned int>e.move) << 32) | (
        (<uint64_t><unsigned short>e.depth) << 16) | (<uint64_t>e.flags << 8) | e.age
    bits ^= rest * <uint64_t>0x9E3779B97F4A7C15
    return bits ^ (bits >> 31)


cdef inline uint64_t _key_of(const TTEntry* e) noexcept nogil:
    return e.key ^ _check(e)


cdef inline void _write(TTEntry* e, uint64_t key, double value, int depth, int bound,
                        int move, bint resolved, int age) noexcept nogil:
    e.value = value
    e.move = move
    e.depth = <short>(depth if depth < 32767 else 32767)
    e.flags = <unsigned char>(bound | (TT_RESOLVED if resolved else 0))
    e.age = <unsigned char>age
    e.key = key ^ _check(e)


cdef class TranspositionTable:
    """``hash_mb`` MiB at most, allocated once; ``bytes`` says how much was taken.

    Values are doubles in player 0's view with their bound (EXACT, LOWER, UPPER), the
    remaining depth they were searched to, the best action and a resolved flag.
    """

    def __cinit__(self, int hash_mb=64):
        cdef long long budget, n
        if hash_mb < 1:
            raise ValueError("hash_mb must be >= 1")
        budget = <long long>hash_mb << 20
        n = 1
        while (n << 1) * <long long>sizeof(TTBucket) <= budget:
            n <<= 1
        self.buckets = <TTBucket*>calloc(n, sizeof(TTBucket))
        if self.buckets == NULL:
            raise MemoryError(f"transposition table of {hash_mb} MiB")
        self.hash_mb = hash_mb
        self.n_buckets = n
        self.mask = <uint64_t>(n - 1)
        self.bytes = n * <long long>sizeof(TTBucket)
        self.generation = 0

    def __dealloc__(self):
        free(self.buckets)

    # ---- C interface ----
    cdef TTEntry* c_lookup(self, uint64_t key, TTEntry* out) noexcept nogil:
        """The entry of ``key`` copied into ``out`` (and ``out`` returned), or NULL."""
        cdef TTBucket* b = &self.buckets[(key ^ (key >> 29)) & self.mask]
        cdef int i
        if not self.shared:
            self.probes += 1
        for i in range(2):
            out[0] = b.slot[i]          # a copy: another thread may be rewriting the slot
            if out.flags & TT_BOUND_MASK and _key_of(out) == key:
                out.key = key
                if not self.shared:
                    self.hits += 1
                return out
        return NULL

    cdef void c_store(self, uint64_t key, double value, int depth, int bound, int move,
                      bint resolved) noexcept nogil:
        cdef TTBucket* b = &self.buckets[(key ^ (key >> 29)) & self.mask]
        cdef TTEntry* s0 = &b.slot[0]
        cdef TTEntry* s1 = &b.slot[1]
        cdef TTEntry tmp
        cdef int gen = self.generation
        cdef bint count = not self.shared
        if count:
            self.writes += 1
        if s0.flags & TT_BOUND_MASK and _key_of(s0) == key:
            if s0.age == gen and depth < s0.depth:
                return                      # keep the deeper result of this search
            if s0.age == gen and depth == s0.depth and bound != TT_EXACT \
                    and s0.flags & TT_BOUND_MASK == TT_EXACT:
                return                      # an exact value says more than a bound
            if move < 0:
                move = s0.move
            _write(s0, key, value, depth, bound, move, resolved, gen)
            return
        if s1.flags & TT_BOUND_MASK and _key_of(s1) == key:
            if move < 0:
                move = s1.move
            _write(s1, key, value, depth, bound, move, resolved, gen)
            if not (s0.flags & TT_BOUND_MASK) or s0.age != gen or s1.depth >= s0.depth:
                tmp = s0[0]
                s0[0] = s1[0]
                s1[0] = tmp
            return
        # a key new to the bucket
        if not (s0.flags & TT_BOUND_MASK):
            if count:
                self.stored += 1
            _write(s0, key, value, depth, bound, move, resolved, gen)
            return
        if not count:
            pass
        elif s1.flags & TT_BOUND_MASK:
            self.replaced += 1
        else:
            self.stored += 1
        if s0.age != gen or depth >= s0.depth:
            s1[0] = s0[0]                   # the old deep entry moves to the always slot
            _write(s0, key, value, depth, bound, move, resolved, gen)
        else:
            _write(s1, key, value, depth, bound, move, resolved, gen)

    cdef void c_new_generation(self) noexcept nogil:
        self.generation = (self.generation + 1) & 255

    cdef void c_clear(self) noexcept nogil:
        memset(self.buckets, 0, self.n_buckets * sizeof(TTBucket))
        self.stored = 0
        self.probes = 0
        self.hits = 0
        self.writes = 0
        self.replaced = 0
        self.generation = 0

    # ---- Python interface (tests, statistics) ----
    @property
    def capacity(self) -> int:
        """Number of entries the table can hold (two per bucket)."""
        return 2 * self.n_buckets

    def __len__(self) -> int:
        return self.stored

    def store(self, key, double value, int depth, int bound, int move=-1,
              bint resolved=False) -> None:
        """Write one result (bound: EXACT, LOWER or UPPER) under the replacement policy."""
        if bound not in (TT_EXACT, TT_LOWER, TT_UPPER):
            raise ValueError(f"bound must be EXACT, LOWER or UPPER, not {bound!r}")
        if depth < 0:
            raise ValueError("depth must be >= 0")
        self.c_store(<uint64_t>(key & 0xFFFFFFFFFFFFFFFF), value, depth, bound, move, resolved)

    def probe(self, key):
        """The stored entry of ``key`` as a dict, or None (counts as a probe)."""
        cdef TTEntry ent
        cdef TTEntry* e = self.c_lookup(<uint64_t>(key & 0xFFFFFFFFFFFFFFFF), &ent)
        if e == NULL:
            return None
        return {"value": e.value, "depth": e.depth, "bound": e.flags & TT_BOUND_MASK,
                "move": e.move, "resolved": bool(e.flags & TT_RESOLVED), "age": e.age}

    def bucket_of(self, key) -> int:
        """Index of the bucket that holds ``key`` (tests build colliding keys with it)."""
        cdef uint64_t k = <uint64_t>(key & 0xFFFFFFFFFFFFFFFF)
        return <long long>((k ^ (k >> 29)) & self.mask)

    def new_generation(self) -> None:
        """Start a new search: entries of earlier ones become the first to be replaced."""
        self.c_new_generation()

    def clear(self) -> None:
        """Forget every entry and reset the statistics (the memory stays allocated)."""
        self.c_clear()

    def stats(self) -> dict:
        return {"hash_mb": self.hash_mb, "bytes": self.bytes, "capacity": 2 * self.n_buckets,
                "stored": self.stored, "probes": self.probes, "hits": self.hits,
                "writes": self.writes, "replaced": self.replaced,
                "generation": self.generation}
