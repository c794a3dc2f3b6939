"""Self-play matches: data shapes and ranges, learning modes, determinization, selection."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import ChildStat, SearchResult
from descent.train.config import SelfPlayConfig
from descent.train.data import StateStore, symmetry_list
from descent.train.heuristics import reinforcement_for
from descent.train.network import Learner
from descent.train.selfplay import GameRecord, SelfPlayer, before_move, selection_view


def play(spec: str, seed: int = 0, **changes: Any) -> tuple[GameRecord, Any]:
    game = make_game(spec)
    cfg = SelfPlayConfig(**{"iterations": 10, "hash_mb": 4, **changes})
    reinf = reinforcement_for(game.new_initial_state(), cfg.heuristic)
    learner = Learner(game, "tiny", reinf, seed=1, threads=1)
    player = SelfPlayer(game, cfg, reinf, learner.evaluator(game.new_initial_state()))
    return player.play(np.random.default_rng(seed), 0.5, seed), reinf


@pytest.mark.parametrize(("spec", "shape"), [("hex(size=3)", (3, 5, 5)),
                                             ("hex(size=4)", (3, 6, 6)),
                                             ("einstein", (19, 5, 5))])
def test_selfplay_data_has_the_right_shapes_and_values(spec: str,
                                                       shape: tuple[int, ...]) -> None:
    record, _ = play(spec, iterations=6 if spec == "einstein" else 10)
    n = len(record.values)
    assert n > 4 * record.moves                    # (rows equal after a symmetry merge)
    assert record.planes.shape == (n, *shape)
    assert record.planes.dtype == np.float32 and record.values.dtype == np.float32
    assert record.resolved.shape == (n,)
    assert np.all(np.abs(record.values) <= 1.0)
    assert set(np.unique(record.planes)) <= {0.0, 1.0}
    assert record.result in (-1.0, 0.0, 1.0)
    assert record.moves >= 2 and record.search_nodes > 0
    assert record.resolved.any()                   # terminal states are in the tree data


def test_depth_heuristic_targets_stay_within_the_scale() -> None:
    record, reinf = play("hex(size=4)", heuristic="depth_add")
    assert reinf.scale == 17.0 and reinf.output == "linear"
    assert np.all(np.abs(record.values) <= reinf.scale)
    assert np.abs(record.values).max() > 1.0       # depth units, not gain


def test_tree_learning_yields_more_pairs_than_root_learning() -> None:
    tree, _ = play("hex(size=4)", seed=5, learning="tree")
    root, _ = play("hex(size=4)", seed=5, learning="root")
    terminal, _ = play("hex(size=4)", seed=5, learning="terminal")
    assert len(root.values) == 4 * root.moves
    assert len(tree.values) > 5 * len(root.values)
    # terminal learning: every state of the match, labelled with the final result
    assert len(terminal.values) == 4 * (terminal.plies + 1)
    assert set(np.abs(terminal.values).tolist()) == {abs(terminal.result)}


def test_determinization_fixes_outcomes_and_adds_the_chance_states() -> None:
    record, reinf = play("einstein", seed=2, iterations=6, stochastic="determinization")
    assert record.chance_events
    for key, outcome in record.chance_events:
        assert record.fixed[key] == outcome         # one outcome per chance state
    assert len(record.fixed) == len({k for k, _ in record.chance_events})
    # replay the match: every chance state is in the data with its realised successor's
    # value (the next search's root value, or the result at the end)
    game = make_game("einstein")
    state = game.new_initial_state()
    rows = {row.tobytes(): float(v) for row, v in zip(record.planes, record.values,
                                                       strict=True)}
    pending: list[bytes] = []
    decision = 0
    for action in record.actions:
        if state.is_chance_node():
            pending.append(state.encode().tobytes())
        else:
            for row in pending:
                assert rows[row] == pytest.approx(record.root_values[decision])
            pending = []
            decision += 1
        state.apply_action(action)
    for row in pending:
        assert rows[row] == pytest.approx(reinf.terminal(state))
    plain, _ = play("einstein", seed=2, iterations=6)
    assert plain.fixed == {}


def one_ply_expectation(state: GameState) -> float:
    """Expectiminimax of a roll at one move's depth, by hand: each outcome's mover takes
    the best heuristic (or terminal) value among its moves, weighted by the outcome's
    probability."""
    heuristic = heuristic_for(state)
    lo, hi = heuristic.bounds
    total = 0.0
    for outcome, probability in state.chance_outcomes():
        state.apply_action(outcome)
        sign = 1.0 if state.current_player() == 0 else -1.0
        values = []
        for action in state.legal_actions():
            state.apply_action(action)
            values.append(state.terminal_value() if state.is_terminal()
                          else min(hi, max(lo, float(heuristic.evaluate([state])[0]))))
            state.undo()
        state.undo()
        total += probability * sign * max(sign * v for v in values)
    return total


@pytest.mark.parametrize("spec", ["einstein", "dicechess"])
def test_chance_learning_labels_each_roll_with_its_expectation(spec: str) -> None:
    game = make_game(spec)
    cfg = SelfPlayConfig(search="expectiminimax", learning="chance", iterations=1,
                         hash_mb=4, selection="best")
    reinf = reinforcement_for(game.new_initial_state(), cfg.heuristic)
    record = SelfPlayer(game, cfg, reinf, heuristic_for(game)).play(
        np.random.default_rng(4), 1.0, 4)
    rows = {row.tobytes(): float(v) for row, v in zip(record.planes, record.values,
                                                       strict=True)}
    state = game.new_initial_state()
    rolls = 0
    for action in record.actions:
        if state.is_chance_node() and before_move(state):
            assert rows[state.encode().tobytes()] == pytest.approx(
                one_ply_expectation(state), abs=1e-6)   # stored as float32
            rolls += 1
        state.apply_action(action)
    assert rolls == record.moves            # one roll before each move, and only rolls
    n_syms = len(record.values) // rolls
    assert len(record.values) == n_syms * rolls and n_syms >= 2
    with pytest.raises(ValueError, match="chance nodes"):
        SelfPlayer(make_game("hex(size=3)"), cfg, reinf, heuristic_for("hex(size=3)"))


@pytest.mark.parametrize(("learning", "search", "stochastic"), [
    ("chance", "expectiminimax", "expectiminimax"),
    ("root", "expectiminimax", "expectiminimax"),
    ("root", "descent", "determinization")])     # + the jumped chance states' labels
def test_outcome_weight_moves_unresolved_labels_toward_the_outcome(
        learning: str, search: str, stochastic: str) -> None:
    game = make_game("einstein")
    plain = SelfPlayConfig(search=search, learning=learning, stochastic=stochastic,
                           iterations=1 if search == "expectiminimax" else 20,
                           hash_mb=4, selection="best")
    mixed = replace(plain, outcome_weight=0.25)
    reinf = reinforcement_for(game.new_initial_state(), plain.heuristic)
    before, after = (SelfPlayer(game, cfg, reinf, heuristic_for(game)).play(
        np.random.default_rng(6), 1.0, 6) for cfg in (plain, mixed))
    assert before.actions == after.actions              # the labels move, not the game
    np.testing.assert_array_equal(before.planes, after.planes)
    np.testing.assert_array_equal(before.resolved, after.resolved)
    state = game.new_initial_state()
    for action in before.actions:
        state.apply_action(action)
    final = reinf.terminal(state)
    assert final in (-1.0, 1.0)
    # one row per state and symmetry; a colour-swapping symmetry negates the outcome too
    signs = StateStore(state, symmetry_list(state, True)).signs
    outcome = np.tile(signs, len(before.values) // len(signs)) * final
    open_ = ~before.resolved
    assert open_.sum() > 0
    np.testing.assert_allclose(after.values[open_],
                               0.75 * before.values[open_] + 0.25 * outcome[open_],
                               atol=1e-6)
    np.testing.assert_array_equal(after.values[~open_], before.values[~open_])


def test_presence_heuristic_on_einstein() -> None:
    record, reinf = play("einstein", seed=1, iterations=6, heuristic="presence")
    assert reinf.search_terminal == "presence"      # the searches value terminals with it
    assert np.all(np.abs(record.values) <= 1.0 + 1e-6)
    # the game's own end is labelled with the presence value, not the gain
    state = make_game("einstein").new_initial_state()
    for action in record.actions:
        state.apply_action(action)
    final = reinf.terminal(state)
    assert abs(final) < 1.0 or state.balance() in (1.0, -1.0)
    assert 1 / 3 - 1e-9 <= abs(final) <= 1.0


def test_cumulative_mobility_on_einstein() -> None:
    record, reinf = play("einstein", seed=2, iterations=6, heuristic="mobility")
    assert reinf.search_terminal == "mobility" and reinf.scale == 1.0
    assert np.all(np.abs(record.values) <= reinf.bounds[1])
    # the game's end is valued by the players' mean moves a turn, counted here by a replay
    state = make_game("einstein").new_initial_state()
    turns, moves = [0, 0], [0, 0]
    for action in record.actions:
        if state.phase_name == "move":          # type: ignore[attr-defined]
            turns[state.current_player()] += 1
            moves[state.current_player()] += len(state.legal_actions())
        state.apply_action(action)
    mean = [max(moves[p] / turns[p], 1.0) for p in (0, 1)]
    want = mean[0] / mean[1] if state.terminal_value() > 0 else -mean[1] / mean[0]
    assert reinf.terminal(state) == pytest.approx(want)
    assert state.mobility == ((turns[0], moves[0]), (turns[1], moves[1]))


def test_selection_view_normalises_and_marks_proven_results() -> None:
    children = [ChildStat(0, 12.0, 3, True), ChildStat(1, 14.0, 9, False),
                ChildStat(2, -5.0, 2, True), ChildStat(3, 0.0, 1, True)]
    result = SearchResult(action=1, value=14.0, pv=[1], nodes=1, iterations=1, depth=1,
                          time=0.0, stop_reason="iterations", resolved=False,
                          children=children)
    view = selection_view(result, 17.0, deterministic=True)
    values = {c.action: c.value for c in view.children}
    assert values[0] == pytest.approx(1 + 12 / 17)  # proven win beyond any estimate
    assert values[1] == pytest.approx(14 / 17)
    assert values[2] == pytest.approx(-(1 + 5 / 17))
    assert values[3] == 0.0
    stochastic = selection_view(result, 17.0, deterministic=False)
    assert {c.action: c.value for c in stochastic.children}[0] == pytest.approx(12 / 17)


@pytest.mark.parametrize("spec", ["hex(size=5)", "einstein", "dicechess"])
def test_selfplay_reads_the_live_weights_through_onnxruntime(spec: str) -> None:
    import onnxruntime  # noqa: F401

    from descent.nets.encoding import encode_batch, sample_positions

    game = make_game(spec)
    state = game.new_initial_state()
    learner = Learner(game, "fast", reinforcement_for(state, "gain"), seed=3)
    assert learner.backend.session is not None
    batch = encode_batch(sample_positions(game, 16, seed=5))
    rng = np.random.default_rng(0)
    for _ in range(2):    # the session follows every update of the weights
        with learner.torch.inference_mode():
            expected = learner.cpu_net(learner.torch.from_numpy(batch)).numpy().reshape(-1)
        got = learner.function(batch.copy())
        assert np.allclose(got, expected, atol=1e-5)
        learner.fit(batch, rng.uniform(-1, 1, len(batch)).astype(np.float32), rng, 8)


def test_determinized_searches_see_the_outcomes_the_match_gets() -> None:
    from descent.search_cy.eval.evaluator import ZeroEvaluator
    from descent.search_cy.search.api import make_search
    from descent.search_cy.search.bestfirst import fixed_outcome
    from descent.search_cy.search.stopper import Stopper
    from descent.train.selfplay import determinize_seed, search_params

    game = make_game("einstein")
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(fixed_outcome(state, 99))
    seed = determinize_seed(5)
    cfg = SelfPlayConfig(iterations=30, stochastic="determinization")
    reinf = reinforcement_for(state, "gain")
    runner = make_search("descent", ZeroEvaluator(), search_params(cfg, reinf, 5, seed))
    runner.run(state, Stopper(iterations=30))
    table = runner.impl.table
    chance_nodes = 0

    def visit(s: Any, depth: int) -> None:
        nonlocal chance_nodes
        node = table.node(s.hash)
        if node is None or depth > 6:
            return
        actions = [kid[0] for kid in node[5]]
        if s.is_chance_node():
            chance_nodes += 1
            assert actions == [fixed_outcome(s, seed)]     # one child: the fixed outcome
        for a in actions:
            s.apply_action(a)
            visit(s, depth + 1)
            s.undo()

    visit(state.clone(), 0)
    assert chance_nodes > 0
    # the draw is a function of (state, seed): stable, spread over the outcomes
    probe = game.new_initial_state()
    outcomes = {fixed_outcome(probe, s) for s in range(1, 200)}
    assert fixed_outcome(probe, 7) == fixed_outcome(probe.clone(), 7)
    assert len(outcomes) > 1 and outcomes <= {a for a, _ in probe.chance_outcomes()}
    with pytest.raises(ValueError):
        fixed_outcome(state, seed)          # a decision node
