"""The time manager: budgets within the clock, every control form, nodes-as-time."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from descent.engine.limits import Limits, TimeManager


def test_no_clock_means_no_budget() -> None:
    tm = TimeManager()
    assert tm.budget(Limits()) is None
    assert tm.budget(Limits(infinite=True, time_left=10)) is None


def test_move_time_is_exact_minus_the_overhead() -> None:
    b = TimeManager(overhead=0.05).budget(Limits(move_time=1.0))
    assert b is not None and b.target == b.maximum == pytest.approx(0.95)


def test_sudden_death_spreads_the_clock() -> None:
    tm = TimeManager(overhead=0.05, expected_moves=40)
    b = tm.budget(Limits(time_left=60.0))
    assert b is not None
    assert b.target == pytest.approx(60.0 / 40)
    assert b.minimum <= b.target <= b.maximum <= 60.0 - 0.05


def test_increment_and_moves_to_go() -> None:
    tm = TimeManager(overhead=0.0)
    with_inc = tm.budget(Limits(time_left=10.0, increment=1.0))
    without = tm.budget(Limits(time_left=10.0))
    assert with_inc is not None and without is not None and with_inc.target > without.target
    b = tm.budget(Limits(time_left=10.0, moves_to_go=5))
    assert b is not None and b.target == pytest.approx(2.0)


def test_byoyomi_and_canadian_periods() -> None:
    tm = TimeManager(overhead=0.1)
    b = tm.budget(Limits(time_left=0.0, byoyomi=5.0, byoyomi_periods=3, in_byoyomi=True))
    assert b is not None and b.maximum <= 5.0 - 0.1 and b.target == pytest.approx(4.9)
    one = tm.budget(Limits(time_left=1.0, byoyomi=1.0, byoyomi_stones=1, in_byoyomi=True))
    assert one is not None and one.target == one.maximum == pytest.approx(0.9)
    c = tm.budget(Limits(time_left=30.0, byoyomi=300.0, byoyomi_stones=10, in_byoyomi=True))
    assert c is not None and c.maximum <= 30.0 - 0.1 and c.target == pytest.approx(2.7)


@given(left=st.floats(0.0, 3600.0), inc=st.floats(0.0, 30.0), ply=st.integers(0, 400),
       mtg=st.one_of(st.none(), st.integers(1, 60)))
def test_the_maximum_never_passes_the_clock(left: float, inc: float, ply: int,
                                            mtg: int | None) -> None:
    tm = TimeManager(overhead=0.05)
    b = tm.budget(Limits(time_left=left, increment=inc, moves_to_go=mtg), ply)
    assert b is not None
    assert 0 < b.minimum <= b.target <= b.maximum
    assert b.maximum <= max(0.001, left - 0.05) + 1e-12


def test_an_elastic_clock_gives_the_stopper_room_past_its_target() -> None:
    """The stopper's max_time is the budget's maximum: room to extend an unstable move
    under main time or a Canadian block, none under a fixed move time or a one-stone
    byo-yomi."""
    tm = TimeManager(overhead=0.05)
    block, b = tm.stopper(Limits(time_left=30.0, byoyomi=30.0, byoyomi_stones=30,
                                 in_byoyomi=True))
    assert b is not None and block.max_time == pytest.approx(b.maximum)
    assert block.max_time > block.time_limit == pytest.approx(b.target)
    main, _ = tm.stopper(Limits(time_left=60.0))
    assert main.max_time > main.time_limit
    for fixed in (Limits(move_time=1.0),
                  Limits(time_left=1.0, byoyomi=1.0, byoyomi_stones=1, in_byoyomi=True)):
        stopper, _ = tm.stopper(fixed)
        assert stopper.max_time == stopper.time_limit > 0
    nodes, _ = tm.stopper(Limits(time_left=60.0), nodes_per_second=1000)
    assert nodes.time_limit == nodes.max_time == 0.0


def test_nodes_as_time_turns_the_budget_into_nodes() -> None:
    stopper, budget = TimeManager(overhead=0.0).stopper(
        Limits(move_time=0.5), nodes_per_second=10_000)
    assert budget is not None
    assert stopper.max_nodes == 5000 and stopper.time_limit == 0.0


def test_bad_overhead_is_refused() -> None:
    with pytest.raises(ValueError):
        TimeManager(overhead=-1)


def test_an_almost_empty_clock_answers_from_one_iteration() -> None:
    """Dice chess under 3 s sudden death lost on time: at ply 105 it spent 5.6 ms with
    1.5 ms left, the search's fixed costs outrunning a 1 ms budget."""
    tm = TimeManager(overhead=0.05)
    stopper, budget = tm.stopper(Limits(time_left=0.0015), moves_played=105)
    assert budget is not None and budget.hurry
    assert (stopper.max_iterations, stopper.max_nodes) == (1, 0)
    calm_stopper, calm = tm.stopper(Limits(time_left=30.0), moves_played=105)
    assert calm is not None and not calm.hurry and calm_stopper.max_iterations == 0


def test_a_short_byoyomi_still_searches() -> None:
    """A 150 ms period leaves 100 ms after the 50 ms overhead: time to search, not to
    answer from one iteration (it did, and Hex matches at 150 ms were one-ply games)."""
    tm = TimeManager(overhead=0.05)
    stopper, budget = tm.stopper(Limits(time_left=0.15, byoyomi=0.15, byoyomi_stones=1,
                                        in_byoyomi=True), moves_played=10)
    assert budget is not None and not budget.hurry
    assert stopper.max_iterations == 0 and stopper.time_limit > 0.05


def test_a_hurried_engine_still_plays_a_legal_move() -> None:
    from descent.engine.engine import Engine
    from descent.engine.settings import Settings

    e = Engine(Settings(game="dicechess", hash_mb=16, seed=1))
    e.play("d1")
    decision = e.think(Limits(time_left=0.002))
    assert decision.budget is not None and decision.budget.hurry
    assert decision.depth <= 1 and decision.action in e.state.legal_actions()
