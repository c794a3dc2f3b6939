# cython: language_level=3
"""A bounded transposition table for the depth-first searches (expectiminimax).

One block of memory is allocated once, within ``hash_mb`` MiB: a power-of-two number of
buckets of two entries. Slot 0 of a bucket is depth-preferred (it keeps the deepest
result of the current generation), slot 1 is always replaced; an entry written by an
older search (generation) is replaced first. A key lives in at most one slot of its
bucket, so ``c_lookup`` returns at most one entry.
"""
from libc.stdint cimport uint64_t, int32_t, int16_t, uint8_t

cdef enum:
    TT_EMPTY = 0          # bound field of a free slot
    TT_EXACT = 1          # value is the node's value at that depth
    TT_LOWER = 2          # value <= the node's value (the search failed high)
    TT_UPPER = 3          # value >= the node's value (the search failed low)
    TT_BOUND_MASK = 3
    TT_RESOLVED = 4       # flag: only terminal states valued under this node

ctypedef struct TTEntry:
    uint64_t key          # the state's key XOR a hash of the other fields (lockless check)
    double value          # player 0's view (double: values stay bit-identical)
    int32_t move          # best action, -1 for none (chance nodes, fail-low nodes)
    int16_t depth         # remaining depth the value was searched to
    uint8_t flags         # bound (2 bits) | TT_RESOLVED
    uint8_t age           # generation that wrote the entry

ctypedef struct TTBucket:
    TTEntry slot[2]


cdef class TranspositionTable:
    cdef TTBucket* buckets
    cdef uint64_t mask                   # number of buckets - 1
    cdef readonly long long n_buckets
    cdef readonly long long bytes        # bytes allocated (<= hash_mb MiB)
    cdef readonly int hash_mb
    cdef readonly long long stored       # occupied slots
    cdef readonly long long probes, hits, writes, replaced
    cdef readonly int generation
    cdef public bint shared              # threads share the table: no statistics counted

    cdef TTEntry* c_lookup(self, uint64_t key, TTEntry* out) noexcept nogil
    cdef void c_store(self, uint64_t key, double value, int depth, int bound, int move,
                      bint resolved) noexcept nogil
    cdef void c_new_generation(self) noexcept nogil
    cdef void c_clear(self) noexcept nogil
