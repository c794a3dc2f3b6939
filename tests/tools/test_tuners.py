"""The tuners (tools/tuners.py) on a toy objective with a known optimum: a match between
two weight sets is a noisy game whose expected result grows with the difference of a
concave strength function; each tuner must end near the optimum, deterministically."""

from __future__ import annotations

import math
from collections.abc import Mapping

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
