# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Tree learning (Descent) over a best-first search's stored tree: ``walk_tree`` hands
every stored state (post-order) with its value, stored or backed up again from the
leaves, to a callback; ``learning_data`` encodes the stored states and values as arrays.
BestFirstSearch.walk_tree and .learning_data call these on the search's table."""
from libc.stdint cimport uint64_t, int8_t, int64_t
from libc.stdlib cimport malloc, free, realloc

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.search.tree cimport TreeTable, Node, Child

import numpy as np

cdef enum:
    MAX_DEPTH = 2048     # learning_data enters no deeper


cdef inline int8_t _sign(double x) noexcept nogil:
    return 1 if x > 0.0 else (-1 if x < 0.0 else 0)


cdef void* _grow(void* block, size_t size) except NULL:
    cdef void* grown = realloc(block, size)
    if grown == NULL:
        raise MemoryError()
    return grown


cdef tuple _backed_up(Node* node, Child* kids, double* v, int8_t* r, int8_t* c, int64_t n,
                      bint recompute, bint completion, int realised):
    """(value, resolved, completion) of a stored node from its children's results: the
    realised child's at a determinized chance state, the stored value without
    ``recompute``, else the search's backup rule."""
    cdef int64_t k, best = 0
    cdef bint all_r = True
    cdef double total = 0.0
    cdef int64_t csum = 0
    cdef int sign, win
    cdef double key_c, key_v, best_c, best_v
    if node.player == CHANCE and realised >= 0:
        for k in range(n):
            if kids[k].action == realised:
                return v[k], r[k], c[k]
    if not recompute:
        return <double>node.v, node.r, node.c
    for k in range(n):
        all_r = all_r and r[k] != 0
    if node.player == CHANCE:
        for k in range(n):
            total += <double>kids[k].p * v[k]
            csum += c[k]
        return total, all_r, (c[0] if all_r and (csum == n or csum == -n) else 0)
    sign = 1 if node.player == 0 else -1
    best_c = sign * c[0] if completion else 0.0
    best_v = sign * v[0]
    for k in range(1, n):
        key_c = sign * c[k] if completion else 0.0
        key_v = sign * v[k]
        if key_c > best_c or (key_c == best_c and key_v > best_v):
            best, best_c, best_v = k, key_c, key_v
    win = 1 if node.player == 0 else -1
    return v[best], (all_r or (r[best] != 0 and c[best] == win)), c[best]


ctypedef struct _Walk:
    # walk_tree's stacks. frames: the node (table index), its key, the next child, where
    # its children's results start in the results stack; results: (v, r, c) per child
    int64_t cap_f, cap_r, top, rtop
    int64_t* f_node
    uint64_t* f_key
    int* f_next
    int64_t* f_start
    double* r_v
    int8_t* r_r
    int8_t* r_c


cdef int _walk_open(_Walk* w) except -1:
    w.cap_f = 64
    w.cap_r = 1024
    w.top = 0
    w.rtop = 0
    w.f_node = <int64_t*>malloc(w.cap_f * sizeof(int64_t))
    w.f_key = <uint64_t*>malloc(w.cap_f * sizeof(uint64_t))
    w.f_next = <int*>malloc(w.cap_f * sizeof(int))
    w.f_start = <int64_t*>malloc(w.cap_f * sizeof(int64_t))
    w.r_v = <double*>malloc(w.cap_r * sizeof(double))
    w.r_r = <int8_t*>malloc(w.cap_r * sizeof(int8_t))
    w.r_c = <int8_t*>malloc(w.cap_r * sizeof(int8_t))
    if (w.f_node == NULL or w.f_key == NULL or w.f_next == NULL or w.f_start == NULL
            or w.r_v == NULL or w.r_r == NULL or w.r_c == NULL):
        raise MemoryError()
    return 0


cdef void _walk_close(_Walk* w) noexcept:
    free(w.f_node)
    free(w.f_key)
    free(w.f_next)
    free(w.f_start)
    free(w.r_v)
    free(w.r_r)
    free(w.r_c)


cdef inline int _result(_Walk* w, double v, int8_t r, int8_t c) except -1:
    """Pushes a child's result (the stack has room for one: see _walk_room)."""
    w.r_v[w.rtop] = v
    w.r_r[w.rtop] = r
    w.r_c[w.rtop] = c
    w.rtop += 1
    return 0


