"""Seeded random choices over the kernel interface (test positions, benchmarks, referees):
kernels never draw random numbers themselves."""

from __future__ import annotations

import random

from descent.search_cy.games.state import GameState


def sample_outcome(state: GameState, rng: random.Random) -> int:
    """A chance outcome of ``state`` drawn by its probability."""
    outcomes = state.chance_outcomes()
    return rng.choices([a for a, _ in outcomes], weights=[p for _, p in outcomes])[0]


def random_action(state: GameState, rng: random.Random) -> int:
    """A uniformly random legal move, or a chance outcome drawn by its probability."""
    if state.is_chance_node():
        return sample_outcome(state, rng)
    return rng.choice(state.legal_actions())
