# cython: language_level=3
"""The best-first table's garbage collection and audit (_tree_gc.pyx)."""
from libc.stdint cimport uint16_t

from descent.search_cy.games.state cimport GameState
from descent.search_cy.search.tree cimport TreeTable

cdef bint collect_garbage(TreeTable table, GameState root, int cap) noexcept
cdef list audit_table(TreeTable table, uint16_t* pending)