cdef int _walk_room(_Walk* w) except -1:
    """Room for one more result."""
    if w.rtop + 1 >= w.cap_r:
        w.cap_r *= 2
        w.r_v = <double*>_grow(w.r_v, w.cap_r * sizeof(double))
        w.r_r = <int8_t*>_grow(w.r_r, w.cap_r * sizeof(int8_t))
        w.r_c = <int8_t*>_grow(w.r_c, w.cap_r * sizeof(int8_t))
    return 0


cdef int _push_frame(_Walk* w, int64_t idx, uint64_t key) except -1:
    w.top += 1
    if w.top >= w.cap_f:
        w.cap_f *= 2
        w.f_node = <int64_t*>_grow(w.f_node, w.cap_f * sizeof(int64_t))
        w.f_key = <uint64_t*>_grow(w.f_key, w.cap_f * sizeof(uint64_t))
        w.f_next = <int*>_grow(w.f_next, w.cap_f * sizeof(int))
        w.f_start = <int64_t*>_grow(w.f_start, w.cap_f * sizeof(int64_t))
    w.f_node[w.top] = idx
    w.f_key[w.top] = key
    w.f_next[w.top] = 0
    w.f_start[w.top] = w.rtop
    return 0


cdef object walk_tree(TreeTable table, GameState root, object terminal_value, object emit,
                      bint recompute, bint completion, bint terminals, object fixed,
                      long long limit):
    """BestFirstSearch.walk_tree over ``table`` (see there); ``root`` is restored."""
    cdef int64_t ridx = table.c_find_index(root.c_hash())
    if ridx < 0:
        return None
    cdef dict done = {}
    cdef set terminal_seen = set()
    cdef set on_path = {root.c_hash()}
    cdef long long emitted = 0
    cdef _Walk w
    cdef Node* node
    cdef Child* ch
    cdef int64_t cidx, start
    cdef uint64_t ckey, key
    cdef double value, tv
    cdef int8_t resolved, comp
    cdef int realised
    root_value = None
    try:
        _walk_open(&w)
        w.f_node[0] = ridx
        w.f_key[0] = root.c_hash()
        w.f_next[0] = 0
        w.f_start[0] = 0
        while w.top >= 0:
            node = &table.nodes[w.f_node[w.top]]
            _walk_room(&w)
            if w.f_next[w.top] < node.nchild:
                ch = &table.children[node.first + w.f_next[w.top]]
                w.f_next[w.top] += 1
                root.c_apply(ch.action)
                if root.c_terminal():
                    tv = terminal_value(root)
                    ckey = root.c_hash()
                    if terminals and ckey not in terminal_seen and emitted < limit:
                        terminal_seen.add(ckey)
                        emit(root, tv, True)
                        emitted += 1
                    _result(&w, tv, 1, _sign(root.c_value()))
                    root.c_undo()
                    continue
                ckey = root.c_hash()
                cached = done.get(ckey)
                if cached is not None:
                    _result(&w, cached[0], cached[1], cached[2])
                    root.c_undo()
                    continue
                cidx = -1 if (ckey in on_path or emitted >= limit) \
                    else table.c_find_index(ckey)
                if cidx < 0:
                    _result(&w, ch.v, ch.r, ch.c)
                    root.c_undo()
                    continue
                on_path.add(ckey)
                _push_frame(&w, cidx, ckey)
                continue
            # every child is known: value this state, emit it, return to the parent
            key = w.f_key[w.top]
            start = w.f_start[w.top]
            realised = -1
            if fixed is not None and node.player == CHANCE:
                realised = fixed.get(key, -1)
            value, resolved, comp = _backed_up(
                node, &table.children[node.first], w.r_v + start, w.r_r + start,
                w.r_c + start, w.rtop - start, recompute, completion, realised)
            done[key] = (value, resolved, comp)
            if emitted < limit:
                emit(root, value, bool(resolved))
                emitted += 1
            on_path.discard(key)
            w.top -= 1
            w.rtop = start
            if w.top >= 0:
                root.c_undo()
                _result(&w, value, resolved, comp)
            else:
                root_value = value
    finally:
        while w.top > 0:          # an exception inside: restore the state
            root.c_undo()
            w.top -= 1
        _walk_close(&w)
    return root_value


