# cython: language_level=3
"""Expectiminimax's node routines (``_expectimax_nodes.pyx``): the search's state, its
buffers, and one routine per node type; the driver (iterative deepening, the root, Lazy
SMP) is ``expectimax.pyx``'s ``Expectiminimax``, a subclass."""
from libc.stdint cimport uint64_t

from descent.search_cy.games.state cimport GameState, CHANCE
from descent.search_cy.eval.evaluator cimport Evaluator, HeuristicEvaluator
from descent.search_cy.search.stopper cimport Stopper
from descent.search_cy.search.ttable cimport TranspositionTable

cdef enum:
    HIST_SIZE = 32768          # history table per player, indexed by action & (size - 1)
    POLL_EVERY = 256           # nodes between two stopper polls
    DBL_BLOCKS = 7             # double arrays per recursion level (cap + 1 each)


cdef struct Buffers:
    # every array of a search in one allocation (buffers_alloc, buffers_free)
    char* block                # the allocation
    int levels, cap, batch_cap # recursion levels; actions or outcomes of one node;
                               # grandchildren of one chance node (outcomes x actions)
    # per recursion level (stride cap for ints, DBL_BLOCKS x (cap + 1) doubles)
    int* acts                  # a node's actions or outcomes
    int* scores                # their ordering scores
    double* dbl                # probabilities, bounds, values (and char flags in a block)
    # the root
    int* root_acts
    double* root_probs
    double* it_vals            # an iteration's value of each root action
    char* it_res               # ... resolved
    long long* it_visits       # ... its nodes
    # the chance batch: every grandchild of one chance node (outcomes x moves)
    int* b_acts
    double* b_vals             # the grandchildren's values (terminal, or flushed)
    double* b_flushed          # the evaluator's values of the non-terminal ones
    char* b_term
    int* b_count               # each outcome's moves in the batch
    char* b_kind               # what the batch does with each outcome (B_VALUED ...)
    uint64_t* b_key            # each batched outcome's table key


cdef int buffers_alloc(Buffers* b, int levels, int cap, int batch_cap) except -1
cdef void buffers_free(Buffers* b) noexcept nogil


cdef class ExpectiNodes:
    cdef readonly Evaluator evaluator
    cdef HeuristicEvaluator heur
    cdef readonly bint heuristic_path
    cdef readonly TranspositionTable tt
    cdef readonly bint use_tt
    cdef readonly bint exact_depth
    cdef int star, kind, levels
    cdef double max_plies, L, U, eps
    cdef bint ply_in_key
    cdef bint helper                     # a Lazy SMP helper: the table is not its own

    # state of the current run
    cdef GameState s
    cdef Stopper stopper
    cdef long long nodes, next_poll, max_nodes, evals
    cdef int iterations
    cdef int root_player
    cdef bint aborted
    cdef object error

    cdef Buffers buf
    cdef unsigned int history[2 * HIST_SIZE]

    cdef int _ensure_buffers(self, int cap, int batch_cap) except -1
    cdef bint _may_stop(self) noexcept nogil
    cdef void _poll(self) noexcept nogil
    cdef double _leaf(self) noexcept nogil
    cdef double _leaf_batch(self) noexcept with gil
    cdef void _order(self, int p, int* acts, int* scores, int n, int tt_move) noexcept nogil
    # player nodes
    cdef double _search(self, int depth, double alpha, double beta, int level,
                        bint* res) noexcept nogil
    cdef double _player(self, int p, int depth, double alpha, double beta, int level,
                        bint* res) noexcept nogil
    # the batch evaluator's flushes
    cdef int _add_children(self, int* acts, int n, double* vals, char* term,
                           int* applied) except -1
    cdef void _scatter(self, double* vals, char* term, int n, double* flushed) noexcept nogil
    cdef bint _batch_children(self, int* acts, int n, int level) noexcept nogil
    cdef void _flush(self, int pending, double* flushed) except *
    cdef bint _abort(self, BaseException exc, int applied)
    cdef int _batch_outcome(self, int i, int off, int level, bint* allres,
                            int* applied) except -1
    cdef bint _batch_outcomes(self, int n, int level, bint* allres) noexcept nogil
    cdef void _batched_players(self, int n, int level, bint* allres) noexcept nogil
    # chance nodes
    cdef double _chance(self, int depth, double alpha, double beta, int level,
                        bint* res) noexcept nogil
    cdef double _probe(self, int q, int depth, double a, double b, int level,
                       bint* res) noexcept nogil
    cdef int _star2(self, uint64_t key, int depth, double alpha, double beta, int level,
                    int n, bint* allres, double* value, bint* res) noexcept nogil


cdef inline uint64_t node_key(ExpectiNodes t) noexcept nogil:
    """The table key of the current state (with a depth heuristic, the ply mixed in)."""
    if t.ply_in_key:
        return t.s.c_hash() ^ (<uint64_t>t.s._ply * <uint64_t>0x9E3779B97F4A7C15)
    return t.s.c_hash()


cdef inline void count_node(ExpectiNodes t) noexcept nogil:
    """One more node; the stopper is polled every POLL_EVERY."""
    t.nodes += 1
    if t.nodes >= t.next_poll:
        t._poll()


cdef inline bint extreme(ExpectiNodes t, int p, double value) noexcept nogil:
    """A value the player to move cannot improve on (a proven win, up to rounding):
    a resolved child with it resolves the node whatever its siblings are."""
    if p == 0:
        return value >= t.U - t.eps
    return value <= t.L + t.eps
