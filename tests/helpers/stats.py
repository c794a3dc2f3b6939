"""Statistics the tests of random choices share."""

from __future__ import annotations

# chi-square critical values at p = 0.001 by degrees of freedom (used without scipy)
CHI2_CRITICAL_0001 = {
    1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 5: 20.515, 6: 22.458, 7: 24.322,
    8: 26.124, 9: 27.877, 10: 29.588, 11: 31.264, 12: 32.909, 13: 34.528, 14: 36.123,
    15: 37.697,
}


def chi2_critical(df: int) -> float:
    """The chi-square statistic a fit at ``df`` degrees of freedom stays under with
    probability 0.999."""
    try:
        from scipy.stats import chi2
    except ImportError:
        return CHI2_CRITICAL_0001[df]
    return float(chi2.ppf(0.999, df))
