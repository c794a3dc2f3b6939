# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The best-first searches' Hex evaluator on a policy network's value heads: every child
of an expansion valued by one pass over its parent (MoHex 3HNN's action values).

UBFM_s values each child of the state it expands. With a value network that is one
evaluation a child; a network with an action-value head (nets/arch.py ``policy_value``)
gives the value of playing every cell from one pass over the parent, so an expansion of
a hundred children costs one network pass (``c_children``). The swap, which the head
does not value, is valued by the position value on the child.

The VC evaluator beside it keeps what it proves: ``c_heuristic`` (one state: the root,
MCTS's leaf, the swap's child) returns its connection value when it finds a virtual
connection, else the network's position value; its knowledge and route codes are the
VC evaluator's, and the move priors that break ties at the final choice are the
network's logits. Learned values are scaled by the VC evaluator's clip (0.97), so a
proven connection (0.99) stays above every one of them.
"""
from libc.math cimport NAN, fabs
from libc.stdint cimport int8_t
from libc.stdlib cimport malloc, free

import numpy as np

from descent.search_cy.games.state cimport GameState
from descent.search_cy.games.hex cimport HexState
from descent.search_cy.eval.evaluator cimport HeuristicEvaluator
from descent.search_cy.eval.hex_policy cimport HexPolicy

from descent.search_cy.eval.hex_eval import VC_VALUES as _VC

cdef double SCALE = _VC["clip"]    # learned values stay below a proof
cdef double PROVEN = _VC["win"]    # the VC evaluator found a connection


cdef class HexActionEvaluator(HeuristicEvaluator):
    """Values Hex states for the best-first searches with ``policy``'s value heads (a
    HexPolicy with ``has_values``), the VC evaluator ``base`` beside it. One instance
    serves one thread (its scratch is its own); ``spawn`` makes another on the same
    network."""

    cdef readonly HexPolicy policy
    cdef readonly HeuristicEvaluator base
    cdef float* scratch
    cdef float* actions

    def __cinit__(self, HexPolicy policy not None, HeuristicEvaluator base not None):
        if not policy.has_values:
            raise ValueError("this policy network has no value heads: the best-first "
                             "searches read its action values")
        self.policy = policy
        self.base = base
        self.lo = base.lo
        self.hi = base.hi
        self.scratch = <float*>malloc(policy.c_scratch_floats() * sizeof(float))
        self.actions = <float*>malloc(policy.n * policy.n * sizeof(float))
        if self.scratch == NULL or self.actions == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.scratch)
        free(self.actions)

    def spawn(self):
        """An evaluator for another search thread: the same network, its own scratch."""
        return HexActionEvaluator(self.policy, self.base.spawn())

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        return self._value(<HexState>s)

    cdef double _value(self, HexState s) noexcept nogil:
        cdef double v = self.base.c_heuristic(s)
        cdef float value = 0.0
        if fabs(v) >= PROVEN or s.n != self.policy.n:
            return v
        if self.policy.c_forward(s, NULL, NULL, &value, self.scratch) < 0:
            return v
        return SCALE * value if s.side == 0 else -SCALE * value

    cdef bint c_children(self, GameState s, int n, const int* actions,
                         double* out) noexcept nogil:
        return self._children(<HexState>s, n, actions, out)

    cdef bint _children(self, HexState s, int n, const int* actions,
                        double* out) noexcept nogil:
        cdef int i, a
        cdef double sign = SCALE if s.side == 0 else -SCALE
        if s.n != self.policy.n:
            return False
        if self.policy.c_forward(s, NULL, self.actions, NULL, self.scratch) < 0:
            return False
        for i in range(n):
            a = actions[i]
            out[i] = sign * self.actions[a] if 0 <= a < s.ncells else NAN
        return True

    cdef int c_knowledge(self, GameState s, int8_t* keep) noexcept nogil:
        return self.base.c_knowledge(s, keep)

    cdef bint c_move_codes(self, GameState s, int8_t* codes) noexcept nogil:
        return self.base.c_move_codes(s, codes)

    def move_priors(self, GameState s):
        """The network's logit of each legal action (the swap last): ties at the final
        choice go to the move the policy prefers."""
        cdef HexState h = <HexState>s
        if h.n != self.policy.n:
            return self.base.move_priors(s)
        logits = self.policy.logits(h)
        return [float(logits[a]) if a < h.ncells else -np.inf for a in s.legal_actions()]
