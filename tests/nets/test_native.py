"""The native backend: mlp networks in C inside the search give the values ONNX Runtime and
the float64 reference give, in every view, symmetry and bound convention."""

from __future__ import annotations

import numpy as np
import pytest

from descent.nets.arch import Architecture, mlp, preset
from descent.nets.backends import make_backend, runs_model
from descent.nets.backends.native import native_evaluator
from descent.nets.encoding import encode_batch, sample_positions
from descent.nets.evaluator import network_evaluator
from descent.nets.modelfile import LoadedModel, ValueSpec, load_model, make_model, save_model
from descent.nets.onnx_graph import reference_forward
from descent.search_cy.eval.mlp_eval import MLPEvaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper

GAMES = ["hex(size=5)", "einstein", "einstein(setup=random)", "dicechess"]


def nonterminal(spec: str, count: int, seed: int) -> list:
    return [s for s in sample_positions(make_game(spec), count, seed=seed)
            if not s.is_terminal()]


@pytest.mark.parametrize("spec", GAMES)
@pytest.mark.parametrize("view", ["player0", "side_to_move"])
def test_native_values_equal_onnxruntime(spec: str, view: str) -> None:
    model = make_model(spec, mlp((24, 8)), value=ValueSpec(view=view, scale=1.0), seed=3)
    states = nonterminal(spec, 60, seed=4)
    native = network_evaluator(model, states[0], backend="native")
    assert isinstance(native, MLPEvaluator)
    ort = network_evaluator(model, states[0], backend="onnxruntime")
    assert np.allclose(native.evaluate(states), ort.evaluate(states), atol=1e-5)
    assert native.positions == len(states)


@pytest.mark.parametrize("spec", GAMES)
def test_forward_equals_the_float64_reference(spec: str) -> None:
    model = make_model(spec, mlp((32, 16, 8)), seed=5)
    batch = encode_batch(nonterminal(spec, 40, seed=6))
    backend = make_backend("native", model)
    assert np.allclose(backend.evaluate(batch), reference_forward(model, batch), atol=1e-5)


@pytest.mark.parametrize("spec", ["hex(size=5)", "einstein", "dicechess"])
@pytest.mark.parametrize("list_form", [True, False])
def test_a_value_does_not_depend_on_the_positions_valued_before_it(spec: str,
                                                                   list_form: bool) -> None:
    # the dense path clears all-ones planes in its scratch input, the list path sorts its
    # scratch list: no trace of one position may carry over to the next
    model = make_model(spec, mlp((40, 24)), seed=11)
    states = nonterminal(spec, 60, seed=12)
    one_by_one = [native_evaluator(model, s, list_form=list_form).evaluate([s])[0]
                  for s in states]
    shared = native_evaluator(model, states[0], list_form=list_form)
    forwards = shared.evaluate(states)
    backwards = shared.evaluate(states[::-1])[::-1]
    assert np.array_equal(forwards, one_by_one)
    assert np.array_equal(backwards, one_by_one)


@pytest.mark.parametrize("spec", GAMES)
def test_the_list_form_and_the_dense_form_give_the_same_bits(spec: str) -> None:
    # a search values states from c_features where the game has it, forward() from planes
    model = make_model(spec, mlp((40, 24)), value=ValueSpec(view="side_to_move"), seed=16)
    states = nonterminal(spec, 60, seed=17)
    listed = network_evaluator(model, states[0], backend="native")
    assert isinstance(listed, MLPEvaluator) and listed.list_form
    planes = native_evaluator(model, states[0], list_form=False)
    assert np.array_equal(listed.evaluate(states), planes.evaluate(states))
    raw = make_backend("native", model).evaluate(encode_batch(states))
    assert np.array_equal(np.float32(np.abs(planes.evaluate(states))), np.abs(raw))


def test_all_ones_planes_and_fractional_inputs_equal_the_reference() -> None:
    # the encoders give 0/1 planes; the kernel also takes any other input value
    spec = "dicechess"
    model = make_model(spec, mlp((48, 20)), seed=13)
    rng = np.random.default_rng(14)
    batch = encode_batch(nonterminal(spec, 30, seed=15))
    batch[::3, 5] = 1.0                                   # another all-ones plane
    batch[1::3, 7, :4] = rng.uniform(-2.0, 2.0, size=(len(batch[1::3]), 4, 8))
    batch[2::3, 9, 3, 3] = 0.25
    before = batch.copy()
    got = make_backend("native", model).evaluate(batch)
    assert np.array_equal(batch, before)                  # the caller's batch is untouched
    assert np.allclose(got, reference_forward(model, batch), atol=1e-5)


