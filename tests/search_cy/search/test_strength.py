"""Rminimax strength levels: parsing names and numbers, "max" playing the search's own
decision, the softmax fallback for searches without ``rminimax_policy``, and, on real
UBFM_s searches of Hex 4x4, a strong level finding the winning move far more often than
"random", which plays close to uniformly."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

from descent.search_cy.eval.evaluator import ZeroEvaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import ChildStat, SearchParams, SearchResult, make_search
from descent.search_cy.search.bestfirst import BestFirstSearch
from descent.search_cy.search.stopper import Stopper
from descent.search_cy.search.strength import (
    GAME_LEVELS,
    STRENGTH_LEVELS,
    THETA_MAX,
    THETA_MIN,
    choose_move,
    numeric_theta,
    parse_strength,
)
from tests.helpers.stats import chi2_critical


def chi2_stat(counts: Counter[int], probs: dict[int, float]) -> float:
    n = sum(counts.values())
    observed = np.array([counts.get(a, 0) for a in probs], dtype=np.float64)
    expected = np.array([n * p for p in probs.values()], dtype=np.float64)
    return float(((observed - expected) ** 2 / expected).sum())


# --------------------------------------------------------------------------- parsing

def test_named_levels() -> None:
    assert parse_strength("max") is None
    assert parse_strength(" MAX ") is None
    for name, theta in STRENGTH_LEVELS.items():
        assert parse_strength(name) == theta
        assert parse_strength(name.upper()) == theta
    assert parse_strength("random") == 1e-3
    assert parse_strength("master") == 150.0
    thetas = list(STRENGTH_LEVELS.values())
    assert thetas == sorted(thetas)


def test_calibrated_levels_name_every_level_in_order() -> None:
    # each calibrated table (a game, or a game and its search) gives every named level a
    # theta, weakest first, and parse_strength reads the table of the game and search
    for key, table in GAME_LEVELS.items():
        assert list(table) == list(STRENGTH_LEVELS), key
        thetas = list(table.values())
        assert thetas == sorted(thetas) and len(set(thetas)) == len(thetas), key
        game, _, search = key.partition(":")
        for name, theta in table.items():
            assert parse_strength(name, game, search or None) == theta
    # a search without a table of its own: the game's table, else the general levels
    assert parse_strength("novice", "einstein", "mcts") == GAME_LEVELS["einstein"]["novice"]
    assert parse_strength("novice", "hex", "descent") == STRENGTH_LEVELS["novice"]
    assert parse_strength("novice", "hex", "ubfms") == GAME_LEVELS["hex:ubfms"]["novice"]
    assert parse_strength("novice", "hex", "rave") == GAME_LEVELS["hex:rave"]["novice"]


def test_numeric_levels_are_geometric() -> None:
    assert parse_strength("0") == pytest.approx(THETA_MIN)
    assert parse_strength("20") == pytest.approx(THETA_MAX)
    assert parse_strength("10") == pytest.approx(math.sqrt(THETA_MIN * THETA_MAX))
    thetas = [parse_strength(str(k)) for k in range(21)]
    values = [t for t in thetas if t is not None]
    assert len(values) == 21
    ratios = [b / a for a, b in zip(values, values[1:], strict=False)]
    assert ratios == pytest.approx([(THETA_MAX / THETA_MIN) ** (1 / 20)] * 20)
    assert numeric_theta(7) == parse_strength("07")
    with pytest.raises(ValueError):
        numeric_theta(21)


@pytest.mark.parametrize("bad", ["", "foo", "21", "-1", "1.5", "maximum", "inf", "none"])
def test_invalid_levels(bad: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_strength(bad)
    message = str(info.value)
    for name in ("random", "master", "max", "0..20"):
        assert name in message


# ----------------------------------------------------------------------- choose_move

class NoPolicySearch:
    """A search without rminimax_policy (the fallback path)."""


class ExplodingSearch:
    def rminimax_policy(self, state: GameState, theta: float) -> list[tuple[int, float]]:
        raise AssertionError("max must not randomise")


def fake_result(action: int, children: list[tuple[int, float]]) -> SearchResult:
    return SearchResult(action=action, value=0.0, pv=[action], nodes=1, iterations=1,
                        depth=1, time=0.0, stop_reason="iterations", resolved=False,
                        children=[ChildStat(a, v, 1, False) for a, v in children])


def test_max_plays_the_search_decision() -> None:
    state = make_game("hex(size=3)").new_initial_state()
    result = fake_result(4, [(0, 0.9), (4, 0.1)])
    rng = np.random.default_rng(0)
    assert choose_move(ExplodingSearch(), state, result, "max", rng) == 4
    assert choose_move(NoPolicySearch(), state, result, "MAX", rng) == 4
    with pytest.raises(ValueError):
        choose_move(NoPolicySearch(), state, result, "grandmaster", rng)


@pytest.mark.parametrize("player", [0, 1])
@pytest.mark.parametrize("level", ["beginner", "casual", "5"])
def test_fallback_softmax_over_children(player: int, level: str) -> None:
    state = make_game("hex(size=3)").new_initial_state()
    if player == 1:
        state.apply_move("b2")
    assert state.current_player() == player
    children = [(0, 0.5), (1, -0.2), (2, 0.1), (3, -0.6)]
    result = fake_result(0, children)
    theta = parse_strength(level)
    assert theta is not None
    sign = 1.0 if player == 0 else -1.0
    weights = {a: math.exp(sign * theta * v) for a, v in children}
    total = sum(weights.values())
    probs = {a: w / total for a, w in weights.items()}
    rng = np.random.default_rng(11)
    counts = Counter(choose_move(NoPolicySearch(), state, result, level, rng)
                     for _ in range(20_000))
    assert chi2_stat(counts, probs) < chi2_critical(len(probs) - 1)


# ------------------------------------------------------------- real searches (Hex 4x4)

def searched(moves: list[str]) -> tuple[Any, GameState, SearchResult]:
    state = make_game("hex(size=4)").new_initial_state()
    for move in moves:
        state.apply_move(move)
    runner = make_search("ubfms", ZeroEvaluator(), SearchParams(hash_mb=8))
    result = runner.run(state, Stopper(iterations=300))
    return runner, state, result


# Hex 4x4 positions where 300 UBFM_s iterations of the zero evaluator prove a win for the
# side to move through exactly one child (from the empty board every child stays at 0 and
# every level plays uniformly, so the initial position cannot tell levels apart)
POSITIONS = [
    ["a2", "c4", "c2", "d1", "a4", "c1"],        # player 0 to move, 10 children
    ["a3", "a4", "d4", "a1", "c1", "b4", "c4"],  # player 1 to move, 9 children
]


@pytest.mark.parametrize("moves", POSITIONS)
def test_strong_levels_find_the_win_random_plays_uniformly(moves: list[str]) -> None:
    runner, state, result = searched(moves)
    mover = state.current_player()
    sign = 1 if mover == 0 else -1
    wins = [c.action for c in result.children if c.resolved and sign * c.value >= 1.0]
    assert result.resolved and wins == [result.action]
    n = len(result.children)
    assert n >= 8

    def freq(search: Any, level: str, seed: int) -> Counter[int]:
        rng = np.random.default_rng(seed)
        return Counter(choose_move(search, state, result, level, rng) for _ in range(300))

    assert set(freq(runner, "max", 0)) == {result.action}
    for search in (runner, runner.impl):  # the runner or its BestFirstSearch
        strong = freq(search, "master", 1)
        expert = freq(search, "expert", 2)
        weak = freq(search, "random", 3)
        assert strong[result.action] >= 290
        assert expert[result.action] >= 270
        assert weak[result.action] <= 80
        assert strong[result.action] > 3 * weak[result.action]
        legal = {c.action for c in result.children}
        assert set(weak) <= legal and len(weak) >= n - 1
        uniform = {c.action: 1.0 / n for c in result.children}
        assert chi2_stat(weak, uniform) < chi2_critical(n - 1)
    # the state is left as it was
    assert [state.action_to_string(a) for a in state.history()] == moves


def test_the_bestfirst_search_directly() -> None:
    state = make_game("hex(size=4)").new_initial_state()
    for move in POSITIONS[0]:
        state.apply_move(move)
    search = BestFirstSearch(ZeroEvaluator(), SearchParams(hash_mb=8), mode="ubfms")
    result = search.run(state, Stopper(iterations=300))
    rng = np.random.default_rng(5)
    picks = Counter(choose_move(search, state, result, "20", rng) for _ in range(300))
    assert picks[result.action] >= 290


def test_fallback_values_a_child_by_its_lower_confidence_bound() -> None:
    # a child tried once that happened to win against the best move, well explored: a
    # strong level plays the explored one; the random level still spreads over both
    state = make_game("hex(size=3)").new_initial_state()
    result = SearchResult(action=4, value=0.1, pv=[4], nodes=1, iterations=1, depth=1,
                          time=0.0, stop_reason="iterations", resolved=False,
                          children=[ChildStat(0, 1.0, 1, False), ChildStat(4, 0.1, 500, False)])
    rng = np.random.default_rng(3)
    strong = Counter(choose_move(NoPolicySearch(), state, result, "master", rng)
                     for _ in range(200))
    assert strong[4] == 200
    weak = Counter(choose_move(NoPolicySearch(), state, result, "random", rng)
                   for _ in range(400))
    assert 150 < weak[0] < 250
