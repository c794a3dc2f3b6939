"""Match statistics against values computed by hand (formulas in tools/stats.py)."""

from __future__ import annotations

import math

import pytest

from descent.tools import stats
from descent.tools.stats import Sprt


def test_elo_of_a_score() -> None:
    assert stats.elo_of(0.6) == pytest.approx(70.4365, abs=1e-3)
    assert stats.elo_of(0.5) == 0.0
    assert stats.elo_of(0.75) == pytest.approx(190.8485, abs=1e-3)   # 400 log10(3)
    assert stats.elo_of(0.25) == pytest.approx(-190.8485, abs=1e-3)
    assert stats.elo_of(1.0) == math.inf and stats.elo_of(0.0) == -math.inf
    for elo in (-300.0, -35.5, 0.0, 12.0, 400.0):
        assert stats.elo_of(stats.score_of_elo(elo)) == pytest.approx(elo)
    assert stats.score_of_elo(400) == pytest.approx(10 / 11)


def test_score_interval_with_draws_is_the_trinomial_normal_interval() -> None:
    # 6 wins, 2 draws, 2 losses: mean 0.7, per-game variance
    # (6 * 0.09 + 2 * 0.04 + 2 * 0.49) / 10 = 0.16, standard error 0.4 / sqrt(10)
    lo, hi = stats.score_interval(6, 2, 2)
    half = stats.Z95 * 0.4 / math.sqrt(10)
    assert lo == pytest.approx(0.7 - half) and hi == pytest.approx(0.7 + half)
    assert stats.score_interval(7, 0, 3) == stats.wilson_interval(7, 10)


def test_summary_of_a_60_percent_score() -> None:
    s = stats.summarize(12, 0, 8)
    assert s.games == 20 and s.points == 12.0 and s.score == 0.6
    assert s.elo == pytest.approx(70.4, abs=0.05)
    lo, hi = stats.wilson_interval(12, 20)
    assert s.elo_lo == pytest.approx(stats.elo_of(lo)) and s.elo_hi == pytest.approx(
        stats.elo_of(hi))
    assert s.elo_lo < 0 < s.elo < s.elo_hi


def test_likelihood_of_superiority() -> None:
    assert stats.los(10, 10) == 0.5
    assert stats.los(0, 0) == 0.5
    # 0.5 (1 + erf(4 / sqrt(2 * 16))) = Phi(1)
    assert stats.los(10, 6) == pytest.approx(0.841345, abs=1e-6)


def test_sprt_bounds_and_parse() -> None:
    sprt = Sprt.parse("0,10,0.05,0.05")
    assert (sprt.elo0, sprt.elo1) == (0, 10)
    lo, hi = sprt.bounds
    assert lo == pytest.approx(-2.944439, abs=1e-6) and hi == pytest.approx(2.944439, abs=1e-6)
    assert Sprt.parse("-5, 5") == Sprt(-5, 5, 0.05, 0.05)
    for bad in ("1", "a,b", "10,0", "0,10,0,0.05"):
        with pytest.raises(ValueError):
            Sprt.parse(bad)


def test_sprt_accepts_h1_on_a_winning_streak_and_h0_on_a_losing_one() -> None:
    sprt = Sprt(0, 10, 0.05, 0.05)
    assert sprt.llr(0, 0, 0) == 0.0
    # each win of a clean sweep adds about log(s1 / s0) = log(L(10) / 0.5)
    per_win = math.log(stats.score_of_elo(10) / 0.5)
    assert sprt.llr(10, 0, 0) == pytest.approx(10 * per_win, rel=1e-3)
    decisions = [sprt.decide(n, 0, 0) for n in range(1, 200)]
    first = decisions.index("H1") + 1
    assert 90 < first < 120 and all(d == "H1" for d in decisions[first - 1:])
    assert all(d is None for d in decisions[: first - 1])
    assert sprt.decide(0, 0, 150) == "H0"
    assert sprt.decide(5, 10, 5) is None


def test_sprt_llr_matches_its_normal_approximation_on_large_samples() -> None:
    sprt = Sprt(0, 5)
    for w, d, lost in ((1000, 1000, 900), (5000, 8000, 5100), (3000, 0, 2800)):
        exact, approx = sprt.llr(w, d, lost), sprt.llr_normal(w, d, lost)
        assert exact == pytest.approx(approx, rel=0.02, abs=0.02)
    # and it is antisymmetric: swapping wins and losses and mirroring the hypotheses
    assert Sprt(-5, 0).llr(900, 1000, 1000) == pytest.approx(-sprt.llr(1000, 1000, 900),
                                                             rel=1e-6)


def test_mle_with_mean_keeps_the_mean() -> None:
    pdf = [(0.0, 0.2), (0.5, 0.3), (1.0, 0.5)]
    for mean in (0.3, 0.5, 0.65, 0.9):
        p = stats.mle_with_mean(pdf, mean)
        assert sum(p) == pytest.approx(1.0)
        assert sum(v * q for (v, _), q in zip(pdf, p, strict=True)) == pytest.approx(mean)
    assert stats.mle_with_mean(pdf, 0.65) == pytest.approx([0.2, 0.3, 0.5])


def test_formatting() -> None:
    assert stats.fmt_elo(70.4365) == "+70.4"
    assert stats.fmt_elo(-0.01) == "+0.0"
    assert stats.fmt_elo(math.inf) == "+inf" and stats.fmt_elo(-math.inf) == "-inf"
    assert stats.finite_or_none(math.inf) is None and stats.finite_or_none(1.5) == 1.5
