# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The best-first table's memory and invariants: garbage collection between iterations
(the tree below the root kept, its least visited nodes dropped until half of the table is
free) and the audit the tests run over a table after a search."""
from libc.stdint cimport uint16_t, int64_t

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.search.tree cimport TreeTable, Node, Child

cdef enum:
    GC_MAX_DEPTH = 2048


cdef void _mark(TreeTable table, GameState s, int depth, int threshold,
                int64_t* kept_nodes, int64_t* kept_children) noexcept:
    cdef int64_t idx = table.c_find_index(s.c_hash())
    cdef Node* node
    cdef int k, nchild
    cdef int64_t first
    if idx < 0:
        return
    node = &table.nodes[idx]
    if node.mark or (depth > 0 and node.n < threshold):
        return
    node.mark = 1
    kept_nodes[0] += 1
    kept_children[0] += node.nchild
    if depth >= GC_MAX_DEPTH:
        return
    first = node.first
    nchild = node.nchild
    for k in range(nchild):
        s.c_apply(table.children[first + k].action)
        if not s.c_terminal():
            _mark(table, s, depth + 1, threshold, kept_nodes, kept_children)
        s.c_undo()


cdef bint collect_garbage(TreeTable table, GameState root, int cap) noexcept:
    """Keeps the tree below ``root``, dropping its least visited nodes until at most
    half of the table is used. False when even the root cannot be kept with room for
    an expansion of ``cap`` children."""
    cdef int threshold = 0
    cdef int64_t kept_nodes, kept_children, i
    while True:
        kept_nodes = 0
        kept_children = 0
        _mark(table, root, 0, threshold, &kept_nodes, &kept_children)
        if (2 * kept_nodes <= table.max_nodes
                and 2 * (kept_nodes * sizeof(Node) + kept_children * sizeof(Child))
                <= table.arena_children * sizeof(Child)) or threshold > (1 << 28):
            break
        for i in range(table.n_nodes):
            table.nodes[i].mark = 0
        threshold = 1 if threshold == 0 else 2 * threshold
    table.c_compact()
    return table.c_has_room(cap)


cdef list audit_table(TreeTable table, uint16_t* pending):
    """The table's invariants, as a list of violations (empty when sound): a node's
    visits are the sum of its children's, no thread is left inside a child (``pending``,
    the threads' virtual loss, when not NULL), a resolved decision node has every child
    resolved or a resolved win for its mover."""
    cdef int64_t i
    cdef int k
    cdef long long total
    cdef Node* node
    cdef Child* ch
    cdef bint all_r, won
    out = []
    for i in range(table.n_nodes):
        node = &table.nodes[i]
        ch = &table.children[node.first]
        total = 0
        all_r = True
        won = False
        for k in range(node.nchild):
            total += ch[k].n
            all_r = all_r and ch[k].r
            won = won or (ch[k].r and ch[k].c == (1 if node.player == 0 else -1))
            if pending != NULL and pending[node.first + k]:
                out.append(f"node {i} child {k}: {pending[node.first + k]} "
                           "threads left inside")
        if total != node.n:
            out.append(f"node {i}: {node.n} visits, its children {total}")
        if node.r and node.player != CHANCE and not (all_r or won):
            out.append(f"node {i}: resolved without a resolved win or all children")
    return out
