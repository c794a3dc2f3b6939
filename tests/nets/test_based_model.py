"""A network on the C heuristic as a model file (nets/arch.py's ``base``): it round-trips;
torch (given the heuristic's values) and the native evaluator agree, in dice chess (an
nnue) and EinStein (an mlp); the backends that read planes refuse it by name, and a
malformed one is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from descent.nets.arch import Architecture, preset
from descent.nets.backends import make_backend, runs_model
from descent.nets.encoding import TO_MOVE_PLANE, sample_positions
from descent.nets.evaluator import network_evaluator
from descent.nets.modelfile import ModelFileError, load_model, make_model, save_model
from descent.search_cy.eval.based_eval import BasedEvaluator
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.registry import make_game
from tests.nets.test_modelfile import rewrite

GAMES = ["dicechess", "einstein"]


def hybrid_file(folder: Path, game: str) -> Path:
    """The game's ``hybrid`` preset with a head that says something (a fresh one is zero:
    the heuristic itself) and a base factor other than 1."""
    model = make_model(game, preset(game, "hybrid"), seed=5)
    weights = dict(model.weights)
    rng = np.random.default_rng(6)
    weights["head.weight"] = rng.normal(0, 0.3, weights["head.weight"].shape).astype(
        np.float32)
    weights["base.scale"] = np.array([1.2], np.float32)
    return save_model(make_model(game, model.arch, weights), folder / f"{game}-hybrid.dnet")


def positions(game: str) -> list[Any]:
    return [s for s in sample_positions(make_game(game), 60, seed=4)
            if not s.is_terminal()][:24]


@pytest.mark.parametrize("game", GAMES)
def test_it_round_trips_and_torch_agrees_with_the_native_evaluator(
        game: str, tmp_path: Path) -> None:
    import torch

    from descent.nets.models import module_from_weights

    path = hybrid_file(tmp_path, game)
    model = load_model(path, game)
    assert model.arch.base == "heuristic" and model.value.view == "side_to_move"
    assert float(model.weights["base.scale"][0]) == pytest.approx(1.2)
    assert "on the C heuristic" in model.describe()
    states = positions(game)
    planes = np.stack([np.asarray(s.encode(), np.float32) for s in states])
    # the side to move, or to roll: the encoding's to-move plane (the model's view)
    sign = np.where(planes[:, TO_MOVE_PLANE[game], 0, 0] > 0.5, 1.0, -1.0)
    heuristic = heuristic_for(game).evaluate(states)
    net = module_from_weights(model.arch, model.input_shape, model.weights)
    with torch.no_grad():
        expected = net(torch.from_numpy(planes),
                       torch.from_numpy((sign * heuristic).astype(np.float32))).numpy()
        with pytest.raises(ValueError, match="needs the heuristic's values"):
            net(torch.from_numpy(planes))
    evaluator = network_evaluator(path, states[0])
    assert isinstance(evaluator, BasedEvaluator)
    got = evaluator.evaluate(states)
    assert np.allclose(got, sign * expected, atol=1e-5)
    assert not np.allclose(got, heuristic, atol=1e-3)


def test_only_the_native_backend_runs_it_and_it_values_positions_only(
        tmp_path: Path) -> None:
    from descent.nets.onnx_graph import build_onnx

    model = load_model(hybrid_file(tmp_path, "dicechess"), "dicechess")
    assert runs_model("native", model) and not runs_model("onnxruntime", model)
    for name in ("torch", "onnxruntime", "tensorrt"):
        with pytest.raises(ValueError, match=f"{name}: dicechess-hybrid.dnet corrects the C "
                                             f"heuristic"):
            make_backend(name, model)
    with pytest.raises(ValueError, match="native backend runs it"):
        build_onnx(model)
    native = make_backend("native", model)
    assert "on the C heuristic" in native.describe()
    with pytest.raises(ValueError, match="reads positions, not a batch of planes"):
        native.evaluate(np.zeros((1, *model.input_shape), np.float32))


def test_a_malformed_one_is_refused(tmp_path: Path) -> None:
    path = hybrid_file(tmp_path, "einstein")

    def drop_scale(weights: dict[str, np.ndarray]) -> None:
        del weights["base.scale"]

    bad = rewrite(path, tmp_path / "noscale.dnet", weights_edit=drop_scale)
    with pytest.raises(ModelFileError, match="base.scale"):
        load_model(bad, "einstein")

    def unknown_base(meta: dict[str, Any]) -> None:
        meta["architecture"]["base"] = "oracle"

    bad = rewrite(path, tmp_path / "oracle.dnet", unknown_base)
    with pytest.raises(ModelFileError, match="unknown base 'oracle'"):
        load_model(bad, "einstein")
    with pytest.raises(ValueError, match="for an mlp or an nnue with a tanh output"):
        Architecture("conv", 8, convs=1, fc=(16,), base="heuristic")
    with pytest.raises(ValueError, match="for an mlp or an nnue with a tanh output"):
        Architecture("mlp", 0, fc=(16,), output="linear", base="heuristic")

    def player0(meta: dict[str, Any]) -> None:
        meta["value"]["view"] = "player0"

    bad = rewrite(path, tmp_path / "player0.dnet", player0)
    with pytest.raises(ModelFileError, match="on the C heuristic speaks for the side to move"):
        load_model(bad, "einstein")
