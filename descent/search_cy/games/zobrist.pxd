# cython: language_level=3
from libc.stdint cimport uint64_t

cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    """One step of SplitMix64: a fixed, portable key stream for Zobrist tables."""
    state[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)

cdef inline void fill_keys(uint64_t* keys, int n, uint64_t seed) noexcept nogil:
    cdef uint64_t s = seed
    cdef int i
    for i in range(n):
        keys[i] = splitmix64(&s)
