# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Rminimax (García-Díez, Laforge and Saerens, 2013): the randomised player's policy
from partition functions over a game tree (eq. 10-11 of the paper).

The player whose strength is reduced (the *randomised* player, the side to move at the
root) pays a cost for every path through the tree: ``arc_cost`` for each move and, at
the path's end, the leaf's value taken with a minus sign. With inverse temperature
``theta`` the partition value ``z`` of a node is, in log space (``lz = log z``):

- a leaf (terminal, or the search's horizon): ``lz = theta * v``, ``v`` the leaf's value
  in the randomised player's view, normalised so that a win is 1;
- a node where the randomised player moves (eq. 10), with the randomised shortest-path
  framework's reference policy (uniform: ``1 / n`` for each of ``n`` moves):
  ``z = sum_children (1 / n) * exp(-theta * arc_cost) * z_child``;
- a node where the opponent moves: the opponent plays minimax against it, so
  ``z = exp(-theta * arc_cost) * min_children z_child``;
- a chance node: the expectation of the outcomes' free energies ``-log(z) / theta``,
  so ``log z = sum_outcomes p * log z_outcome`` (a die roll is no move and costs
  nothing). The expectation of ``z`` itself would make a large ``theta`` a gambler,
  valuing a roll by its best outcome; this one makes it expectiminimax, as minimax is
  the paper's large-``theta`` limit without chance.

The policy (eq. 11) at a randomised player's node chooses a child with probability
``(1 / n) * exp(-theta * arc_cost) * z_child / z``. Large ``theta`` gives the minimax move;
``theta`` towards 0 gives the reference policy (the uniform choice); in between, moves
are weighted by what the whole subtree below them is worth to a randomised player (its
free energy ``-log(z) / theta``), not by their minimax values alone.

The tree is given flat, as a DAG whose node 0 is the root (transpositions share a node, so
each is computed once): ``kind[i]`` (RANDOMISED, OPPONENT, CHANCE or LEAF), the range
``first[i] .. first[i] + count[i]`` of its edges, ``value[i]`` (leaves), and per edge the
child ``edge_to[e]`` and, below a chance node, the outcome's probability ``edge_p[e]``.
The searches (bestfirst.pyx over its stored tree: ``table_tree``, expectimax.pyx over a
full-width tree to a depth: ``full_width_tree``) build this form; this module holds the
recurrence once.
"""
from libc.math cimport exp, log, INFINITY, NAN, isnan
from libc.stdint cimport int8_t, int32_t, int64_t
from libc.stdlib cimport malloc, realloc, free

from descent.search_cy.games.state cimport GameState, CHANCE as STATE_CHANCE
from descent.search_cy.eval.evaluator cimport Evaluator
from descent.search_cy.search.terminal cimport terminal_value
from descent.search_cy.search.tree cimport TreeTable, Node

import numpy as np

from descent.search_cy.search.terminal import prepare as prepare_terminal

RANDOMISED = 0
OPPONENT = 1
CHANCE = 2
LEAF = 3

cdef enum:
    MAX_DEPTH = 4096       # deeper than any game's longest line; guards a cyclic input


cdef double _log_partition(int64_t i, const int8_t[::1] kind, const int64_t[::1] first,
                           const int32_t[::1] count, const double[::1] value,
                           const int64_t[::1] edge_to, const double[::1] edge_p,
                           double theta, double arc_cost, double[::1] lz,
                           int8_t[::1] busy, int depth) noexcept nogil:
    """log z of node i (memoised in lz; NaN = not computed yet). A node met again below
    itself (a repeated position in a stored tree) is a leaf with its own value there."""
    if not isnan(lz[i]):
        return lz[i]
    if busy[i] or depth > MAX_DEPTH:
        return theta * value[i]
    if kind[i] == K_LEAF or count[i] == 0:
        lz[i] = theta * value[i]
        return lz[i]
    busy[i] = 1
    lz[i] = _inner(i, kind, first, count, value, edge_to, edge_p, theta, arc_cost, lz,
                   busy, depth)
    busy[i] = 0
    return lz[i]


cdef double _inner(int64_t i, const int8_t[::1] kind, const int64_t[::1] first,
                   const int32_t[::1] count, const double[::1] value,
                   const int64_t[::1] edge_to, const double[::1] edge_p,
                   double theta, double arc_cost, double[::1] lz,
                   int8_t[::1] busy, int depth) noexcept nogil:
    """log z of the inner node i from its children's."""
    cdef int64_t e, end
    cdef double m, acc, x
    end = first[i] + count[i]
    if kind[i] == K_OPPONENT:
        m = INFINITY
        for e in range(first[i], end):
            x = _log_partition(edge_to[e], kind, first, count, value, edge_to, edge_p,
                               theta, arc_cost, lz, busy, depth + 1)
            if x < m:
                m = x
        return m - theta * arc_cost
    if kind[i] == K_CHANCE:
        acc = 0.0
        for e in range(first[i], end):
            x = _log_partition(edge_to[e], kind, first, count, value, edge_to, edge_p,
                               theta, arc_cost, lz, busy, depth + 1)
            if edge_p[e] > 0:
                acc += edge_p[e] * x
        return acc
    # a sum, in log space: the largest term is factored out
    m = -INFINITY
    for e in range(first[i], end):
        x = _log_partition(edge_to[e], kind, first, count, value, edge_to, edge_p,
                           theta, arc_cost, lz, busy, depth + 1)
        if x > m:
            m = x
    acc = 0.0
    for e in range(first[i], end):
        x = lz[edge_to[e]]
        if isnan(x):        # a child met again below itself: its own value there
            x = theta * value[edge_to[e]]
        acc += exp(x - m)
    return m + log(acc) - theta * arc_cost - log(<double>count[i])


def _checked(kind, first, count, value, edge_to, edge_p):
    k = np.ascontiguousarray(kind, dtype=np.int8)
    f = np.ascontiguousarray(first, dtype=np.int64)
    c = np.ascontiguousarray(count, dtype=np.int32)
    v = np.ascontiguousarray(value, dtype=np.float64)
    t = np.ascontiguousarray(edge_to, dtype=np.int64)
    p = np.ascontiguousarray(edge_p, dtype=np.float64)
    n = len(k)
    if n == 0:
        raise ValueError("the tree is empty")
    if not (len(f) == len(c) == len(v) == n) or len(t) != len(p):
        raise ValueError("kind, first, count and value need one entry a node; edge_to and "
                         "edge_p one an edge")
    if k[0] != K_RANDOMISED:
        raise ValueError("node 0 (the root) must be a randomised player's node")
    if np.any((k < 0) | (k > K_LEAF)):
        raise ValueError("kind must be RANDOMISED, OPPONENT, CHANCE or LEAF")
    inner = k != K_LEAF
    if np.any(c[inner] < 0) or np.any(f[inner] < 0) or np.any(f[inner] + c[inner] > len(t)):
        raise ValueError("an edge range lies outside edge_to")
    if len(t) and (t.min() < 0 or t.max() >= n):
        raise ValueError("an edge points outside the tree")
    if not np.all(np.isfinite(v)):
        raise ValueError("leaf values must be finite")
    return k, f, c, v, t, p


def log_partition(kind, first, count, value, edge_to, edge_p, double theta,
                  double arc_cost=1.0) -> np.ndarray:
    """log z of every node reachable from the root (NaN elsewhere), for ``theta > 0``."""
    if not theta > 0:
        raise ValueError("theta must be > 0")
    k, f, c, v, t, p = _checked(kind, first, count, value, edge_to, edge_p)
    lz = np.full(len(k), NAN, dtype=np.float64)
    busy = np.zeros(len(k), dtype=np.int8)
    cdef double[::1] lzv = lz
    cdef int8_t[::1] bv = busy
    cdef const int8_t[::1] kv = k
    cdef const int64_t[::1] fv = f
    cdef const int32_t[::1] cv = c
    cdef const double[::1] vv = v
    cdef const int64_t[::1] tv = t
    cdef const double[::1] pv = p
    with nogil:
        _log_partition(0, kv, fv, cv, vv, tv, pv, theta, arc_cost, lzv, bv, 0)
    return lz


def root_policy(kind, first, count, value, edge_to, edge_p, double theta,
                double arc_cost=1.0) -> np.ndarray:
    """The randomised player's probabilities over the root's edges (eq. 11), in edge
    order. Blocks (one pass over the tree)."""
    lz = log_partition(kind, first, count, value, edge_to, edge_p, theta, arc_cost)
    f0 = int(np.asarray(first)[0])
    n0 = int(np.asarray(count)[0])
    if n0 == 0:
        raise ValueError("the root has no moves")
    x = lz[np.asarray(edge_to, dtype=np.int64)[f0:f0 + n0]]
    if np.all(np.isneginf(x)):
        return np.full(n0, 1.0 / n0)
    w = np.exp(x - x.max())
    return w / w.sum()


cdef void* _grow(void* block, size_t size) except NULL:
    cdef void* grown = realloc(block, size)
    if grown == NULL:
        raise MemoryError()
    return grown


cdef class TreeBuilder:
    """The flat tree, filled node by node by a search (no Python object per node).

    ``c_node`` adds a node and returns its id (the first is the root); ``c_edges``
    reserves its edges, which the caller fills in ``edge_to`` / ``edge_p``. A leaf records
    its depth below the root and whether it is terminal: ``policy`` charges a horizon
    leaf (a non-terminal one, where the search stopped) the moves down to the deepest
    leaf, so that leaves cut off at uneven depths pay the same path cost and only the
    ends of games are cheaper when they come sooner."""

    def __cinit__(self):
        self.root_actions = []

    def __dealloc__(self):
        free(self.kind)
        free(self.terminal)
        free(self.count)
        free(self.depth)
        free(self.first)
        free(self.value)
        free(self.edge_to)
        free(self.edge_p)

    cdef int64_t c_node(self, int kind, double value, int depth, bint terminal) except -1:
        cdef int64_t i = self.n_nodes
        if i >= self.cap_nodes:
            self.cap_nodes = 2 * self.cap_nodes + 1024
            self.kind = <int8_t*>_grow(self.kind, self.cap_nodes * sizeof(int8_t))
            self.terminal = <int8_t*>_grow(self.terminal, self.cap_nodes * sizeof(int8_t))
            self.count = <int32_t*>_grow(self.count, self.cap_nodes * sizeof(int32_t))
            self.depth = <int32_t*>_grow(self.depth, self.cap_nodes * sizeof(int32_t))
            self.first = <int64_t*>_grow(self.first, self.cap_nodes * sizeof(int64_t))
            self.value = <double*>_grow(self.value, self.cap_nodes * sizeof(double))
        self.kind[i] = kind
        self.terminal[i] = terminal
        self.count[i] = 0
        self.depth[i] = depth
        self.first[i] = 0
        self.value[i] = value
        self.n_nodes = i + 1
        return i

    cdef int64_t c_edges(self, int64_t node, int n) except -1:
        cdef int64_t e = self.n_edges
        cdef int64_t k
        if e + n > self.cap_edges:
            self.cap_edges = 2 * self.cap_edges + n + 1024
            self.edge_to = <int64_t*>_grow(self.edge_to, self.cap_edges * sizeof(int64_t))
            self.edge_p = <double*>_grow(self.edge_p, self.cap_edges * sizeof(double))
        for k in range(e, e + n):
            self.edge_to[k] = 0
            self.edge_p[k] = 0.0
        self.first[node] = e
        self.count[node] = n
        self.n_edges = e + n
        return e

    def arrays(self, double arc_cost=0.0) -> tuple:
        """(kind, first, count, value, edge_to, edge_p) as NumPy copies, horizon leaves
        charged ``arc_cost`` per move down to the deepest leaf."""
        n, m = self.n_nodes, self.n_edges
        if n == 0:
            raise ValueError("the tree is empty")
        kind = np.asarray(<int8_t[:n]>self.kind).copy()
        first = np.asarray(<int64_t[:n]>self.first).copy()
        count = np.asarray(<int32_t[:n]>self.count).copy()
        value = np.asarray(<double[:n]>self.value).copy()
        depth = np.asarray(<int32_t[:n]>self.depth)
        horizon = (kind == K_LEAF) & (np.asarray(<int8_t[:n]>self.terminal) == 0)
        if m:
            edge_to = np.asarray(<int64_t[:m]>self.edge_to).copy()
            edge_p = np.asarray(<double[:m]>self.edge_p).copy()
        else:
            edge_to = np.zeros(0, dtype=np.int64)
            edge_p = np.zeros(0, dtype=np.float64)
        if arc_cost != 0.0 and horizon.any():
            deepest = int(depth[kind == K_LEAF].max())
            value[horizon] -= arc_cost * (deepest - depth[horizon])
        return kind, first, count, value, edge_to, edge_p

    def policy(self, double theta, double arc_cost=1.0) -> np.ndarray:
        """``root_policy`` of the tree built (horizon leaves charged as in ``arrays``)."""
        return root_policy(*self.arrays(arc_cost), theta, arc_cost)


cdef int64_t _full_width(TreeBuilder b, GameState s, Evaluator ev, int left, int depth,
                         int root_player, double sv, int kind, double max_plies,
                         int64_t max_nodes) except -2:
    """Adds the full-width tree below the non-terminal state ``s`` (``left`` player
    plies to go; a chance node consumes none) and returns its node id, or -1 when the
    tree would pass ``max_nodes``."""
    cdef int player = s.c_player()
    cdef int n, k, n_leaves
    cdef int64_t node, e, child
    cdef int* acts = <int*>malloc(max(s.max_actions, s.max_chance_outcomes, 1) * sizeof(int))
    cdef double* probs = <double*>malloc(max(s.max_chance_outcomes, 1) * sizeof(double))
    cdef double* vals = NULL
    cdef int64_t* leaf_edge = NULL
    if acts == NULL or probs == NULL:
        free(acts)
        free(probs)
        raise MemoryError()
    try:
        if player == STATE_CHANCE:
            n = s.c_chance(acts, probs)
            node = b.c_node(K_CHANCE, 0.0, depth, False)
        else:
            n = s.c_legal(acts)
            node = b.c_node(K_RANDOMISED if player == root_player else K_OPPONENT, 0.0,
                            depth, False)
        if b.n_nodes + n > max_nodes:
            return -1
        e = b.c_edges(node, n)
        if depth == 0:
            b.root_actions = [acts[k] for k in range(n)]
        vals = <double*>malloc(max(n, 1) * sizeof(double))
        leaf_edge = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        if vals == NULL or leaf_edge == NULL:
            raise MemoryError()
        # the horizon children are valued in one evaluator batch
        n_leaves = 0
        for k in range(n):
            if player == STATE_CHANCE:
                b.edge_p[e + k] = probs[k]
            s.c_apply(acts[k])
            if s.c_terminal():
                child = b.c_node(K_LEAF, sv * terminal_value(s, kind, max_plies),
                                 depth + 1, True)
                b.edge_to[e + k] = child
            elif player != STATE_CHANCE and left <= 1:
                ev.c_add(s)
                leaf_edge[n_leaves] = e + k
                n_leaves += 1
            else:
                child = _full_width(b, s, ev, left - (player != STATE_CHANCE), depth + 1,
                                    root_player, sv, kind, max_plies, max_nodes)
                if child < 0:
                    s.c_undo()
                    ev.c_discard()
                    return -1
                b.edge_to[e + k] = child
            s.c_undo()
        if n_leaves:
            ev.c_flush(vals)
            for k in range(n_leaves):
                b.edge_to[leaf_edge[k]] = b.c_node(K_LEAF, sv * vals[k], depth + 1, False)
        return node
    finally:
        free(acts)
        free(probs)
        free(vals)
        free(leaf_edge)


def full_width_tree(GameState root, Evaluator evaluator, int depth, *, int terminal=0,
                    double max_plies=0.0, double scale=1.0,
                    long long max_nodes=2_000_000) -> TreeBuilder:
    """The full-width tree of ``root`` to ``depth`` player plies (chance nodes consume
    none), as expectiminimax sees it: terminal states valued by ``terminal_value`` (kind
    ``terminal``, terminal.pxd's TerminalKind), the states at the
    depth by ``evaluator``; values in the root player's view, divided by ``scale``.
    None when the tree would pass ``max_nodes`` nodes. Blocks."""
    cdef TreeBuilder b = TreeBuilder()
    cdef int player = root.c_player()
    cdef double sv
    cdef GameState s
    if player == STATE_CHANCE:
        raise ValueError("the root is a chance node: there is no move to choose")
    if root.c_terminal():
        raise ValueError("the root is terminal")
    if depth < 1:
        raise ValueError("depth must be at least 1")
    if not scale > 0:
        raise ValueError("scale must be > 0")
    sv = (1.0 if player == 0 else -1.0) / scale
    if max_plies <= 0:
        max_plies = float(root.game.max_game_length)
    prepare_terminal(root, terminal)
    s = root.c_clone()
    if _full_width(b, s, evaluator, depth, 0, player, sv, terminal, max_plies,
                   max_nodes) < 0:
        return None
    return b


cdef enum:
    TABLE_MAX_DEPTH = 2048      # a stored line deeper than this ends in a leaf


cdef int64_t _table_node(TreeTable table, GameState s, int64_t idx, int depth,
                         int root_player, double sv, TreeBuilder b, int64_t* ids) except -1:
    """Adds the stored subtree of table node ``idx`` (the state ``s``) to ``b``, once
    per table node (transpositions share theirs), and returns its id there. Children
    outside the table are leaves with their stored values."""
    cdef Node* node = &table.nodes[idx]
    cdef int64_t first = node.first, e, me, child, cidx
    cdef int nchild = node.nchild, k, player = node.player
    if ids[idx] >= 0:
        return ids[idx]
    me = b.c_node(K_CHANCE if player == STATE_CHANCE else
                  (K_RANDOMISED if player == root_player else K_OPPONENT),
                  sv * node.v, depth, False)
    ids[idx] = me
    e = b.c_edges(me, nchild)
    if depth == 0:
        b.root_actions = [table.children[first + k].action for k in range(nchild)]
    for k in range(nchild):
        if player == STATE_CHANCE:
            b.edge_p[e + k] = table.children[first + k].p
        s.c_apply(table.children[first + k].action)
        cidx = -1 if s.c_terminal() or depth >= TABLE_MAX_DEPTH \
            else table.c_find_index(s.c_hash())
        if cidx >= 0:
            child = _table_node(table, s, cidx, depth + 1, root_player, sv, b, ids)
        else:
            child = b.c_node(K_LEAF, sv * table.children[first + k].v, depth + 1,
                             s.c_terminal())
        s.c_undo()
        b.edge_to[e + k] = child
    return me


cdef TreeBuilder table_tree(TreeTable table, GameState state, double scale):
    """The tree a best-first search stored below ``state`` (the root of its last
    search) in the flat form: values in the root player's view divided by ``scale``."""
    cdef int64_t idx, i
    cdef int64_t* ids
    cdef int root_player
    cdef TreeBuilder b = TreeBuilder()
    if not scale > 0:
        raise ValueError("scale must be > 0")
    idx = table.c_find_index(state.c_hash())
    if idx < 0:
        raise ValueError("the state is not the root of a search in the table")
    if table.nodes[idx].player == STATE_CHANCE:
        raise ValueError("the root is a chance node: there is no move to choose")
    ids = <int64_t*>malloc(table.n_nodes * sizeof(int64_t))
    if ids == NULL:
        raise MemoryError()
    for i in range(table.n_nodes):
        ids[i] = -1
    root_player = table.nodes[idx].player
    try:
        _table_node(table, state, idx, 0, root_player,
                    (1.0 if root_player == 0 else -1.0) / scale, b, ids)
    finally:
        free(ids)
    return b
