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
from descent.nets.modelfile import ModelFileError, load_model, make_model, save_model
from descent.search_cy.eval.nnue_eval import NNUEEvaluator
from descent.search_cy.games.registry import make_game
from tests.nets.test_modelfile import check_an_nnue_speaks_for_the_side_to_move, rewrite

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
    check_an_nnue_speaks_for_the_side_to_move(nnue_file, tmp_path, GAME,
                                              preset(GAME, "nnue_tiny"))
    with pytest.raises(ValueError, match="an nnue reads dice chess's"):
        make_model("einstein", preset(GAME, "nnue_tiny"))
    with pytest.raises(ValueError, match="a multiple of 16 from 16 to 256"):
        Architecture("nnue", 0, fc=(24, 8))
