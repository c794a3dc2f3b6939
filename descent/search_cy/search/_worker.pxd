# cython: language_level=3
"""A best-first search thread's buffers and the valuation of an expansion's children
(_worker.pyx). One worker is the serial search; bestfirst.pyx runs one per thread."""
from libc.stdint cimport uint64_t, int8_t, int32_t, int64_t

from descent.search_cy.games.state cimport GameState
from descent.search_cy.games.zobrist cimport splitmix64
from descent.search_cy.eval.evaluator cimport Evaluator, HeuristicEvaluator

cdef enum:
    MAX_PATH = 4096      # deeper lines are cut: the node at the cut is a leaf


ctypedef struct Worker:
    # one search thread's own buffers (cap actions) and counters
    int* acts
    double* probs
    double* vals
    double* out          # a batch evaluator's values (cap + 1: the MCTS leaf first), or
    #                      the children's from one pass over their parent (c_children)
    int8_t* term         # 0: valued; 1, 2, 3: terminal, resolved with c = -1, 0, 1
    int8_t* keep         # the evaluator's knowledge: the actions that may avoid a loss
    int64_t* path_node
    int32_t* path_child
    uint64_t rng
    long long nodes
    long long evaluations
    long long batches
    double leaf_value
    int max_depth


ctypedef struct Rules:
    # what the valuation of children needs of the search's parameters
    bint mcts            # the expanded state itself is valued too (the simulation)
    int terminal_kind
    double max_plies
    uint64_t det_seed    # > 0: a chance state has the one outcome this seed fixes


cdef inline double uniform(uint64_t* rng) noexcept nogil:
    return (splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0)


cdef inline int8_t sign_of(double x) noexcept nogil:
    return 1 if x > 0.0 else (-1 if x < 0.0 else 0)


cdef Worker* new_workers(int n, int cap) except NULL
cdef void free_workers(Worker* workers, int n) noexcept
cdef void reset_workers(Worker* workers, int n, uint64_t rng) noexcept
cdef int settle_workers(Worker* workers, int n, list evaluators, bint heuristic) except -1
cdef int worker_actions(Worker* w, GameState s, uint64_t det_seed) noexcept nogil
cdef int value_heuristic(Worker* w, GameState s, HeuristicEvaluator hev, Rules* rules,
                         int n) noexcept nogil
cdef int value_batch(Worker* w, GameState s, Evaluator ev, Rules* rules, int n) except -1
