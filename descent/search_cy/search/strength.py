"""Playing strength levels by Rminimax: the search runs as usual, then the move is drawn
from the randomised minimax policy with inverse temperature ``theta`` (values in
[-1, 1]): small ``theta`` plays nearly uniformly, large ``theta`` nearly the minimax move,
and level ``"max"`` plays the search's own decision without randomisation.

Levels are names (``STRENGTH_LEVELS``) or integers ``"0"`` to ``"20"`` on a geometric
scale between ``THETA_MIN = 1e-3`` and ``THETA_MAX = 150``::

    theta(k) = THETA_MIN * (THETA_MAX / THETA_MIN) ** (k / 20)

so ``"0"`` is ``"random"`` (1e-3), ``"20"`` is ``"master"`` (150), and each step
multiplies ``theta`` by ``(150 / 1e-3) ** (1 / 20)``, about 1.81.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchResult

THETA_MIN = 1e-3
THETA_MAX = 150.0
NUMERIC_LEVELS = 20

STRENGTH_LEVELS: dict[str, float] = {
    "random": 1e-3,
    "beginner": 1.0,
    "novice": 2.5,
    "casual": 5.0,
    "intermediate": 10.0,
    "advanced": 25.0,
    "expert": 60.0,
    "master": 150.0,
}

MAX_LEVEL = "max"


def numeric_theta(k: int) -> float:
    """``theta`` of numeric level ``k`` in 0..20 (geometric between 1e-3 and 150)."""
    if not 0 <= k <= NUMERIC_LEVELS:
        raise ValueError(f"numeric strength must be in 0..{NUMERIC_LEVELS}; got {k}")
    if k == NUMERIC_LEVELS:
        return THETA_MAX
    return float(THETA_MIN * (THETA_MAX / THETA_MIN) ** (k / NUMERIC_LEVELS))


def valid_levels() -> list[str]:
    return [*STRENGTH_LEVELS, MAX_LEVEL, f"0..{NUMERIC_LEVELS}"]


def parse_strength(text: str) -> float | None:
    """``theta`` of a strength level, or None for ``"max"`` (no randomisation).
    Names are case-insensitive; ValueError lists the valid levels on bad input."""
    key = str(text).strip().lower()
    if key == MAX_LEVEL:
        return None
    if key in STRENGTH_LEVELS:
        return STRENGTH_LEVELS[key]
    if key.isdigit():
        k = int(key)
        if 0 <= k <= NUMERIC_LEVELS:
            return numeric_theta(k)
    raise ValueError(
        f"unknown strength level {text!r}; valid: {', '.join(valid_levels())}")


def _policy_from_children(
    result: SearchResult, player: int, theta: float
) -> list[tuple[int, float]]:
    """Softmax with inverse temperature ``theta`` over the root children's values from
    the mover's view: the fallback for searches without ``rminimax_policy``."""
    if not result.children:
        raise ValueError("the result has no children statistics to randomise over")
    sign = 1.0 if player == 0 else -1.0
    z = np.array([sign * theta * c.value for c in result.children], dtype=np.float64)
    w = np.exp(z - z.max())
    p = w / w.sum()
    return [(c.action, float(q)) for c, q in zip(result.children, p, strict=True)]


def choose_move(
    search: Any,
    state: GameState,
    result: SearchResult,
    level: str,
    rng: np.random.Generator,
) -> int:
    """The move to play at ``level`` after ``search`` searched ``state`` into ``result``.

    ``"max"``: ``result.action``. Otherwise the Rminimax policy of ``search`` (an object
    with ``rminimax_policy(state, theta)``, e.g. ``BestFirstSearch``, or a ``SearchRunner``
    whose ``impl`` has it) is sampled with ``rng``; a search without it falls back to a
    softmax with inverse temperature ``theta`` over ``result.children`` values from the
    side to move's view."""
    theta = parse_strength(level)
    if theta is None or math.isinf(theta):
        return result.action
    policy_fn = getattr(search, "rminimax_policy", None)
    if policy_fn is None:
        policy_fn = getattr(getattr(search, "impl", None), "rminimax_policy", None)
    if policy_fn is not None:
        policy: list[tuple[int, float]] = list(policy_fn(state, theta))
    else:
        policy = _policy_from_children(result, state.current_player(), theta)
    if not policy:
        return result.action
    actions = [a for a, _ in policy]
    probs = np.array([p for _, p in policy], dtype=np.float64)
    probs /= probs.sum()
    return int(actions[int(rng.choice(len(actions), p=probs))])
