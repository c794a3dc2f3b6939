"""The training configuration, pre-initialisation, value views, progress bar and plots."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from descent.search_cy.games.registry import make_game
from descent.train.config import TrainConfig, from_mapping, load_config, to_toml
from descent.train.heuristics import reinforcement_for
from descent.train.network import Learner
from descent.train.report import ProgressBar
from descent.train.trainer import Trainer
from tests.train.conftest import tiny_config


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


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_log_writes_whole_lines() -> None:
    out = io.StringIO()
    bar = ProgressBar(10, stream=out, interval=0.0)
    bar.update(3, "loss 0.5")
    bar.update(10, "done", force=True)
    bar.close()
    text = out.getvalue()
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert any(" 3/10 " in line and "loss 0.5" in line and "30%" in line for line in lines)
    assert "100%" in lines[-1] and "10/10" in lines[-1] and "done" in lines[-1]
    assert sum("10/10" in line for line in lines) == 1     # close repeats no line


def test_progress_bar_on_a_log_waits_interval_seconds_between_lines() -> None:
    out = io.StringIO()
    bar = ProgressBar(100, stream=out, interval=3600.0)
    for k in range(1, 50):
        bar.update(k, f"step {k}")
    bar.update(50, "evaluated", force=True)     # forced: shown at once
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert " 0/100 " in lines[0] and "50/100" in lines[1] and "evaluated" in lines[1]


def test_progress_bar_on_a_terminal_redraws_in_place() -> None:
    out = _Terminal()
    bar = ProgressBar(4, stream=out, interval=3600.0)    # a terminal ignores the interval
    for k in range(1, 5):
        bar.update(k, f"step {k}", force=k == 4)
    bar.close()
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")
    states = [s.strip() for s in text.split("\r") if s.strip()]
    assert "4/4" in states[-1] and "step 4" in states[-1] and "100%" in states[-1]


def test_progress_bar_counts_hours_and_can_be_off() -> None:
    out = io.StringIO()
    bar = ProgressBar(1.5, "h", stream=out, interval=0.0, initial=0.25)
    bar.update(1 / 3, "loss 0.5")
    bar.close()
    lines = out.getvalue().splitlines()
    assert "0.25/1.50 h" in lines[0] and "0.33/1.50 h" in lines[-1] and "22%" in lines[-1]
    off = io.StringIO()
    bar = ProgressBar(10, stream=off, enabled=False)
    bar.update(5, "x", force=True)
    bar.close()
    assert off.getvalue() == ""


def _records() -> list[dict[str, object]]:
    """A run's metrics: pre-training, iterations (some evaluated), a config change and a
    final evaluation; only iterations and evaluations are drawn."""
    out: list[dict[str, object]] = [{"kind": "pretrain", "iteration": 0, "loss": 9.0}]
    for k in range(1, 7):
        record: dict[str, object] = {
            "kind": "iteration", "iteration": k, "games_total": 10 * k, "loss": 1.0 / k,
            "fresh_loss": 1.5 / k, "elapsed": 900.0 * k, "pairs_total": 1000 * k,
            "network_evaluations_total": 50_000 * k}
        if k % 2 == 0:
            rate = 0.1 * k
            record["eval"] = {"random": {"win_rate": rate, "ci95": [rate - 0.1, rate + 0.15]},
                              "heuristic": {"win_rate": rate / 2, "ci95": [0.0, rate]}}
        out.append(record)
        if k == 3:
            out.append({"kind": "config", "iteration": 3, "changed": {"lr": 0.1}})
    out.append({"kind": "eval", "iteration": 6, "games_total": 65,
                "eval": {"random": {"win_rate": 0.8, "ci95": [0.7, 0.9]}}})
    return out


def test_winrate_chart_draws_every_evaluation_with_its_interval_as_a_band() -> None:
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgb

    from descent.train.plots import winrate_figure

    fig = winrate_figure(_records(), "hex(size=3)")
    (ax,) = fig.axes
    assert ax.get_title() == "Win rate: hex(size=3)"
    assert ax.get_xlabel() == "games played" and "win rate" in ax.get_ylabel()
    assert ax.get_ylim() == (0.0, 1.0)
    curves = {line.get_label(): line for line in ax.get_lines()}
    # every evaluation, the final one (kind "eval") included
    assert _data(curves["vs random"].get_xdata()) == [20, 40, 60, 65]
    assert _data(curves["vs random"].get_ydata()) == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert _data(curves["vs heuristic"].get_xdata()) == [20, 40, 60]
    assert set(_data(curves["0.5 (even)"].get_ydata())) == {0.5}
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2
    by_label = {band.get_label(): band for band in bands}
    (random_band,) = by_label["vs random: 95% interval"].get_paths()
    vertices = np.asarray(random_band.vertices)
    xs, ys = vertices[:, 0], vertices[:, 1]
    assert xs.min() == 20 and xs.max() == 65
    assert ys.min() == pytest.approx(0.1) and ys.max() == pytest.approx(0.9)
    # the band has the curve's colour; the legend sits outside the plot area
    assert np.allclose(np.asarray(by_label["vs random: 95% interval"].get_facecolor())[0, :3],
                       to_rgb(curves["vs random"].get_color()))
    fig.canvas.draw()
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert "vs random" in labels and "vs heuristic: 95% interval" in labels
    box = legend.get_window_extent()
    assert box.x0 >= ax.get_window_extent().x1


def _data(values: object) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=float)]


def test_loss_and_throughput_charts_cover_the_whole_history() -> None:
    from descent.train.plots import loss_figure, throughput_figure

    loss = loss_figure(_records(), "t")
    (ax,) = loss.axes
    curves = {line.get_label(): line for line in ax.get_lines()}
    assert set(curves) == {"train loss", "loss on new games"}
    assert _data(curves["train loss"].get_xdata()) == [10, 20, 30, 40, 50, 60]
    assert _data(curves["loss on new games"].get_ydata()) == pytest.approx(
        [1.5 / k for k in range(1, 7)])
    assert ax.get_yscale() == "linear"          # 1 to 1/6 is less than a decade
    throughput = throughput_figure(_records(), "t")
    top, bottom = throughput.axes
    assert _data(top.get_lines()[0].get_xdata()) == pytest.approx([k / 4 for k in range(1, 7)])
    assert _data(bottom.get_lines()[0].get_ydata()) == [50_000 * k for k in range(1, 7)]
    assert bottom.get_xlabel() == "hours of training"


def test_write_plots_writes_three_pngs(tmp_path: Path) -> None:
    from matplotlib.image import imread

    from descent.train.plots import write_plots

    for records in (_records(), []):             # an empty run draws empty charts
        folder = tmp_path / ("full" if records else "empty")
        paths = write_plots(records, folder, "hex(size=3)")
        assert [p.name for p in paths] == ["loss.png", "winrate.png", "throughput.png"]
        for path in paths:
            data = path.read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            pixels = imread(path)
            assert pixels.shape[0] > 300 and pixels.shape[1] > 600
            assert pixels.std() > 0.01                 # not a blank canvas
        assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in paths)


def test_without_matplotlib_plots_fail_clearly_and_training_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from descent.train.plots import PlotsUnavailable, write_plots

    for name in ("matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)       # import raises ImportError
    with pytest.raises(PlotsUnavailable, match=r"pip install 'descent-engine\[train\]'"):
        write_plots(_records(), tmp_path / "plots", "t")
    messages: list[str] = []
    trainer = Trainer(tiny_config(run__max_iterations=1), tmp_path / "run", log=messages.append)
    trainer.records = _records()
    trainer.plot()
    trainer.plot()
    assert [m for m in messages if m.startswith("warning")] == [
        "warning: no plots: training plots need matplotlib: "
        "pip install 'descent-engine[train]'"]
    assert not (tmp_path / "run" / "plots" / "loss.png").exists()