cdef int _emit(GameState s, float v, bint r, list syms, list out) except -1:
    """Appends the encodings of s (one per symmetry) to out = [planes, values, solved,
    count], doubling the arrays when full."""
    cdef float[:, :, :, ::1] view
    cdef int k, count
    for k in range(len(syms)):
        count = out[3]
        if count >= out[0].shape[0]:
            for m in range(3):
                out[m] = np.concatenate([out[m], np.zeros_like(out[m])])
        view = out[0]
        s.c_encode(&view[count, 0, 0, 0], syms[k])
        out[1][count] = -v if s.c_sym_swaps_colours(syms[k]) else v
        out[2][count] = r
        out[3] = count + 1
    return 0


cdef int _learning_walk(TreeTable table, GameState root, int64_t idx, int limit,
                        bint terminals, list syms, list out, unsigned char* seen,
                        int64_t* stack_node, int* stack_next) except -1:
    """learning_data's iterative DFS from table node ``idx`` (the state ``root``):
    stack_node[d] is the node at depth d (d moves applied), stack_next[d] the next child
    to visit from it. ``root`` is restored."""
    cdef int top = 0
    cdef Node* node
    cdef Child* ch
    cdef set terminal_seen = set()
    seen[idx] = 1
    _emit(root, table.nodes[idx].v, table.nodes[idx].r, syms, out)
    stack_node[0] = idx
    stack_next[0] = 0
    while top >= 0 and out[3] < limit:
        node = &table.nodes[stack_node[top]]
        if stack_next[top] >= node.nchild or top >= MAX_DEPTH - 1:
            top -= 1
            if top >= 0:
                root.c_undo()
            continue
        ch = &table.children[node.first + stack_next[top]]
        stack_next[top] += 1
        root.c_apply(ch.action)
        if root.c_terminal():
            key = root.c_hash()
            if terminals and key not in terminal_seen:
                terminal_seen.add(key)
                _emit(root, ch.v, True, syms, out)
            root.c_undo()
            continue
        idx = table.c_find_index(root.c_hash())
        if idx < 0 or seen[idx]:
            root.c_undo()
            continue
        seen[idx] = 1
        _emit(root, table.nodes[idx].v, table.nodes[idx].r, syms, out)
        top += 1
        stack_node[top] = idx
        stack_next[top] = 0
    while top > 0:
        top -= 1
        root.c_undo()
    return 0


cdef tuple learning_data(TreeTable table, GameState root, int limit, bint terminals,
                         object symmetries):
    """BestFirstSearch.learning_data over ``table`` (see there); ``root`` is restored."""
    cdef list syms = [0] if symmetries is None else list(symmetries)
    cdef int sym
    cdef int64_t idx, i
    for sym in syms:
        if not 0 <= sym < root.num_symmetries:
            raise ValueError(f"symmetry {sym} out of range")
    if table is None:
        raise ValueError("no search has been run")
    shape = (root.num_planes, root.height, root.width)
    cdef list out = [np.zeros((64 * len(syms),) + shape, dtype=np.float32),
                     np.zeros(64 * len(syms), dtype=np.float32),
                     np.zeros(64 * len(syms), dtype=np.bool_), 0]
    idx = table.c_find_index(root.c_hash())
    if idx < 0:
        return out[0][:0], out[1][:0], out[2][:0]
    cdef unsigned char* seen = <unsigned char*>malloc(table.n_nodes + 1)
    cdef int64_t* stack_node = <int64_t*>malloc(MAX_DEPTH * sizeof(int64_t))
    cdef int* stack_next = <int*>malloc(MAX_DEPTH * sizeof(int))
    if seen == NULL or stack_node == NULL or stack_next == NULL:
        free(seen)
        free(stack_node)
        free(stack_next)
        raise MemoryError()
    for i in range(table.n_nodes):
        seen[i] = 0
    try:
        _learning_walk(table, root, idx, limit, terminals, syms, out, seen, stack_node,
                       stack_next)
    finally:
        free(seen)
        free(stack_node)
        free(stack_next)
    n = min(out[3], limit)
    return out[0][:n], out[1][:n], out[2][:n]
