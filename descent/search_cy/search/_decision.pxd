# cython: language_level=3
"""A best-first node's best child, and the decision at the root (_decision.pyx)."""
from descent.search_cy.games.state cimport GameState
from descent.search_cy.eval.evaluator cimport Evaluator
from descent.search_cy.search.tree cimport TreeTable, Node, Child


cdef inline bint better(Child* a, Child* b, int player, bint completion) noexcept nogil:
    """Whether child a is strictly better than b for ``player`` by (c, v) (by v alone
    without ``completion``)."""
    if completion and a.c != b.c:
        return a.c > b.c if player == 0 else a.c < b.c
    return a.v > b.v if player == 0 else a.v < b.v


cdef inline int best_child(Child* children, Node* node, bint completion) noexcept nogil:
    """completed_best_action: best (c, v) for the side to move, then most visits
    (``children``: the table's child records)."""
    cdef Child* ch = &children[node.first]
    cdef int i, best = 0
    for i in range(1, node.nchild):
        if better(&ch[i], &ch[best], node.player, completion) or (
                not better(&ch[best], &ch[i], node.player, completion)
                and ch[i].n > ch[best].n):
            best = i
    return best


cdef int decide(TreeTable table, Evaluator ev, GameState state, Node* root,
                int best) except -1
cdef list children_stats(TreeTable table, Node* node)
cdef list principal_variation(TreeTable table, GameState s, int first_choice,
                              bint completion)
