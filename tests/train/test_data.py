"""Learning data: symmetries, tree learning = the tree's values, replay memory, heuristics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from descent.search_cy.eval.evaluator import ZeroEvaluator
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper
from descent.train.data import ReplayMemory, StateStore, draw_outcome
from descent.train.heuristics import Reinforcement, reinforcement_for
from tests.train.conftest import all_states, solve


def test_symmetry_augmentation_preserves_exact_values() -> None:
    """Every symmetric image of every Hex 3x3 position, labelled as the store labels it
    (value negated for colour-swapping symmetries), agrees with the exact value of any
    other position encoded the same way."""
    states = all_states("hex(size=3)")
    memo: dict[int, float] = {}
    store = StateStore(states[0], list(range(states[0].num_symmetries)))
    for state in states:
        store.put(state, solve(state, memo), True)
    planes, values, _ = store.arrays()
    assert planes.shape == (len(states) * 4, 3, 5, 5)
    label: dict[bytes, float] = {}
    for row, value in zip(planes, values, strict=True):
        key = row.tobytes()
        assert label.setdefault(key, float(value)) == float(value)
    # the images of symmetry 0 are the identity encodings
    assert np.array_equal(planes[0], states[0].encode())
    swaps = [states[0].symmetry_swaps_colours(s) for s in range(4)]
    assert any(swaps) and not all(swaps)


def _searched(spec: str, iterations: int = 60, seed: int = 1) -> tuple[GameState, Any]:
    game = make_game(spec)
    state = game.new_initial_state()
    rng = np.random.default_rng(seed)
    while state.is_chance_node():
        state.apply_action(draw_outcome(state.chance_outcomes(), rng.random()))
    runner = make_search("descent", heuristic_for(state), SearchParams(hash_mb=4, seed=seed))
    runner.run(state, Stopper(iterations=iterations))
    return state, runner


@pytest.mark.parametrize("spec", ["hex(size=4)", "einstein"])
def test_tree_learning_data_is_the_search_trees_values(spec: str) -> None:
    state, runner = _searched(spec)
    table = runner.impl.table
    syms = list(range(state.num_symmetries))
    planes, values, resolved = runner.learning_data(state, terminals=True, symmetries=syms)
    reinf = reinforcement_for(state, "gain")
    store = StateStore(state, syms)
    seen: list[tuple[int, float]] = []

    def emit(s: GameState, v: float, r: bool) -> None:
        store.put(s, v, r)
        seen.append((s.hash, v))

    runner.walk_tree(state, reinf.terminal, emit, recompute=False)
    # every non-terminal state carries the value stored in the table
    for key, value in seen:
        node = table.node(key)
        if node is not None:
            assert value == pytest.approx(node[0])
    p2, v2, r2 = store.arrays()
    assert len(p2) == len(planes) > 4 * 10
    ours = sorted(zip((r.tobytes() for r in p2), v2.tolist(), r2.tolist(), strict=True))
    theirs = sorted(zip((r.tobytes() for r in planes), values.tolist(), resolved.tolist(),
                        strict=True))
    assert ours == theirs


def test_determinized_chance_state_takes_its_realised_childs_value() -> None:
    state, runner = _searched("einstein", iterations=80)
    table = runner.impl.table
    reinf = reinforcement_for(state, "gain")
    # a chance node of the tree with two children of different values
    chance_key = None
    for action in state.legal_actions():
        state.apply_action(action)
        node = None if state.is_terminal() else table.node(state.hash)
        if node is not None and node[4] == -1:
            kids = node[5]
            if len({round(k[1], 6) for k in kids}) > 1:
                chance_key = state.hash
                realised = max(kids, key=lambda k: k[1])
                expectation = node[0]
                state.undo()
                break
        state.undo()
    assert chance_key is not None
    got: dict[int, float] = {}
    runner.walk_tree(state, reinf.terminal, lambda s, v, r: got.__setitem__(s.hash, v),
                     recompute=False, fixed={chance_key: realised[0]})
    plain: dict[int, float] = {}
    runner.walk_tree(state, reinf.terminal, lambda s, v, r: plain.__setitem__(s.hash, v),
                     recompute=False)
    assert plain[chance_key] == pytest.approx(expectation)
    # the realised child: its stored value when it was expanded, else its evaluation
    child_value = None
    for action in state.legal_actions():
        state.apply_action(action)
        if state.hash == chance_key:
            state.apply_action(realised[0])
            child = None if state.is_terminal() else table.node(state.hash)
            child_value = realised[1] if child is None else child[0]
            state.undo()
        state.undo()
        if child_value is not None:
            break
    assert child_value is not None
    assert got[chance_key] == pytest.approx(child_value)
    assert got[chance_key] != pytest.approx(plain[chance_key])
    # with values backed up again, the parents of the fixed chance state see it too
    backed: dict[int, float] = {}
    root_value = runner.walk_tree(state, reinf.terminal,
                                  lambda s, v, r: backed.__setitem__(s.hash, v),
                                  recompute=True, fixed={chance_key: realised[0]})
    assert root_value is not None and backed[state.hash] == root_value


def test_replay_memory_keeps_the_last_mu_games_and_samples_sigma() -> None:
    memory = ReplayMemory(capacity=3)
    rng = np.random.default_rng(0)
    for g in range(7):
        planes = (rng.random((10 + g, 3, 4, 4)) < 0.5).astype(np.float32)
        memory.add(planes, np.full(10 + g, float(g), dtype=np.float32))
        assert len(memory) <= 3
    assert len(memory) == 3
    assert sorted({float(v[0]) for _, v in memory.games}) == [4.0, 5.0, 6.0]
    # bit-packed storage round-trips exactly
    planes, values = memory.game(-1)
    assert planes.shape == (16, 3, 4, 4) and set(np.unique(planes)) <= {0.0, 1.0}
    assert memory.games[-1][0].dtype == np.uint8
    sample = memory.sample(0.5, rng, skip_newest=1)
    assert sample is not None
    assert len(sample[1]) == round(0.5 * (14 + 15))
    assert set(sample[1].tolist()) <= {4.0, 5.0}
    assert memory.sample(0.0, rng) is None
    capped = ReplayMemory(capacity=100, max_pairs=25)
    for _ in range(5):
        capped.add(np.zeros((10, 1, 2, 2), np.float32) + 0.5, np.zeros(10, np.float32))
        assert capped.pairs <= 25
    assert capped.games[-1][0].dtype == np.float32       # not binary: kept as floats


def test_reinforcement_heuristics_values_and_applicability() -> None:
    hex4 = make_game("hex(size=4)").new_initial_state()
    for action in (0, 1, 4, 5, 8, 9, 12):      # a column for player 0
        hex4.apply_action(action)
    assert hex4.is_terminal() and hex4.terminal_value() == 1.0
    p = 16
    add = Reinforcement("depth_add", "hex", p)
    mul = Reinforcement("depth_mul", "hex", p)
    assert add.terminal(hex4) == p - 7 + 1 and add.scale == p + 1 and add.output == "linear"
    assert mul.terminal(hex4) == pytest.approx((p + 1) / 7) and mul.scale == p + 1
    assert Reinforcement("gain", "hex", p).terminal(hex4) == 1.0
    with pytest.raises(ValueError, match="does not apply"):
        Reinforcement("presence", "hex", p)
    with pytest.raises(ValueError, match="does not apply"):
        Reinforcement("score", "einstein", 100)
    ewn = make_game("einstein").new_initial_state()
    rng = np.random.default_rng(2)
    while not ewn.is_terminal():
        if ewn.is_chance_node():
            ewn.apply_action(draw_outcome(ewn.chance_outcomes(), rng.random()))
        else:
            legal = ewn.legal_actions()
            ewn.apply_action(legal[int(rng.integers(len(legal)))])
    presence = Reinforcement("presence", "einstein", 100).terminal(ewn)
    gain = ewn.terminal_value()
    assert 1 / 3 - 1e-9 <= gain * presence <= 1.0
    diff = ewn.cubes_left(0) - ewn.cubes_left(1)  # type: ignore[attr-defined]
    assert presence == pytest.approx((gain + 0.5 * diff / 6) / 1.5)
    assert math.isfinite(presence)
    # cumulative mobility applies to every game, learned unscaled within +-max_actions
    mobility = reinforcement_for(ewn, "mobility")
    assert mobility.scale == 1.0 and mobility.output == "linear"
    assert mobility.bounds == (-ewn.max_actions, ewn.max_actions)
    assert abs(mobility.terminal(ewn)) <= ewn.max_actions
    assert math.copysign(1.0, mobility.terminal(ewn)) == gain
    assert reinforcement_for(hex4, "mobility").terminal(hex4) == 1.0   # player 0's win


@pytest.mark.parametrize("search", ["descent", "ubfm"])
def test_a_solved_tree_backs_up_the_solved_value(search: str) -> None:
    """Hex 3x3 is a first-player win: searched to resolution, the tree's values backed
    up again from its terminal states give the root +1, resolved, and every state the walk
    emits once, after its subtree (post-order: the root last)."""
    state = make_game("hex(size=3)").new_initial_state()
    runner = make_search(search, ZeroEvaluator(), SearchParams(hash_mb=8))
    result = runner.run(state, Stopper(iterations=100000))
    assert result.resolved and result.value == 1.0
    order: list[tuple[int, float, bool]] = []
    root_value = runner.walk_tree(state, reinforcement_for(state, "gain").terminal,
                                  lambda s, v, r: order.append((s.hash, v, r)),
                                  recompute=True, terminals=False)
    assert root_value == 1.0
    assert order[-1] == (state.hash, 1.0, True)
    assert len({key for key, _, _ in order}) == len(order)      # each state once
    assert state.ply == 0                                        # restored
    # a depth heuristic changes the terminal values the walk backs up, not the winner
    depth = reinforcement_for(state, "depth_add")
    deep = runner.walk_tree(state, depth.terminal, lambda *_: None, recompute=True)
    assert deep is not None and deep > 1.0


def test_the_tree_api_refuses_a_search_without_a_tree() -> None:
    state = make_game("einstein").new_initial_state()
    runner = make_search("expectiminimax", ZeroEvaluator(), SearchParams(hash_mb=8))
    with pytest.raises(ValueError, match="keeps no tree"):
        runner.walk_tree(state, float, lambda *_: None, recompute=True)
