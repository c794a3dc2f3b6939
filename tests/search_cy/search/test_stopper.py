"""The stopper's limits and its deadline extension (search/stopper.pyx)."""
from __future__ import annotations

import pytest

from descent.search_cy.search.stopper import Stopper


def test_max_time_defaults_to_the_time_limit_and_is_checked() -> None:
    assert Stopper(time=0.5).max_time == 0.5
    assert Stopper(time=0.5, max_time=0.8).max_time == 0.8
    assert Stopper().max_time == 0.0
    with pytest.raises(ValueError, match="max_time"):
        Stopper(time=1.0, max_time=0.5)
    with pytest.raises(ValueError, match="max_time"):
        Stopper(nodes=10, max_time=0.5)


def test_an_extension_moves_the_deadline_up_to_the_maximum_only() -> None:
    fixed = Stopper(time=10.0)
    fixed.start()
    assert fixed.deadline_seconds == pytest.approx(10.0)
    assert not fixed.extend(1.5)                # no room: a fixed move time
    assert fixed.deadline_seconds == pytest.approx(10.0)

    elastic = Stopper(time=10.0, max_time=20.0)
    assert not elastic.extend(1.5)              # not started: no deadline yet
    elastic.start()
    assert elastic.extend(1.5)
    assert elastic.deadline_seconds == pytest.approx(15.0)
    assert not elastic.extend(1.2)              # never earlier
    assert elastic.extend(3.0)
    assert elastic.deadline_seconds == pytest.approx(20.0)   # capped at max_time
    assert not elastic.extend(5.0)
    assert elastic.reason_name == "none"


def test_no_clock_no_extension() -> None:
    s = Stopper(nodes=100)
    s.start()
    assert s.deadline_seconds == 0.0
    assert not s.extend(2.0)
