"""Action selection for learning by self-play, after Cohen-Solal, "Learning to play
two-player perfect-information games without knowledge" (2020), section on action
selection: best, epsilon-greedy, softmax and ordinal distributions over the root's
children, each with an optional "completed" variant.

Called once per move, so plain Python over the few children of a root suffices::

    action = select_action(result, state.current_player(), "ordinal", rng, epsilon=0.3)

Values of ``SearchResult.children`` are player 0's view; ``player`` is the side to move:
player 0 maximises them, player 1 minimises them, so every rule below works on the
*mover's view* ``v = value`` (player 0) or ``v = -value`` (player 1).

Ranking. Children are ranked best-first by mover-view value; ties go first to the
search's own decision ``result.action``, then to more visits, then to the order of
``result.children``.

Completed variant (``completed=True``, the default):

* a proven win for the mover is always taken - the best-ranked one (with a depth
  heuristic, the quickest) - whatever the method and its parameters;
* proven losses are removed from the candidates, unless every child is one, in which
  case all stay.

A child is proven won or lost by the search's resolution flags (``ChildStat.outcome``:
under a depth heuristic, or in a determinized game, a proven win is worth less than 1).
Where a search gives no outcome, a resolved child with a mover-view value ``>= 1 - 1e-9``
(``<= -1 + 1e-9``) counts as won (lost): the gain terminal's values.

The random methods then draw among the remaining candidates only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from descent.search_cy.search.api import ChildStat, SearchResult

METHODS: tuple[str, ...] = ("best", "epsilon_greedy", "softmax", "ordinal")

WIN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class SelectionConfig:
    """How a learner picks its moves: one of ``METHODS`` with its parameters.

    ``epsilon`` is the exploration rate of epsilon-greedy (probability of a uniform
    move) or the ``eps`` of the ordinal distribution (1: always the best; 0: uniform);
    ``temperature`` is the softmax temperature (> 0); ``completed`` switches on the
    completed variant (see the module docstring)."""

    method: str = "ordinal"
    epsilon: float = 0.0
    temperature: float = 1.0
    completed: bool = True

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}; got {self.method!r}")
        if not (isinstance(self.epsilon, int | float) and 0.0 <= self.epsilon <= 1.0):
            raise ValueError(f"epsilon must be in [0, 1]; got {self.epsilon!r}")
        if not (isinstance(self.temperature, int | float) and self.temperature > 0.0
                and math.isfinite(self.temperature)):
            raise ValueError(f"temperature must be finite and > 0; got {self.temperature!r}")
        if not isinstance(self.completed, bool):
            raise ValueError(f"completed must be a bool; got {self.completed!r}")

    def select(self, result: SearchResult, player: int, rng: np.random.Generator) -> int:
        return select_action(result, player, self.method, rng, epsilon=self.epsilon,
                             temperature=self.temperature, completed=self.completed)


def annealed_epsilon(progress: float, start: float = 0.0, end: float = 1.0) -> float:
    """Simulated-annealing schedule: ``start + (end - start) * progress`` with ``progress``
    (the fraction of training done) clamped to [0, 1]. The paper's ordinal schedule
    raises ``eps`` from 0 (uniform exploration) to 1 (always the best move)."""
    if math.isnan(progress):
        raise ValueError("progress must not be NaN")
    p = min(1.0, max(0.0, progress))
    return start + (end - start) * p


def ordinal_probabilities(n: int, eps: float) -> npt.NDArray[np.float64]:
    """Probabilities of the ordinal distribution (Algorithm 12) over ``n`` children ranked
    best-first: ``P(c_i) = (eps + (1 - eps) / (n - i)) * (1 - sum_{j<i} P(c_j))``, i.e.
    walking down the ranking, stop at rank ``i`` with probability
    ``eps + (1 - eps) / (n - i)``; the last one takes the rest.
    ``eps = 1``: ``[1, 0, ..., 0]``; ``eps = 0``: uniform."""
    if n < 1:
        raise ValueError("n must be >= 1")
    if not 0.0 <= eps <= 1.0:
        raise ValueError("eps must be in [0, 1]")
    probs = np.zeros(n, dtype=np.float64)
    remaining = 1.0
    for i in range(n):
        stop = eps + (1.0 - eps) / (n - i)  # 1 when i = n - 1
        probs[i] = stop * remaining
        remaining -= probs[i]
    return probs


def _ranked(
    children: list[ChildStat], sign: float, decided: int
) -> list[tuple[float, ChildStat]]:
    order = sorted(
        range(len(children)),
        key=lambda k: (-sign * children[k].value, children[k].action != decided,
                       -children[k].visits, k))
    return [(sign * children[k].value, children[k]) for k in order]


def _softmax(values: npt.NDArray[np.float64], temperature: float) -> npt.NDArray[np.float64]:
    z = values / temperature
    w = np.exp(z - z.max())
    out: npt.NDArray[np.float64] = w / w.sum()
    return out


def _proven(child: ChildStat, mover_value: float, sign: float) -> int:
    """+1 when ``child`` is a proven win for the mover, -1 a proven loss, else 0."""
    if not child.resolved:
        return 0
    if child.outcome is not None:
        return int(math.copysign(1, sign * child.outcome)) if child.outcome else 0
    if mover_value >= 1.0 - WIN_TOLERANCE:
        return 1
    return -1 if mover_value <= -1.0 + WIN_TOLERANCE else 0


def select_action(
    result: SearchResult,
    player: int,
    method: str,
    rng: np.random.Generator,
    *,
    epsilon: float,
    temperature: float = 1.0,
    completed: bool = True,
) -> int:
    """The action to play from ``result`` for the side to move ``player`` (0 or 1).

    ``method``:

    * ``"best"``: the best-ranked child;
    * ``"epsilon_greedy"``: with probability ``epsilon`` a uniformly random candidate
      (the best included), else the best;
    * ``"softmax"``: ``P(a) ∝ exp(v(a) / temperature)`` with ``v`` the mover's view;
    * ``"ordinal"``: the ordinal distribution with ``eps = epsilon`` over the ranking
      (see ``ordinal_probabilities``).

    With ``completed`` (default) a resolved win for the mover is always taken and
    resolved losses are excluded unless all children are resolved losses (see the module
    docstring). With no children statistics, ``result.action`` is returned if it is a
    move (>= 0), else ValueError.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1; got {player!r}")
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1]; got {epsilon!r}")
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0; got {temperature!r}")
    if not result.children:
        if result.action < 0:
            raise ValueError("the result has no move to choose (terminal root)")
        return result.action

    sign = 1.0 if player == 0 else -1.0
    ranked = _ranked(result.children, sign, result.action)

    if completed:
        for v, child in ranked:
            if _proven(child, v, sign) > 0:
                return child.action
        kept = [(v, c) for v, c in ranked if _proven(c, v, sign) >= 0]
        if kept:
            ranked = kept

    n = len(ranked)
    if method == "best" or n == 1:
        return ranked[0][1].action
    if method == "epsilon_greedy":
        if rng.random() < epsilon:
            return ranked[int(rng.integers(n))][1].action
        return ranked[0][1].action
    if method == "softmax":
        values = np.array([v for v, _ in ranked], dtype=np.float64)
        probs = _softmax(values, temperature)
    else:  # ordinal
        probs = ordinal_probabilities(n, epsilon)
    return ranked[int(rng.choice(n, p=probs))][1].action
