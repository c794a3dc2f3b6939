# cython: language_level=3
"""The best-first tree's states and values for learning (_tree_export.pyx)."""
from descent.search_cy.games.state cimport GameState
from descent.search_cy.search.tree cimport TreeTable

cdef object walk_tree(TreeTable table, GameState root, object terminal_value, object emit,
                      bint recompute, bint completion, bint terminals, object fixed,
                      long long limit)
cdef tuple learning_data(TreeTable table, GameState root, int limit, bint terminals,
                         object symmetries)