def test_scaled_linear_outputs_are_clipped_to_the_bounds() -> None:
    spec = "einstein"
    model = make_model(spec, mlp((16,)).with_output("linear"),
                       value=ValueSpec(scale=50.0, lo=-3.0, hi=3.0, heuristic="depth_mul"),
                       seed=7)
    states = nonterminal(spec, 50, seed=8)
    got = network_evaluator(model, states[0], backend="native").evaluate(states)
    want = np.clip(50.0 * reference_forward(model, encode_batch(states)), -3.0, 3.0)
    assert np.allclose(got, want, atol=1e-4)
    assert (np.abs(got) == 3.0).any()          # the scale does push some values to the bounds


def test_colour_swapping_symmetries_are_negated_back() -> None:
    spec = "hex(size=5)"
    model = make_model(spec, mlp((16, 8)), seed=9)
    states = nonterminal(spec, 30, seed=10)
    prototype = states[0]
    assert prototype.num_symmetries > 1
    for sym in range(prototype.num_symmetries):
        native = network_evaluator(model, prototype, backend="native", symmetry=sym)
        ort = network_evaluator(model, prototype, backend="onnxruntime", symmetry=sym)
        assert np.allclose(native.evaluate(states), ort.evaluate(states), atol=1e-5)


def test_auto_gives_the_search_the_c_evaluator_for_an_mlp(tmp_path: object) -> None:
    model = make_model("einstein", preset("einstein", "mlp"), seed=1)
    state = model.game.new_initial_state()
    assert isinstance(network_evaluator(model, state, backend="auto"), MLPEvaluator)
    assert runs_model("native", model)
    conv = make_model("einstein", preset("einstein", "tiny"), seed=1)
    assert not runs_model("native", conv)
    with pytest.raises(ValueError, match="runs the mlp and nnue families only"):
        make_backend("native", conv)


def test_a_search_with_the_native_network_equals_one_with_onnxruntime() -> None:
    """Same values: the expectiminimax result is the same move and value (the node counts
    differ: a batch evaluator is searched with chance batches, the C one with Star2)."""
    spec = "einstein"
    model = make_model(spec, mlp((32, 8)), seed=11)
    for state in nonterminal(spec, 8, seed=12):
        results = []
        for backend in ("native", "onnxruntime"):
            ev = network_evaluator(model, state, backend=backend)
            search = make_search("expectiminimax", ev, SearchParams(seed=1, max_depth=3))
            results.append(search.run(state, Stopper()))
        assert results[0].action == results[1].action
        assert results[0].value == pytest.approx(results[1].value, abs=1e-5)


def test_mlp_models_round_trip_through_the_model_file(tmp_path: object) -> None:
    from pathlib import Path

    model = make_model("dicechess", preset("dicechess", "mlp"), seed=2)
    path = save_model(model, Path(str(tmp_path)) / "m.dnet")
    loaded: LoadedModel = load_model(str(path))
    assert loaded.arch == model.arch and loaded.arch.family == "mlp"
    states = nonterminal("dicechess", 10, seed=3)
    assert np.array_equal(native_evaluator(loaded, states[0]).evaluate(states),
                          native_evaluator(model, states[0]).evaluate(states))


def test_bad_layers_are_refused_and_leave_the_evaluator_as_it_was() -> None:
    model = make_model("einstein", mlp((8,)), seed=4)
    state = model.game.new_initial_state()
    ev = native_evaluator(model, state)
    states = nonterminal("einstein", 5, seed=5)
    before = ev.evaluate(states)
    w0, b0 = model.weights["fc.0.weight"], model.weights["fc.0.bias"]
    head_w, head_b = model.weights["head.weight"], model.weights["head.bias"]
    bad = w0.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="not all finite"):
        ev.load([(bad, b0), (head_w, head_b)])
    with pytest.raises(ValueError, match="do not take 475 inputs"):
        ev.load([(w0[:, :-1], b0), (head_w, head_b)])
    with pytest.raises(ValueError, match="a value network has 1"):
        ev.load([(w0, b0), (np.ones((2, 8), np.float32), np.zeros(2, np.float32))])
    with pytest.raises(ValueError, match="2 to 8 layers"):
        ev.load([(w0, b0)])
    assert np.array_equal(ev.evaluate(states), before)
    assert ev.widths_ == (475, 8, 1)


def test_the_mlp_family_is_checked() -> None:
    with pytest.raises(ValueError, match="no convolutions"):
        Architecture("mlp", 4, fc=(8,))
    arch = mlp((8, 4))
    assert Architecture.from_json(arch.to_json()) == arch
