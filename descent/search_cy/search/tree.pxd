# cython: language_level=3
"""The tree table of the best-first searches and MCTS: one node per expanded state, keyed
by the kernel's Zobrist hash, with the statistics of each of its actions stored beside it.

Everything lives in one malloc'd budget of ``hash_mb`` MiB fixed at construction: an
open-addressing index and one arena in which nodes grow up from the bottom and child
blocks grow down from the top, so a game with 3 actions and one with 700 use the same
budget fully. Nodes and their child blocks are allocated in the same order, so compaction
(keeping only what a search still needs) slides both apart in place and rebuilds the index.
"""
from libc.stdint cimport uint64_t, int8_t, int16_t, int32_t, int64_t, uint32_t


ctypedef struct Child:
    int32_t action
    int32_t n          # n(s, a): iterations (or simulations) through this action
    float v            # v'(s, a): value of the child state, player 0's view
    float p            # probability of the outcome at a chance node, else 0
    int8_t r           # r(s, a): the child's value is exact (resolved)
    int8_t c           # completion of the child: +1 player 0 wins, -1 player 1 wins, 0 else
    int16_t d          # resolved: plies from the child state to the proven end


ctypedef struct Node:
    uint64_t key
    float v            # v(s), player 0's view
    int32_t n          # n(s)
    int64_t first      # index of the first child record
    int32_t nchild
    int8_t r           # resolved
    int8_t c           # completion
    int8_t player      # 0, 1 or CHANCE
    int8_t mark        # scratch flag of compaction
    float w            # MCTS: sum of simulation values (player 0's view)
    int32_t d          # resolved: plies to the proven end (the quickest win found, the
    #                    longest loss), for the choice at a solved root


cdef class TreeTable:
    cdef Node* nodes                     # the arena, seen as nodes from its start
    cdef Child* children                 # the arena, seen as child records
    cdef int32_t* index
    cdef readonly int64_t max_nodes      # index bound: every node has at least one child
    cdef readonly int64_t arena_children  # arena size in child records
    cdef readonly int64_t n_nodes
    cdef readonly int64_t child_top      # child records in use: [child_top, arena_children)
    cdef uint64_t index_mask
    cdef readonly size_t bytes_allocated
    cdef readonly long long lookups, hits, compactions

    cdef Node* c_find(self, uint64_t key) noexcept nogil
    cdef int64_t c_find_index(self, uint64_t key) noexcept nogil
    cdef Node* c_insert(self, uint64_t key, int nchild) noexcept nogil
    cdef bint c_has_room(self, int nchild) noexcept nogil
    cdef void c_clear(self) noexcept nogil
    cdef void c_compact(self) noexcept nogil
    cdef double c_usage(self) noexcept nogil
