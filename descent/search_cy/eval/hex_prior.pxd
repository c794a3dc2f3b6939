# cython: language_level=3
from libc.stdint cimport int8_t, int16_t, int32_t

from descent.search_cy.games.hex_patterns cimport HexPatterns
from descent.search_cy.games.hex_inferior cimport HexInferior

cdef enum:
    LOST_BY_KNOWLEDGE = 1 # a child proven to lose by knowledge (outside a mustplay)
    SKIPPED_BY_PRIOR = 2  # a child the prior leaves out (prior pruning), not proven
    INFERIOR = 3          # an inferior cell (dead, captured or vulnerable): never searched


cdef struct Child:
    # one move of a search node: the search's statistics beside the prior's word on it,
    # in one record (a selection reads one)
    int32_t node          # index of the child's node, -1 before it is created
    int16_t move          # cell, or ncells for the swap
    int8_t pruned         # LOST_BY_KNOWLEDGE, SKIPPED_BY_PRIOR or INFERIOR, else 0
    int8_t fill           # an inferior cell's fill-in colour (1 Black, 2 White), else 0
    int32_t n, w          # visits and wins of the player to move at the parent
    int32_t rn, rw        # AMAF visits and wins
    float prior           # the patterns' probability of the move (1/count without them)
    float av              # a network's value of the move for the player to move at the
                          # parent, as a win probability, backed up by implicit minimax
                          # (-1: none)
    float vw              # the value network's leaf values below the move, summed as win
                          # probabilities of that player (one a visit, virtual visits at
                          # their odds; rave's value_mix)


cdef void expansion_prior(Child* ch, int k, const int8_t* board, int side, int last,
                          bint swap, HexPatterns pat, HexInferior inferior, int8_t* labels,
                          double prune_ratio, int ncells) noexcept nogil
cdef void prune_by_prior(Child* ch, int count, double prune_ratio, int ncells) noexcept nogil
cdef void scale_prior(Child* ch, int count, const double* factor, double prune_ratio,
                      int ncells, bint skip) noexcept nogil
cdef void mustplay(Child* ch, int count, const int8_t* keep, bint keep_inferior) noexcept nogil
cdef bint probes(const int16_t* vcm, int npairs, int m) noexcept nogil
cdef void vcm_boost(Child* kids, int count, const int16_t* vcm, int npairs, int m,
                    double bonus) noexcept nogil
