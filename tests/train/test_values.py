"""``descent values``: value networks fitted on a dice game's labels, resumable, and the
held-out figures beside the C heuristic's."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from descent.nets.modelfile import load_model
from descent.search_cy.games.registry import make_game
from descent.train.labels import Player, generate, load
from descent.train.values import (
    ValueConfig,
    accuracy,
    examples,
    held_out,
    learning_curve,
    train,
)

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def labels_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("labels") / "dicechess"
    # game seeds 1_000_000..: game 0 (seed divisible by 10) and game 10 are held out
    generate(folder, Player.for_game("dicechess", sims=600, branch=0.3), games=11, jobs=1,
             shard_games=6)
    return folder


def test_examples_are_the_replayed_positions_with_targets_for_the_side_to_move(
        labels_folder: Path) -> None:
    labels = load(labels_folder)
    positions = np.arange(labels.positions)
    data = examples(labels, positions)
    game = make_game(labels.game)
    chance = 0
    for p in positions[:: max(1, len(positions) // 25)]:
        state = game.new_initial_state()
        for move in labels.moves(int(p)):
            state.apply_action(move)
        assert np.array_equal(data.x[p], np.asarray(state.encode()) > 0.5)
        assert data.mover[p] == state.side_to_move     # the side to move, or to roll
        chance += state.is_chance_node()
    assert chance > 0                   # the random branch moves' positions are chance nodes
    target = data.target(0.0)
    assert np.array_equal(target, np.where(data.mover == 0, data.value, -data.value))
    assert np.array_equal(data.target(1.0) * np.where(data.mover == 0, 1, -1), data.outcome)
    assert held_out(labels).any() and not held_out(labels).all()
    # before each roll: the chance node, with the labels of the decision it led to
    more = examples(labels, positions, pre_roll=True)
    rolled = [p for p in positions if labels.arrays["pos_extra"][p] < 0
              and labels.arrays["pos_ply"][p] > 0]
    assert len(more) == len(data) + len(rolled)
    assert set(more.value.tolist()) == set(data.value.tolist())


def test_a_run_resumes_and_keeps_its_best_model(labels_folder: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    cfg = ValueConfig(preset="nnue_tiny", batch=64)
    train([labels_folder], run, 1, config=cfg)
    first = (run / "metrics.jsonl").read_text().splitlines()
    assert len(first) == 1
    last = train([labels_folder], run, 2, config=ValueConfig(preset="nnue"))
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in lines] == [1, 2] and last["epoch"] == 2
    # the run keeps its own settings: the second call's preset is not read
    assert json.loads((run / "config.json").read_text())["preset"] == "nnue_tiny"
    model = load_model(run / "model.dnet", "dicechess")
    assert model.arch.preset == "nnue_tiny" and model.value.view == "side_to_move"
    figures = accuracy(run / "model.dnet", [labels_folder])
    assert figures["positions"] > 0
    assert all(math.isfinite(figures[k]) for k in (
        "heuristic", "network", "search_result", "heuristic_result", "network_result"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="torch sees a GPU here")
def test_a_run_on_a_gpu_where_torch_sees_none_is_refused(labels_folder: Path,
                                                         tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="device = cuda, but torch sees no CUDA device"):
        train([labels_folder], tmp_path / "run", 1,
              config=ValueConfig(preset="nnue_tiny", batch=64), device="cuda")
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU that torch sees")
def test_a_run_trained_on_a_gpu_resumes_on_the_cpu(labels_folder: Path,
                                                   tmp_path: Path) -> None:
    run = tmp_path / "run"
    cfg = ValueConfig(preset="nnue_tiny", batch=64)
    on_gpu = train([labels_folder], run, 1, config=cfg, device="cuda")
    gpu_model = load_model(run / "model.dnet", "dicechess")
    on_cpu = train([labels_folder], run, 2, config=cfg, device="cpu")
    assert (on_gpu["epoch"], on_cpu["epoch"]) == (1, 2)
    assert math.isfinite(on_cpu["test_loss"])
    # the GPU's model file is an ordinary one: the CPU's evaluator reads it
    figures = accuracy(run / "model.dnet", [labels_folder])
    assert figures["positions"] > 0 and gpu_model.arch.preset == "nnue_tiny"


def test_a_run_starts_from_a_model_of_its_preset_and_refuses_another(
        labels_folder: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    train([labels_folder], first, 1, config=ValueConfig(preset="nnue_tiny", batch=64))
    start = load_model(first / "model.dnet", "dicechess")
    # no epoch at a learning rate of 0: the second run's model is its start's
    second = tmp_path / "second"
    train([labels_folder], second, 1, config=ValueConfig(
        preset="nnue_tiny", lr=0.0, weight_decay=0.0, init=str(first / "model.dnet")))
    again = load_model(second / "model.dnet", "dicechess")
    assert all(np.array_equal(again.weights[k], start.weights[k]) for k in start.weights)
    with pytest.raises(ValueError, match="not the nnue_small preset's"):
        train([labels_folder], tmp_path / "third", 1, config=ValueConfig(
            preset="nnue_small", init=str(first / "model.dnet")))


def test_a_learning_curve_trains_on_more_and_more_games_against_one_held_out_set(
        labels_folder: Path, tmp_path: Path) -> None:
    rows = learning_curve([labels_folder], [2, 5], tmp_path, 1,
                          config=ValueConfig(preset="nnue_tiny", batch=64))
    assert [r["games"] for r in rows] == [2, 5]
    assert 0 < rows[0]["train_positions"] < rows[1]["train_positions"]
    tests = {json.loads((tmp_path / f"games-{n}" / "metrics.jsonl").read_text()
                        .splitlines()[0])["test_positions"] for n in (2, 5)}
    assert len(tests) == 1


def test_a_network_on_the_heuristic_reads_its_values_and_starts_as_it(
        labels_folder: Path, tmp_path: Path) -> None:
    from descent.search_cy.eval.heuristics import heuristic_for

    labels = load(labels_folder)
    positions = np.arange(labels.positions)[:40]
    data = examples(labels, positions, base=True)
    assert data.base is not None and examples(labels, positions).base is None
    game = make_game(labels.game)
    h = heuristic_for(game.name)
    for i, p in enumerate(positions[::7].tolist()):
        state = game.new_initial_state()
        for move in labels.moves(p):
            state.apply_action(move)
        sign = 1.0 if state.side_to_move == 0 else -1.0
        assert data.base[i * 7] == pytest.approx(sign * h.evaluate([state])[0], abs=1e-6)
    # trained at a step size of 0 it is still the heuristic: the same held-out figure
    run = tmp_path / "hybrid"
    train([labels_folder], run, 1, config=ValueConfig(preset="hybrid", lr=0.0,
                                                      weight_decay=0.0, batch=64))
    figures = accuracy(run / "model.dnet", [labels_folder])
    assert figures["network"] == pytest.approx(figures["heuristic"], abs=1e-6)
    assert figures["network_result"] == pytest.approx(figures["heuristic_result"], abs=1e-6)
    plain = tmp_path / "plain"
    train([labels_folder], plain, 1, config=ValueConfig(preset="nnue_tiny", batch=64))
    with pytest.raises(ValueError, match="not the hybrid preset's nnue \\[16, 8\\] on the "
                                         "heuristic"):
        train([labels_folder], tmp_path / "mixed", 1, config=ValueConfig(
            preset="hybrid", init=str(plain / "model.dnet")))


def test_symmetries_add_each_hex_position_rotated_with_its_labels(tmp_path: Path) -> None:
    generate(tmp_path / "hex5", Player(size=5, sims=60), games=2)
    labels = load(tmp_path / "hex5")
    positions = np.arange(labels.positions)
    plain = examples(labels, positions)
    both = examples(labels, positions, symmetries=True)
    assert len(both) == 2 * len(plain)
    assert np.array_equal(both.x[0::2], plain.x)
    # the 180-degree rotation keeps the colours, the padding's edges and the side to move
    assert np.array_equal(both.x[1::2], plain.x[:, :, ::-1, ::-1])
    for name in ("value", "outcome", "mover", "proven"):
        assert np.array_equal(getattr(both, name)[1::2], getattr(plain, name)), name


def test_the_bench_times_rave_with_the_network_in_c_against_none(tmp_path: Path) -> None:
    from descent.nets.arch import preset
    from descent.nets.modelfile import make_model, save_model
    from descent.train.values import search_speed

    generate(tmp_path / "hex5", Player(size=5, sims=60), games=1)
    nnue = save_model(make_model("hex(size=5)", preset("hex", "nnue_tiny"), seed=1),
                      tmp_path / "nnue.dnet")
    rates = search_speed(nnue, tmp_path / "hex5", [5, 50], 0.02, positions=2)
    assert list(rates) == ["none", "value_at=5", "value_at=50"]
    assert all(rate > 0 for rate in rates.values())
    leaves = search_speed(nnue, tmp_path / "hex5", [5], 0.02, positions=2, value_mix=0.5,
                          value_fade=100.0, value_visits=0)
    assert list(leaves) == ["none", "value_at=5"] and leaves["value_at=5"] > 0
    conv = save_model(make_model("hex(size=5)", preset("hex", "tiny"), seed=1),
                      tmp_path / "conv.dnet")
    with pytest.raises(ValueError, match="conv.dnet: rave reads a network in C only"):
        search_speed(conv, tmp_path / "hex5", [5], 0.02, positions=2)
