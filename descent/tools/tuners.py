"""Tuning weights by matches: SPSA, hill climbing and a genetic algorithm.

Every tuner maximises playing strength measured only through ``match(a, b)``: a's score
against b over a few games, in [-1, 1] (wins minus losses, over the games). Weights move
in *steps*: each parameter's ``step`` is the size of a change worth testing, so the
tuners work on ``x = value / step`` and every parameter moves on the same scale.

- ``spsa`` (Spall's simultaneous perturbation, the method chess engines tune with, as
  in Stockfish's fishtest): at iteration k every weight is perturbed at once by
  ``+-c_k`` steps, the two sides play a match, and the weights move by ``a_k`` times the
  match result over the perturbation (``c_k = c / k^0.101``, ``a_k = a / (A + k)^0.602``).
- ``hill`` (the dice-chess study's hill climbing): a neighbour (every weight moved by a
  random fraction of its step, the neighbourhood shrinking as the run goes) plays the
  current weights; it replaces them when it wins the match.
- ``genetic`` (the dice-chess study's genetic algorithm): a population plays matches
  against random others; tournament selection, blend crossover and Gaussian mutation,
  the best kept; the answer is the mean of the final population (the study's agent used
  the mean of its chromosomes).

Each tuner calls ``on_step`` after every match with a dict (iteration, weights, result),
so a caller can write the curve as it grows. Deterministic by ``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Match = Callable[[Mapping[str, float], Mapping[str, float]], float]
OnStep = Callable[[dict[str, Any]], None]

METHODS = ("spsa", "hill", "genetic")


@dataclass(frozen=True)
class Param:
    """A tunable weight: its start, bounds and the step (the change worth testing)."""

    name: str
    start: float
    lo: float
    hi: float
    step: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"{self.name}: bounds must be finite with lo < hi")
        if not self.lo <= self.start <= self.hi:
            raise ValueError(f"{self.name}: start {self.start} outside [{self.lo}, {self.hi}]")
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"{self.name}: step must be > 0")


def _clip(params: Sequence[Param], values: np.ndarray) -> np.ndarray:
    lo = np.array([p.lo for p in params])
    hi = np.array([p.hi for p in params])
    out: np.ndarray = np.clip(values, lo, hi)
    return out


def _named(params: Sequence[Param], values: np.ndarray) -> dict[str, float]:
    return {p.name: float(v) for p, v in zip(params, values, strict=True)}


def spsa(params: Sequence[Param], match: Match, iterations: int, *, seed: int = 0,
         a: float = 2.0, c: float = 1.0, big_a: float | None = None,
         on_step: OnStep | None = None) -> dict[str, float]:
    """SPSA from the params' starts; returns the final weights.

    ``c``: the perturbation in steps at the first iteration; ``a``: the move in steps for
    a match won outright at the first iteration, over ``c``; ``big_a``: the stability
    constant (default a tenth of the iterations)."""
    rng = np.random.default_rng(seed)
    steps = np.array([p.step for p in params])
    theta = np.array([p.start for p in params], dtype=np.float64)
    stability = iterations / 10.0 if big_a is None else big_a
    for k in range(1, iterations + 1):
        ck = c / k ** 0.101
        ak = a * (stability + 1.0) ** 0.602 / (stability + k) ** 0.602
        delta = rng.choice([-1.0, 1.0], size=len(params))
        plus = _clip(params, theta + ck * delta * steps)
        minus = _clip(params, theta - ck * delta * steps)
        result = float(match(_named(params, plus), _named(params, minus)))
        # gradient in step units: result / (2 c_k delta); the move is a_k times it
        theta = _clip(params, theta + ak * result / (2.0 * ck) * delta * steps)
        if on_step is not None:
            on_step({"iteration": k, "result": result, "weights": _named(params, theta)})
    return _named(params, theta)


def hill_climb(params: Sequence[Param], match: Match, iterations: int, *, seed: int = 0,
               radius: float = 1.0, on_step: OnStep | None = None) -> dict[str, float]:
    """Hill climbing from the params' starts: a neighbour within ``radius`` steps of every
    weight (shrinking to a quarter of it by the last iteration) replaces the current
    weights when it wins its match (result > 0)."""
    rng = np.random.default_rng(seed)
    steps = np.array([p.step for p in params])
    current = np.array([p.start for p in params], dtype=np.float64)
    for k in range(1, iterations + 1):
        # the neighbourhood shrinks to a quarter by the end: wide moves find the hill,
        # narrow ones settle on its top through the matches' noise
        r = radius * (1.0 - 0.75 * (k - 1) / max(iterations - 1, 1))
        move = rng.uniform(-r, r, size=len(params)) * steps
        candidate = _clip(params, current + move)
        result = float(match(_named(params, candidate), _named(params, current)))
        if result > 0:
            current = candidate
        if on_step is not None:
            on_step({"iteration": k, "result": result, "accepted": result > 0,
                     "weights": _named(params, current)})
    return _named(params, current)


def genetic(params: Sequence[Param], match: Match, generations: int, *, seed: int = 0,
            population: int = 12, rounds: int = 2, mutation: float = 0.5,
            elite: int = 2, on_step: OnStep | None = None) -> dict[str, float]:
    """A genetic algorithm; returns the mean of the final population.

    Each generation every chromosome plays ``rounds`` matches against random others (its
    fitness is its mean result); parents are chosen by tournaments of two; a child blends
    two parents and is mutated by ``mutation`` steps (Gaussian); the ``elite`` best pass
    unchanged. The first population is the start and random points within the bounds."""
    rng = np.random.default_rng(seed)
    steps = np.array([p.step for p in params])
    lo = np.array([p.lo for p in params])
    hi = np.array([p.hi for p in params])
    if population < 2 or not 0 <= elite < population:
        raise ValueError("genetic: population >= 2 and 0 <= elite < population")
    pop = rng.uniform(lo, hi, size=(population, len(params)))
    pop[0] = [p.start for p in params]
    for g in range(1, generations + 1):
        fitness = np.zeros(population)
        played = np.zeros(population)
        for i in range(population):
            for _ in range(rounds):
                j = int(rng.integers(population - 1))
                j += j >= i
                r = float(match(_named(params, pop[i]), _named(params, pop[j])))
                fitness[i] += r
                fitness[j] -= r
                played[i] += 1
                played[j] += 1
        fitness /= np.maximum(played, 1)
        order = np.argsort(-fitness, kind="stable")
        children = [pop[i].copy() for i in order[:elite]]
        while len(children) < population:
            parents = []
            for _ in range(2):
                x, y = rng.integers(population, size=2)
                parents.append(pop[x] if fitness[x] >= fitness[y] else pop[y])
            mix = rng.uniform(0.0, 1.0, size=len(params))
            child = mix * parents[0] + (1.0 - mix) * parents[1]
            child = child + rng.normal(0.0, mutation, size=len(params)) * steps
            children.append(_clip(params, child))
        pop = np.array(children)
        if on_step is not None:
            on_step({"iteration": g, "result": float(fitness[order[0]]),
                     "weights": _named(params, pop.mean(axis=0))})
    return _named(params, _clip(params, pop.mean(axis=0)))


def tune(method: str, params: Sequence[Param], match: Match, iterations: int, *,
         seed: int = 0, on_step: OnStep | None = None, **options: Any) -> dict[str, float]:
    """The tuner named ``method`` (one of METHODS); ``iterations`` are matches for spsa
    and hill, generations for genetic."""
    if method == "spsa":
        return spsa(params, match, iterations, seed=seed, on_step=on_step, **options)
    if method == "hill":
        return hill_climb(params, match, iterations, seed=seed, on_step=on_step, **options)
    if method == "genetic":
        return genetic(params, match, iterations, seed=seed, on_step=on_step, **options)
    raise ValueError(f"unknown tuning method {method!r}; known: {', '.join(METHODS)}")
