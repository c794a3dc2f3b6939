"""tools/ladder.py: the table of a ladder, its calibration of the named levels (monotone
through noisy rungs, equal Elo steps), and a real two-level ladder through descent arena."""

from __future__ import annotations

import pytest

from descent.search_cy.search.strength import STRENGTH_LEVELS, numeric_theta, parse_strength
from descent.tools.ladder import Rung, calibrate, climb, table
from descent.tools.stats import elo_of, summarize


def rung(lower: str, upper: str, elo: float, games: int = 1000) -> Rung:
    """A rung whose score gives ``elo`` (wins only, rounded)."""
    score = 1.0 / (1.0 + 10 ** (-elo / 400.0))
    wins = round(score * games)
    return Rung(lower, upper, summarize(wins, 0, games - wins))


def test_calibration_reads_equal_elo_steps() -> None:
    # 100 Elo a numeric step from 12 to 20, nothing below 12, max 0 above 20: 800 in all
    rungs = [rung("0", "12", 0.0)] + [rung(str(k), str(k + 1), 100.0) for k in range(12, 20)]
    rungs.append(rung("20", "max", 0.0))
    total = sum(elo_of(r.summary.score) for r in rungs)
    levels = calibrate(rungs)
    names = sorted(STRENGTH_LEVELS, key=lambda n: STRENGTH_LEVELS[n])
    assert list(levels) == names and levels["random"] == numeric_theta(0)
    for i, name in enumerate(names[1:], start=1):
        k = 12 + (total * i / len(names)) / (total / 8)
        assert levels[name] == pytest.approx(numeric_theta(0) * (150 / 1e-3) ** (k / 20),
                                             rel=2e-3)
    assert all(a < b for a, b in zip(list(levels.values()), list(levels.values())[1:],
                                     strict=False))


def test_calibration_is_monotone_through_a_noisy_rung() -> None:
    rungs = [rung("0", "10", 200.0), rung("10", "12", -50.0), rung("12", "14", 250.0),
             rung("14", "max", 0.0)]
    levels = list(calibrate(rungs).values())
    assert all(a <= b for a, b in zip(levels, levels[1:], strict=False))
    with pytest.raises(ValueError, match="numeric levels"):
        calibrate([rung("random", "master", 100.0)])


def test_each_game_has_its_own_calibrated_levels() -> None:
    assert parse_strength("expert", "dicechess") != parse_strength("expert")
    assert parse_strength("expert", "hex", "rave") != parse_strength("expert", "hex")
    assert parse_strength("expert", "hex", "ubfms") not in (
        parse_strength("expert"), parse_strength("expert", "hex", "rave"))
    assert parse_strength("expert", "hex", "descent") == parse_strength("expert")
    assert parse_strength("expert", "nosuchgame") == STRENGTH_LEVELS["expert"]
    assert parse_strength("max", "einstein") is None
    assert parse_strength("7", "einstein") == numeric_theta(7)


def test_a_two_level_ladder_through_the_arena() -> None:
    rungs = climb("einstein", ["random", "max"], games=4, nodes=200, time=None, jobs=1,
                  seed=1)
    assert len(rungs) == 1 and rungs[0].summary.games == 4
    text = table(rungs)
    assert "| max | random |" in text
