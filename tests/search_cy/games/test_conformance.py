"""Conformance of every registered game and parameter set to the kernel interface.

Two layers: a C-level self-check (thousands of random games, every node checked for
hash = recomputed hash, chance probabilities summing to 1, apply/undo round trips of
every action) and Python-level checks of exact state restoration (snapshot), clone
independence, encoding and symmetries on fewer games.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from descent.search_cy.games import playout
from descent.search_cy.games.registry import all_test_specs, make_game, registered_games
from descent.search_cy.games.state import GameState
from tests.conftest import random_action, random_game

SPECS = list(all_test_specs())
# Python-level games per spec: exact snapshots at every node are costly on big boards.
PY_GAMES = 40


def long_games(spec: str) -> bool:
    """Whether a spec's random games run long: dice chess (repetition and 100-ply draws,
    some 200 plies) and 25x25 Hex (some 580 plies; 11x11 takes 105)."""
    return spec.startswith(("dicechess", "hex(size=25,"))


def py_games(spec: str) -> int:
    """PY_GAMES, a quarter of them on 25x25 Hex: 10 of its games are some 5800 nodes, more
    than 40 games of 11x11 (4200)."""
    return PY_GAMES // 4 if spec.startswith("hex(size=25,") else PY_GAMES


def test_all_three_games_are_registered() -> None:
    assert registered_games() == ["dicechess", "einstein", "hex"]


@pytest.mark.parametrize("spec", SPECS)
def test_c_self_check(spec: str) -> None:
    state = make_game(spec).new_initial_state()
    before = state.snapshot()
    # long games: a fifth of the games, still tens of thousands of nodes
    games = 200 if long_games(spec) else 1000
    report = playout.self_check(state, games, seed=12345, max_steps=20000)
    assert report["nodes"] > games
    violations = {k: v for k, v in report.items() if k != "nodes" and v}
    assert not violations, f"{spec}: {violations} over {report['nodes']} nodes"
    assert state.snapshot() == before


@pytest.mark.parametrize("spec", SPECS)
def test_game_spec_round_trip(spec: str) -> None:
    game = make_game(spec)
    assert make_game(game.spec) == game
    assert make_game(game.spec).spec == game.spec


@pytest.mark.parametrize("spec", SPECS)
def test_apply_undo_restores_exact_state(spec: str) -> None:
    game = make_game(spec)
    rng = random.Random(7)
    initial = game.new_initial_state().snapshot()
    for _ in range(py_games(spec)):
        state = game.new_initial_state()
        path: list[tuple[int, tuple[object, ...]]] = []
        while not state.is_terminal() and len(path) < 2000:
            snap = state.snapshot()
            assert state.hash == state.recompute_hash()
            action = random_action(state, rng)
            state.apply_action(action)
            after = state.snapshot()
            state.undo()
            assert state.snapshot() == snap, f"{spec}: undo of {action} did not restore"
            state.apply_action(action)
            assert state.snapshot() == after
            path.append((action, snap))
        assert state.history() == [a for a, _ in path]
        for action, snap in reversed(path):
            assert state.history()[-1] == action
            state.undo()
            assert state.snapshot() == snap
        assert state.snapshot() == initial
        with pytest.raises(IndexError):
            state.undo()


@pytest.mark.parametrize("spec", SPECS)
def test_chance_and_players(spec: str) -> None:
    game = make_game(spec)
    rng = random.Random(11)
    for _ in range(py_games(spec)):
        state = game.new_initial_state()
        while not state.is_terminal():
            player = state.current_player()
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                assert outcomes and math.isclose(sum(p for _, p in outcomes), 1.0)
                assert len({a for a, _ in outcomes}) == len(outcomes)
                assert state.legal_actions() == []
            else:
                assert player in (0, 1)
                legal = state.legal_actions()
                assert legal and len(legal) == len(set(legal)) <= state.max_actions
                assert state.chance_outcomes() == []
            state.apply_action(random_action(state, rng))
        assert state.current_player() < 0 and not state.is_chance_node()
        assert state.terminal_value() in (-1.0, 0.0, 1.0)
        assert state.legal_actions() == []


@pytest.mark.parametrize("spec", SPECS)
def test_clone_is_independent(spec: str) -> None:
    game = make_game(spec)
    rng = random.Random(3)
    state = game.new_initial_state()
    for _ in range(12):
        if state.is_terminal():
            break
        state.apply_action(random_action(state, rng))
    copy = state.clone()
    assert copy.snapshot() == state.snapshot()
    snap = state.snapshot()
    while not copy.is_terminal():
        copy.apply_action(random_action(copy, rng))
    assert state.snapshot() == snap
    while copy.history_length > state.history_length:
        copy.undo()
    assert copy.snapshot() == snap


@pytest.mark.parametrize("spec", SPECS)
def test_notation_round_trip(spec: str) -> None:
    game = make_game(spec)
    rng = random.Random(5)
    for _ in range(py_games(spec) // 2):
        state = game.new_initial_state()
        step = 0
        while not state.is_terminal():
            step += 1
            if step % 7 != 1:  # sampled: rebuilding from text is linear in the game length
                state.apply_action(random_action(state, rng))
                continue
            text = state.to_text()
            again = game.state_from_text(text)
            assert again.to_text() == text
            assert again.hash == state.hash
            assert again.legal_actions() == state.legal_actions()
            if not state.is_chance_node():
                for action in state.legal_actions():
                    assert state.string_to_action(state.action_to_string(action)) == action
            state.apply_action(random_action(state, rng))


def _walk(game_spec: str, seed: int) -> list[GameState]:
    """States along one random game (clones), the initial and final ones included."""
    rng = random.Random(seed)
    state = make_game(game_spec).new_initial_state()
    states = [state.clone()]
    while not state.is_terminal():
        state.apply_action(random_action(state, rng))
        states.append(state.clone())
    return states


@pytest.mark.parametrize("spec", SPECS)
def test_encoding_and_symmetries(spec: str) -> None:
    game = make_game(spec)
    for seed in range(10):
        states = _walk(spec, seed)
        for state in states[:: max(1, len(states) // 15)]:
            planes = state.encode()
            assert planes.dtype == np.float32
            assert planes.shape == state.encoding_shape
            assert np.all((planes == 0.0) | (planes == 1.0))
            out = np.full(state.encoding_shape, 7.0, dtype=np.float32)
            assert np.array_equal(state.encode(out), planes)
            for k in range(state.num_symmetries):
                image = state.encode(symmetry=k)
                assert np.all((image == 0.0) | (image == 1.0))
                if not state.symmetry_swaps_colours(k):
                    # A colour-keeping symmetry only permutes cells within each plane.
                    assert np.array_equal(image.sum(axis=(1, 2)), planes.sum(axis=(1, 2)))
                for action in state.legal_actions():
                    mapped = state.symmetry_action(action, k)
                    assert state.symmetry_action(mapped, k) == action  # all are involutions
        # Colour-keeping symmetries: replaying the mapped actions gives the image state.
        final = states[-1]
        for k in range(1, final.num_symmetries):
            if final.symmetry_swaps_colours(k):
                continue
            original = game.new_initial_state()
            image_state = game.new_initial_state()
            for action in final.history():
                mapped = original.symmetry_action(action, k)
                if original.is_chance_node():
                    assert mapped in [a for a, _ in image_state.chance_outcomes()]
                else:
                    assert sorted(original.symmetry_action(a, k)
                                  for a in original.legal_actions()) == \
                        image_state.legal_actions()
                assert np.array_equal(original.encode(symmetry=k), image_state.encode())
                original.apply_action(action)
                image_state.apply_action(mapped)
            assert image_state.terminal_value() == final.terminal_value()
    with pytest.raises(ValueError):
        game.new_initial_state().encode(symmetry=99)


@pytest.mark.parametrize("spec", SPECS)
def test_the_list_form_of_the_encoding_is_the_encoding(spec: str) -> None:
    # mlp_eval.pyx sums weight rows from c_features instead of scanning c_encode's planes
    game = make_game(spec)
    if game.new_initial_state().features() is None:
        pytest.skip(f"{spec}: no list form (the evaluator reads the dense encoding)")
    for seed in range(6):
        states = _walk(spec, seed)
        for state in states[:: max(1, len(states) // 15)]:
            planes, height, width = state.encoding_shape
            cells = height * width
            for k in range(state.num_symmetries):
                features = state.features(symmetry=k)
                assert features is not None
                assert len(set(features.tolist())) == len(features)
                assert features.min(initial=0) >= 0
                assert features.max(initial=0) < planes * (cells + 1)
                dense = np.zeros(planes * cells, dtype=np.float32)
                for f in features:
                    if f < planes * cells:
                        dense[f] = 1.0
                    else:
                        dense[(f - planes * cells) * cells:(f - planes * cells + 1) * cells] = 1.0
                assert np.array_equal(dense.reshape(state.encoding_shape),
                                      state.encode(symmetry=k))


@pytest.mark.parametrize("spec", SPECS)
def test_history_length_counts_what_undo_can_take_back(spec: str) -> None:
    state = make_game(spec).new_initial_state()
    assert state.history_length == 0
    for steps, _ in enumerate(random_game(state, random.Random(5), max_steps=40), 1):
        assert state.history_length == steps == len(state.history())
    for _ in range(state.history_length):
        state.undo()
    assert state.history_length == 0


def _is_turn(state: GameState) -> bool:
    """Whether the node is a turn for cumulative mobility: a player chooses a move (an
    EinStein set-up is not one)."""
    if state.current_player() not in (0, 1):
        return False
    return getattr(state, "phase_name", "move") != "setup"


@pytest.mark.parametrize("spec", SPECS)
def test_mobility_counts_follow_apply_undo_and_clone(spec: str) -> None:
    # the kernels' counts against the turns and legal moves a Python replay sees
    game = make_game(spec)
    rng = random.Random(11)
    for _ in range(1 if long_games(spec) else 4):
        state = game.new_initial_state()
        assert state.mobility is None
        state.track_mobility()
        counts = [[0, 0], [0, 0]]
        seen = [((0, 0), (0, 0))]
        while not state.is_terminal() and len(seen) < 400:
            if _is_turn(state):
                p = state.current_player()
                counts[p][0] += 1
                counts[p][1] += len(state.legal_actions())
            state.apply_action(random_action(state, rng))
            seen.append(((counts[0][0], counts[0][1]), (counts[1][0], counts[1][1])))
            assert state.mobility == seen[-1]
        # a state that starts tracking late finds the same counts from its history
        late = game.new_initial_state()
        for action in state.history():
            late.apply_action(action)
        assert late.mobility is None
        late.track_mobility()
        assert late.mobility == state.mobility
        copy = state.clone()
        assert copy.mobility == state.mobility
        while seen:
            assert state.mobility == seen.pop()
            if state.history_length:
                state.undo()
        assert copy.mobility == late.mobility      # the clone kept its own counts
