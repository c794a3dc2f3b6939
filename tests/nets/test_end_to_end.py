"""A network trained for a few steps, saved, reloaded through every available backend, and
searched with by ubfms and expectiminimax through full games of Hex 5x5 and EinStein."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from descent.nets.backends import make_backend, probe
from descent.nets.encoding import encode_batch, sample_positions
from descent.nets.evaluator import network_evaluator
from descent.nets.modelfile import LoadedModel, load_model
from descent.nets.onnx_graph import reference_forward
from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.evalcache import CachedEvaluator
from descent.search_cy.search.stopper import Stopper

BACKENDS = ("onnxruntime", "torch", "tensorrt")


def play(state: GameState, evaluator: Evaluator, search: str, stopper: dict[str, int],
         seed: int = 0) -> int:
    """Plays ``state`` to the end (dice drawn by a seeded RNG); returns the plies played."""
    rng = random.Random(seed)
    runner = make_search(search, evaluator, SearchParams(seed=seed, hash_mb=8))
    plies = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(rng.choices([a for a, _ in outcomes],
                                           [p for _, p in outcomes])[0])
        else:
            result = runner.run(state, Stopper(**stopper))
            assert result.action in state.legal_actions()
            assert evaluator.lo <= result.value <= evaluator.hi or result.resolved
            state.apply_action(result.action)
        plies += 1
        assert plies < 500
    return plies


def reload(model: LoadedModel) -> LoadedModel:
    assert model.path is not None and model.path.is_file()
    back = load_model(model.path, model.game)
    assert back.training.steps == 15 and back.weights_sha256 == model.weights_sha256
    return back


def path_of(model: LoadedModel) -> Path:
    assert model.path is not None
    return model.path


def trained_is_not_initial(model: LoadedModel) -> None:
    from descent.nets.arch import init_weights

    initial = init_weights(model.arch, model.input_shape, seed=3)
    assert any(not np.array_equal(initial[k], model.weights[k]) for k in initial)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hex5_full_game_with_ubfms(hex5_model: LoadedModel, backend: str) -> None:
    ok, why = probe(backend)
    if not ok:
        pytest.skip(f"backend {backend} unavailable: {why}")
    model = reload(hex5_model)
    trained_is_not_initial(model)
    states = sample_positions(model.game, 8, seed=1)
    values = make_backend(backend, model).evaluate(encode_batch(states))
    limit = 1e-2 if backend == "tensorrt" else 1e-4
    assert float(np.max(np.abs(values - reference_forward(model, encode_batch(states))))) <= limit
    state = model.game.new_initial_state()
    evaluator = CachedEvaluator(network_evaluator(path_of(model), state, backend=backend),
                                cache_mb=2)
    plies = play(state, evaluator, "ubfms", {"iterations": 40})
    assert 9 <= plies <= 25   # someone connects on a 5x5 board
    assert evaluator.hits > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_einstein_full_game_with_ubfms(einstein_model: LoadedModel, backend: str) -> None:
    ok, why = probe(backend)
    if not ok:
        pytest.skip(f"backend {backend} unavailable: {why}")
    model = reload(einstein_model)
    state = model.game.new_initial_state()
    evaluator = network_evaluator(path_of(model), state, backend=backend)
    plies = play(state, evaluator, "ubfms", {"iterations": 30}, seed=2)
    assert plies >= 4 and evaluator.positions > 0


def test_einstein_full_game_with_expectiminimax(einstein_model: LoadedModel) -> None:
    model = reload(einstein_model)
    state = model.game.new_initial_state()
    evaluator = network_evaluator(path_of(model), state, backend="onnxruntime")
    plies = play(state, evaluator, "expectiminimax", {"nodes": 3000}, seed=4)
    assert plies >= 4 and evaluator.positions > 0


def test_hex5_full_game_with_expectiminimax(hex5_model: LoadedModel) -> None:
    model = reload(hex5_model)
    state = model.game.new_initial_state()
    evaluator = CachedEvaluator(network_evaluator(path_of(model), state, backend="onnxruntime"),
                                cache_mb=2)
    plies = play(state, evaluator, "expectiminimax", {"nodes": 2000}, seed=5)
    assert 9 <= plies <= 25
    assert evaluator.hits > 0   # iterative deepening revisits the same leaves


def test_same_seed_same_game(hex5_model: LoadedModel) -> None:
    model = reload(hex5_model)
    games = []
    for _ in range(2):
        state = model.game.new_initial_state()
        play(state, network_evaluator(model, state, backend="onnxruntime"), "ubfms",
             {"iterations": 20}, seed=9)
        games.append(state.history())
    assert games[0] == games[1]
