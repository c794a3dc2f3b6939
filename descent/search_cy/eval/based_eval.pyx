# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A value network that corrects a C heuristic instead of replacing it (nets/arch.py's
``base``), valued in C inside the search:

    v = scale * tanh(base_scale * atanh(clip(h, base_clip)) + r)

``h`` is the heuristic's value and ``r`` the network's raw output (before its tanh), both
in player 0's view. The model speaks for the side to move, but tanh and atanh are odd, so
the same sum in player 0's view is the model's value turned to player 0's: no side is
read here. With a zero head the value is the heuristic itself (a training run starts
there).

The heuristic reads a position, not its planes: this values states as a search queues
them (``c_heuristic``), and refuses a batch of planes (``forward``), so only the native
backend runs such a model.
"""
from libc.math cimport tanh, atanh, isfinite

import numpy as np

from descent.search_cy.games.state cimport GameState
from descent.search_cy.eval.evaluator cimport HeuristicEvaluator


cdef class BasedEvaluator(HeuristicEvaluator):
    """``network`` (an MLPEvaluator or NNUEEvaluator giving its raw output in player 0's
    view: no tanh, scale 1, bounds that never bind) on top of ``base`` (the game's C
    heuristic, player 0's view); ``scale``, ``lo`` and ``hi`` as for those evaluators."""

    cdef readonly HeuristicEvaluator network
    cdef readonly HeuristicEvaluator base
    cdef readonly double base_scale, base_clip, scale

    def __init__(self, HeuristicEvaluator network, HeuristicEvaluator base, *,
                 double base_scale, double base_clip, double scale=1.0, double lo=-1.0,
                 double hi=1.0):
        if network is None or base is None:
            raise ValueError("a network on a base needs both")
        if not lo < hi:
            raise ValueError("bounds need lo < hi")
        if not (0.0 < base_clip < 1.0 and isfinite(base_scale)):
            raise ValueError(f"base: scale {base_scale} must be finite and its clip "
                             f"{base_clip} within (0, 1)")
        self.network, self.base = network, base
        self.base_scale, self.base_clip, self.scale = base_scale, base_clip, scale
        self.lo, self.hi = lo, hi

    def spawn(self):
        """The same evaluator for another search thread (its parts spawned)."""
        return BasedEvaluator(self.network.spawn(), self.base.spawn(),
                              base_scale=self.base_scale, base_clip=self.base_clip,
                              scale=self.scale, lo=self.lo, hi=self.hi)

    @property
    def widths_(self) -> tuple:
        """The network's widths."""
        return self.network.widths_

    cdef double c_heuristic(self, GameState s) noexcept nogil:
        cdef double h = self.base.c_heuristic(s)
        cdef double v
        if h > self.base_clip:
            h = self.base_clip
        elif h < -self.base_clip:
            h = -self.base_clip
        v = self.scale * tanh(self.base_scale * atanh(h) + self.network.c_heuristic(s))
        if v < self.lo:
            return self.lo
        if v > self.hi:
            return self.hi
        return v

    def check_state(self, GameState s) -> None:
        """The network's check of ``s``, where it has one."""
        check = getattr(self.network, "check_state", None)
        if check is not None:
            check(s)

    def value(self, GameState s) -> float:
        """c_heuristic on ``s`` (checked): player 0's view."""
        self.check_state(s)
        return self.c_heuristic(s)

    def forward(self, batch) -> np.ndarray:
        """Refused: the heuristic under the network reads positions, not planes."""
        raise ValueError("a network on the C heuristic values positions inside a search: "
                         "the heuristic reads positions, not a batch of planes")
