"""The tuners (tools/tuners.py) on a toy objective with a known optimum: a match between
two weight sets is a noisy game whose expected result grows with the difference of a
concave strength function; each tuner must end near the optimum, deterministically."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from descent.tools.tuners import METHODS, Param, tune

OPTIMUM = {"x": 0.7, "y": -2.0, "z": 30.0}
PARAMS = [Param("x", 0.2, 0.0, 1.0, 0.05), Param("y", 0.0, -5.0, 5.0, 0.5),
          Param("z", 10.0, 0.0, 60.0, 3.0)]


def strength(w: Mapping[str, float]) -> float:
    return -sum(((w[p.name] - OPTIMUM[p.name]) / p.step) ** 2 for p in PARAMS) / 8.0


class NoisyMatch:
    """``games`` games, each won with probability logistic(strength difference)."""

    def __init__(self, games: int, seed: int) -> None:
        self.games = games
        self.rng = np.random.default_rng(seed)
        self.calls = 0

    def __call__(self, a: Mapping[str, float], b: Mapping[str, float]) -> float:
        self.calls += 1
        p = 1.0 / (1.0 + math.exp(-(strength(a) - strength(b))))
        wins = int(self.rng.binomial(self.games, p))
        return (2 * wins - self.games) / self.games


def distance_in_steps(w: Mapping[str, float]) -> float:
    return max(abs(w[p.name] - OPTIMUM[p.name]) / p.step for p in PARAMS)


# hill climbing accepts a neighbour on one noisy match, so it settles less closely
@pytest.mark.parametrize("method,iterations,within", [("spsa", 400, 1.5), ("hill", 400, 3.0),
                                                      ("genetic", 30, 1.5)])
@pytest.mark.parametrize("seed", [2, 3])
def test_each_tuner_finds_the_optimum(method: str, iterations: int, within: float,
                                      seed: int) -> None:
    start = distance_in_steps({p.name: p.start for p in PARAMS})
    curve: list[dict[str, object]] = []
    found = tune(method, PARAMS, NoisyMatch(8, seed=seed - 1), iterations, seed=seed,
                 on_step=curve.append)
    assert start == pytest.approx(10.0)
    assert distance_in_steps(found) < within, found
    assert len(curve) == iterations
    for p in PARAMS:
        assert p.lo <= found[p.name] <= p.hi


def test_deterministic_by_seed() -> None:
    for method in METHODS:
        runs = [tune(method, PARAMS, NoisyMatch(4, seed=5), 10, seed=3) for _ in range(2)]
        assert runs[0] == runs[1]


def test_bad_params_and_methods_are_refused() -> None:
    with pytest.raises(ValueError, match="bounds"):
        Param("a", 0.0, 1.0, 1.0, 0.1)
    with pytest.raises(ValueError, match="outside"):
        Param("a", 2.0, 0.0, 1.0, 0.1)
    with pytest.raises(ValueError, match="step"):
        Param("a", 0.5, 0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="unknown tuning method"):
        tune("annealing", PARAMS, NoisyMatch(2, 0), 1)


class RecordingMatch:
    """A deterministic match: the chromosome with the larger sum wins outright; every
    call is recorded, so a test reads each generation's population off the calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[float, ...], tuple[float, ...]]] = []

    def __call__(self, a: Mapping[str, float], b: Mapping[str, float]) -> float:
        ka, kb = tuple(a.values()), tuple(b.values())
        self.calls.append((ka, kb))
        return float(np.sign(sum(ka) - sum(kb)))


def round_robin_populations(calls: list[tuple[tuple[float, ...], tuple[float, ...]]],
                            size: int) -> list[list[tuple[float, ...]]]:
    """Each generation's population from a round robin's calls, in order: its first
    size - 1 calls are chromosome 0 against 1, 2, ..."""
    per = size * (size - 1) // 2
    assert len(calls) % per == 0
    return [[calls[g][0]] + [b for _, b in calls[g:g + size - 1]]
            for g in range(0, len(calls), per)]


