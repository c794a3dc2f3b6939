"""tools.outcome_fit: the race table's exact distributions, decoding, scores, the command."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from descent.research.outcome_fit import (
    LEVELS,
    decode,
    fit_scores,
    live,
    movable,
    race_table,
    race_value,
)


def race_state(steps: dict[int, int]) -> int:
    """Cube number (1..6) -> steps to the corner, as a race state."""
    return sum(d * LEVELS ** (cube - 1) for cube, d in steps.items())


def test_movable_follows_the_die_rule() -> None:
    steps = [0, 2, 0, 0, 3, 0]                # cubes 2 and 5
    assert movable(steps, 2) == [1]
    assert movable(steps, 3) == [1, 4]        # nearest below and above
    assert movable(steps, 1) == [1]           # nothing below
    assert movable(steps, 6) == [4]


@pytest.mark.parametrize("cube", [1, 4, 6])
@pytest.mark.parametrize("steps", [1, 2, 4])
def test_a_lone_cube_needs_exactly_its_distance(cube: int, steps: int) -> None:
    dist, mean = race_table()
    s = race_state({cube: steps})
    assert dist[s, steps] == pytest.approx(1.0)
    assert mean[s] == pytest.approx(steps)


def test_two_cubes_without_a_choice() -> None:
    # cubes 1 and 2 two steps out: die 1 moves cube 1, every other die cube 2. After the
    # first turn one cube is a step out: the second turn ends the race when the die picks
    # it (5/6 after cube 2 moved, 1/6 after cube 1), the third always.
    dist, mean = race_table()
    s = race_state({1: 2, 2: 2})
    assert dist[s, 2] == pytest.approx(26 / 36)
    assert dist[s, 3] == pytest.approx(10 / 36)
    assert mean[s] == pytest.approx(2 * 26 / 36 + 3 * 10 / 36)


def test_a_choice_takes_the_finishing_step() -> None:
    # cube 1 a step out, cube 3 four: dice 1 and 2 (a choice between 1 and 3) finish now
    dist, _ = race_table()
    assert dist[race_state({1: 1, 3: 4}), 1] == pytest.approx(2 / 6)


def test_race_values_of_even_races_go_to_the_side_acting_first() -> None:
    red, blue = race_state({3: 2}), race_state({5: 2})
    assert race_value(red, blue, red_to_act=True) == pytest.approx(1.0)
    assert race_value(red, blue, red_to_act=False) == pytest.approx(-1.0)
    # Red a step nearer wins even when Blue acts first
    assert race_value(race_state({3: 1}), race_state({5: 2}), red_to_act=False) == \
        pytest.approx(1.0)


def test_a_known_die_decides_the_first_turn() -> None:
    red = race_state({1: 1, 3: 4})
    blue = race_state({2: 1})
    assert race_value(red, blue, red_to_act=True, die=2) == pytest.approx(1.0)
    # die 5 must move cube 3, and Blue then finishes
    assert race_value(red, blue, red_to_act=True, die=5) == pytest.approx(-1.0)
    # before the roll: Red finishes now with dice 1 and 2
    assert race_value(red, blue, red_to_act=True) == pytest.approx(2 * (2 / 6) - 1)


def test_decode_reads_back_the_position_of_its_planes() -> None:
    from descent.search_cy.games.einstein import EinsteinState
    from descent.search_cy.games.registry import make_game

    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(20):
        state = make_game("einstein").new_initial_state()
        assert isinstance(state, EinsteinState)
        while not state.is_terminal():
            planes = state.encode()
            if state.phase_name in ("roll", "move"):
                assert live(planes[None])[0]
                text, red, blue, red_to_act, die = decode(planes)
                assert text == state.to_text()
                assert red_to_act == (state.side_to_act == 0)
                assert die == state.pending_die
                for side, packed in ((0, red), (1, blue)):
                    for cube in range(1, 7):
                        cell = state.cube_cell(side, cube)
                        r, c = divmod(cell, 5)
                        want = 0 if cell < 0 else (max(4 - r, 4 - c) if side == 0 else max(r, c))
                        assert (packed // LEVELS ** (cube - 1)) % LEVELS == want
                checked += 1
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            else:
                actions = state.legal_actions()
                state.apply_action(actions[int(rng.integers(len(actions)))])
        assert not live(state.encode()[None])[0]
    assert checked > 200


def test_fit_scores() -> None:
    y = np.where(np.arange(400) % 3 == 0, 1.0, -1.0)
    assert fit_scores(y.copy(), y) == pytest.approx((0.0, 0.0, 1.0))
    raw, calibrated, corr = fit_scores(np.zeros(400), y)
    assert raw == pytest.approx(1.0)
    assert calibrated == pytest.approx(float(np.mean((y[200:] - y[:200].mean()) ** 2)))
    assert corr == 0.0
    # calibration forgives a predictor its scale, not its order
    raw, calibrated, _ = fit_scores(0.1 * y, y)
    assert raw > 0.5 and calibrated == pytest.approx(0.0)


def test_scores_a_terminal_run_and_refuses_another(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch  # noqa: F401

    from descent.research.outcome_fit import main
    from descent.train.trainer import Trainer
    from tests.train.conftest import tiny_config

    run = tmp_path / "run"
    Trainer(tiny_config("einstein", selfplay__learning="terminal", run__max_iterations=4,
                        network__preset="mlp"), run).run()
    assert main([str(run), str(run / "model.dnet"), "--sample", "3000",
                 "--holdout", "0.5"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\d+ live positions from 2 held-out games", out)
    for name in ("heuristic", "race", "model.dnet"):
        assert re.search(rf"^{re.escape(name)} +[\d.]+ +[\d.]+ +[-+][\d.]+$", out, re.M)
    other = tmp_path / "tree"
    Trainer(tiny_config("einstein", run__max_iterations=1), other).run()
    with pytest.raises(SystemExit, match="labelled with outcomes"):
        main([str(other)])


def test_a_choice_moves_the_cube_with_the_shorter_race() -> None:
    # die 2 lets cube 1 (four steps out, listed first) or cube 3 (two) move; cube 3 is
    # the faster race
    _, mean = race_table()
    red, blue = race_state({1: 4, 3: 2}), race_state({4: 3, 6: 4})
    one, three = race_state({1: 3, 3: 2}), race_state({1: 4, 3: 1})
    assert mean[three] < mean[one]
    assert race_value(red, blue, red_to_act=True, die=2) == \
        pytest.approx(race_value(three, blue, red_to_act=False))
    assert race_value(red, blue, red_to_act=True, die=2) != \
        pytest.approx(race_value(one, blue, red_to_act=False))
