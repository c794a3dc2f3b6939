"""network_evaluator: values in player 0's view whatever the model's convention, bounds,
symmetries; the evaluation cache in front of it."""

from __future__ import annotations

import numpy as np
import pytest

from descent.nets.arch import preset
from descent.nets.backends import make_backend
from descent.nets.encoding import sample_positions
from descent.nets.evaluator import NetworkFunction, network_evaluator
from descent.nets.modelfile import LoadedModel, ModelFileError, ValueSpec, make_model
from descent.nets.onnx_graph import reference_forward
from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.evalcache import CachedEvaluator
from descent.search_cy.search.stopper import Stopper


def raw(model: LoadedModel, states: list[GameState], symmetry: int = 0) -> np.ndarray:
    batch = np.stack([s.encode(symmetry=symmetry) for s in states])
    return reference_forward(model, batch)


@pytest.fixture(scope="module")
def hex_model() -> LoadedModel:
    return make_model("hex(size=5)", preset("hex", "tiny"), seed=12)


def test_player0_view_values_are_the_network_outputs(hex_model: LoadedModel) -> None:
    states = sample_positions(hex_model.game, 12, seed=1)
    ev = network_evaluator(hex_model, states[0], backend="onnxruntime")
    assert ev.bounds == (-1.0, 1.0)
    got = ev.evaluate(states)
    assert np.allclose(got, raw(hex_model, states), atol=1e-5)
    assert ev.positions == 12 and ev.batches == 1


def test_side_to_move_models_are_turned_into_player0_view() -> None:
    game = make_game("einstein")
    model = make_model(game, preset("einstein", "tiny", output="linear"), seed=3,
                       value=ValueSpec(view="side_to_move", scale=2.0, lo=-3.0, hi=3.0))
    states = sample_positions(game, 30, seed=4)
    ev = network_evaluator(model, states[0], backend="onnxruntime")
    assert ev.bounds == (-3.0, 3.0)
    sign = np.array([1.0 if s.encode()[12, 0, 0] > 0.5 else -1.0 for s in states])
    assert all((sg > 0) == (s.current_player() == 0)
               for sg, s in zip(sign, states, strict=True) if not s.is_chance_node())
    expected = np.clip(2.0 * raw(model, states) * sign, -3.0, 3.0)
    assert np.allclose(ev.evaluate(states), expected, atol=1e-5)
    assert {s.current_player() for s in states} >= {0, 1}


def test_colour_swapping_symmetry_is_negated_back(hex_model: LoadedModel) -> None:
    states = sample_positions(hex_model.game, 8, seed=3)
    swap = next(k for k in range(states[0].num_symmetries)
                if states[0].symmetry_swaps_colours(k))
    ev = network_evaluator(hex_model, states[0], backend="onnxruntime", symmetry=swap)
    assert np.allclose(ev.evaluate(states), -raw(hex_model, states, swap), atol=1e-5)


def test_the_model_must_fit_the_state(hex_model: LoadedModel) -> None:
    other = make_game("hex(size=6)").new_initial_state()
    with pytest.raises(ModelFileError, match="not hex"):
        network_evaluator(hex_model, other, backend="onnxruntime")


def test_prepared_network_function_is_reused(hex_model: LoadedModel) -> None:
    fn = NetworkFunction(hex_model, make_backend("onnxruntime", hex_model))
    state = hex_model.game.new_initial_state()
    a, b = network_evaluator(fn, state), network_evaluator(fn, state)
    a.evaluate([state])
    b.evaluate([state, state])
    assert fn.calls == 2 and fn.positions == 3


# ---------------------------------------------------------------- the evaluation cache


def play_search(ev: Evaluator, spec: str, iterations: int,
                mode: str = "ubfms") -> list[tuple[int, float, list[tuple[int, float]]]]:
    """Decisions and root values of a few searches along a seeded game."""
    state = make_game(spec).new_initial_state()
    rng = np.random.default_rng(0)
    out = []
    for _ in range(4):
        while state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
        if state.is_terminal():
            break
        result = make_search(mode, ev, SearchParams(seed=1)).run(
            state, Stopper(iterations=iterations))
        out.append((result.action, result.value, [(c.action, c.value) for c in
                                                  result.children]))
        state.apply_action(result.action)
    return out