def test_the_studys_settings_round_robin_truncation_cut_point_and_elites() -> None:
    params = [Param(f"w{i}", 0.0, -10.0, 10.0, 1.0) for i in range(8)]
    match = RecordingMatch()
    size, elite, parents, generations = 8, 2, 4, 5
    tune("genetic", params, match, generations, seed=4, population=size, rounds=0,
         elite=elite, selection="truncation", parents=parents, crossover="point",
         crossover_point=0.25, mutation_rate=0.0)
    pops = round_robin_populations(match.calls, size)
    # every pair played once a generation: the population is recovered from the calls
    assert len(pops) == generations and len(set(pops[0])) == size
    for before, after in zip(pops, pops[1:], strict=False):
        ranked = sorted(before, key=lambda c: -sum(c))
        assert after[:elite] == ranked[:elite]
        best = ranked[:parents]
        # without mutation, a child is two parents among the best, cut after the first
        # quarter of the genes
        for child in after[elite:]:
            assert any(child[:2] == a[:2] and child[2:] == b[2:]
                       for a in best for b in best), child


def test_a_mutation_rate_moves_genes_with_that_chance() -> None:
    params = [Param(f"w{i}", 0.0, -100.0, 100.0, 1.0) for i in range(40)]
    match = RecordingMatch()
    size = 12
    tune("genetic", params, match, 2, seed=9, population=size, rounds=0, elite=0,
         selection="truncation", crossover="point", mutation_rate=0.1)
    before, after = round_robin_populations(match.calls, size)
    genes = {(i, c[i]) for c in before for i in range(len(params))}
    moved = sum((i, c[i]) not in genes for c in after for i in range(len(params)))
    # 480 genes, each moved with chance 0.1: 48 expected, 5 standard deviations apart
    assert 16 <= moved <= 80


def test_the_answers_mean_of_winners_and_final_winner() -> None:
    params = [Param(f"w{i}", 0.0, -10.0, 10.0, 1.0) for i in range(3)]
    steps: list[dict[str, object]] = []
    got = tune("genetic", params, RecordingMatch(), 6, seed=1, population=6, rounds=0,
               answer="winners:4", on_step=steps.append)
    winners = [s["best"] for s in steps]
    assert all(isinstance(w, dict) for w in winners)
    for name in got:
        assert got[name] == pytest.approx(
            sum(w[name] for w in winners[-4:]) / 4)  # type: ignore[index]
    # the winner of a generation has the largest sum of the chromosomes it played
    match = RecordingMatch()
    tune("genetic", params, match, 1, seed=1, population=6, rounds=0,
         on_step=steps.append)
    assert sum(steps[-1]["best"].values()) == max(  # type: ignore[attr-defined]
        sum(c) for call in match.calls for c in call)
    # "best": one more round robin ranks the final population, and its winner is the answer
    match = RecordingMatch()
    best = tune("genetic", params, match, 3, seed=2, population=6, rounds=0, answer="best")
    final = round_robin_populations(match.calls, 6)[-1]
    assert tuple(best.values()) == max(final, key=sum)


def test_bad_genetic_settings_are_refused() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"answer": "median"}, "answer"), ({"answer": "winners:0"}, "answer"),
        ({"crossover": "point", "crossover_point": 1.0}, "crossover"),
        ({"crossover": "uniform"}, "crossover"),
        ({"selection": "truncation", "parents": 13}, "parents"),
        ({"selection": "roulette"}, "selection"), ({"mutation_rate": 1.5}, "mutation_rate"),
        ({"rounds": -1}, "rounds"), ({"elite": 12}, "elite")]
    for options, words in cases:
        with pytest.raises(ValueError, match=words):
            tune("genetic", PARAMS, NoisyMatch(2, 0), 1, population=12, **options)
