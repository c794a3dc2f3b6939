"""The training configuration, pre-initialisation, value views, progress bar and plots."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from descent.nets.learn.config import TrainConfig, from_mapping, load_config, to_toml
from descent.nets.learn.heuristics import reinforcement_for
from descent.nets.learn.network import Learner
from descent.nets.learn.plots import Series, line_chart, png_bytes
from descent.nets.learn.report import ProgressBar
from descent.nets.learn.trainer import Trainer
from descent.search_cy.games.registry import make_game
from tests.nets.learn.conftest import tiny_config


def test_config_round_trips_through_toml(tmp_path: Path) -> None:
    cfg = TrainConfig(game="einstein", seed=9).with_overrides(
        selfplay__heuristic="presence", selfplay__stochastic="determinization",
        evaluation__opponents=("random",), run__hours=1.5, data__replay_rate=0.25)
    path = tmp_path / "c.toml"
    path.write_text(to_toml(cfg), encoding="utf-8")
    assert load_config(path) == cfg


@pytest.mark.parametrize(("data", "message"), [
    ({"selfplay": {"serch": "descent"}}, "unknown key selfplay.serch"),
    ({"selfplay": {"iterations": "many"}}, "must be an integer"),
    ({"selfplay": {"learning": "tree", "search": "expectiminimax"}}, "tree search"),
    ({"selfplay": {"learning": "chance", "search": "descent"}}, "chance roots"),
    ({"selfplay": {"outcome_weight": 1.5, "learning": "root"}}, "outcome_weight must be"),
    ({"selfplay": {"outcome_weight": 0.5}}, "no search label to mix"),
    ({"eval": {"games": 3}}, "even"),
    ({"colour": 1}, "unknown key"),
    ({"update": {"device": "tpu"}}, "device"),
])
def test_bad_configs_are_refused_with_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_mapping(data)


def test_inapplicable_heuristic_is_refused() -> None:
    with pytest.raises(ValueError, match="does not apply"):
        reinforcement_for(make_game("hex(size=3)").new_initial_state(), "presence")


def test_pre_initialisation_on_random_terminal_states(tmp_path: Path) -> None:
    cfg = tiny_config(run__max_iterations=1, data__pretrain_games=30,
                      data__pretrain_epochs=15)
    trainer = Trainer(cfg, tmp_path)
    trainer.run()
    first = trainer.records[0]
    assert first["kind"] == "pretrain" and first["pairs"] > 0
    assert first["loss"] < first["loss_before"]
    assert trainer.counters.pretrained


def test_side_to_move_view_negates_targets_of_player_1() -> None:
    game = make_game("hex(size=3)")
    state = game.new_initial_state()
    reinf = reinforcement_for(state, "depth_add")
    learner = Learner(game, "tiny", reinf, view="side_to_move", threads=1)
    a = state.encode()
    state.apply_action(0)
    b = state.encode()
    targets = learner.targets(np.stack([a, b]), np.array([5.0, 5.0], dtype=np.float32))
    assert targets.tolist() == pytest.approx([5 / 10, -5 / 10])   # P = 9, scale 10
    # the evaluator turns the outputs back into player 0's view and value units
    values = learner.function(np.stack([a, b]))
    raw = learner.function.backend.evaluate(np.stack([a, b]))
    assert values.tolist() == pytest.approx([10 * raw[0], -10 * raw[1]], abs=1e-5)


def test_progress_bar_and_png() -> None:
    out = io.StringIO()
    bar = ProgressBar(10, stream=out, interval=0.0)
    bar.update(3, "loss 0.5")
    bar.update(10, "done", force=True)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[") and "3/10 it" in lines[0] and "loss 0.5" in lines[0]
    assert "100.0%" in lines[-1]
    img = line_chart("t", [Series("a", [0, 1, 2], [0.0, 1.0, 0.5])], "x")
    assert img.shape == (400, 640, 3) and (img != 255).any()
    assert png_bytes(img)[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_legend_never_covers_a_curve() -> None:
    """The legend sat inside the plot area, over the curves' top right corner."""
    from descent.nets.learn.plots import PALETTE, chart_margins

    series = [Series(f"series {k}", [0, 1, 2, 3], [float(k), 2.0, 3.0, 10.0]) for k in range(3)]
    img = line_chart("t", series, "x")
    left, right, top, bottom = chart_margins(len(series))
    for k in range(3):
        rows, cols = np.nonzero(np.all(img == PALETTE[k], axis=2))
        legend = cols >= img.shape[1] - right - 200
        assert (rows[legend & (rows < top)]).size > 0          # its swatch, above the plot
        # inside the plot area, the top right corner holds the curves, not a legend
        inside = (rows >= top) & (cols >= left)
        assert rows[inside].size > 0
    # no label text (black) inside the plot area but the axes' ticks at its left and bottom
    black = np.all(img == (0, 0, 0), axis=2)
    height, width = black.shape
    assert not black[top + 2:height - bottom - 2, left + 2:width - right - 2].any()
