"""Playing strength levels by Rminimax: the search runs as usual, then the move is drawn
from Rminimax's randomised policy (rminimax.pyx, the paper's eq. 10-11) with inverse
temperature ``theta`` on values where a win is 1: small ``theta`` plays nearly uniformly,
large ``theta`` nearly the minimax move, and level ``"max"`` plays the search's own
decision without randomisation.

Levels are names (``STRENGTH_LEVELS``, calibrated per game in ``GAME_LEVELS``), integers
``"0"`` to ``"20"``, or ``"theta=X"`` for any ``X > 0`` (what calibration ladders use).
The integers lie on a geometric scale between ``THETA_MIN = 1e-3`` and
``THETA_MAX = 150``::

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

# Each game's named levels, calibrated with tools/ladder.py (docs/engine.md, "Strength
# levels"; the ladders: docs/results/papers.md, "The calibrated levels"):
# the games differ in how far apart their moves' values lie, so one theta is not one
# strength everywhere. Keys are "game" or "game:search" (the more specific wins); a game
# without an entry uses STRENGTH_LEVELS.
GAME_LEVELS: dict[str, dict[str, float]] = {
    # ladders of numeric levels and max (docs/results/papers.md, the numeric ladders),
    # read at equal Elo steps from random to max; the dice games at 1000 nodes a move
    "dicechess": {"random": 0.001, "beginner": 0.53, "novice": 1.604, "casual": 2.246,
                  "intermediate": 4.42, "advanced": 10.95, "expert": 18.19, "master": 64.4},
    "einstein": {"random": 0.001, "beginner": 0.5936, "novice": 2.133, "casual": 3.824,
                 "intermediate": 6.307, "advanced": 10.23, "expert": 18.21, "master": 37.71},
    # Hex 11x11 with rave (the one-ply tree), 200,000 stones a move
    "hex:rave": {"random": 0.001, "beginner": 0.5738, "novice": 0.9359, "casual": 1.341,
            "intermediate": 1.807, "advanced": 2.467, "expert": 3.577, "master": 7.956},
    # Hex 11x11 with UBFM_s (its stored tree) over the C heuristic, 20,000 nodes a move
    # (docs/results/papers.md). A network's values are read on the same scale (a win is 1,
    # rminimax.pyx), so UBFM_s with a network or a policy's action values (at 11x11 by
    # default, eval/hex_actions.pyx) uses them too, though they were measured over the
    # heuristic's. Other Hex searches keep STRENGTH_LEVELS.
    "hex:ubfms": {"random": 0.001, "beginner": 0.1785, "novice": 1.213, "casual": 4.519,
                  "intermediate": 6.686, "advanced": 14.49, "expert": 26.0, "master": 54.24},
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
    return [*STRENGTH_LEVELS, MAX_LEVEL, f"0..{NUMERIC_LEVELS}", "theta=X (X > 0)"]


def parse_strength(text: str, game: str | None = None,
                   search: str | None = None) -> float | None:
    """``theta`` of a strength level, or None for ``"max"`` (no randomisation): a named
    level's calibrated value for ``game`` (a registry name) played by ``search``
    (GAME_LEVELS), else the general one (STRENGTH_LEVELS). Names are case-insensitive;
    ValueError lists the valid levels on bad input."""
    key = str(text).strip().lower()
    if key == MAX_LEVEL:
        return None
    if key in STRENGTH_LEVELS:
        table = GAME_LEVELS.get(f"{game}:{search}") or GAME_LEVELS.get(game or "") or {}
        return table.get(key, STRENGTH_LEVELS[key])
    if key.isdigit():
        k = int(key)
        if 0 <= k <= NUMERIC_LEVELS:
            return numeric_theta(k)
    if key.startswith("theta="):
        try:
            theta = float(key[len("theta="):])
        except ValueError:
            theta = math.nan
        if math.isfinite(theta) and theta > 0:
            return theta
    raise ValueError(
        f"unknown strength level {text!r}; valid: {', '.join(valid_levels())}")


def value_scale(search: Any, state: GameState) -> float:
    """What a win is worth in ``search``'s values: ``P + 1`` under the depth heuristics
    (terminal values in plies), 1 otherwise (values within [-1, 1])."""
    params = getattr(search, "params", None)
    if params is None or getattr(params, "terminal", "gain") not in ("depth_add", "depth_mul"):
        return 1.0
    return float((params.max_plies or state.game.max_game_length) + 1)


def arc_cost(search: Any, state: GameState) -> float:
    """The paper's unit cost a move, on the scale where a win is worth ``P + 1`` moves
    (``P`` the game's maximum length, as for the additive depth heuristic): ``1 / (P + 1)``
    in values where a win is 1. A path's moves then cost less than a win is worth, and
    the randomised player prefers the quicker of two equal ends."""
    params = getattr(search, "params", None)
    longest = getattr(params, "max_plies", 0) or state.game.max_game_length
    return 1.0 / (float(longest) + 1.0)


# The one-ply tree of searches that keep no minimax tree (MCTS, RAVE) values a child by
# a lower confidence bound, its mean less CONFIDENCE / sqrt(visits + 1): a move tried
# once that happened to win is not a move the search can vouch for (RAVE's root, 200,000
# stones into an 11x11 game, holds 1-visit children at +-1 beside a best move at 0.04).
CONFIDENCE = 2.0


def _policy_from_children(
    result: SearchResult, player: int, theta: float, scale: float
) -> list[tuple[int, float]]:
    """Rminimax over the one-ply tree of the root's children (each a leaf; the moves'
    equal cost cancels), valued by a lower confidence bound on the mover's value: the
    randomised policy for searches that keep no tree (``rminimax_policy``)."""
    if not result.children:
        raise ValueError("the result has no children statistics to randomise over")
    sign = 1.0 if player == 0 else -1.0
    z = np.array([theta * (sign * c.value / scale - CONFIDENCE / math.sqrt(c.visits + 1))
                  for c in result.children], dtype=np.float64)
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

    ``"max"``: ``result.action``. Otherwise Rminimax's randomised policy (rminimax.pyx) is
    sampled with ``rng``: over ``search``'s stored tree (best-first searches) or its
    full-width tree (expectiminimax), through the search's ``rminimax_policy`` (on
    ``search`` or a ``SearchRunner``'s ``impl``), with ``theta`` applied to values where a
    win is 1 and the unit cost a move of ``arc_cost``; a search without it (MCTS, RAVE)
    randomises over the root's children values, the one-ply tree."""
    theta = parse_strength(level, getattr(state.game, "name", None),
                           getattr(search, "name", None))
    if theta is None or math.isinf(theta):
        return result.action
    impl = search if hasattr(search, "rminimax_policy") else getattr(search, "impl", None)
    policy_fn = getattr(impl, "rminimax_policy", None)
    owner = search if hasattr(search, "params") else impl
    scale = value_scale(owner, state)
    if policy_fn is not None:
        policy: list[tuple[int, float]] = list(
            policy_fn(state, theta, arc_cost(owner, state), scale))
    else:
        policy = _policy_from_children(result, state.current_player(), theta, scale)
    if not policy:
        return result.action
    actions = [a for a, _ in policy]
    probs = np.array([p for _, p in policy], dtype=np.float64)
    probs /= probs.sum()
    return int(actions[int(rng.choice(len(actions), p=probs))])
