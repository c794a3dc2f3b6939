# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Tree table: fixed memory budget, open-addressing index, in-place compaction."""
from libc.stdint cimport uint64_t, int32_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memmove, memset


cdef inline uint64_t _slot(uint64_t key, uint64_t mask) noexcept nogil:
    return (key ^ (key >> 29)) & mask


cdef class TreeTable:
    """Expanded states of a best-first search or MCTS within ``hash_mb`` MiB.

    ``c_insert`` returns NULL when the arena cannot hold one more node with its children;
    the search then compacts (keeping the part of the tree it still needs) or stops.
    """

    def __cinit__(self, double hash_mb=64.0):
        cdef size_t budget, arena
        cdef int64_t index_size
        if not hash_mb > 0:
            raise ValueError("hash_mb must be > 0")
        budget = <size_t>(hash_mb * 1048576.0)
        # size the index for the most nodes the arena could hold (one child each) at a
        # load factor <= 1/2, then give the arena what the index leaves
        index_size = 1
        while index_size * (sizeof(int32_t) + (sizeof(Node) + sizeof(Child)) // 2) < budget:
            index_size <<= 1
        index_size >>= 1
        arena = budget - index_size * sizeof(int32_t)
        self.max_nodes = index_size // 2
        if arena // (sizeof(Node) + sizeof(Child)) < self.max_nodes:
            self.max_nodes = arena // (sizeof(Node) + sizeof(Child))
        if self.max_nodes < 16:
            raise ValueError(f"hash_mb={hash_mb} is too small for a search tree")
        self.arena_children = arena // sizeof(Child)
        self.index_mask = index_size - 1
        self.nodes = <Node*>malloc(self.arena_children * sizeof(Child))
        self.children = <Child*>self.nodes
        self.index = <int32_t*>malloc(index_size * sizeof(int32_t))
        if not self.nodes or not self.index:
            raise MemoryError(f"cannot allocate a {hash_mb} MiB tree table")
        self.bytes_allocated = self.arena_children * sizeof(Child) + index_size * sizeof(int32_t)
        self.c_clear()

    def __dealloc__(self):
        free(self.nodes)
        free(self.index)

    cdef void c_clear(self) noexcept nogil:
        self.n_nodes = 0
        self.child_top = self.arena_children
        memset(self.index, 0xff, (self.index_mask + 1) * sizeof(int32_t))

    cdef int64_t c_find_index(self, uint64_t key) noexcept nogil:
        cdef uint64_t slot = _slot(key, self.index_mask)
        cdef int32_t i
        self.lookups += 1
        while True:
            i = self.index[slot]
            if i < 0:
                return -1
            if self.nodes[i].key == key:
                self.hits += 1
                return i
            slot = (slot + 1) & self.index_mask

    cdef Node* c_find(self, uint64_t key) noexcept nogil:
        cdef int64_t i = self.c_find_index(key)
        return &self.nodes[i] if i >= 0 else NULL

    cdef bint c_has_room(self, int nchild) noexcept nogil:
        # child_top >= nchild first: their difference, made unsigned by sizeof, would
        # otherwise wrap round to a huge size and let a wide node overrun the table
        return (self.n_nodes < self.max_nodes and self.child_top >= nchild and
                (self.n_nodes + 1) * sizeof(Node) <= (self.child_top - nchild) * sizeof(Child))

    cdef Node* c_insert(self, uint64_t key, int nchild) noexcept nogil:
        """A new node with ``nchild`` zeroed child records; NULL when the table is full.
        The caller has checked that ``key`` is absent."""
        cdef uint64_t slot
        cdef Node* node
        if not self.c_has_room(nchild):
            return NULL
        slot = _slot(key, self.index_mask)
        while self.index[slot] >= 0:
            slot = (slot + 1) & self.index_mask
        self.index[slot] = <int32_t>self.n_nodes
        self.child_top -= nchild
        node = &self.nodes[self.n_nodes]
        memset(node, 0, sizeof(Node))
        node.key = key
        node.first = self.child_top
        node.nchild = nchild
        memset(&self.children[self.child_top], 0, nchild * sizeof(Child))
        self.n_nodes += 1
        return node

    cdef void c_compact(self) noexcept nogil:
        """Keeps the nodes whose ``mark`` is set (clearing it), in order, and rebuilds the
        index. Pointers and indices into the table are invalid afterwards."""
        cdef int64_t i, j = 0, top = self.arena_children
        cdef Node* node
        cdef uint64_t slot
        for i in range(self.n_nodes):
            node = &self.nodes[i]
            if not node.mark:
                continue
            # blocks were allocated downwards in node order: each kept block moves up
            top -= node.nchild
            if node.first != top:
                memmove(&self.children[top], &self.children[node.first],
                        node.nchild * sizeof(Child))
            node.first = top
            node.mark = 0
            if i != j:
                self.nodes[j] = node[0]
            j += 1
        self.n_nodes = j
        self.child_top = top
        memset(self.index, 0xff, (self.index_mask + 1) * sizeof(int32_t))
        for i in range(self.n_nodes):
            slot = _slot(self.nodes[i].key, self.index_mask)
            while self.index[slot] >= 0:
                slot = (slot + 1) & self.index_mask
            self.index[slot] = <int32_t>i
        self.compactions += 1

    cdef double c_usage(self) noexcept nogil:
        cdef double used = (self.n_nodes * sizeof(Node)
                            + (self.arena_children - self.child_top) * sizeof(Child))
        return max(used / (self.arena_children * sizeof(Child)),
                   self.n_nodes / <double>self.max_nodes)

    # -- Python view, for tests and tools --

    def clear(self) -> None:
        self.c_clear()

    def __len__(self) -> int:
        return self.n_nodes

    def usage(self) -> float:
        """Fraction of the table in use (the fuller of arena and index)."""
        return self.c_usage()

    def node(self, uint64_t key):
        """(v, n, r, c, player, [(action, v, n, p, r, c), ...]) of a stored state, or None."""
        cdef Node* node = self.c_find(key)
        cdef Child* ch
        cdef int k
        if node == NULL:
            return None
        kids = []
        for k in range(node.nchild):
            ch = &self.children[node.first + k]
            kids.append((ch.action, ch.v, ch.n, ch.p, bool(ch.r), ch.c))
        return (node.v, node.n, bool(node.r), node.c, node.player, kids)

    def insert_for_test(self, uint64_t key, int nchild) -> bool:
        """Inserts a node with zeroed children, child k's action = k (tests)."""
        cdef Node* node
        cdef int k
        if self.c_find(key) != NULL:
            return True
        node = self.c_insert(key, nchild)
        if node == NULL:
            return False
        for k in range(nchild):
            self.children[node.first + k].action = k
        return True

    def keep_only(self, keys) -> None:
        """Compacts the table down to ``keys`` (tests)."""
        cdef Node* node
        cdef uint64_t k
        for k in keys:
            node = self.c_find(k)
            if node != NULL:
                node.mark = 1
        self.c_compact()
