"""Shared fixtures: seeded RNGs and helpers to walk random games through the Python API."""

from __future__ import annotations

import random
from collections.abc import Iterator

from descent.search_cy.games.sampling import random_action
from descent.search_cy.games.state import GameState


def random_game(state: GameState, rng: random.Random, max_steps: int = 10_000) -> Iterator[int]:
    """Apply random actions until the end; yields each action after applying it."""
    steps = 0
    while not state.is_terminal() and steps < max_steps:
        action = random_action(state, rng)
        state.apply_action(action)
        steps += 1
        yield action
