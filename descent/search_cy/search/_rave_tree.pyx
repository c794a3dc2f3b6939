# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The ``rave`` search's tree (``search/rave.pyx``): its memory, one simulation (descent,
expansion, the knowledge at a node, playout, backup) and its proofs.

Nothing here is a Python object per node: nodes (``Node``) and children (``Child``,
``eval/hex_prior.pxd``) are C structs in arenas sized from the memory budget; once they
are full the tree stops growing and the playouts go on from its leaves. The tree is a
``HexPlayout`` (``games/hex_playout.pyx``): its walk places the tree's stones on the
playout's board, the playout fills the rest.

The score of a child blends its own mean with its RAVE mean (Gelly and Silver 2011):

    beta = rn / (n + rn + n * rn / K),   score = (1 - beta) q + beta q_rave + c sqrt(ln N / (n+1))

plus ``c_pb * prior / sqrt(n + 1)`` (the progressive bias of the prior,
``eval/hex_prior.pyx``). Where a policy network's action values are read (``av``) and
``minimax_weight`` (alpha) is set, the blended mean becomes
``(1 - alpha) mean + alpha av``: ``av`` is the network's value of the move, replaced once
the child's own children are valued by one minus the best of theirs (implicit minimax
backups, Lanctot, Winands, Pepels and Sturtevant 2014). With a value network computed in
C and ``value_mix`` (lambda) set, every simulation also values the position where its
walk ended (AlphaGo's mixed leaf evaluation, Silver et al. 2016), each child on the path
sums those values (``vw``), and the blended mean becomes ``(1 - lambda) mean + lambda
vw / n`` before the implicit minimax; with ``value_fade`` (F) the share is ``lambda F /
(F + n)``, the network's word fading as the child's playouts grow. All-moves-as-first
(AMAF): after each playout every child of every node on the path whose cell ended in the
colour of that node's player to move is counted as if it had been played first.

Proven results back up as in an MCTS-Solver: a node where the last move connected is a
loss for the player to move; a node with a child lost for the opponent is won; a node
whose children are all won for the opponent is lost.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, uint64_t
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy, memmove, memset
from libc.math cimport sqrt, log

from descent.search_cy.games.hex cimport HexState
from descent.search_cy.games.hex_vc cimport VC_NONE, VC_WIN, VC_LOSS, VC_MUSTPLAY
from descent.search_cy.games.zobrist cimport splitmix64
from descent.search_cy.eval.hex_prior cimport (
    Child, LOST_BY_KNOWLEDGE, SKIPPED_BY_PRIOR, INFERIOR,
    expansion_prior, scale_prior, mustplay, probes, vcm_boost)
from descent.search_cy.eval.evaluator cimport (
    HeuristicEvaluator, KNOW_NONE, KNOW_WIN, KNOW_LOSS, KNOW_MUSTPLAY)

cdef enum:
    SWAP_RAVE = 8         # virtual AMAF visits of the swap (at even odds)
    VCM_CAP = 512         # (probe, answer) pairs read from one H-search
    KNOW_AT = 20          # knowledge's visits until the search sets its own (rave's default)
cdef double PLAIN_FPU = 0.35       # an unvisited child's mean there (MoHex's first-play urgency)


cdef int _cmp_u64(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0], y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef inline double _mixed(RaveTree self, Child* ch, double q) noexcept nogil:
    """A child's mean ``q`` with the share ``value_mix`` of its leaf values' mean (times
    ``value_fade / (value_fade + n)`` where a fade is set), then the share
    ``minimax_weight`` of its backed-up value, where it has them."""
    cdef double share
    if self.use_mix and ch.n > 0:
        share = self.value_mix
        if self.value_fade > 0.0:
            # the network's word counts most where the child's own playouts are few, as
            # RAVE's AMAF share does (a deep search's playouts outgrow a network's bias)
            share *= self.value_fade / (self.value_fade + ch.n)
        q += share * (ch.vw / ch.n - q)
    return q + self.minimax_weight * (ch.av - q) if ch.av >= 0.0 else q


cdef inline double _score(RaveTree self, Child* ch, double log_n, bint plain) noexcept nogil:
    cdef double q, qr, beta
    cdef double n = ch.n, rn = ch.rn
    if plain:
        # the plain mean, RAVE ignored (MoHex's randomised RAVE: a child whose AMAF
        # statistics misjudge it is still tried on its own results)
        q = _mixed(self, ch, ch.w / n if n > 0.0 else PLAIN_FPU)
        return (q + self.c_uct * sqrt(log_n / (n + 1.0))
                + self.c_pb * ch.prior / sqrt(n + 1.0))
    if rn > 0.0:
        qr = ch.rw / rn
        beta = rn / (n + rn + n * rn / self.K)
    else:
        qr = 0.5
        beta = 1.0 if n == 0.0 else 0.0
    q = ch.w / n if n > 0.0 else 0.0
    q = _mixed(self, ch, (1.0 - beta) * q + beta * qr)
    return q + self.c_uct * sqrt(log_n / (n + 1.0)) + self.c_pb * ch.prior / sqrt(n + 1.0)


cdef inline void _virtual(RaveTree self, Child* ch, double v, int side) noexcept nogil:
    """``value_visits`` virtual visits at the odds of ``v`` (player 0's view)."""
    cdef double q = 0.5 * (1.0 + v) if side == 0 else 0.5 * (1.0 - v)
    q = 0.0 if q < 0.0 else 1.0 if q > 1.0 else q
    ch.n += self.value_visits
    ch.w += <int32_t>(q * self.value_visits + 0.5)
    ch.vw += <float>(q * self.value_visits)


cdef class RaveTree(HexPlayout):
    """One search tree with its arenas, random stream and playout board."""

    def __cinit__(self, int n, long long budget_bytes, uint64_t seed, double K, double c_uct,
                  int expand_at):
        self.node_cap = max(1024, budget_bytes // 5 // sizeof(Node))
        self.child_cap = max(4096, (budget_bytes - self.node_cap * sizeof(Node)) // sizeof(Child))
        self.nodes = <Node*>malloc(self.node_cap * sizeof(Node))
        self.children = <Child*>malloc(self.child_cap * sizeof(Child))
        self.keep = <int8_t*>malloc(self.ncells + 2)
        self.codes = <int8_t*>malloc(self.ncells + 2)
        self.probs = <float*>malloc((self.ncells + 1) * sizeof(float))
        self.actions = <float*>malloc((self.ncells + 1) * sizeof(float))
        self.factor = <double*>malloc((self.ncells + 1) * sizeof(double))
        self.net_scratch = NULL
        self.net_scratch_floats = 0
        self.vbuf = <double*>malloc((self.ncells + 1) * sizeof(double))
        self.vslot = <int*>malloc((self.ncells + 1) * sizeof(int))
        self.vcm = <int16_t*>malloc(4 * VCM_CAP * sizeof(int16_t))
        self.scratch = <int8_t*>malloc(self.ncells)
        self.vcm_bonus = 0.0
        self.rave_prior = 0
        self.plain_every = 0
        self.node_fill = False
        self.know = None
        self.pos = None
        self.value = None
        self.value_in_c = False
        self.value_error = None
        self.value_at = 0
        self.value_visits = 0
        self.value_mix = 0.0
        self.value_fade = 0.0
        self.use_mix = False
        self.leaf = None
        self.know_at = KNOW_AT
        self.vc = None
        self.vc_at = 0
        self.use_vc = False
        self.c_pb = 0.0
        self.prune_ratio = 0.0
        self.root_last = -1
        self.route_at = 0
        self.use_route = False
        self.policy = None
        self.policy_at = 0
        self.policy_weight = 1.0
        self.action_visits = 0
        self.minimax_weight = 0.0
        self.use_policy = False
        if (not self.keep or not self.codes or not self.probs or not self.actions
                or not self.vcm or not self.scratch or not self.factor or not self.vbuf
                or not self.vslot or not self.nodes or not self.children):
            raise MemoryError()
        self.rng = seed
        self.K = K
        self.c_uct = c_uct
        self.expand_at = expand_at

    def __dealloc__(self):
        free(self.nodes)
        free(self.children)
        free(self.keep)
        free(self.codes)
        free(self.probs)
        free(self.actions)
        free(self.factor)
        free(self.net_scratch)
        free(self.vbuf)
        free(self.vslot)
        free(self.vcm)
        free(self.scratch)

    # -- setting up ------------------------------------------------------------------
    cdef void reset(self, HexState s):
        """A fresh tree whose root is ``s`` (not terminal)."""
        self._root_facts(s)
        self.n_nodes = 0
        self.n_children = 0
        self.sims = 0
        self.moves = 0
        self.max_depth = 0
        self.full = False
        self._new_node(self.root_side)
        self._expand(0, self.root_board, self.root_side, self.root_last)
        self.vc_calls = 0
        if self.use_route:
            self._route_prior(0, 0)
        if self.use_policy:
            self._policy_prior(0, 0)
        if self.use_know:
            self._knowledge(0, 0)
        if self.use_vc and self.nodes[0].proven == 0:
            self._vc_knowledge(0, self.root_board, self.root_side)
        self._root_wins()

    cdef void _root_wins(self) noexcept:
        """Proves the root's winning moves at once (a stone that connects), so that a
        search of any length plays one."""
        cdef Node* nd = &self.nodes[0]
        cdef Child* ch
        cdef int i, m, colour = self.root_side + 1
        cdef int32_t cidx
        if nd.first < 0:
            return
        memcpy(self.board, self.root_board, self.ncells)
        for i in range(nd.count):
            ch = self.children + nd.first + i
            m = ch.move
            if m >= self.ncells or ch.node >= 0 or ch.pruned == LOST_BY_KNOWLEDGE:
                continue
            self.board[m] = colour
            if self.c_connects(m, colour):
                cidx = self._new_node(1 - self.root_side)
                if cidx >= 0:
                    ch.node = cidx
                    self.nodes[cidx].proven = -1
            self.board[m] = 0
        self._prove(0)

    cdef bint reuse(self, HexState s, list path):
        """Keeps the subtree below ``path`` (moves from the previous root to ``s``) as
        the new tree, its statistics and proofs included; False (and nothing changed)
        when the tree does not hold that node."""
        cdef int32_t idx = 0, j
        cdef int i, m
        cdef Node* nd
        if s.c_swap_legal():
            return False                  # the new root needs the swap among its children
        for m in path:
            nd = &self.nodes[idx]
            if nd.first < 0:
                return False
            j = -1
            for i in range(nd.count):
                if self.children[nd.first + i].move == m:
                    j = i
                    break
            if j < 0 or self.children[nd.first + j].node < 0:
                return False
            idx = self.children[nd.first + j].node
        if idx != 0 and not self._compact(idx):
            return False
        self._root_facts(s)
        self.sims = 0
        self.moves = 0
        self.max_depth = 0
        nd = &self.nodes[0]
        # a root proven by knowledge alone has no winning child to play: prove it again
        # from its children
        nd.proven = 0
        if nd.first < 0:
            self._expand(0, self.root_board, self.root_side, self.root_last)
        self.vc_calls = 0
        if self.use_route and not (nd.known & KNOWN_ROUTE):
            self._route_prior(0, 0)
        if self.use_policy and not (nd.known & KNOWN_POLICY):
            self._policy_prior(0, 0)
        if self.use_know and not (nd.known & KNOWN_GREEDY):
            self._knowledge(0, 0)
        if self.use_vc and not (nd.known & KNOWN_VC):
            self._vc_knowledge(0, self.root_board, self.root_side)
        self._root_wins()
        return True

    cdef bint _compact(self, int32_t root):
        """Moves the subtree of node ``root`` to the front of the arenas, ``root`` first,
        in place. A node is created after its parent and a children block after the
        blocks before it, so in the order of their old positions every kept node and
        block moves down or stays (its new position is its rank among the kept ones): no
        second arena, no fresh pages to fault in, no large free (the copy into fresh
        arenas took 10-130 ms a move on 11x11, outside the move's clock)."""
        cdef long long nn = self.n_nodes
        cdef int32_t* remap = <int32_t*>malloc(nn * sizeof(int32_t))
        cdef uint64_t* keys = <uint64_t*>malloc(nn * sizeof(uint64_t))
        cdef long long k, kept = 0, p, dest = 0, blocks = 0, b
        cdef int32_t j, x
        cdef int i, count
        cdef Node* nd
        cdef Child* c
        if not remap or not keys:
            free(remap)
            free(keys)
            return False
        with nogil:
            # one pass in the order of the old indices: a node's children come after it,
            # so a node reached from the root is marked (0; -1 elsewhere) before the pass
            # gets to it; a marked node marks its children and takes its rank as its new
            # index (the root, the lowest index of its subtree, becomes node 0)
            memset(remap, 0xFF, nn * sizeof(int32_t))
            remap[root] = 0
            for k in range(root, nn):
                if remap[k] != 0:
                    continue
                nd = &self.nodes[k]
                if nd.first >= 0:
                    for i in range(nd.count):
                        x = self.children[nd.first + i].node
                        if x >= 0:
                            remap[x] = 0
                remap[k] = <int32_t>kept
                self.nodes[kept] = self.nodes[k]
                kept += 1
            # the kept nodes' children blocks, in the order of their old positions (a
            # sort of the expanded nodes' keys: far fewer than the children)
            for j in range(<int32_t>kept):
                if self.nodes[j].first >= 0:
                    if self.nodes[j].count > 0:
                        keys[blocks] = (<uint64_t>self.nodes[j].first << 32) | <uint64_t>j
                        blocks += 1
                    else:
                        self.nodes[j].first = 0     # expanded, no children: no block
            qsort(keys, blocks, sizeof(uint64_t), _cmp_u64)
            for b in range(blocks):
                j = <int32_t>(keys[b] & <uint64_t>0xFFFFFFFF)
                p = <long long>(keys[b] >> 32)
                count = self.nodes[j].count
                if dest != p:
                    memmove(self.children + dest, self.children + p, count * sizeof(Child))
                self.nodes[j].first = <int32_t>dest
                for i in range(count):
                    c = self.children + dest + i
                    if c.node >= 0:
                        c.node = remap[c.node]
                dest += count
        free(remap)
        free(keys)
        self.n_nodes = kept
        self.n_children = dest
        self.full = False
        return True

    cdef void _root_facts(self, HexState s):
        self.root_side = s.side
        self.root_swap = s.c_swap_legal() and not self.swap_off
        self.root_first = s.hist_action[0] if self.root_swap else -1
        self.root_last = -1
        if s.nhist > 0 and s.hist_action[s.nhist - 1] < self.ncells:
            self.root_last = s.hist_action[s.nhist - 1]
        self.use_know = self.know is not None and self.know_at > 0
        self.use_route = self.know is not None and self.route_at > 0 and self.pat is not None
        self.use_vc = self.vc is not None and self.vc_at > 0 and self.vc.n == s.n
        self.use_policy = self.policy is not None and self.policy_at > 0 and self.policy.n == s.n
        self.use_value = self.value is not None and self.value_at > 0 and self.value_visits > 0
        self.value_in_c = isinstance(self.value, HeuristicEvaluator)
        self.use_mix = self.value_in_c and self.value_mix > 0.0 and self.leaf is not None
        self.value_error = None
        self.pos = <HexState>s.c_clone() if (self.use_know or self.use_value or self.use_route
                                             or self.use_policy or self.use_mix) else None
        self.c_set_root(s.cells)      # the root board, and the pattern playouts' weights

    cdef int32_t _new_node(self, int side) noexcept nogil:
        cdef int32_t i
        if self.n_nodes >= self.node_cap:
            self.full = True
            return -1
        i = <int32_t>self.n_nodes
        self.n_nodes += 1
        self.nodes[i].first = -1
        self.nodes[i].count = 0
        self.nodes[i].side = side
        self.nodes[i].proven = 0
        self.nodes[i].known = 0
        self.nodes[i].visits = 0
        self.nodes[i].value = -1.0
        return i

    cdef bint _expand(self, int32_t idx, const int8_t* board, int side, int last) noexcept nogil:
        """Children for every empty cell (and the swap at the root where it is legal),
        with their prior (``eval/hex_prior.pyx``: the inferior cells among them left out,
        the patterns' gammas normalised over the children searched, or uniform)."""
        cdef int i, k = 0, total = 0
        cdef Child* ch
        cdef bint swap = idx == 0 and self.root_swap
        for i in range(self.ncells):
            if board[i] == 0:
                total += 1
        if swap:
            total += 1
        if self.n_children + total > self.child_cap:
            self.full = True
            return False
        ch = self.children + self.n_children
        for i in range(self.ncells):
            if board[i] == 0:
                ch[k].move = i
                k += 1
        if swap:
            ch[k].move = self.ncells
            k += 1
        for i in range(k):
            ch[i].node = -1
            ch[i].pruned = 0
            ch[i].fill = 0
            ch[i].n = 0
            ch[i].w = 0
            ch[i].vw = 0.0
            # rave_prior virtual AMAF visits at even odds (MoHex gives every move 8),
            # lest a child's first playouts decide whether it is ever tried
            ch[i].rn = self.rave_prior
            ch[i].rw = self.rave_prior // 2
            ch[i].prior = 1.0
            ch[i].av = -1.0
        if swap and self.rave_prior < SWAP_RAVE:
            # no playout ever plays the swap, so it has no AMAF statistics: it gets at
            # least SWAP_RAVE virtual ones at even odds, lest its first playout decide it
            ch[k - 1].rn = SWAP_RAVE
            ch[k - 1].rw = SWAP_RAVE // 2
        expansion_prior(ch, k, board, side, last, swap, self.pat, self.inferior, self.labels,
                        self.prune_ratio, self.ncells)
        self.nodes[idx].first = <int32_t>self.n_children
        self.nodes[idx].count = k
        self.n_children += k
        return True

    # -- knowledge at a node -----------------------------------------------------------
    cdef bint _node_knowledge(self, int32_t idx, int depth, int side) noexcept nogil:
        """The knowledge due at node idx (reached by the first ``depth`` moves of the
        path, ``side`` to move) by its visits: the route factor, the evaluator's proofs,
        H-search's, the value network's word. True when it proved the node."""
        cdef Node* nd = &self.nodes[idx]
        # the route factor before the proofs: a mustplay brings back what it skipped
        if self.use_route and nd.visits >= self.route_at and not (nd.known & KNOWN_ROUTE):
            self._route_prior(idx, depth)
        if self.use_policy and nd.visits >= self.policy_at and not (nd.known & KNOWN_POLICY):
            self._policy_prior(idx, depth)
        if self.use_know and not (nd.known & KNOWN_GREEDY) and nd.visits >= self.know_at:
            self._knowledge(idx, depth)
            if nd.proven != 0:
                return True
        if self.use_vc and nd.visits >= self.vc_at and (
                not (nd.known & KNOWN_VC)
                or self.vcm_bonus > 0.0 and not (nd.known & KNOWN_VCM)):
            self._vc_knowledge(idx, self.board, side)
            if nd.proven != 0:
                return True
        if self.use_value and nd.visits >= self.value_at and not (nd.known & KNOWN_VALUE):
            self._value_prior(idx, depth, side)
        return False

    cdef void _pos_down(self, int depth) noexcept nogil:
        """Moves ``pos`` (the root position) along the first ``depth`` moves of the path."""
        cdef int i
        for i in range(depth):
            self.pos.c_apply(self.children[self.path_child[i]].move)

    cdef void _pos_up(self, int depth) noexcept nogil:
        """Takes back what ``_pos_down(depth)`` played."""
        cdef int i
        for i in range(depth):
            self.pos.c_undo()

    cdef void _knowledge(self, int32_t idx, int depth) noexcept nogil:
        """Applies the evaluator's proofs to node idx, reached by the first ``depth``
        moves of the path: a proven win or loss (not at the root, which needs a move),
        or the children outside the mustplay set pruned as losses."""
        cdef int code
        self.nodes[idx].known |= KNOWN_GREEDY
        self._pos_down(depth)
        code = self.know.c_knowledge(self.pos, self.keep)
        self._pos_up(depth)
        self._apply_knowledge(idx, code, False)

    cdef void _route_prior(self, int32_t idx, int depth) noexcept nogil:
        """The prior's route factor at node idx (reached by the first ``depth`` moves of
        the path): each child's prior times the route gamma of its cell's route code
        (the evaluator's ``c_move_codes``), by ``eval/hex_prior.pyx``'s ``scale_prior``."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch
        cdef bint ok
        cdef int i
        nd.known |= KNOWN_ROUTE
        if nd.first < 0:
            return
        ch = self.children + nd.first
        self._pos_down(depth)
        ok = self.know.c_move_codes(self.pos, self.codes)
        self._pos_up(depth)
        if not ok:
            return
        for i in range(nd.count):
            if ch[i].move < self.ncells:
                self.factor[ch[i].move] = self.pat.c_route_gamma(self.codes[ch[i].move])
        scale_prior(ch, nd.count, self.factor, self.prune_ratio, self.ncells, True)

    cdef void _policy_prior(self, int32_t idx, int depth) noexcept nogil:
        """The policy network's word on the prior of node idx's children (reached by the
        first ``depth`` moves of the path): each child's prior times the network's
        probability of its move to the power ``policy_weight``, by ``scale_prior``
        without skipping (``eval/hex_prior.pyx`` says why). A network with value heads
        and ``action_visits`` set gives each child, from the same pass, that many virtual
        visits won at the odds of its action value (3HNN's action-value head as Gelly and
        Silver's prior knowledge), and, with ``minimax_weight`` set, that value as the
        child's ``av``; the swap and the children pruned as inferior or lost are left
        alone."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch
        cdef size_t need
        cdef bint ok
        cdef bint actions = (self.action_visits > 0 or self.minimax_weight > 0.0) \
            and self.policy.has_values
        cdef double q
        cdef int i
        nd.known |= KNOWN_POLICY
        if nd.first < 0:
            return
        ch = self.children + nd.first
        need = self.policy.c_scratch_floats()
        if need > self.net_scratch_floats:
            free(self.net_scratch)
            self.net_scratch = <float*>malloc(need * sizeof(float))
            self.net_scratch_floats = need if self.net_scratch != NULL else 0
        self._pos_down(depth)
        if actions:
            ok = (self.policy.c_forward(self.pos, self.probs, self.actions, NULL,
                                        self.net_scratch) >= 0
                  and self.policy.c_softmax(self.pos, self.probs))
        else:
            ok = self.policy.c_prior(self.pos, self.probs, self.net_scratch)
        self._pos_up(depth)
        if not ok:
            return
        for i in range(nd.count):
            if ch[i].move < self.ncells:
                # a floor, lest a cell the network rules out lose every chance of a search
                self.factor[ch[i].move] = (self.probs[ch[i].move] + 1e-4) ** self.policy_weight
        scale_prior(ch, nd.count, self.factor, self.prune_ratio, self.ncells, False)
        if not actions:
            return
        for i in range(nd.count):
            if ch[i].move == self.ncells or ch[i].pruned == INFERIOR \
                    or ch[i].pruned == LOST_BY_KNOWLEDGE:
                continue
            q = 0.5 * (1.0 + self.actions[ch[i].move])
            q = 0.0 if q < 0.0 else 1.0 if q > 1.0 else q
            ch[i].n += self.action_visits
            ch[i].w += <int32_t>(q * self.action_visits + 0.5)
            ch[i].vw += <float>(q * self.action_visits)
            if self.minimax_weight > 0.0:
                ch[i].av = <float>q

    cdef void _value_prior(self, int32_t idx, int depth, int side) noexcept nogil:
        """The value network's word on the children of node idx (reached by the first
        ``depth`` moves of the path, ``side`` to move): each child searched or not gets
        ``value_visits`` virtual visits won at the network's odds for the player to move
        (Gelly and Silver's prior knowledge, with a network as the prior). The swap and
        pruned children are left alone; a child that ends the game needs no word. A
        network in C is read here, any other in one batch under the GIL."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch
        cdef int i, k = 0
        nd.known |= KNOWN_VALUE
        if nd.first < 0:
            return
        self._pos_down(depth)
        ch = self.children + nd.first
        for i in range(nd.count):
            self.vslot[i] = -1
            if ch[i].pruned == INFERIOR or ch[i].pruned == LOST_BY_KNOWLEDGE \
                    or ch[i].move == self.ncells:
                continue
            self.pos.c_apply(ch[i].move)
            if not self.pos.c_terminal():
                self.vslot[i] = k
                if self.value_in_c:
                    self.vbuf[k] = (<HeuristicEvaluator>self.value).c_heuristic(self.pos)
                k += 1
            self.pos.c_undo()
        if self.value_in_c:
            self.value.positions += k     # what the engine reports it valued
        elif k > 0:
            with gil:
                k = self._value_batch(idx)
        for i in range(nd.count):
            if self.vslot[i] >= 0 and k > 0:
                _virtual(self, &ch[i], self.vbuf[self.vslot[i]], side)
        self._pos_up(depth)

    cdef int _value_batch(self, int32_t idx) noexcept:
        """The children of node idx marked in ``vslot`` (the path already on ``pos``),
        valued in one call of the batch network into ``vbuf``; 0 when it raised (kept in
        ``value_error``: the search raises it after its chunk) and the network is off."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch = self.children + nd.first
        cdef int i
        try:
            for i in range(nd.count):
                if self.vslot[i] >= 0:
                    self.pos.c_apply(ch[i].move)
                    self.value.c_add(self.pos)
                    self.pos.c_undo()
            self.value.c_flush(self.vbuf)
        except BaseException as e:
            self.value.c_discard()
            self.value_error = e
            self.use_value = False
            return 0
        return 1

    cdef void _apply_knowledge(self, int32_t idx, int code, bint keep_inferior) noexcept nogil:
        """A KNOW_* code at node idx: a proven win or loss (not at the root, which needs
        a move), or the children outside ``keep`` pruned as losses (the inferior ones
        left as they are where ``keep_inferior``)."""
        cdef Node* nd = &self.nodes[idx]
        if code == KNOW_WIN and idx != 0:
            nd.proven = 1
        elif code == KNOW_LOSS and idx != 0:
            nd.proven = -1
        elif code == KNOW_MUSTPLAY and nd.first >= 0:
            mustplay(self.children + nd.first, nd.count, self.keep, keep_inferior)

    cdef void _vc_knowledge(self, int32_t idx, const int8_t* board, int side) noexcept nogil:
        """H-search's proofs at node idx (``board``, ``side`` to move): a win or a loss
        (not at the root), or the children outside the mustplay pruned as losses."""
        cdef int code
        # the maintenance boosts the answers below children that have nodes: at the
        # root, searched before its first simulation, it waits for a second H-search
        cdef bint maintain = self.vcm_bonus > 0.0 and self.nodes[idx].visits >= self.vc_at
        self.nodes[idx].known |= KNOWN_VC
        if maintain:
            self.nodes[idx].known |= KNOWN_VCM
        self.vc_calls += 1
        code = self.vc.c_knowledge(board, side, idx == 0 and self.root_swap, self.keep)
        self._apply_knowledge(
            idx, KNOW_WIN if code == VC_WIN else KNOW_LOSS if code == VC_LOSS
            else KNOW_MUSTPLAY if code == VC_MUSTPLAY else KNOW_NONE, True)
        if maintain and self.nodes[idx].proven == 0 and (code == VC_NONE or code == VC_MUSTPLAY):
            self._maintain(idx, board, side)

    cdef void _maintain(self, int32_t idx, const int8_t* board, int side) noexcept nogil:
        """VC maintenance (MoHex's VCM), from the H-search just run at node idx: below
        each child that probes the opponent's connections (and has been visited, its
        node expanded here if need be), the opponent's answers that make them whole
        again get ``vcm_bonus`` more prior (``eval/hex_prior.pyx``'s ``vcm_boost``)."""
        cdef int npairs = self.vc.c_maintenance(self.vcm, VCM_CAP)
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch
        cdef int i, m
        cdef int32_t cidx
        if npairs == 0:
            return
        for i in range(nd.count):
            ch = self.children + nd.first + i
            m = ch.move
            if ch.pruned == LOST_BY_KNOWLEDGE or ch.pruned == INFERIOR or ch.node < 0 \
                    or m >= self.ncells:
                continue
            cidx = ch.node
            if not probes(self.vcm, npairs, m) or self.nodes[cidx].proven != 0:
                continue
            if self.nodes[cidx].first < 0:
                memcpy(self.scratch, board, self.ncells)
                self.scratch[m] = side + 1
                if not self._expand(cidx, self.scratch, 1 - side, m):
                    return                # the arenas are full
            vcm_boost(self.children + self.nodes[cidx].first, self.nodes[cidx].count,
                      self.vcm, npairs, m, self.vcm_bonus)

    # -- one simulation -----------------------------------------------------------------
    cdef int _select(self, int32_t idx) noexcept nogil:
        """The child to follow: a proven win at once, never a proven loss unless all are."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch = self.children + nd.first
        cdef int i, best = -1
        cdef double s, best_s = -1e300
        cdef double log_n = log(nd.visits + 1.0)
        cdef int8_t p
        cdef bint plain = self.plain_every > 0 and \
            splitmix64(&self.rng) % <uint64_t>self.plain_every == 0
        for i in range(nd.count):
            if ch[i].pruned:
                continue
            if ch[i].node >= 0:
                p = self.nodes[ch[i].node].proven
                if p == -1:
                    return i              # the opponent is lost there
                if p == 1:
                    continue              # the opponent wins there
            s = _score(self, &ch[i], log_n, plain)
            if s > best_s:
                best_s = s
                best = i
        if best < 0:
            # every child kept is lost: the prior's skipped ones come back
            for i in range(nd.count):
                if ch[i].pruned == SKIPPED_BY_PRIOR:
                    ch[i].pruned = 0
                    best = i
            if best >= 0:
                return self._select(idx)
            best = 0                      # every child is lost: any will do
        return best

    cdef int simulate(self) noexcept nogil:
        """One simulation: descent, expansion, playout, backup. Returns 1 when the root is
        proven (the search can stop)."""
        cdef Walk w
        cdef int winner
        cdef double black
        w.ne = self.c_from_root()
        w.depth = 0
        w.side = self.root_side
        w.last = -1
        w.leaf = 0
        w.filled = -1
        w.proven_winner = -1
        self._descend(&w)
        if w.depth > self.max_depth:
            self.max_depth = w.depth
        if w.proven_winner >= 0:
            winner = w.proven_winner
            black = 1.0 - winner
        else:
            # the network reads the walk's end before the playout fills the board
            black = self._leaf_value(&w) if self.use_mix else 0.0
            winner = self._leaf_playout(&w)
        self.sims += 1
        self._backup(w.depth, winner, black)
        if w.leaf >= 0:
            self.nodes[w.leaf].visits += 1
        return self.nodes[0].proven != 0

    cdef void _descend(self, Walk* w) noexcept nogil:
        """The walk from the root down the tree by selection, expanding the node it
        ends on where it has the visits, its stones placed on the board."""
        cdef int32_t idx = 0, cidx
        cdef Node* nd
        cdef Child* ch
        cdef int i, m
        while True:
            nd = &self.nodes[idx]
            w.leaf = idx
            if nd.proven != 0:
                w.proven_winner = w.side if nd.proven == 1 else 1 - w.side
                return
            if nd.first < 0:
                if nd.visits < self.expand_at or not self._expand(idx, self.board, w.side,
                                                                  w.last):
                    return
            if self._node_knowledge(idx, w.depth, w.side):
                w.proven_winner = w.side if nd.proven == 1 else 1 - w.side
                return
            if nd.count == 0:
                return                    # cannot happen before the end: a full board is won
            w.leaf = -1
            w.filled = idx
            i = self._select(idx)
            ch = self.children + nd.first + i
            self.path_node[w.depth] = idx
            self.path_child[w.depth] = nd.first + i
            w.depth += 1
            self._play_child(ch, w)
            m = w.last
            if ch.node < 0:
                cidx = self._new_node(w.side)
                if cidx < 0:
                    return
                ch.node = cidx
                w.leaf = cidx
                if self.c_connects(m, self.board[m]):
                    self.nodes[cidx].proven = -1      # the player to move there has lost
                    w.proven_winner = 1 - w.side
                    return
                idx = cidx
                if self.expand_at > 0:
                    return
                continue
            idx = ch.node
            if w.depth >= MAXPATH - 1:
                w.leaf = idx
                return

    cdef void _play_child(self, Child* ch, Walk* w) noexcept nogil:
        """Places the stone of the move of ``ch`` (the swap moves Black's first stone)
        for the player to move; the other player is then to move."""
        cdef int m = ch.move, first, t
        if m == self.ncells:
            # the canonical swap: Black's stone (r, c) becomes White's (c, r)
            first = self.root_first
            t = (first % self.n) * self.n + first // self.n
            self.board[first] = 0
            self.emp[w.ne] = first
            self.epos[first] = w.ne
            w.ne += 1
            self.c_place(t, 2, &w.ne)
            if self.pp:
                self.c_pp_init(self.board)    # a stone moved: read every cell again
            m = t
        else:
            self.c_place(m, w.side + 1, &w.ne)
        self.moves += 1
        w.last = m
        w.side = 1 - w.side

    cdef int _leaf_playout(self, Walk* w) noexcept nogil:
        """The playout from where the walk ended (from the fill-in where it is asked for):
        0 when Black wins, 1 when White does."""
        cdef Node* nd
        cdef Child* kids
        cdef int t, m
        if self.fill_playouts and w.ne > 1:
            self.c_fill_in(w.side, &w.ne)
        elif self.node_fill and w.filled >= 0 and not (w.filled == 0 and self.root_first >= 0
                                                       and self.board[self.root_first] == 0):
            # the dead and captured cells found when that node was expanded (the
            # moves below it are never among them; the root's are not the board's
            # once the swap moved its stone)
            nd = &self.nodes[w.filled]
            kids = self.children + nd.first
            for t in range(nd.count):
                m = kids[t].move
                if kids[t].fill and self.board[m] == 0:
                    self.c_place(m, kids[t].fill, &w.ne)
        self.c_play_out(w.side, w.last, &w.ne)
        return 0 if self.c_black_wins() else 1

    cdef double _leaf_value(self, Walk* w) noexcept nogil:
        """The value network's word on the position where the walk ended, as Black's
        chance of winning (asked once a node: a node ends walks until it is expanded)."""
        cdef double v
        if w.leaf >= 0 and self.nodes[w.leaf].value >= 0.0:
            return self.nodes[w.leaf].value
        self._pos_down(w.depth)
        v = (<HeuristicEvaluator>self.leaf).c_heuristic(self.pos)
        self._pos_up(w.depth)
        self.value.positions += 1
        v = 0.5 * (1.0 + v)
        v = 0.0 if v < 0.0 else 1.0 if v > 1.0 else v
        if w.leaf >= 0:
            self.nodes[w.leaf].value = <float>v
        return v

    cdef void _backup(self, int depth, int winner, double black) noexcept nogil:
        """The result up the path, with AMAF over the final board (a proven end leaves
        cells empty: those count for neither player), the leaf's value (``black``:
        Black's chance, where ``value_mix`` reads it), the proofs, and the implicit
        minimax: a node whose children carry action values gives its parent's record of
        it one minus the best of them (a proven child counts as a sure win or loss, one
        lost by knowledge as a loss)."""
        cdef int i, t, m, colour
        cdef double best, v
        cdef int32_t idx
        cdef Node* nd
        cdef Child* ch
        cdef Child* kids
        for i in range(depth - 1, -1, -1):
            idx = self.path_node[i]
            nd = &self.nodes[idx]
            ch = self.children + self.path_child[i]
            nd.visits += 1
            ch.n += 1
            if winner == nd.side:
                ch.w += 1
            if self.use_mix:
                ch.vw += <float>(black if nd.side == 0 else 1.0 - black)
            colour = nd.side + 1
            kids = self.children + nd.first
            best = -1.0
            for t in range(nd.count):
                m = kids[t].move
                if m < self.ncells and self.board[m] == colour:
                    kids[t].rn += 1
                    if winner == nd.side:
                        kids[t].rw += 1
                if kids[t].av >= 0.0:
                    v = kids[t].av
                    if kids[t].pruned == LOST_BY_KNOWLEDGE:
                        v = 0.0
                    elif kids[t].node >= 0 and self.nodes[kids[t].node].proven != 0:
                        v = 0.5 * (1.0 - self.nodes[kids[t].node].proven)
                    if v > best:
                        best = v
            if best >= 0.0 and i > 0:
                self.children[self.path_child[i - 1]].av = <float>(1.0 - best)
            self._prove(idx)

    cdef void _prove(self, int32_t idx) noexcept nogil:
        """MCTS-Solver: a child lost for the opponent wins; all children won for it lose."""
        cdef Node* nd = &self.nodes[idx]
        cdef Child* ch = self.children + nd.first
        cdef int i
        cdef bint all_lost = True
        if nd.proven != 0 or nd.first < 0:
            return
        for i in range(nd.count):
            if ch[i].pruned == LOST_BY_KNOWLEDGE:
                continue
            if ch[i].pruned == INFERIOR:
                # never searched, and never better than the best child searched; but a
                # stone that connects (proven at the root) still wins
                if ch[i].node >= 0 and self.nodes[ch[i].node].proven == -1:
                    nd.proven = 1
                    return
                continue
            if ch[i].pruned == SKIPPED_BY_PRIOR or ch[i].node < 0:
                all_lost = False
                continue
            if self.nodes[ch[i].node].proven == -1:
                nd.proven = 1
                return
            if self.nodes[ch[i].node].proven != 1:
                all_lost = False
        if all_lost:
            nd.proven = -1

    cdef void run_chunk(self, int k) noexcept nogil:
        cdef int i
        for i in range(k):
            if self.simulate():
                return

    # -- reading the tree ---------------------------------------------------------------
    cdef int child_proven(self, Child* ch) noexcept:
        """+1 when the move wins for the player who makes it, -1 when it loses, else 0."""
        if ch.pruned == LOST_BY_KNOWLEDGE:
            return -1
        if ch.node < 0:
            return 0
        return -self.nodes[ch.node].proven
