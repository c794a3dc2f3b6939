"""The dice-chess nnue as a model file: it round-trips, runs the same on the native,
torch and ONNX Runtime backends, and a malformed one is refused by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from descent.nets.arch import NNUE_Q, Architecture, preset
from descent.nets.backends import make_backend
from descent.nets.encoding import sample_positions
from descent.nets.evaluator import network_evaluator
from descent.nets.modelfile import ModelFileError, ValueSpec, load_model, make_model, save_model
from descent.search_cy.eval.nnue_eval import NNUEEvaluator
from descent.search_cy.games.registry import make_game
from tests.nets.test_modelfile import rewrite

GAME = "dicechess"


@pytest.fixture(scope="module")
def nnue_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = make_model(GAME, preset(GAME, "nnue_tiny"), seed=3)
    return save_model(model, tmp_path_factory.mktemp("nnue") / "tiny.dnet")


def positions() -> list[Any]:
    return [s for s in sample_positions(make_game(GAME), 60, seed=4)
            if not s.is_terminal() and not s.is_chance_node()][:24]


def test_the_nnue_round_trips_and_the_backends_agree(nnue_file: Path) -> None:
    model = load_model(nnue_file, GAME)
    assert model.arch.family == "nnue" and model.value.view == "side_to_move"
    states = positions()
    planes = np.stack([np.asarray(s.encode(), np.float32) for s in states])
    outputs = {name: make_backend(name, model).evaluate(planes)
               for name in ("native", "torch", "onnxruntime")}
    assert np.allclose(outputs["native"], outputs["torch"], atol=1e-5)
    assert np.allclose(outputs["native"], outputs["onnxruntime"], atol=1e-5)
    # the search's evaluator is the C one, reading the position's own accumulator
    evaluator = network_evaluator(nnue_file, states[0])
    assert isinstance(evaluator, NNUEEvaluator)
    mover = np.array([s.current_player() for s in states])
    assert np.allclose(evaluator.evaluate(states),
                       np.where(mover == 0, outputs["torch"], -outputs["torch"]), atol=1e-5)


def test_an_unquantised_feature_transformer_is_refused_by_name(nnue_file: Path,
                                                               tmp_path: Path) -> None:
    def nudge(weights: dict[str, np.ndarray]) -> None:
        weights["ft.weight"] = weights["ft.weight"] + np.float32(0.25 / NNUE_Q)

    bad = rewrite(nnue_file, tmp_path / "nudged.dnet", weights_edit=nudge)
    with pytest.raises(ModelFileError, match="tensor ft.weight is not quantised") as info:
        load_model(bad, GAME)
    assert str(bad) in str(info.value)


def test_an_nnue_speaks_for_the_side_to_move_and_reads_dice_chess_only(
        nnue_file: Path, tmp_path: Path) -> None:
    def player0(meta: dict[str, Any]) -> None:
        meta["value"]["view"] = "player0"

    bad = rewrite(nnue_file, tmp_path / "player0.dnet", player0)
    with pytest.raises(ModelFileError, match="an nnue speaks for the side to move"):
        load_model(bad, GAME)
    with pytest.raises(ValueError, match="an nnue reads dice chess's"):
        make_model("einstein", preset(GAME, "nnue_tiny"))
    with pytest.raises(ModelFileError, match="speaks for the side to move"):
        make_model(GAME, preset(GAME, "nnue_tiny"), value=ValueSpec(view="player0"))
    with pytest.raises(ValueError, match="a multiple of 16 from 16 to 256"):
        Architecture("nnue", 0, fc=(24, 8))


@pytest.fixture(scope="module")
def hybrid_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = make_model(GAME, preset(GAME, "hybrid"), seed=5)
    # a head that says something (a fresh one is zero: the heuristic itself)
    rng = np.random.default_rng(6)
    weights = dict(model.weights)
    weights["head.weight"] = rng.normal(0, 0.3, weights["head.weight"].shape).astype(np.float32)
    weights["base.scale"] = np.array([1.2], np.float32)
    model = make_model(GAME, model.arch, weights)
    return save_model(model, tmp_path_factory.mktemp("hybrid") / "hybrid.dnet")


def test_a_fresh_network_on_the_heuristic_is_the_heuristic() -> None:
    from descent.search_cy.eval.heuristics import heuristic_for

    model = make_model(GAME, preset(GAME, "hybrid"), seed=1)
    states = positions()
    evaluator = network_evaluator(model, states[0])
    assert np.allclose(evaluator.evaluate(states), heuristic_for(GAME).evaluate(states),
                       atol=1e-6)


def test_a_network_on_the_heuristic_round_trips_and_torch_agrees_with_c(
        hybrid_file: Path) -> None:
    import torch

    from descent.nets.models import module_from_weights
    from descent.search_cy.eval.heuristics import heuristic_for

    model = load_model(hybrid_file, GAME)
    assert model.arch.base == "heuristic"
    assert float(model.weights["base.scale"][0]) == pytest.approx(1.2)
    states = positions()
    planes = np.stack([np.asarray(s.encode(), np.float32) for s in states])
    mover = np.array([s.current_player() for s in states])
    h = heuristic_for(GAME).evaluate(states) * np.where(mover == 0, 1.0, -1.0)
    net = module_from_weights(model.arch, model.input_shape, model.weights)
    with torch.no_grad():
        expected = net(torch.from_numpy(planes),
                       torch.from_numpy(h.astype(np.float32))).numpy()
    evaluator = network_evaluator(hybrid_file, states[0])
    assert isinstance(evaluator, NNUEEvaluator) and evaluator.base is not None
    got = evaluator.evaluate(states)
    assert np.allclose(got, np.where(mover == 0, expected, -expected), atol=1e-5)
    assert not np.allclose(got, heuristic_for(GAME).evaluate(states), atol=1e-3)
    # the batch path sets each position up from its planes and values the heuristic there
    assert np.allclose(make_backend("native", model).evaluate(planes), expected, atol=1e-5)
    with pytest.raises(ValueError, match="needs the heuristic's values"):
        net(torch.from_numpy(planes))


def test_a_network_on_the_heuristic_runs_natively_only_and_is_checked(
        hybrid_file: Path, tmp_path: Path) -> None:
    from descent.nets.onnx_graph import build_onnx

    model = load_model(hybrid_file, GAME)
    for name in ("torch", "onnxruntime"):
        with pytest.raises(ValueError, match=f"{name}: hybrid.dnet corrects the C heuristic"):
            make_backend(name, model)
    with pytest.raises(ValueError, match="native backend runs it"):
        build_onnx(model)

    def drop_scale(weights: dict[str, np.ndarray]) -> None:
        del weights["base.scale"]

    bad = rewrite(hybrid_file, tmp_path / "noscale.dnet", weights_edit=drop_scale)
    with pytest.raises(ModelFileError, match="base.scale"):
        load_model(bad, GAME)

    def unknown_base(meta: dict[str, Any]) -> None:
        meta["architecture"]["base"] = "oracle"

    bad = rewrite(hybrid_file, tmp_path / "oracle.dnet", unknown_base)
    with pytest.raises(ModelFileError, match="unknown base 'oracle'"):
        load_model(bad, GAME)
    with pytest.raises(ValueError, match="for an nnue with a tanh output"):
        Architecture("mlp", 0, fc=(16,), base="heuristic")
    with pytest.raises(ValueError, match="for an nnue with a tanh output"):
        Architecture("nnue", 0, fc=(16, 8), output="linear", base="heuristic")
