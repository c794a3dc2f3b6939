"""Rules benchmarks (pytest-benchmark): our kernels next to OpenSpiel in the same run.

Disabled by default (pyproject addopts), so the suite only checks that they run; measure
with ``python -m pytest tests/search_cy/games/test_rules_bench.py --benchmark-enable``.
Each round plays the same number of random games in both implementations (equal game
lengths on average), so the ratio of the two means in a group is the speed ratio.
"""

from __future__ import annotations

import random
from typing import Any

import pyspiel
import pytest

from descent.search_cy.games import playout
from descent.search_cy.games.registry import make_game

GAMES = 20
CASES = [
    ("hex(size=11,swap=false)", "hex", {"board_size": 11}),
    ("einstein(setup=random)", "einstein_wurfelt_nicht", {}),
]


def _openspiel_games(game: Any, rng: random.Random, n: int) -> int:
    visited = 0
    for _ in range(n):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
            else:
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
            visited += 1
    return visited


@pytest.mark.parametrize(("spec", "peer", "params"), CASES)
def test_bench_ours_c_playouts(benchmark: Any, spec: str, peer: str,
                               params: dict[str, Any]) -> None:
    benchmark.group = f"playouts {spec}"
    state = make_game(spec).new_initial_state()
    visited = benchmark(playout.random_playouts, state, GAMES, 42)
    assert visited >= GAMES


@pytest.mark.parametrize(("spec", "peer", "params"), CASES)
def test_bench_openspiel_playouts(benchmark: Any, spec: str, peer: str,
                                  params: dict[str, Any]) -> None:
    benchmark.group = f"playouts {spec}"
    game = pyspiel.load_game(peer, params)
    visited = benchmark(_openspiel_games, game, random.Random(42), GAMES)
    assert visited >= GAMES
