# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The decision at the end of a best-first search, from the root's stored children: at a
solved root the quickest win or the longest resistance (the evaluator choosing among
equally long losses), ties in the statistics broken by the evaluator's move priors; the
principal variation and the children's statistics of the result. The node rules the
search shares with it (``better``, ``best_child``) are inline in _decision.pxd."""
from libc.math cimport INFINITY
from libc.stdint cimport int8_t, int64_t

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.eval.evaluator cimport Evaluator
from descent.search_cy.search.tree cimport TreeTable, Node, Child

from descent.search_cy.search.result import ChildStat


cdef int decide(TreeTable table, Evaluator ev, GameState state, Node* root,
                int best) except -1:
    """The move at ``root`` (the state ``state``) given the search's choice ``best``:
    a solved root's proof choice and resistance, then the tie break."""
    if root.r:
        best = _proof_choice(table, root, best)
        best = _resist(table, ev, state, root, best)
    return _tie_break(table, ev, state, root, best)


cdef int _tie_break(TreeTable table, Evaluator ev, GameState s, Node* root,
                    int chosen) except -1:
    """Among the root's children that equal ``chosen`` in completion, value and
    visits, the one the evaluator's move priors put first (``chosen`` when it has
    none): equal statistics must not leave the choice to move order."""
    cdef Child* ch = &table.children[root.first]
    cdef int i
    ties = [i for i in range(root.nchild)
            if ch[i].c == ch[chosen].c and ch[i].v == ch[chosen].v
            and ch[i].n == ch[chosen].n and ch[i].r == ch[chosen].r]
    if len(ties) < 2:
        return chosen
    priors = ev.move_priors(s)
    if priors is None:
        return chosen
    prior = dict(zip(s.legal_actions(), priors))
    return max(ties, key=lambda k: (prior.get(ch[k].action, -INFINITY), k == chosen))


cdef int _resist(TreeTable table, Evaluator ev, GameState s, Node* root,
                 int chosen) except -1:
    """At a root proven lost, among the moves that resist as long as ``chosen``, the
    one the evaluator likes best: resolved values are all -1, so without this the
    choice fell to move order (``a1``). Values each such child once."""
    cdef Child* ch = &table.children[root.first]
    cdef int i, best = chosen
    cdef int8_t win = 1 if root.player == 0 else -1
    cdef double value, top = -INFINITY, sign = 1.0 if root.player == 0 else -1.0
    if root.player == CHANCE or root.c == win or root.c == 0:
        return chosen
    for i in range(root.nchild):
        if not ch[i].r or ch[i].c != ch[chosen].c or ch[i].d != ch[chosen].d:
            continue
        s.c_apply(ch[i].action)
        try:
            value = 0.0 if s.c_terminal() else sign * ev.c_eval(s)
        finally:
            s.c_undo()
        if value > top:
            best, top = i, value
    return best


cdef int _proof_choice(TreeTable table, Node* node, int best) noexcept nogil:
    """The move at a solved root: the quickest win found, or when every move loses
    the one that resists longest (not the first legal one); ties keep ``best``."""
    cdef Child* ch = &table.children[node.first]
    cdef int i, chosen = best
    cdef int8_t win = 1 if node.player == 0 else -1
    if node.player == CHANCE or node.c == 0:
        return best         # an exact value that is no proven result: values decide
    for i in range(node.nchild):
        if not ch[i].r or ch[i].c != ch[chosen].c:
            continue
        if (ch[i].d < ch[chosen].d) if node.c == win else (ch[i].d > ch[chosen].d):
            chosen = i
    return chosen


cdef list children_stats(TreeTable table, Node* node):
    """The statistics of the node's children, in move order."""
    cdef Child* ch = &table.children[node.first]
    return [ChildStat(ch[i].action, float(ch[i].v), ch[i].n, bool(ch[i].r),
                      int(ch[i].c) if ch[i].r else None)
            for i in range(node.nchild)]


cdef list principal_variation(TreeTable table, GameState s, int first_choice,
                              bint completion):
    """The principal variation: the decision, then best actions (the most visited
    outcome at chance nodes) while the line stays in the table."""
    pv = []
    cdef int64_t idx = table.c_find_index(s.c_hash())
    cdef Node* node
    cdef Child* ch
    cdef int k, i, applied = 0
    while idx >= 0 and applied < 64:
        node = &table.nodes[idx]
        if applied == 0:
            k = first_choice
        elif node.player == CHANCE:
            ch = &table.children[node.first]
            k = 0
            for i in range(1, node.nchild):
                if ch[i].n > ch[k].n:
                    k = i
        else:
            k = best_child(table.children, node, completion)
        pv.append(table.children[node.first + k].action)
        s.c_apply(table.children[node.first + k].action)
        applied += 1
        if s.c_terminal():
            break
        idx = table.c_find_index(s.c_hash())
    for i in range(applied):
        s.c_undo()
    return pv
