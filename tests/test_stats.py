"""The Wilson interval (descent/stats.py) against values computed by hand."""

from __future__ import annotations

import pytest

from descent.stats import wilson_interval


def test_wilson_interval_of_7_in_10() -> None:
    lo, hi = wilson_interval(7, 10)
    assert lo == pytest.approx(0.3968, abs=1e-4)
    assert hi == pytest.approx(0.8922, abs=1e-4)


def test_the_edges_are_exact_and_no_trials_say_nothing() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.7225, abs=1e-4)


def test_an_even_score_is_centred_and_halves_count() -> None:
    lo, hi = wilson_interval(10, 20)
    assert lo < 0.5 < hi and abs((lo + hi) / 2 - 0.5) < 1e-12
    assert wilson_interval(10.5, 20) > wilson_interval(10, 20)   # a draw is half a win
