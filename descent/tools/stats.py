"""Match statistics: score, win rate with a 95% interval, Elo difference with an interval
(logistic model), likelihood of superiority, and the sequential probability ratio test
(GSPRT, as fishtest computes it, on trinomial win/draw/loss counts).

Conventions: a draw counts half a point; Elo differences follow the logistic model
``score = 1 / (1 + 10^(-elo / 400))``; intervals are two-sided at 95% (z = 1.959964).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# re-exported: this module is the match statistics' one place for their users
from descent.stats import Z95 as Z95
from descent.stats import wilson_interval as wilson_interval


def score_of(wins: int, draws: int, losses: int) -> float:
    """The score fraction (draws as half points); 0.5 with no games."""
    n = wins + draws + losses
    return (wins + 0.5 * draws) / n if n else 0.5


def elo_of(score: float) -> float:
    """Elo difference of a score fraction (logistic model): 0.6 -> +70.4, 0.5 -> 0.
    +-inf at 1 and 0."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_of_elo(elo: float) -> float:
    """The expected score of an Elo difference (inverse of elo_of)."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_interval(wins: int, draws: int, losses: int, z: float = Z95) -> tuple[float, float]:
    """95% interval of the score fraction: Wilson when there are no draws (then the score is
    a binomial proportion), else the normal approximation of the trinomial mean."""
    n = wins + draws + losses
    if n == 0:
        return 0.0, 1.0
    if draws == 0:
        return wilson_interval(wins, n, z)
    mu = score_of(wins, draws, losses)
    var = (wins * (1 - mu) ** 2 + draws * (0.5 - mu) ** 2 + losses * mu ** 2) / n
    half = z * math.sqrt(var / n)
    return max(0.0, mu - half), min(1.0, mu + half)


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority (draws carry no information): P(stronger | results)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


@dataclass(frozen=True)
class Summary:
    """One side's results against the other(s)."""

    games: int
    wins: int
    draws: int
    losses: int
    score: float            # fraction
    score_lo: float
    score_hi: float
    elo: float
    elo_lo: float
    elo_hi: float
    los: float

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws


def summarize(wins: int, draws: int, losses: int) -> Summary:
    s = score_of(wins, draws, losses)
    lo, hi = score_interval(wins, draws, losses)
    return Summary(wins + draws + losses, wins, draws, losses, s, lo, hi,
                   elo_of(s), elo_of(lo), elo_of(hi), los(wins, losses))


# -- SPRT ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sprt:
    """A sequential test of H0: elo = elo0 against H1: elo = elo1 (logistic Elo), with
    error rates alpha (accepting H1 when H0 holds) and beta (accepting H0 when H1 holds)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("SPRT: alpha and beta must be in (0, 1)")
        if self.elo1 <= self.elo0:
            raise ValueError("SPRT: elo1 must be greater than elo0")

    @classmethod
    def parse(cls, text: str) -> Sprt:
        """``elo0,elo1[,alpha,beta]``, e.g. ``0,10,0.05,0.05``."""
        parts = [p for p in text.replace(" ", "").split(",") if p]
        if len(parts) not in (2, 4):
            raise ValueError(f"--sprt {text!r}: expected elo0,elo1[,alpha,beta]")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ValueError(f"--sprt {text!r}: not numbers") from None
        return cls(*values)

    @property
    def bounds(self) -> tuple[float, float]:
        """(lower, upper) LLR bounds: log(beta / (1 - alpha)), log((1 - beta) / alpha)."""
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def llr(self, wins: int, draws: int, losses: int) -> float:
        """The generalized log-likelihood ratio of the trinomial counts, as fishtest
        computes it: each count that is 0 becomes 1e-3 (a clean sweep stays finite), q is
        the empirical distribution of the per-game score over {0, 1/2, 1}, p0 and p1 are
        the maximum-likelihood distributions whose means are the scores of elo0 and elo1,
        and LLR = N * sum q log(p1 / p0)."""
        if wins + draws + losses == 0:
            return 0.0
        counts = [float(c) if c > 0 else 1e-3 for c in (losses, draws, wins)]
        n = sum(counts)
        pdf = [(v, c / n) for v, c in zip((0.0, 0.5, 1.0), counts, strict=True)]
        p0 = mle_with_mean(pdf, score_of_elo(self.elo0))
        p1 = mle_with_mean(pdf, score_of_elo(self.elo1))
        return n * sum(q * (math.log(b) - math.log(a))
                       for (_, q), a, b in zip(pdf, p0, p1, strict=True))

    def llr_normal(self, wins: int, draws: int, losses: int) -> float:
        """The normal approximation of llr() (fishtest's LLR_alt2):
        N (s1 - s0) (2 mu - s0 - s1) / (2 var); close to llr() for large samples."""
        if wins + draws + losses == 0:
            return 0.0
        counts = [float(c) if c > 0 else 1e-3 for c in (losses, draws, wins)]
        n = sum(counts)
        mu = (0.5 * counts[1] + counts[2]) / n
        var = sum(c / n * (v - mu) ** 2 for v, c in zip((0.0, 0.5, 1.0), counts, strict=True))
        s0, s1 = score_of_elo(self.elo0), score_of_elo(self.elo1)
        return n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)

    def decide(self, wins: int, draws: int, losses: int) -> str | None:
        """``H1`` (elo1 accepted), ``H0`` (elo0 accepted) or None (go on)."""
        value = self.llr(wins, draws, losses)
        lower, upper = self.bounds
        if value >= upper:
            return "H1"
        if value <= lower:
            return "H0"
        return None


def mle_with_mean(pdf: list[tuple[float, float]], mean: float) -> list[float]:
    """The distribution over pdf's values closest to pdf in likelihood (maximizing
    sum q log p) subject to mean ``mean``: p_i = q_i / (1 + x (v_i - mean)), with x found by
    bisection (the Lagrange condition sum q_i (v_i - mean) / (1 + x (v_i - mean)) = 0 is
    decreasing in x on the interval where every p_i > 0). Needs min v < mean < max v."""
    d = [v - mean for v, _ in pdf]
    if not min(d) < 0 < max(d):
        raise ValueError(f"mean {mean} outside the values' range")
    lo, hi = -1.0 / max(d), -1.0 / min(d)
    for _ in range(200):
        x = 0.5 * (lo + hi)
        f = sum(q * di / (1 + x * di) for (_, q), di in zip(pdf, d, strict=True))
        if f > 0:
            lo = x
        else:
            hi = x
    x = 0.5 * (lo + hi)
    return [q / (1 + x * di) for (_, q), di in zip(pdf, d, strict=True)]


def fmt_elo(value: float, signed: bool = True) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    value = round(value, 1) + 0.0     # no "-0.0"
    return f"{value:+.1f}" if signed else f"{value:.1f}"


def finite_or_none(value: float) -> float | None:
    """For JSON: infinities and NaN become null."""
    return value if math.isfinite(value) else None
