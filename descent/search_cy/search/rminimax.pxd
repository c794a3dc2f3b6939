# cython: language_level=3
"""Rminimax over a flat tree (rminimax.pyx): the builder the searches fill."""
from libc.stdint cimport int8_t, int32_t, int64_t

from descent.search_cy.games.state cimport GameState
from descent.search_cy.search.tree cimport TreeTable

cdef enum NodeKind:
    K_RANDOMISED = 0    # the randomised player (the root's mover) moves
    K_OPPONENT = 1      # the opponent moves (minimax against it)
    K_CHANCE = 2
    K_LEAF = 3


cdef class TreeBuilder:
    cdef int8_t* kind
    cdef int8_t* terminal
    cdef int32_t* count
    cdef int32_t* depth
    cdef int64_t* first
    cdef double* value
    cdef int64_t* edge_to
    cdef double* edge_p
    cdef readonly int64_t n_nodes, n_edges
    cdef int64_t cap_nodes, cap_edges
    cdef readonly list root_actions    # the root's moves, in edge order

    cdef int64_t c_node(self, int kind, double value, int depth, bint terminal) except -1
    cdef int64_t c_edges(self, int64_t node, int n) except -1


cdef TreeBuilder table_tree(TreeTable table, GameState state, double scale)
