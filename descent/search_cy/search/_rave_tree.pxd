# cython: language_level=3
from libc.stdint cimport int8_t, int16_t, int32_t

from descent.search_cy.games.hex cimport HexState
from descent.search_cy.games.hex_playout cimport HexPlayout
from descent.search_cy.games.hex_vc cimport HexVC
from descent.search_cy.eval.hex_prior cimport Child
from descent.search_cy.eval.evaluator cimport Evaluator
from descent.search_cy.eval.hex_policy cimport HexPolicy

cdef enum:
    MAXPATH = 640
    KNOWN_GREEDY = 1      # Node.known: the evaluator's knowledge was applied
    KNOWN_VC = 2          # Node.known: H-search's knowledge was applied
    KNOWN_VCM = 4         # Node.known: and its VC maintenance, with the children visited
    KNOWN_VALUE = 8       # Node.known: the value network's virtual visits were given
    KNOWN_ROUTE = 16      # Node.known: the route factor was applied to the children's prior
    KNOWN_POLICY = 32     # Node.known: the policy network weighed the children's prior


cdef struct Node:
    int32_t first         # index of the first child, -1 before expansion
    int16_t count         # children
    int8_t side           # player to move: 0 black, 1 white
    int8_t proven         # 0 unknown, +1 the player to move wins, -1 it loses
    int8_t known          # KNOWN_GREEDY | KNOWN_VC ...: which knowledge was applied here
    int32_t visits
    float value           # the value network's word on it as Black's chance (value_mix;
                          # -1: not asked): a node is a walk's end until it is expanded


cdef struct Walk:
    # one simulation's way down the tree
    int ne                # empty cells on the board
    int depth             # moves on the path
    int side              # player to move
    int last              # the last stone placed, -1 when none
    int32_t leaf          # the node the playout starts from (-1: none)
    int32_t filled        # the deepest expanded node passed (its fill-in)
    int proven_winner     # the winner where the walk ended on a proof, else -1


cdef class RaveTree(HexPlayout):
    cdef Node* nodes
    cdef Child* children
    cdef long long node_cap, child_cap, n_nodes, n_children
    cdef int root_side, root_first    # root_first: Black's stone the swap moves, else -1
    cdef bint root_swap
    cdef bint swap_off                # the swap map says not to swap: no swap child
    cdef int32_t path_node[MAXPATH]
    cdef int32_t path_child[MAXPATH]
    cdef double K, c_uct, c_pb, prune_ratio
    cdef bint node_fill               # playouts start from the last expanded node's fill-in
    cdef int root_last                # the root's last stone, -1 when none
    cdef int expand_at, know_at
    cdef Evaluator know               # knowledge (c_knowledge) at nodes of know_at visits
    cdef HexState pos                 # the root position, moved along a path for knowledge
    cdef Evaluator value              # a value network valuing children at value_at visits
    cdef bint value_in_c              # ... computed in C without the GIL (an mlp model)
    cdef int value_at, value_visits
    cdef bint use_value
    cdef double value_mix             # the share of the leaf values' mean in a child's score
    cdef double value_fade            # ... halved at a child of this many visits (0: kept)
    cdef bint use_mix                 # ... and whether they are read (a network in C)
    cdef Evaluator leaf               # value's copy that values them (its own sums: the
                                      # Hex nnue moves them between consecutive boards)
    cdef double* vbuf                 # the values of a node's children, one batch
    cdef int* vslot                   # each child's place in it, -1 for none
    cdef object value_error           # what a batch network raised (run raises it)
    cdef int8_t* keep
    cdef bint use_know
    cdef int route_at                 # the prior's route factor at nodes of route_at visits
    cdef bint use_route
    cdef int8_t* codes                # the evaluator's route codes of a node's cells
    cdef HexPolicy policy             # a move-policy network at nodes of policy_at visits
    cdef int policy_at
    cdef double policy_weight         # the power of its probabilities in the prior
    cdef int action_visits            # virtual visits at its action values (0: none)
    cdef double minimax_weight        # the share of their implicit minimax in a child's score
    cdef float* actions               # its action values of a node's cells
    cdef bint use_policy
    cdef float* probs                 # its probabilities of a node's cells
    cdef float* net_scratch           # its scratch memory (net_scratch_floats floats)
    cdef size_t net_scratch_floats
    cdef double* factor               # a factor of each cell on the prior (scale_prior)
    cdef HexVC vc                     # H-search knowledge at nodes of vc_at visits
    cdef int vc_at
    cdef bint use_vc
    cdef double vcm_bonus             # VC maintenance: prior added to a probe's answers
    cdef int rave_prior               # virtual AMAF visits at even odds of every child
    cdef int plain_every              # one selection in this many by the plain mean
    cdef int16_t* vcm                 # its (probe, answer, x, y) pairs
    cdef int8_t* scratch              # a board after one more stone
    cdef public long long sims, max_depth, vc_calls
    cdef public bint full

    # the tree's memory
    cdef void reset(self, HexState s)
    cdef void _root_wins(self) noexcept
    cdef bint reuse(self, HexState s, list path)
    cdef bint _compact(self, int32_t root)
    cdef void _root_facts(self, HexState s)
    cdef int32_t _new_node(self, int side) noexcept nogil
    cdef bint _expand(self, int32_t idx, const int8_t* board, int side, int last) noexcept nogil
    # knowledge at a node
    cdef bint _node_knowledge(self, int32_t idx, int depth, int side) noexcept nogil
    cdef void _pos_down(self, int depth) noexcept nogil
    cdef void _pos_up(self, int depth) noexcept nogil
    cdef void _knowledge(self, int32_t idx, int depth) noexcept nogil
    cdef void _route_prior(self, int32_t idx, int depth) noexcept nogil
    cdef void _policy_prior(self, int32_t idx, int depth) noexcept nogil
    cdef void _value_prior(self, int32_t idx, int depth, int side) noexcept nogil
    cdef int _value_batch(self, int32_t idx) noexcept
    cdef void _apply_knowledge(self, int32_t idx, int code, bint keep_inferior) noexcept nogil
    cdef void _vc_knowledge(self, int32_t idx, const int8_t* board, int side) noexcept nogil
    cdef void _maintain(self, int32_t idx, const int8_t* board, int side) noexcept nogil
    # one simulation
    cdef int _select(self, int32_t idx) noexcept nogil
    cdef int simulate(self) noexcept nogil
    cdef void _descend(self, Walk* w) noexcept nogil
    cdef void _play_child(self, Child* ch, Walk* w) noexcept nogil
    cdef int _leaf_playout(self, Walk* w) noexcept nogil
    cdef double _leaf_value(self, Walk* w) noexcept nogil
    cdef void _backup(self, int depth, int winner, double black) noexcept nogil
    cdef void _prove(self, int32_t idx) noexcept nogil
    cdef void run_chunk(self, int k) noexcept nogil
    # reading the tree
    cdef int child_proven(self, Child* ch) noexcept
