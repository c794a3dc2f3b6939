# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""MCTS with RAVE and Hex playouts: the search family of MoHex, for Hex only.

Each simulation walks the tree from the root by a RAVE-blended score, adds one node, then
fills the rest of the board at random, except that a player whose bridge (two of its
stones, or a stone and its edge, with two common empty neighbours) was just intruded
answers in the other cell of the bridge. A full Hex board has exactly one winner, so a
playout never checks for a win on the way and one flood fill at the end scores it.

All-moves-as-first (AMAF): a full board says which player owns every cell, so after each
playout every child of every node on the path whose cell ended in the colour of that
node's player to move is counted as if it had been played first (the RAVE statistics).
The score of a child blends its own mean with its RAVE mean (Gelly and Silver 2011):

    beta = rn / (n + rn + n * rn / K),   score = (1 - beta) q + beta q_rave + c sqrt(ln N / (n+1))

The move prior (``games/hex_patterns.pyx``, MoHex 2.0's prior knowledge): when a node is
expanded each child gets the probability its local pattern gives it, and its score gains
``progressive_bias * prior / sqrt(n + 1)``; children whose prior is under ``prune_ratio``
of the best are skipped until every other child is proven lost (they never count in a
proof). The swap, which no playout plays and so has no AMAF statistics, starts with a
few virtual AMAF visits at even odds.

The prior's route factor: patterns see twelve cells, not where the game is going. At a
node of ``route_at`` visits (the root at once) each child's prior is multiplied by the
route gamma of its cell (how far the shortest two-distance route of each player through
it is from that player's shortest, the evaluator's ``c_move_codes``), renormalised, and
the prior pruning redone over the children not yet visited. It costs one two-distance
computation a node, so it waits for the visits that show a node is worth it.

A learned move prior (``eval/hex_policy.pyx``, MoHex-CNN's): with a ``policy`` network,
at a node of ``policy_at`` visits (the root at once) each child's prior is multiplied by
the network's probability of its move (to the power ``policy_weight``), renormalised and
the pruning redone, as the route factor is. One forward pass a node, in C without the
GIL, at nodes whose visits say they are worth it. A network with value heads (output
``policy_value``, MoHex 3HNN's) gives from the same pass each child ``action_visits``
virtual visits won at the odds of its action value. With ``minimax_weight`` (alpha) set,
the action values also enter every score at such a node as implicit minimax backups
(Lanctot et al. 2014): a child's blended mean becomes ``(1 - alpha) mean + alpha av``,
``av`` the network's value of the move until the child's own children are valued, then
one minus the best of theirs, backed up along the path.

A value network (``value``): in C (an mlp or an nnue model), the children of a node of
``value_at`` visits each get ``value_visits`` virtual visits at its odds; any other
network does the same in one batch call at nodes of ``DEFAULT_VALUE_AT_BATCH`` visits.
With ``value_mix`` (lambda) > 0, a network in C also values the position where each
simulation's walk ended, before its playout, and each child's blended mean becomes
``(1 - lambda) mean + lambda`` the mean of those values below it (AlphaGo's mixed leaf
evaluation: a playout's noise and a network's bias, each partly averaged out by the
other). With ``value_fade`` (F) > 0 the share is ``lambda F / (F + n)`` at a child of
``n`` visits: the network speaks at the tree's thin edge, the playouts where they are
many.

Inferior cells (``games/hex_inferior.pyx``, MoHex's inferior-cell analysis from each
cell's ring of neighbours): at expansion, dead cells, captured cells (after their fill-in)
and the mover's vulnerable cells get no child worth searching (``INFERIOR``): a best move
is always among the others, so they never count against a proof either.

H-search (``games/hex_vc.pyx``) at nodes of ``vc_at`` visits: a connection proves the
node, the opponent's semis prune the children outside their mustplay. With
``vcm_bonus`` > 0 (2.5 by default, MoHex's gamma of 282 against its sum of about a
hundred) it also maintains connections (MoHex's VCM): below each child that probes a full
connection of the opponent, the opponent's answers that make it whole again gain that
much prior, the child's priors renormalised (the root, searched before it has children,
runs it again at ``vc_at`` visits). docs/results/hex.md, "What each lever bought", has
its matches.

Two more of MoHex's search settings are options, off by default since neither measured
stronger (docs/results/hex.md, MoHex's other search settings): ``rave_prior`` virtual
AMAF visits at even odds for every child (MoHex gives 8), and ``plain_every``: one
selection in that many ignores RAVE and follows the children's own means (MoHex's
randomised RAVE, 30).

The swap map (``games/hex_swap.py``, MoHex's swap table measured by self-play): where it
covers the board size, the second player swaps at once the first stones it says to swap
and otherwise searches without the swap, and under the swap rule the first player opens
at once with the map's most even stone (``stop_reason`` "book" for both).

Proven results back up as in an MCTS-Solver: a node where the last move connected is a
loss for the player to move; a node with a child lost for the opponent is won; a node
whose children are all won for the opponent is lost. A proven root stops the search.

The tree is kept from one move to the next (``keep_tree``): the subtree below the moves
played since the last search is moved down to the front of its arenas, in place, its
statistics and proofs included. That move, like the root's knowledge, runs on the
search's clock (``run`` starts the stopper before it).

The clock: where it is elastic (a main time or a Canadian block: the stopper's
``max_time`` is past its target), a search whose most visited root child is not its best
valued one (a rival with a tenth of the visits and a higher mean) is extended once to
``extend_unstable`` times its target (MoHex's 1.5), and a search whose runner-up cannot
catch the best before the latest deadline stops early (``stop_reason`` "decided"): time
moves from the clear moves to the unclear ones (Huang, Coulom and Lin 2010). Under a
fixed move time or a one-stone byo-yomi nothing changes.

Threads: root parallelisation (Chaslot, Winands and van den Herik 2008). Each thread grows
its own tree from its own seed over a share of the memory budget; the decision sums the
root children's visits over the trees. One thread is deterministic by seed.

Nothing here is a Python object per node: nodes and children are C structs in arenas
sized from ``hash_mb``; once they are full the trees stop growing and the playouts go on
from their leaves.

The files: this one is the search and its driver (the clock, the threads, the decision);
``search/_rave_tree.pyx`` the tree (its memory, one simulation, the knowledge at a node,
the proofs); ``games/hex_playout.pyx`` the playout board and policy (bridge replies,
pattern playouts, the fill-in, scoring); ``eval/hex_prior.pyx`` the prior and knowledge
over a node's children (the pattern prior and its pruning, the route factor, inferior
cells, mustplays, VC maintenance).
"""
import threading

from libc.stdint cimport int8_t, int16_t, int32_t, uint64_t

from descent.search_cy.games.hex cimport HexState
from descent.search_cy.games.hex_patterns cimport HexPatterns
from descent.search_cy.games.hex_inferior cimport HexInferior
from descent.search_cy.games.hex_vc cimport HexVC, VC_MAXCELLS
from descent.search_cy.eval.hex_prior cimport Child, INFERIOR
from descent.search_cy.search._rave_tree cimport RaveTree, Node
from descent.search_cy.search.stopper cimport (
    Stopper, STOP_RESOLVED, STOP_TIME, STOP_DECIDED)
from descent.search_cy.eval.evaluator cimport Evaluator, HeuristicEvaluator
from descent.search_cy.eval.hex_policy cimport HexPolicy

from descent.search_cy.games.hex_patterns import shipped_weights
from descent.search_cy.games.hex_swap import shipped_swap_map
from descent.search_cy.search.result import ChildStat, SearchResult

cdef enum:
    MAXCELLS = 625
    CHUNK = 32            # simulations between two polls of the stopper

# defaults measured on Hex 11x11 (docs/results/hex.md, "The best configuration")
DEFAULT_RAVE_K = 1000.0
DEFAULT_EXPLORATION = 0.0
DEFAULT_EXPAND = 2
DEFAULT_KNOW_AT = 20
DEFAULT_PROGRESSIVE_BIAS = 2.5
DEFAULT_PRUNE_RATIO = 0.02        # prior pruning: children under this share of the best
DEFAULT_INFERIOR = True           # inferior-cell pruning at expansion
DEFAULT_PLAYOUT_GAMMA_CAP = 0.0   # pattern playouts: the largest gamma (0: uniform playouts)
DEFAULT_PLAYOUT_FILL_IN = False   # playouts start from the inferior-cell fill-in
DEFAULT_PLAYOUT_NODE_FILL_IN = False  # ... from the one found at the last node expanded
DEFAULT_VC_AT = 1000              # H-search knowledge at nodes of this many visits
DEFAULT_VCM_BONUS = 2.5           # VC maintenance: prior added to a probe's answers (0: off)
DEFAULT_RAVE_PRIOR = 0            # virtual AMAF visits at even odds of every child (MoHex: 8)
DEFAULT_PLAIN_EVERY = 0           # one selection in this many ignores RAVE (MoHex: 30; 0: none)
DEFAULT_EXTEND_UNSTABLE = 1.5     # an unstable search's deadline x this, where the clock allows
DEFAULT_STOP_DECIDED = True       # stop when the move cannot change, where the clock keeps it
DEFAULT_VALUE_AT = 20             # a value network's word on the children of nodes this visited
DEFAULT_VALUE_VISITS = 8          # ... as this many virtual visits at the network's odds
DEFAULT_VALUE_AT_BATCH = 300      # the same for a network called in batches (a call a node)
DEFAULT_ROUTE_AT = 20             # the prior's route factor at nodes this visited (0: never)
DEFAULT_POLICY_AT = 300           # a policy network's word at nodes this visited
DEFAULT_POLICY_WEIGHT = 1.0       # ... the power of its probabilities in the prior
DEFAULT_ACTION_VISITS = 8         # ... virtual visits at its action values (0: none)
DEFAULT_MINIMAX_WEIGHT = 0.0      # ... the share of their implicit minimax in a score
DEFAULT_VALUE_MIX = 0.0           # the share of a value network's leaf values in a score
cdef double UNSTABLE_SHARE = 0.1  # a rival's visits, as a share of the best's, to count
cdef int DECIDED_POLL = 16          # chunks between two checks of a decided move
cdef double DECIDED_AFTER = 0.05    # seconds before the simulation rate is trusted
SHIPPED = object()                # the pattern weights shipped with the package


cdef int _root_lead(list trees, long long* lead):
    """The roots' children summed over the trees (matched by move). Sets ``lead[0]`` to the most visited child's visits less the
    runner-up's and returns 1 when the search is unstable: a child with at least
    UNSTABLE_SHARE of the best's visits has a higher mean (MoHex extends when the most
    visited and the best valued children differ; without a share, one lucky visit would
    make every search unstable). Children proven lost do not count."""
    cdef long long n[MAXCELLS + 1]
    cdef long long w[MAXCELLS + 1]
    cdef int8_t live[MAXCELLS + 1]
    cdef int16_t slot[MAXCELLS + 1]      # a move's index among the first tree's children
    cdef RaveTree t0 = <RaveTree>trees[0]
    cdef RaveTree t
    cdef Node* root = &t0.nodes[0]
    cdef Child* ch
    cdef int j, best = -1, count = root.count
    cdef long long first = 0, second = 0
    if count == 0:
        lead[0] = 0
        return 0
    for j in range(MAXCELLS + 1):
        slot[j] = -1
    for j in range(count):
        n[j] = 0
        w[j] = 0
        live[j] = t0.child_proven(t0.children + root.first + j) >= 0
        slot[t0.children[root.first + j].move] = j
    for t in trees:
        for j in range(t.nodes[0].count):
            ch = t.children + t.nodes[0].first + j
            if slot[ch.move] >= 0:
                n[slot[ch.move]] += ch.n
                w[slot[ch.move]] += ch.w
    for j in range(count):
        if not live[j]:
            continue
        if n[j] > first:
            second = first
            first = n[j]
            best = j
        elif n[j] > second:
            second = n[j]
    lead[0] = first - second
    if best < 0:
        return 0
    for j in range(count):
        if (live[j] and j != best and n[j] > 0 and n[j] >= UNSTABLE_SHARE * first
                and w[j] * n[best] > w[best] * n[j]):
            return 1
    return 0


cdef class RaveSearch:
    """MCTS with RAVE and Hex playouts (see the module notes). Hex only; the evaluator is
    not used (the playouts value the leaves)."""
    cdef readonly object params
    cdef readonly Evaluator evaluator
    cdef readonly list trees
    cdef list history                 # the moves to the last root searched
    cdef tuple _patterns              # (size, weights, HexPatterns) of the last search
    cdef tuple _spawned_from          # the value network the trees' copies were made of,
                                      # and whether they have leaf copies (value_mix)
    cdef public double K, exploration, progressive_bias, prune_ratio
    cdef public int expand_at, know_at, vc_at
    cdef public object pattern_weights  # (pattern, local[, route] gammas), or None: no prior
    cdef public object swap_map         # a SwapMap, or None: the search decides the swap
    cdef public bint inferior           # prune inferior cells (games/hex_inferior.pyx)
    cdef public double playout_gamma_cap  # pattern playouts' largest gamma; 0: uniform
    cdef public bint playout_fill_in    # playouts start from the fill-in (with inferior)
    cdef public bint playout_node_fill_in  # ... from the last expanded node's fill-in
    cdef public double vcm_bonus        # VC maintenance's prior for a probe's answers
    cdef public int rave_prior          # virtual AMAF visits at even odds of every child
    cdef public int plain_every         # one selection in this many ignores RAVE (0: none)
    cdef public double extend_unstable  # an unstable search's deadline x this (1: never)
    cdef public bint stop_decided       # stop once the move cannot change
    cdef public Evaluator value         # a value network (in C: an mlp model), or None
    cdef public int value_at            # its word on the children of nodes this visited
    cdef public int value_visits        # ... as this many virtual visits (0: none)
    cdef public double value_mix        # the share of its leaf values' mean in a score
    cdef public double value_fade       # ... halved at a child of this many visits (0: kept)
    cdef public int route_at            # the prior's route factor at nodes this visited
    cdef public HexPolicy policy        # a move-policy network, or None
    cdef public int policy_at           # its word on the prior at nodes this visited
    cdef public double policy_weight    # the power of its probabilities in the prior
    cdef public int action_visits       # virtual visits at its action values (0: none)
    cdef public double minimax_weight   # the share of their implicit minimax in a score

    def __init__(self, Evaluator evaluator not None, params, *, double rave_k=DEFAULT_RAVE_K,
                 double exploration=DEFAULT_EXPLORATION, int expand_at=DEFAULT_EXPAND,
                 int know_at=DEFAULT_KNOW_AT, double progressive_bias=DEFAULT_PROGRESSIVE_BIAS,
                 double prune_ratio=DEFAULT_PRUNE_RATIO, pattern_weights=SHIPPED,
                 swap_map=SHIPPED, bint inferior=DEFAULT_INFERIOR,
                 double playout_gamma_cap=DEFAULT_PLAYOUT_GAMMA_CAP,
                 bint playout_fill_in=DEFAULT_PLAYOUT_FILL_IN,
                 bint playout_node_fill_in=DEFAULT_PLAYOUT_NODE_FILL_IN, int vc_at=DEFAULT_VC_AT,
                 double vcm_bonus=DEFAULT_VCM_BONUS, int rave_prior=DEFAULT_RAVE_PRIOR,
                 int plain_every=DEFAULT_PLAIN_EVERY,
                 double extend_unstable=DEFAULT_EXTEND_UNSTABLE,
                 bint stop_decided=DEFAULT_STOP_DECIDED, Evaluator value=None,
                 int value_at=DEFAULT_VALUE_AT, int value_visits=DEFAULT_VALUE_VISITS,
                 int route_at=DEFAULT_ROUTE_AT, HexPolicy policy=None,
                 int policy_at=DEFAULT_POLICY_AT,
                 double policy_weight=DEFAULT_POLICY_WEIGHT,
                 int action_visits=DEFAULT_ACTION_VISITS,
                 double minimax_weight=DEFAULT_MINIMAX_WEIGHT,
                 double value_mix=DEFAULT_VALUE_MIX, double value_fade=0.0):
        if rave_k <= 0.0:
            raise ValueError("rave_k must be > 0")
        if exploration < 0.0:
            raise ValueError("exploration must be >= 0")
        if expand_at < 0:
            raise ValueError("expand_at must be >= 0")
        if know_at < 0:
            raise ValueError("know_at must be >= 0 (0: no knowledge)")
        if vc_at < 0:
            raise ValueError("vc_at must be >= 0 (0: no H-search)")
        if vcm_bonus < 0.0:
            raise ValueError("vcm_bonus must be >= 0 (0: no VC maintenance)")
        if rave_prior < 0 or rave_prior % 2:
            raise ValueError("rave_prior must be an even number >= 0 (0: none)")
        self.vc_at = vc_at
        self.vcm_bonus = vcm_bonus
        self.rave_prior = rave_prior
        if plain_every < 0:
            raise ValueError("plain_every must be >= 0 (0: RAVE in every selection)")
        self.plain_every = plain_every
        if extend_unstable < 1.0:
            raise ValueError("extend_unstable must be >= 1 (1: never extend)")
        self.extend_unstable = extend_unstable
        self.stop_decided = stop_decided
        if value_at < 1 or value_visits < 0:
            raise ValueError("value_at must be >= 1 and value_visits >= 0 (0: no value network)")
        self.value = value
        self.value_at = value_at
        if route_at < 0:
            raise ValueError("route_at must be >= 0 (0: no route factor)")
        self.route_at = route_at
        if policy_at < 1:
            raise ValueError("policy_at must be >= 1")
        if policy_weight < 0.0:
            raise ValueError("policy_weight must be >= 0")
        if action_visits < 0:
            raise ValueError("action_visits must be >= 0 (0: none)")
        self.action_visits = action_visits
        if not 0.0 <= minimax_weight <= 1.0:
            raise ValueError("minimax_weight must be in [0, 1] (0: none)")
        self.minimax_weight = minimax_weight
        if not 0.0 <= value_mix <= 1.0:
            raise ValueError("value_mix must be in [0, 1] (0: none)")
        self.value_mix = value_mix
        if value_fade < 0.0:
            raise ValueError("value_fade must be >= 0 (0: the share value_mix everywhere)")
        self.value_fade = value_fade
        self.policy = policy
        self.policy_at = policy_at
        self.policy_weight = policy_weight
        self.value_visits = value_visits
        self.evaluator = evaluator
        self.params = params
        self.trees = []
        self.history = None
        self.K = rave_k
        self.exploration = exploration
        self.expand_at = expand_at
        self.know_at = know_at
        if progressive_bias < 0.0:
            raise ValueError("progressive_bias must be >= 0")
        self.progressive_bias = progressive_bias
        if not 0.0 <= prune_ratio < 1.0:
            raise ValueError("prune_ratio must be in [0, 1)")
        self.prune_ratio = prune_ratio
        self.pattern_weights = shipped_weights() if pattern_weights is SHIPPED \
            else pattern_weights
        self.swap_map = shipped_swap_map() if swap_map is SHIPPED else swap_map
        self.inferior = inferior
        if playout_gamma_cap < 0.0:
            raise ValueError("playout_gamma_cap must be >= 0 (0: uniform playouts)")
        self.playout_gamma_cap = playout_gamma_cap
        self.playout_fill_in = playout_fill_in
        self.playout_node_fill_in = playout_node_fill_in

    def clear(self) -> None:
        """Forgets the trees (a new game)."""
        self.trees = []
        self.history = None

    def _book(self, HexState s) -> tuple:
        """The swap map's word on ``s``: (its move, -1 when it has none and the search
        decides; whether the search leaves the swap out, the map keeping the stone)."""
        if self.swap_map is None:
            return -1, False
        if s.c_swap_legal():
            swaps = self.swap_map.swaps(s.n, s.hist_action[0])
            return (s.ncells if swaps else -1), swaps is False
        if s.swap_rule and s.nhist == 0 and s.n_empty == s.ncells:
            opening = self.swap_map.opening(s.n)
            return (-1 if opening is None else opening), False
        return -1, False

    def _trees_for(self, HexState s, bint swap_off):
        cdef RaveTree t
        cdef int threads = self.params.threads
        cdef long long budget = (<long long>self.params.hash_mb << 20) // threads
        history = s.history()
        path = None
        if (self.params.keep_tree and self.history is not None
                and history[:len(self.history)] == self.history):
            path = history[len(self.history):]
        self.history = history
        if (len(self.trees) != threads or (<RaveTree>self.trees[0]).n != s.n):
            path = None
            self.trees = [RaveTree(s.n, budget, 0, self.K, self.exploration, self.expand_at)
                          for _ in range(threads)]
            for i, t in enumerate(self.trees):
                try:
                    t.know = self.evaluator if i == 0 else self.evaluator.spawn()
                except TypeError:
                    t.know = None         # an evaluator that cannot be duplicated
            self._spawned_from = None     # new trees: their value networks are to give
        mixing = self.value_mix > 0.0 and isinstance(self.value, HeuristicEvaluator)
        if self._spawned_from is None or self._spawned_from[0] is not self.value \
                or self._spawned_from[1] != mixing:
            # the first tree values with the network itself, the others with copies; the
            # leaves with copies of their own, whose sums stay near the leaves' boards
            self._spawned_from = (self.value, mixing)
            for i, t in enumerate(self.trees):
                t.value = None if self.value is None else \
                    self.value if i == 0 else self.value.spawn()
                t.leaf = self.value.spawn() if mixing else None
        cdef uint64_t seed
        cdef HexPatterns pat = None
        if self.pattern_weights is not None and self.progressive_bias > 0.0:
            if self._patterns is None or self._patterns[0] != s.n \
                    or self._patterns[1] is not self.pattern_weights:
                self._patterns = (s.n, self.pattern_weights,
                                  HexPatterns(s.n, self.pattern_weights))
            pat = self._patterns[2]
        for i, t in enumerate(self.trees):
            seed = <uint64_t>self.params.seed * <uint64_t>0x9E3779B97F4A7C15 \
                + <uint64_t>(i + 1) * <uint64_t>0xD1B54A32D192ED03
            t.rng = seed
            t.K = self.K
            t.c_uct = self.exploration
            t.expand_at = self.expand_at
            t.know_at = self.know_at
            t.route_at = self.route_at
            t.policy = self.policy
            t.policy_at = self.policy_at
            t.policy_weight = self.policy_weight
            t.action_visits = self.action_visits
            t.minimax_weight = self.minimax_weight
            t.c_pb = self.progressive_bias
            t.prune_ratio = self.prune_ratio
            t.pat = pat
            t.pp = pat is not None and self.playout_gamma_cap > 0.0
            t.pp_cap = self.playout_gamma_cap
            if not self.inferior:
                t.inferior = None
            elif t.inferior is None or t.inferior.n != s.n:
                t.inferior = HexInferior(s.n)
            t.fill_playouts = self.playout_fill_in and t.inferior is not None
            t.node_fill = self.playout_node_fill_in and t.inferior is not None
            t.vc_at = self.vc_at
            t.vcm_bonus = self.vcm_bonus
            t.rave_prior = self.rave_prior
            t.plain_every = self.plain_every
            t.value_at = self.value_at
            t.value_visits = self.value_visits
            t.value_mix = self.value_mix
            t.value_fade = self.value_fade
            if self.vc_at <= 0 or s.n * s.n > VC_MAXCELLS:
                t.vc = None               # off, or a board past H-search's 256-bit carriers
            elif t.vc is None or t.vc.n != s.n:
                t.vc = HexVC(s.n)
            t.swap_off = swap_off
            if path is None or not t.reuse(s, path):
                t.reset(s)
        return self.trees

    def run(self, state, Stopper stopper) -> SearchResult:
        """Simulations from ``state`` until ``stopper`` fires or the root is proven.

        Blocks (without the GIL between polls); ``stopper.stop()`` from another thread
        ends it at the next poll. A search stopped before its first simulation (a stop
        already asked for, a spent clock) still runs one: no move without a search behind
        it. ``nodes`` counts the stones placed (tree and playouts), ``iterations`` the
        simulations. The state is not touched.
        """
        if not isinstance(state, HexState):
            raise ValueError("the rave search plays Hex only")
        cdef HexState s = <HexState>state
        if s.c_terminal():
            raise ValueError("cannot search a terminal state")
        book, swap_off = self._book(s)
        if book >= 0:
            return self._book_result(s, book, stopper)
        cdef RaveTree main
        cdef int k, polls = 0
        cdef long long sims, moves, lead = 0
        cdef bint done = False, extended = False, stopping, forced = False
        cdef double remaining, elapsed
        # An elastic clock (a main time or a Canadian block: the stopper's maximum is past
        # its target) keeps what one move does not spend for the next ones: only there is
        # an unstable search extended and a decided one stopped early. Under a fixed
        # move time or a one-stone byo-yomi every move simply spends its time.
        cdef bint elastic = stopper.max_time > stopper.time_limit > 0.0
        # the move's clock covers the tree's setup too (moving the kept subtree down and
        # the root's knowledge: tens of milliseconds late in an 11x11 game)
        stopper.c_start()
        trees = self._trees_for(s, swap_off)
        main = <RaveTree>trees[0]
        stop_flag = threading.Event()
        helpers = [threading.Thread(target=_help, args=(t, stop_flag), daemon=True)
                   for t in trees[1:]]
        for h in helpers:
            h.start()
        try:
            while True:
                sims = 0
                moves = 0
                for t in trees:
                    sims += (<RaveTree>t).sims
                    moves += (<RaveTree>t).moves
                stopping = stopper.c_check(moves, sims)
                if stopping and (sims > 0 or forced):
                    if (elastic and not extended and not done and stopper.reason == STOP_TIME
                            and self.extend_unstable > 1.0):
                        extended = True
                        if _root_lead(trees, &lead) and stopper.c_extend(self.extend_unstable):
                            continue
                    break
                if done:
                    stopper.c_finish(STOP_RESOLVED)
                    break
                polls += 1
                if elastic and self.stop_decided and polls % DECIDED_POLL == 0:
                    # the runner-up cannot catch the best even if every simulation left
                    # to the latest deadline went to it (MoHex's count abort)
                    elapsed = stopper.elapsed
                    remaining = stopper.c_remaining()
                    if elapsed >= DECIDED_AFTER and sims > 0:
                        _root_lead(trees, &lead)
                        if lead > sims / elapsed * remaining:
                            stopper.c_finish(STOP_DECIDED)
                            break
                k = CHUNK
                if stopper.max_iterations:
                    k = min(k, stopper.max_iterations - sims)
                if stopping:
                    # no move without a search behind it: a search stopped before its
                    # first simulation (a stop already asked for, a spent clock) still
                    # runs one, which follows the prior's best child
                    k = 1
                    forced = True
                with nogil:
                    main.run_chunk(k)
                if main.value_error is not None:
                    break
                done = main.nodes[0].proven != 0
        finally:
            stop_flag.set()
            for h in helpers:
                h.join()
        for t in trees:
            if (<RaveTree>t).value_error is not None:
                error, (<RaveTree>t).value_error = (<RaveTree>t).value_error, None
                raise ValueError(f"the value network failed: {error}") from error
        return self._result(stopper)

    def root_lead(self) -> tuple:
        """(the most visited root child's visits less the runner-up's, whether the search
        is unstable) over the trees of the last search: what the clock rules read."""
        cdef long long lead = 0
        if not self.trees:
            raise ValueError("no search has run")
        unstable = _root_lead(self.trees, &lead) == 1
        return int(lead), unstable

    def _subtree(self, path=()) -> tuple:
        """The first tree below ``path`` (moves from its root): (side to move,
        visits, children, proven); per child (move, visits, wins, AMAF visits, AMAF wins,
        pruned, its own subtree or None, prior, implicit minimax value, leaf values' sum),
        for the tests
        that hold a kept tree equal to the subtree it was cut from."""
        cdef RaveTree t = <RaveTree>self.trees[0]
        cdef int32_t idx = 0
        cdef int i
        for m in path:
            nd_first, nd_count = t.nodes[idx].first, t.nodes[idx].count
            idx = -1
            for i in range(nd_count):
                if t.children[nd_first + i].move == m:
                    idx = t.children[nd_first + i].node
            if idx < 0:
                raise ValueError(f"move {m} has no node below {list(path)}")
        return _subtree_of(t, idx)

    def _book_result(self, HexState s, int action, Stopper stopper):
        """The swap map's move, played without a search; its value is Black's score of
        the first stone (after the swap, White owns it)."""
        cdef int first = s.hist_action[0] if action == s.ncells else action
        score = self.swap_map.black_score(s.n, first)
        value = 2.0 * score - 1.0
        if action == s.ncells:
            value = -value
        stopper.c_start()
        stopper.c_finish(STOP_RESOLVED)
        return SearchResult(
            action=action, value=value, pv=[action], nodes=0, iterations=0, depth=0,
            time=stopper.elapsed, stop_reason="book", resolved=False, evaluations=0,
            children=[ChildStat(action, value, 0, False, None)])

    def _result(self, Stopper stopper):
        cdef RaveTree t0 = <RaveTree>self.trees[0]
        cdef RaveTree t
        cdef Child* ch
        cdef Node* root = &t0.nodes[0]
        cdef int i, j, count = root.count
        cdef int p = root.side
        sims = 0
        moves = 0
        depth = 0
        visits = {}
        wins = {}
        proven = {}
        for t in self.trees:
            sims += t.sims
            moves += t.moves
            depth = max(depth, t.max_depth)
            for j in range(t.nodes[0].count):
                ch = t.children + t.nodes[0].first + j
                visits[ch.move] = visits.get(ch.move, 0) + ch.n
                wins[ch.move] = wins.get(ch.move, 0) + ch.w
                pr = t.child_proven(ch)
                if pr == 0 and ch.pruned == INFERIOR and t.nodes[0].proven == -1:
                    pr = -1               # no better than the searched moves, all lost
                if pr != 0:
                    proven[ch.move] = pr
        order = [t0.children[root.first + j].move for j in range(count)]

        def rank(a):
            # a proven win first, proven losses last, then visits, then the mean
            pr = proven.get(a, 0)
            n = visits[a]
            return (pr, n, wins[a] / n if n else 0.0)

        best = max(order, key=rank)
        sign = 1.0 if p == 0 else -1.0
        children = []
        for a in order:
            n = visits[a]
            pr = proven.get(a, 0)
            if pr:
                v = float(pr)
            else:
                v = 2.0 * wins[a] / n - 1.0 if n else 0.0
            children.append(ChildStat(a, sign * v, n, pr != 0,
                                      (pr if p == 0 else -pr) if pr else None))
        root_proven = bool(t0.nodes[0].proven)
        value = next(c.value for c in children if c.action == best)
        return SearchResult(
            action=best, value=value, pv=self._pv(t0, best), nodes=moves, iterations=sims,
            depth=depth, time=stopper.elapsed, stop_reason=stopper.reason_name,
            resolved=root_proven, evaluations=0, children=children)

    cdef list _pv(self, RaveTree t, int best):
        """The best move, then the most visited child down the first tree."""
        cdef list pv = [best]
        cdef int32_t idx = 0
        cdef Node* nd
        cdef Child* ch
        cdef int i, bi
        nd = &t.nodes[0]
        idx = -1
        for i in range(nd.count):
            if t.children[nd.first + i].move == best:
                idx = t.children[nd.first + i].node
        while idx >= 0 and len(pv) < 32:
            nd = &t.nodes[idx]
            if nd.first < 0 or nd.count == 0:
                break
            bi = -1
            for i in range(nd.count):
                ch = t.children + nd.first + i
                if bi < 0 or ch.n > t.children[nd.first + bi].n:
                    bi = i
            ch = t.children + nd.first + bi
            if ch.n == 0:
                break
            pv.append(ch.move)
            idx = ch.node
        return pv


cdef tuple _subtree_of(RaveTree t, int32_t idx):
    cdef Node* nd = &t.nodes[idx]
    cdef Child* ch
    cdef int i
    out = []
    if nd.first >= 0:
        for i in range(nd.count):
            ch = t.children + nd.first + i
            out.append((ch.move, ch.n, ch.w, ch.rn, ch.rw, ch.pruned,
                        _subtree_of(t, ch.node) if ch.node >= 0 else None, ch.prior, ch.av,
                        ch.vw))
    return (nd.side, nd.visits, tuple(out), nd.proven)


def _help(RaveTree t, stop_flag) -> None:
    """A helper thread's loop: its own tree until the main search says stop."""
    while not stop_flag.is_set():
        with nogil:
            t.run_chunk(CHUNK)
        if t.nodes[0].proven != 0 or t.value_error is not None:
            break


# -- one simulation, exposed for the playout policy's tests ---------------------------------

def playout(HexState state, uint64_t seed, bint fill_in=False,
            bint node_fill_in=False) -> tuple:
    """One simulation from ``state``: one tree move, then the playout (with ``fill_in``
    from its inferior-cell fill-in, with ``node_fill_in`` from the one found when the
    root was expanded): (final cells, 0 empty / 1 black / 2 white, and whether Black won,
    by the playouts' own scoring)."""
    cdef RaveTree t = RaveTree(state.n, 1 << 16, seed, DEFAULT_RAVE_K, 0.0, 1 << 30)
    if fill_in or node_fill_in:
        t.inferior = HexInferior(state.n)
        t.fill_playouts = fill_in
        t.node_fill = node_fill_in
    t.reset(state)
    t.simulate()
    return [t.board[i] for i in range(state.ncells)], bool(t.c_black_wins())

