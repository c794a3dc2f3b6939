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
- ``genetic`` (the dice-chess study's genetic algorithm): a population plays matches,
  against random others or every other once (the study's round robin); parents by
  tournaments of two or from the best few (the study: two of the best 10 of 20); a child
  blends two parents or takes a single cut point's genes from each (the study: the cut
  at 0.5, or 0.25 with 5 elites); Gaussian mutation of every gene or of each with a
  probability (the study: 0.007); the best kept unchanged. The answer is the mean of
  the final population, the final population's winner (the study's final selection) or
  the mean of the last N generations' winners (the study's Expecti-50/150/300 used the
  mean of 50, 150 and 300 winning chromosomes).

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


SELECTIONS = ("tournament", "truncation")
CROSSOVERS = ("blend", "point")


def _answer_winners(answer: str) -> int:
    """0 for "mean" and "best", N for "winners:N"; anything else is refused."""
    if answer in ("mean", "best"):
        return 0
    name, _, count = answer.partition(":")
    if name == "winners" and count.isdigit() and int(count) > 0:
        return int(count)
    raise ValueError(f"genetic: answer is mean, best or winners:N, not {answer!r}")


def genetic(params: Sequence[Param], match: Match, generations: int, *, seed: int = 0,
            population: int = 12, rounds: int = 2, mutation: float = 0.5,
            mutation_rate: float = 1.0, elite: int = 2, selection: str = "tournament",
            parents: int = 0, crossover: str = "blend", crossover_point: float = 0.5,
            answer: str = "mean", on_step: OnStep | None = None) -> dict[str, float]:
    """A genetic algorithm; returns the mean of the final population (``answer="mean"``),
    its winner (``"best"``: one more generation of matches ranks it, the study's final
    selection) or the mean of the last N generations' winners (``"winners:N"``).

    Each generation measures every chromosome's fitness, its mean result: each starts
    ``rounds`` matches against random others, or (``rounds=0``) every pair plays once,
    the study's round robin. The ``elite`` best pass unchanged; the other children have
    two parents chosen by ``selection``: ``"tournament"`` (each the better of two drawn
    at random) or ``"truncation"`` (two different ones drawn from the best ``parents``,
    default half the population). ``crossover``: ``"blend"`` (each gene a random mix of
    the two) or ``"point"`` (the first ``crossover_point`` of the genes from one parent,
    the rest from the other). Each gene then moves by a Gaussian of ``mutation`` steps with
    probability ``mutation_rate``. The first population is the start and random points
    within the bounds. ``on_step`` gets each generation's winner as ``best``."""
    rng = np.random.default_rng(seed)
    steps = np.array([p.step for p in params])
    lo = np.array([p.lo for p in params])
    hi = np.array([p.hi for p in params])
    n = len(params)
    pool = parents or population // 2
    keep = _answer_winners(answer)
    if population < 2 or not 0 <= elite < population or rounds < 0:
        raise ValueError("genetic: population >= 2, 0 <= elite < population, rounds >= 0")
    if selection not in SELECTIONS or (selection == "truncation"
                                       and not 2 <= pool <= population):
        raise ValueError(f"genetic: selection is one of {', '.join(SELECTIONS)}, "
                         f"with 2 <= parents <= population")
    if crossover not in CROSSOVERS or not 0.0 < crossover_point < 1.0:
        raise ValueError(f"genetic: crossover is one of {', '.join(CROSSOVERS)}, "
                         f"with 0 < crossover_point < 1")
    if not 0.0 <= mutation_rate <= 1.0:
        raise ValueError("genetic: 0 <= mutation_rate <= 1")
    cut = min(max(int(round(crossover_point * n)), 1), n - 1) if n > 1 else n

    def fitness_of(pop: np.ndarray) -> np.ndarray:
        fitness = np.zeros(population)
        played = np.zeros(population)
        if rounds == 0:
            pairs = [(i, j) for i in range(population) for j in range(i + 1, population)]
        else:
            pairs = []
            for i in range(population):
                for _ in range(rounds):
                    j = int(rng.integers(population - 1))
                    pairs.append((i, j + (j >= i)))
        for i, j in pairs:
            r = float(match(_named(params, pop[i]), _named(params, pop[j])))
            fitness[i] += r
            fitness[j] -= r
            played[i] += 1
            played[j] += 1
        out: np.ndarray = fitness / np.maximum(played, 1)
        return out

    def two_parents(pop: np.ndarray, fitness: np.ndarray,
                    order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if selection == "truncation":
            a, b = rng.choice(pool, size=2, replace=False)
            return pop[order[a]], pop[order[b]]
        chosen = []
        for _ in range(2):
            x, y = rng.integers(population, size=2)
            chosen.append(pop[x] if fitness[x] >= fitness[y] else pop[y])
        return chosen[0], chosen[1]

    pop = rng.uniform(lo, hi, size=(population, n))
    pop[0] = [p.start for p in params]
    winners: list[np.ndarray] = []
    for g in range(1, generations + 1):
        fitness = fitness_of(pop)
        order = np.argsort(-fitness, kind="stable")
        winners.append(pop[order[0]].copy())
        children = [pop[i].copy() for i in order[:elite]]
        while len(children) < population:
            first, second = two_parents(pop, fitness, order)
            if crossover == "point":
                child = np.concatenate([first[:cut], second[cut:]])
            else:
                mix = rng.uniform(0.0, 1.0, size=n)
                child = mix * first + (1.0 - mix) * second
            move = rng.normal(0.0, mutation, size=n) * steps
            if mutation_rate < 1.0:
                move *= rng.uniform(0.0, 1.0, size=n) < mutation_rate
            children.append(_clip(params, child + move))
        pop = np.array(children)
        if on_step is not None:
            on_step({"iteration": g, "result": float(fitness[order[0]]),
                     "best": _named(params, winners[-1]),
                     "weights": _named(params, pop.mean(axis=0))})
    if answer == "best":
        return _named(params, pop[int(np.argmax(fitness_of(pop)))])
    if keep:
        return _named(params, np.mean(winners[-keep:], axis=0))
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
