"""Action selection for learning (Cohen-Solal 2020): the ordinal distribution against its
formula and by sampling (chi-square goodness of fit), epsilon-greedy and softmax
frequencies, the completed variant (resolved wins taken, resolved losses excluded),
player 1's view, the annealing schedule and the configuration's validation."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from descent.search_cy.search.api import ChildStat, SearchResult
from descent.search_cy.search.selection import (
    METHODS,
    SelectionConfig,
    annealed_epsilon,
    ordinal_probabilities,
    select_action,
)
from tests.helpers.stats import chi2_critical

SAMPLES = 20_000

def assert_fits(counts: dict[int, int], probs: dict[int, float]) -> None:
    """Chi-square goodness of fit at p = 0.001 of observed ``counts`` to ``probs`` (by
    action). Cells of probability 0 must be empty; cells whose expected count is below 5
    are pooled into one."""
    n = sum(counts.values())
    assert set(counts) <= set(probs), f"unexpected actions {set(counts) - set(probs)}"
    for a, p in probs.items():
        if p == 0.0:
            assert counts.get(a, 0) == 0, f"action {a} of probability 0 was drawn"
    cells = [(counts.get(a, 0), n * p) for a, p in probs.items() if p > 0.0]
    big = [(o, e) for o, e in cells if e >= 5.0]
    small = [(o, e) for o, e in cells if e < 5.0]
    if small:
        big.append((sum(o for o, _ in small), sum(e for _, e in small)))
    if len(big) < 2:
        return
    observed = np.array([o for o, _ in big], dtype=np.float64)
    expected = np.array([e for _, e in big], dtype=np.float64)
    stat = float(((observed - expected) ** 2 / expected).sum())
    crit = chi2_critical(len(big) - 1)
    assert stat < crit, f"chi-square {stat:.2f} >= {crit:.2f}: {counts} vs {probs}"


def result_of(children: list[tuple[int, float, bool]], action: int | None = None,
              visits: list[int] | None = None) -> SearchResult:
    stats = [ChildStat(a, v, (visits[k] if visits else 10), r)
             for k, (a, v, r) in enumerate(children)]
    if action is None:
        action = stats[0].action
    return SearchResult(action=action, value=0.0, pv=[action], nodes=1, iterations=1,
                        depth=1, time=0.0, stop_reason="iterations", resolved=False,
                        children=stats)


def draw(result: SearchResult, player: int, method: str, n: int, *, seed: int = 7,
         epsilon: float = 0.0, temperature: float = 1.0, completed: bool = True
         ) -> Counter[int]:
    rng = np.random.default_rng(seed)
    return Counter(select_action(result, player, method, rng, epsilon=epsilon,
                                 temperature=temperature, completed=completed)
                   for _ in range(n))


# children given in a scrambled order; from player 0's view the ranking is 40, 10, 30,
# 20, 50, 60 (values 0.9, 0.5, 0.2, -0.1, -0.4, -0.8)
SCRAMBLED = [(20, -0.1, False), (50, -0.4, False), (10, 0.5, False), (60, -0.8, False),
             (40, 0.9, False), (30, 0.2, False)]
RANK_P0 = [40, 10, 30, 20, 50, 60]


# ---------------------------------------------------------------------------- ordinal

@pytest.mark.parametrize("n", [1, 2, 3, 7, 16])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3, 0.5, 0.9, 1.0])
def test_ordinal_probabilities_match_the_formula(n: int, eps: float) -> None:
    probs = ordinal_probabilities(n, eps)
    assert probs.shape == (n,)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(probs >= 0.0)
    taken = 0.0
    for i in range(n):
        expected = (eps + (1 - eps) / (n - i)) * (1 - taken)
        assert probs[i] == pytest.approx(expected, abs=1e-12)
        taken += expected
    # better ranks are never less likely
    assert np.all(np.diff(probs) <= 1e-12)


def test_ordinal_limits() -> None:
    np.testing.assert_allclose(ordinal_probabilities(5, 1.0), [1, 0, 0, 0, 0])
    np.testing.assert_allclose(ordinal_probabilities(5, 0.0), [0.2] * 5)
    np.testing.assert_allclose(ordinal_probabilities(1, 0.4), [1.0])
    # by hand, n = 3, eps = 0.5: 0.5 + 0.5/3, then (0.5 + 0.25) of the rest, then the rest
    p0 = 0.5 + 0.5 / 3
    p1 = 0.75 * (1 - p0)
    np.testing.assert_allclose(ordinal_probabilities(3, 0.5), [p0, p1, 1 - p0 - p1])
    with pytest.raises(ValueError):
        ordinal_probabilities(0, 0.5)
    with pytest.raises(ValueError):
        ordinal_probabilities(3, 1.5)


@pytest.mark.parametrize("eps", [0.0, 0.2, 0.6])
def test_ordinal_sampling_fits_the_distribution(eps: float) -> None:
    result = result_of(SCRAMBLED)
    counts = draw(result, 0, "ordinal", SAMPLES, epsilon=eps)
    probs = ordinal_probabilities(len(RANK_P0), eps)
    assert_fits(counts, dict(zip(RANK_P0, probs.tolist(), strict=True)))


def test_ordinal_for_player_1_uses_negated_values() -> None:
    result = result_of(SCRAMBLED)
    counts = draw(result, 1, "ordinal", SAMPLES, epsilon=0.4)
    probs = ordinal_probabilities(len(RANK_P0), 0.4)
    assert_fits(counts, dict(zip(RANK_P0[::-1], probs.tolist(), strict=True)))
    assert counts.most_common(1)[0][0] == 60


def test_ordinal_eps_one_is_always_the_best() -> None:
    result = result_of(SCRAMBLED)
    assert set(draw(result, 0, "ordinal", 500, epsilon=1.0)) == {40}
    assert set(draw(result, 1, "ordinal", 500, epsilon=1.0)) == {60}


# ------------------------------------------------------------- best, greedy, softmax

def test_best_follows_the_mover() -> None:
    rng = np.random.default_rng(0)
    result = result_of(SCRAMBLED)
    assert select_action(result, 0, "best", rng, epsilon=0.0) == 40
    assert select_action(result, 1, "best", rng, epsilon=0.0) == 60


def test_ties_go_to_the_search_decision_then_visits() -> None:
    rng = np.random.default_rng(0)
    tied = [(1, 0.3, False), (2, 0.3, False), (3, 0.3, False), (4, -0.2, False)]
    assert select_action(result_of(tied, action=3), 0, "best", rng, epsilon=0.0) == 3
    assert select_action(result_of(tied, action=4, visits=[5, 9, 7, 1]), 0, "best", rng,
                         epsilon=0.0) == 2
    assert select_action(result_of(tied, action=4), 0, "best", rng, epsilon=0.0) == 1


@pytest.mark.parametrize("player", [0, 1])
@pytest.mark.parametrize("eps", [0.0, 0.25, 1.0])
def test_epsilon_greedy_frequencies(player: int, eps: float) -> None:
    result = result_of(SCRAMBLED)
    ranking = RANK_P0 if player == 0 else RANK_P0[::-1]
    counts = draw(result, player, "epsilon_greedy", SAMPLES, epsilon=eps)
    n = len(ranking)
    probs = {a: eps / n for a in ranking}
    probs[ranking[0]] += 1.0 - eps
    assert_fits(counts, probs)


@pytest.mark.parametrize("player", [0, 1])
@pytest.mark.parametrize("temperature", [0.2, 1.0, 5.0])
def test_softmax_frequencies(player: int, temperature: float) -> None:
    result = result_of(SCRAMBLED)
    sign = 1.0 if player == 0 else -1.0
    weights = {a: math.exp(sign * v / temperature) for a, v, _ in SCRAMBLED}
    total = sum(weights.values())
    counts = draw(result, player, "softmax", SAMPLES, epsilon=0.0, temperature=temperature)
    assert_fits(counts, {a: w / total for a, w in weights.items()})


def test_softmax_is_stable_at_tiny_temperatures() -> None:
    result = result_of(SCRAMBLED)
    counts = draw(result, 0, "softmax", 200, epsilon=0.0, temperature=1e-6)
    assert set(counts) == {40}


# ---------------------------------------------------------------------------- completed

WIN_P0 = [(1, 0.2, False), (2, -1.0, True), (3, 1.0, True), (4, 0.6, False),
          (5, -1.0, True), (6, 0.9, False)]


@pytest.mark.parametrize("method,epsilon,temperature", [
    ("ordinal", 0.0, 1.0),
    ("epsilon_greedy", 1.0, 1.0),
    ("softmax", 0.0, 100.0),
    ("best", 0.0, 1.0),
])
def test_a_resolved_win_is_always_taken(method: str, epsilon: float,
                                        temperature: float) -> None:
    # the search's own decision is elsewhere: only the completed rule picks 3
    counts = draw(result_of(WIN_P0, action=6), 0, method, 1000, epsilon=epsilon,
                  temperature=temperature)
    assert set(counts) == {3}
    # player 1: the same with values negated
    negated = [(a, -v, r) for a, v, r in WIN_P0]
    counts = draw(result_of(negated, action=6), 1, method, 1000, epsilon=epsilon,
                  temperature=temperature)
    assert set(counts) == {3}


def test_the_best_of_several_resolved_wins() -> None:
    wins = [(1, 0.2, False), (2, 1.0, True), (3, 1.0, True), (4, 0.6, False)]
    assert set(draw(result_of(wins, action=3), 0, "ordinal", 200, epsilon=0.0)) == {3}
    assert set(draw(result_of(wins, action=1, visits=[1, 5, 2, 1]), 0, "ordinal", 200,
                    epsilon=0.0)) == {2}


def test_unresolved_or_uncompleted_wins_are_not_forced() -> None:
    unresolved = [(a, v, False) for a, v, _ in WIN_P0]
    counts = draw(result_of(unresolved), 0, "ordinal", 2000, epsilon=0.0)
    assert set(counts) == {a for a, _, _ in WIN_P0}
    counts = draw(result_of(WIN_P0), 0, "ordinal", 2000, epsilon=0.0, completed=False)
    assert set(counts) == {a for a, _, _ in WIN_P0}
    # a resolved win of player 0 is a resolved loss of player 1
    counts = draw(result_of(WIN_P0), 1, "ordinal", 2000, epsilon=0.0)
    assert 3 not in counts


LOSSES_P0 = [(1, 0.2, False), (2, -1.0, True), (3, -0.5, False), (4, -1.0, True),
             (5, -1.0, False)]


@pytest.mark.parametrize("method,epsilon,temperature", [
    ("ordinal", 0.0, 1.0),
    ("epsilon_greedy", 1.0, 1.0),
    ("softmax", 0.0, 100.0),
])
def test_resolved_losses_are_never_chosen(method: str, epsilon: float,
                                          temperature: float) -> None:
    counts = draw(result_of(LOSSES_P0), 0, method, 2000, epsilon=epsilon,
                  temperature=temperature)
    # an unresolved -1 stays a candidate; only resolved losses go
    assert set(counts) == {1, 3, 5}
    negated = [(a, -v, r) for a, v, r in LOSSES_P0]
    counts = draw(result_of(negated), 1, method, 2000, epsilon=epsilon,
                  temperature=temperature)
    assert set(counts) == {1, 3, 5}
    # without the completed variant they come back
    counts = draw(result_of(LOSSES_P0), 0, method, 2000, epsilon=epsilon,
                  temperature=temperature, completed=False)
    assert set(counts) == {1, 2, 3, 4, 5}


def test_uniform_draws_among_the_survivors() -> None:
    counts = draw(result_of(LOSSES_P0), 0, "ordinal", SAMPLES, epsilon=0.0)
    assert_fits(counts, {1: 1 / 3, 3: 1 / 3, 5: 1 / 3})


def test_all_resolved_losses_stay_candidates() -> None:
    lost = [(1, -1.0, True), (2, -1.0, True), (3, -1.0, True)]
    counts = draw(result_of(lost), 0, "ordinal", 3000, epsilon=0.0)
    assert_fits(counts, {1: 1 / 3, 2: 1 / 3, 3: 1 / 3})
    lost_p1 = [(a, 1.0, True) for a, _, _ in lost]
    assert set(draw(result_of(lost_p1), 1, "epsilon_greedy", 3000, epsilon=1.0)) == {1, 2, 3}


# -------------------------------------------------------------------- edges and config

def test_results_without_children() -> None:
    rng = np.random.default_rng(0)
    bare = SearchResult(action=5, value=0.0, pv=[5], nodes=1, iterations=1, depth=1,
                        time=0.0, stop_reason="iterations", resolved=False)
    for method in METHODS:
        assert select_action(bare, 0, method, rng, epsilon=0.5) == 5
    terminal = SearchResult(action=-1, value=1.0, pv=[], nodes=0, iterations=0, depth=0,
                            time=0.0, stop_reason="resolved", resolved=True)
    with pytest.raises(ValueError):
        select_action(terminal, 0, "ordinal", rng, epsilon=0.5)


def test_bad_arguments() -> None:
    rng = np.random.default_rng(0)
    result = result_of(SCRAMBLED)
    with pytest.raises(ValueError, match="method"):
        select_action(result, 0, "greedy", rng, epsilon=0.5)
    with pytest.raises(ValueError, match="player"):
        select_action(result, 2, "best", rng, epsilon=0.5)
    with pytest.raises(ValueError, match="epsilon"):
        select_action(result, 0, "ordinal", rng, epsilon=-0.1)
    with pytest.raises(ValueError, match="temperature"):
        select_action(result, 0, "softmax", rng, epsilon=0.0, temperature=0.0)


def test_deterministic_for_a_seed() -> None:
    result = result_of(SCRAMBLED)
    assert draw(result, 0, "ordinal", 300, seed=3, epsilon=0.2) == \
        draw(result, 0, "ordinal", 300, seed=3, epsilon=0.2)


def test_annealed_epsilon() -> None:
    assert annealed_epsilon(0.0) == 0.0
    assert annealed_epsilon(1.0) == 1.0
    assert annealed_epsilon(0.25) == pytest.approx(0.25)
    assert annealed_epsilon(-3.0) == 0.0
    assert annealed_epsilon(7.0) == 1.0
    assert annealed_epsilon(0.5, start=0.2, end=0.8) == pytest.approx(0.5)
    assert annealed_epsilon(0.5, start=1.0, end=0.0) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        annealed_epsilon(float("nan"))


def test_selection_config() -> None:
    config = SelectionConfig("ordinal", epsilon=1.0)
    result = result_of(SCRAMBLED)
    assert config.select(result, 0, np.random.default_rng(0)) == 40
    assert SelectionConfig().completed is True
    with pytest.raises(ValueError, match="method"):
        SelectionConfig("greedy", 0.1)
    with pytest.raises(ValueError, match="epsilon"):
        SelectionConfig("ordinal", 1.5)
    with pytest.raises(ValueError, match="temperature"):
        SelectionConfig("softmax", 0.0, temperature=-1.0)
    with pytest.raises(ValueError, match="temperature"):
        SelectionConfig("softmax", 0.0, temperature=float("inf"))
    with pytest.raises(ValueError, match="completed"):
        SelectionConfig("best", 0.0, completed="yes")  # type: ignore[arg-type]



def _flagged(children: list[tuple[int, float, bool, int | None]]) -> SearchResult:
    stats = [ChildStat(a, v, 1, r, o) for a, v, r, o in children]
    return SearchResult(action=children[0][0], value=0.0, pv=[children[0][0]], nodes=1,
                        iterations=1, depth=1, time=0.0, stop_reason="nodes",
                        resolved=False, children=stats)


@pytest.mark.parametrize("method", ["ordinal", "softmax", "epsilon_greedy", "best"])
def test_completion_reads_the_resolution_flags_not_the_value(method: str) -> None:
    # a depth heuristic: the proven win is worth 0.4, less than an open child's 0.6, and
    # the proven loss -0.3; the flags say what they are
    rng = np.random.default_rng(0)
    for player, sign in ((0, 1), (1, -1)):
        result = _flagged([(1, sign * 0.6, False, None), (2, sign * 0.4, True, sign),
                           (3, sign * -0.3, True, -sign)])
        for _ in range(20):
            assert select_action(result, player, method, rng, epsilon=0.0) == 2
        # without the win, the proven loss is never drawn, whatever the exploration
        rest = _flagged([(1, sign * 0.6, False, None), (3, sign * -0.3, True, -sign),
                         (4, sign * -0.5, False, None)])
        drawn = {select_action(rest, player, method, rng, epsilon=0.0, temperature=50.0)
                 for _ in range(200)}
        assert 3 not in drawn
    # a resolved child whose outcome is neither side's (a draw, or chance outcomes that
    # differ) is an ordinary candidate, even valued 1
    mixed = _flagged([(1, 0.2, False, None), (2, 1.0, True, 0)])
    assert select_action(mixed, 0, "best", rng, epsilon=1.0) == 2
    assert select_action(mixed, 1, "best", rng, epsilon=1.0) == 1
