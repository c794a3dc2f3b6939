"""A network on the C heuristic (search_cy/eval/based_eval.pyx): with a zero head it is the
heuristic; otherwise tanh(s * atanh(clip(h)) + r) of its parts in player 0's view, for an
nnue (dice chess) and an mlp (EinStein); refusals; deterministic threaded searches."""

from __future__ import annotations

import math

import numpy as np
import pytest

from descent.nets.arch import BASE_CLIP, init_weights, preset
from descent.nets.backends.native import mlp_layers
from descent.nets.encoding import TO_MOVE_PLANE, sample_positions
from descent.nets.modelfile import make_model
from descent.search_cy.eval.based_eval import BasedEvaluator
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.eval.mlp_eval import MLPEvaluator
from descent.search_cy.eval.nnue_eval import NNUEEvaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper

RAW = {"tanh_output": False, "scale": 1.0, "lo": -1e9, "hi": 1e9}


def raw_network(game: str, seed: int, zero_head: bool = False):
    """The preset ``hybrid``'s network of ``game`` alone, raw, in player 0's view."""
    arch = preset(game, "hybrid")
    g = make_game(game)
    weights = init_weights(arch, g.new_initial_state().encoding_shape, seed)
    if not zero_head:
        rng = np.random.default_rng(seed)
        weights["head.weight"] = rng.normal(0, 0.5, weights["head.weight"].shape).astype(
            np.float32)
    model = make_model(g, arch, weights)
    if arch.family == "nnue":
        return NNUEEvaluator(weights["ft.weight"], weights["ft.bias"], mlp_layers(model),
                             **RAW)
    return MLPEvaluator(g.new_initial_state(), mlp_layers(model),
                        to_move_plane=TO_MOVE_PLANE[game], **RAW)


def decisions(game: str, count: int = 20):
    return [s for s in sample_positions(make_game(game), 3 * count, seed=3)
            if not s.is_terminal()][:count]


@pytest.mark.parametrize("game", ["dicechess", "einstein"])
def test_a_zero_head_is_the_heuristic_and_any_other_adds_to_its_atanh(game: str) -> None:
    states = decisions(game)
    heuristic = heuristic_for(game).evaluate(states)
    zero = BasedEvaluator(raw_network(game, 1, zero_head=True), heuristic_for(game),
                          base_scale=1.0, base_clip=BASE_CLIP)
    assert np.allclose(zero.evaluate(states), heuristic, atol=1e-9)
    network = raw_network(game, 2)
    based = BasedEvaluator(network, heuristic_for(game), base_scale=1.3, base_clip=BASE_CLIP)
    raw = network.evaluate(states)
    assert np.std(raw) > 1e-3                     # the head says something
    expected = [math.tanh(1.3 * math.atanh(max(-BASE_CLIP, min(BASE_CLIP, h))) + r)
                for h, r in zip(heuristic, raw, strict=True)]
    assert np.allclose(based.evaluate(states), expected, atol=1e-9)
    # spawned for a second thread, the parts are fresh and the values the same
    twin = based.spawn()
    assert twin.network is not network and twin.base is not based.base
    assert np.array_equal(twin.evaluate(states), based.evaluate(states))
    assert twin.widths_ == network.widths_


def test_bad_parts_are_refused_and_planes_are_not_read() -> None:
    network = raw_network("dicechess", 1)
    heuristic = heuristic_for("dicechess")
    with pytest.raises(ValueError, match="clip 1.0 within"):
        BasedEvaluator(network, heuristic, base_scale=1.0, base_clip=1.0)
    with pytest.raises(ValueError, match="scale nan must be finite"):
        BasedEvaluator(network, heuristic, base_scale=float("nan"), base_clip=0.9)
    with pytest.raises(ValueError, match="needs both"):
        BasedEvaluator(network, None, base_scale=1.0, base_clip=0.9)
    based = BasedEvaluator(network, heuristic, base_scale=1.0, base_clip=0.9)
    with pytest.raises(ValueError, match="reads positions, not a batch of planes"):
        based.forward(np.zeros((1, 24, 8, 8), np.float32))
    with pytest.raises(ValueError, match="values dice chess states"):
        based.value(make_game("einstein").new_initial_state())


@pytest.mark.parametrize("game", ["dicechess", "einstein"])
def test_expectiminimax_on_it_is_deterministic_and_threads_share_it(game: str) -> None:
    states = [s for s in decisions(game, 12) if not s.is_chance_node()][:5]

    def based() -> BasedEvaluator:
        return BasedEvaluator(raw_network(game, 4), heuristic_for(game), base_scale=1.1,
                              base_clip=BASE_CLIP)

    runs = []
    for _ in range(2):
        search = make_search("expectiminimax", based(), SearchParams(seed=1))
        runs.append([(r.action, r.value, r.nodes) for r in
                     (search.run(s, Stopper(nodes=3000)) for s in states)])
    assert runs[0] == runs[1]
    threaded = make_search("expectiminimax", based(), SearchParams(seed=1, threads=2))
    for s in states:
        assert threaded.run(s, Stopper(nodes=3000)).action in s.legal_actions()