@pytest.mark.parametrize("spec", ["hex(size=5)", "einstein"])
def test_cached_evaluator_gives_the_uncached_search(spec: str) -> None:
    game = make_game(spec)
    model = make_model(game, preset(game.name, "tiny"), seed=5)
    proto = game.new_initial_state()
    plain = play_search(network_evaluator(model, proto, backend="onnxruntime"), spec, 60)
    cache = CachedEvaluator(network_evaluator(model, proto, backend="onnxruntime"), cache_mb=1)
    cached = play_search(cache, spec, 60)
    assert cached == plain
    assert cache.hits + cache.misses == cache.positions
    assert cache.inner.positions == cache.misses


def test_transpositions_are_answered_from_the_cache(hex_model: LoadedModel) -> None:
    proto = hex_model.game.new_initial_state()
    cache = CachedEvaluator(network_evaluator(hex_model, proto, backend="onnxruntime"),
                            cache_mb=4)
    result = make_search("ubfms", cache, SearchParams(seed=1)).run(proto, Stopper(iterations=300))
    assert result.evaluations == cache.positions
    assert cache.hits > 0, "a 300-node Hex 5x5 tree has transpositions"
    assert cache.inner.positions == cache.misses < cache.positions
    assert 0.0 < cache.hit_rate < 1.0
    before = cache.inner.positions
    make_search("ubfms", cache, SearchParams(seed=1)).run(proto, Stopper(iterations=300))
    # the same search again: from the cache, but for the rare set that overflowed its 2 ways
    assert cache.inner.positions - before <= 0.01 * result.evaluations
    stats = cache.stats()
    assert stats["hits"] == cache.hits
    assert stats["inner_positions"] == cache.inner.positions


def test_memory_bound_holds_under_eviction() -> None:
    cache = CachedEvaluator(heuristic_for("hex"), entries=64)
    assert cache.entries == 64 and cache.memory_bytes == 64 * 16
    states = sample_positions(make_game("hex(size=7)"), 400, seed=9, max_plies=30)
    values = cache.evaluate(states)
    assert cache.occupied() <= 64
    assert np.array_equal(values, heuristic_for("hex").evaluate(states))
    again = cache.evaluate(states)               # evicted ones are recomputed, not wrong
    assert np.array_equal(again, values)
    for mb in (0.5, 1.0, 3.0):
        sized = CachedEvaluator(heuristic_for("hex"), cache_mb=mb)
        assert sized.memory_bytes <= mb * (1 << 20) < 2 * sized.memory_bytes


def test_cache_bounds_stats_and_clear() -> None:
    inner = heuristic_for("hex")
    cache = CachedEvaluator(inner, entries=1024)
    assert cache.bounds == inner.bounds and cache.inner is inner
    state = make_game("hex(size=5)").new_initial_state()
    state.apply_move("c3")
    cache.evaluate([state, state])          # one batch: both miss (stored at the flush)
    cache.evaluate([state])
    assert (cache.hits, cache.misses, cache.stores) == (1, 2, 2)
    assert cache.hit_rate == pytest.approx(1 / 3)
    cache.clear()
    cache.reset_stats()
    assert cache.occupied() == 0 and cache.hit_rate == 0.0
    with pytest.raises(ValueError, match="at least 2 entries"):
        CachedEvaluator(inner, entries=1)
    with pytest.raises(ValueError, match="cache_mb"):
        CachedEvaluator(inner, cache_mb=0)


def test_an_inner_failure_leaves_the_cache_usable(hex_model: LoadedModel) -> None:
    from descent.search_cy.eval.evaluator import BatchEvaluator

    calls = {"n": 0}

    def flaky(batch: np.ndarray) -> np.ndarray:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("backend fell over")
        return np.zeros(batch.shape[0])

    proto = hex_model.game.new_initial_state()
    cache = CachedEvaluator(BatchEvaluator(flaky, proto), entries=256)
    with pytest.raises(RuntimeError, match="fell over"):
        cache.evaluate([proto])
    assert list(cache.evaluate([proto])) == [0.0]
