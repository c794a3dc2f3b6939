"""The Hex nnue as a model file: it round-trips, runs the same on the native and torch
backends and in the search's evaluator, ONNX refuses it by name, and a malformed one is
refused by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from descent.nets.arch import NNUE_Q, preset
from descent.nets.backends import make_backend
from descent.nets.backends.registry import runs_model
from descent.nets.encoding import sample_positions
from descent.nets.evaluator import network_evaluator
from descent.nets.modelfile import ModelFileError, load_model, make_model, save_model
from descent.search_cy.eval.hex_nnue_eval import HexNNUEEvaluator
from descent.search_cy.games.registry import make_game
from tests.nets.test_modelfile import check_an_nnue_speaks_for_the_side_to_move, rewrite

GAME = "hex(size=5)"


@pytest.fixture(scope="module")
def nnue_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = make_model(GAME, preset("hex", "nnue_tiny"), seed=3)
    return save_model(model, tmp_path_factory.mktemp("hexnnue") / "tiny.dnet")


def positions() -> list[Any]:
    return [s for s in sample_positions(make_game(GAME), 60, seed=4)
            if not s.is_terminal()][:24]


def test_the_hex_nnue_round_trips_and_the_backends_agree(nnue_file: Path) -> None:
    pytest.importorskip("torch")
    model = load_model(nnue_file, GAME)
    assert model.arch.family == "nnue" and model.value.view == "side_to_move"
    states = positions()
    planes = np.stack([np.asarray(s.encode(), np.float32) for s in states])
    native = make_backend("native", model).evaluate(planes)
    torch_out = make_backend("torch", model).evaluate(planes)
    assert np.allclose(native, torch_out, atol=1e-5)
    evaluator = network_evaluator(nnue_file, states[0])
    assert isinstance(evaluator, HexNNUEEvaluator)
    mover = np.array([s.current_player() for s in states])
    assert np.allclose(evaluator.evaluate(states),
                       np.where(mover == 0, torch_out, -torch_out), atol=1e-5)


def test_onnx_refuses_a_hex_nnue_by_name(nnue_file: Path) -> None:
    from descent.nets.onnx_graph import build_onnx

    model = load_model(nnue_file, GAME)
    assert runs_model("native", model) and runs_model("torch", model)
    assert not runs_model("onnxruntime", model) and not runs_model("tensorrt", model)
    with pytest.raises(ValueError, match="tiny.dnet is a Hex nnue: its feature lookup has no"):
        build_onnx(model)


def test_a_malformed_hex_nnue_is_refused_by_name(nnue_file: Path, tmp_path: Path) -> None:
    def nudge(weights: dict[str, np.ndarray]) -> None:
        weights["ft.weight"] = weights["ft.weight"] + np.float32(0.25 / NNUE_Q)

    bad = rewrite(nnue_file, tmp_path / "nudged.dnet", weights_edit=nudge)
    with pytest.raises(ModelFileError, match="tensor ft.weight is not quantised") as info:
        load_model(bad, GAME)
    assert str(bad) in str(info.value)

    check_an_nnue_speaks_for_the_side_to_move(nnue_file, tmp_path, GAME,
                                              preset("hex", "nnue_tiny"))
    with pytest.raises(ValueError, match="an nnue reads dice chess's .* or Hex's"):
        make_model("einstein", preset("hex", "nnue_tiny"))
    with pytest.raises(ModelFileError):
        load_model(nnue_file, "hex(size=7)")      # another board size, another model


def test_the_search_evaluator_speaks_the_vc_evaluators_proofs(nnue_file: Path) -> None:
    """A best-first search prunes the children the knowledge proves lost: the network's
    evaluator carries the VC evaluator's mustplays and proofs beside its values."""
    from descent.search_cy.eval.heuristics import heuristic_for

    game = make_game(GAME)
    evaluator = network_evaluator(nnue_file, game.new_initial_state())
    assert isinstance(evaluator, HexNNUEEvaluator) and evaluator.know is not None
    spawned = evaluator.spawn()
    seen = set()
    for moves in ([18, 2, 9], [12, 14], [16, 22, 6, 10, 11]):   # a mustplay, a win, a loss
        state = game.new_initial_state()
        for action in moves:
            state.apply_action(action)
        said = heuristic_for(state).knowledge(state)
        assert evaluator.knowledge(state) == spawned.knowledge(state) == said
        seen.add(said[0])
    assert seen == {"mustplay", "win", "loss"}
    evaluator.know = None
    assert evaluator.knowledge(state) == ("none", None)
