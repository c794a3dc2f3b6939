"""Binomial confidence intervals, for every layer that reads a count of wins, and the
correlation every trainer reports its networks by.

It imports nothing from the package, so any layer may import it: the training's
evaluation matches and the arena's tables read one formula.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``successes / n`` (successes may
    count halves); (0, 1) with no trials."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)   # exact at the edges
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return lo, hi


def correlation(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Pearson's correlation of two samples; NaN when either has no spread (or fewer than
    two values), where it is not defined."""
    x, y = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if x.size < 2 or x.shape != y.shape or float(np.std(x)) == 0.0 or float(np.std(y)) == 0.0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])
