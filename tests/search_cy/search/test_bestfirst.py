"""UBFM, UBFM_s and descent (Descent Expectiminimax at chance nodes): exact values on small
solved cases against a brute-force solver written plainly here, completion, the table's
budget and compaction, batching, determinism, and the Rminimax layer over the tree."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest

from descent.search_cy.eval.evaluator import BatchEvaluator, ZeroEvaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.bestfirst import BestFirstSearch
from descent.search_cy.search.stopper import Stopper
from descent.search_cy.search.tree import TreeTable
from tests.train.conftest import solve as solve_hex

MODES = ("ubfm", "ubfms", "descent", "mcts")


def solve(state: GameState, memo: dict[int, float] | None = None) -> float:
    """Exact minimax / expectimax value (player 0's view) by exhaustive recursion."""
    memo = {} if memo is None else memo
    if state.is_terminal():
        return state.terminal_value()
    key = state.hash
    if key in memo:
        return memo[key]
    if state.is_chance_node():
        value = 0.0
        for action, p in state.chance_outcomes():
            state.apply_action(action)
            value += p * solve(state, memo)
            state.undo()
    else:
        values = []
        for action in state.legal_actions():
            state.apply_action(action)
            values.append(solve(state, memo))
            state.undo()
        value = max(values) if state.current_player() == 0 else min(values)
    memo[key] = value
    return value


def wins(state: GameState, memo: dict[int, float]) -> bool:
    """Whether the side to move wins a game without draws or chance (Hex), by the exact
    Hex solver (its memo holds values from player 0's view); no side wins a finished
    game."""
    if state.is_terminal():
        return False
    return (solve_hex(state, memo) > 0) == (state.current_player() == 0)


def action_values(state: GameState,
                  memo: dict[int, float] | None = None) -> dict[int, float]:
    """The exact value of each legal action (one memo for all: their trees overlap)."""
    memo = {} if memo is None else memo
    out = {}
    for action in state.legal_actions():
        state.apply_action(action)
        out[action] = solve(state, memo)
        state.undo()
    return out


def fake_network(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """A deterministic stand-in for a value network: tanh of a fixed projection."""
    weights = np.random.default_rng(7).standard_normal(batch[0].size).astype(np.float32)
    return np.tanh(batch.reshape(len(batch), -1) @ weights * 0.1).astype(np.float64)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [2, 3])
def test_hex_full_solve_reaches_the_exact_root_value(mode: str, size: int) -> None:
    state = make_game(f"hex(size={size})").new_initial_state()
    exact = solve(state)
    before = state.hash
    result = make_search(mode, ZeroEvaluator(), SearchParams(hash_mb=8)).run(
        state, Stopper(nodes=5_000_000))
    assert state.hash == before
    assert result.resolved and result.stop_reason == "resolved"
    assert result.value == exact == 1.0
    assert action_values(state)[result.action] == exact


@pytest.mark.parametrize("mode", MODES)
def test_hex_4x4_solved_with_the_heuristic_leaf(mode: str) -> None:
    from descent.search_cy.eval.heuristics import heuristic_for

    state = make_game("hex(size=4)").new_initial_state()
    result = make_search(mode, heuristic_for(state), SearchParams(hash_mb=64)).run(
        state, Stopper(nodes=20_000_000))
    assert result.resolved and result.value == 1.0
    state.apply_action(result.action)
    assert not wins(state, {})         # the reply cannot win: the move chosen wins
    state.undo()
    wrong = [a for a, v in ((c.action, c.value) for c in result.children if c.resolved)
             if v == -1.0]
    for action in wrong[:3]:          # moves it found losing do lose
        state.apply_action(action)
        assert wins(state, {})
        state.undo()


@pytest.mark.parametrize("mode", MODES)
def test_hex_positions_solved_exactly_with_a_network_leaf(mode: str) -> None:
    game = make_game("hex(size=3)")
    rng = np.random.default_rng(3)
    for _ in range(12):
        state = game.new_initial_state()
        for _ in range(int(rng.integers(0, 5))):
            legal = state.legal_actions()
            state.apply_action(int(rng.choice(legal)))
            if state.is_terminal():
                state.undo()
                break
        evaluator = BatchEvaluator(fake_network, state)
        result = make_search(mode, evaluator, SearchParams(hash_mb=8)).run(
            state, Stopper(nodes=2_000_000))
        assert result.resolved
        assert result.value == solve(state)
        assert action_values(state)[result.action] == result.value


ENDGAMES = [
    "A4/5/5/5/3ab r roll",        # one Red cube against two Blue cubes
    "5/1A3/5/3a1/4b b roll",
    "AB3/5/2a2/5/4b r roll",
    "5/1B3/2C2/3a1/5 b roll",
]
# the exact values of Einstein positions, for every test of the endgames: each endgame
# is solved under several modes and rules, and their trees overlap
ENDGAME_VALUES: dict[int, float] = {}


@pytest.mark.parametrize("text", ENDGAMES)
def test_descent_expectiminimax_converges_to_the_exact_expectimax(text: str) -> None:
    state = make_game("einstein").state_from_text(text)
    exact = solve(state, ENDGAME_VALUES)
    result = make_search("descent", ZeroEvaluator(),
                         SearchParams(hash_mb=64, chance_sampling="unresolved")).run(
        state, Stopper(nodes=50_000_000))
    assert result.resolved
    assert result.value == pytest.approx(exact, abs=1e-5)


@pytest.mark.parametrize("text", [ENDGAMES[0], ENDGAMES[1], ENDGAMES[3]])
def test_the_papers_chance_rule_reaches_the_exact_value(text: str) -> None:
    # Drawing among all outcomes, iterations keep ending in solved ones, so a deep
    # unsolved outcome is reached with the product of the probabilities above it: the
    # value converges but the proof may not come (the third endgame is still 0.03 off
    # after 20M nodes, where "unresolved" proves it in 50M)
    state = make_game("einstein").state_from_text(text)
    result = make_search("descent", ZeroEvaluator(),
                         SearchParams(hash_mb=64, chance_sampling="all")).run(
        state, Stopper(nodes=20_000_000))
    assert result.value == pytest.approx(solve(state, ENDGAME_VALUES), abs=1e-5)


def test_chance_sampling_draws_solved_outcomes_only_under_the_papers_rule() -> None:
    # Red's cube 1 is a step from its corner: rolls 1-5 move it there and win at once;
    # a 6 moves cube 6, far away. The paper draws every outcome by probability, so
    # iterations keep ending in the solved ones; "unresolved" visits each of them once.
    state = make_game("einstein").state_from_text("F3a/5/5/3A1/5 r roll")
    runs = {rule: make_search("descent", ZeroEvaluator(),
                              SearchParams(hash_mb=64, seed=3, chance_sampling=rule)).run(
        state, Stopper(iterations=300)) for rule in ("all", "unresolved")}
    solved = {c.action: c.visits for c in runs["all"].children if c.action != 6}
    assert all(c.resolved for c in runs["all"].children if c.action != 6)
    assert all(n >= 25 for n in solved.values())          # about 300 / 6 each
    assert all(c.visits == 1 for c in runs["unresolved"].children if c.action != 6)
    assert runs["unresolved"].resolved and runs["unresolved"].value == 1.0
    with pytest.raises(ValueError, match="chance_sampling"):
        SearchParams(chance_sampling="some")


@pytest.mark.parametrize("text", ENDGAMES)
@pytest.mark.parametrize("mode", ["ubfms", "descent", "mcts"])
def test_stochastic_decisions_are_optimal_after_convergence(text: str, mode: str) -> None:
    state = make_game("einstein").state_from_text(text)
    outcome = state.chance_outcomes()[0][0]
    state.apply_action(outcome)       # a player node with its die rolled
    exact = action_values(state, ENDGAME_VALUES)
    # the proof within the budget needs the unresolved draw (see the test above)
    result = make_search(mode, ZeroEvaluator(),
                         SearchParams(hash_mb=64, chance_sampling="unresolved")).run(
        state, Stopper(nodes=50_000_000))
    assert result.resolved
    best = max(exact.values()) if state.current_player() == 0 else min(exact.values())
    assert exact[result.action] == pytest.approx(best, abs=1e-5)
    for child in result.children:
        if child.resolved:
            assert child.value == pytest.approx(exact[child.action], abs=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_completion_takes_a_resolved_win_at_once(mode: str) -> None:
    # Black (to move) completes a1-a2-a3... a one-move win among many moves
    state = make_game("hex(size=5)").new_initial_state()
    for move in ["a1", "e1", "a2", "e2", "a3", "e3", "a4", "e4"]:
        state.apply_move(move)
    win = state.string_to_action("a5")
    result = make_search(mode, ZeroEvaluator(), SearchParams(hash_mb=8)).run(
        state, Stopper(iterations=1))
    assert result.action == win
    assert result.resolved and result.value == 1.0


def test_completion_avoids_a_resolved_loss() -> None:
    # White to move must block a5 or lose at once; every other move is a resolved loss
    state = make_game("hex(size=5)").new_initial_state()
    for move in ["a1", "e1", "a2", "e2", "a3", "e3", "a4"]:
        state.apply_move(move)
    result = make_search("ubfms", ZeroEvaluator(), SearchParams(hash_mb=8)).run(
        state, Stopper(iterations=400))
    assert state.action_to_string(result.action) == "a5"


def test_resolved_children_carry_their_proven_outcome() -> None:
    # the same position: White's a5 holds, every other move loses at once; with the
    # additive depth terminal those losses are worth less than 1, and the flags still
    # name the winner
    state = make_game("hex(size=5)").new_initial_state()
    for move in ["a1", "e1", "a2", "e2", "a3", "e3", "a4"]:
        state.apply_move(move)
    params = SearchParams(hash_mb=8, terminal="depth_add", max_plies=25)
    result = make_search("ubfms", ZeroEvaluator(), params).run(state, Stopper(iterations=400))
    lost = [c for c in result.children if c.resolved and c.outcome == 1]
    assert len(lost) == len(result.children) - 1
    assert all(c.value > 0.0 and c.value != 1.0 for c in lost)   # depth units, not +-1
    assert all(c.outcome is None for c in result.children if not c.resolved)


@pytest.mark.parametrize("mode", MODES)
def test_without_completion_the_search_still_respects_its_budget(mode: str) -> None:
    state = make_game("hex(size=4)").new_initial_state()
    params = SearchParams(hash_mb=8, completion=False, resolution_stop=False)
    result = make_search(mode, ZeroEvaluator(), params).run(state, Stopper(iterations=300))
    assert result.iterations == 300
    assert result.action in state.legal_actions()


@pytest.mark.parametrize("mode", MODES)
def test_same_seed_and_budget_give_the_same_search(mode: str) -> None:
    def once() -> tuple[int, float, int, list[int]]:
        state = make_game("einstein").state_from_text("AB3/5/2a2/5/4b r roll")
        state.apply_action(3)
        params = SearchParams(hash_mb=8, seed=11)
        evaluator = BatchEvaluator(fake_network, state)
        r = make_search(mode, evaluator, params).run(state, Stopper(nodes=3000))
        return r.action, r.value, r.nodes, r.pv
    assert once() == once()


def test_one_evaluator_call_per_expanded_node() -> None:
    state = make_game("hex(size=7)").new_initial_state()
    calls: list[int] = []

    def network(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        calls.append(len(batch))
        return fake_network(batch)

    evaluator = BatchEvaluator(network, state)
    search = BestFirstSearch(evaluator, SearchParams(hash_mb=8), mode="ubfms")
    search.run(state, Stopper(iterations=25))
    # each UBFM iteration expands exactly one node: one batch of all its children
    assert len(calls) == 25
    assert calls[0] == 49
    assert all(n > 1 for n in calls)
    assert len(search.table) == 25


def test_table_budget_holds_and_compaction_keeps_searching() -> None:
    for mb in (0.05, 1, 16):
        table = TreeTable(mb)
        assert table.bytes_allocated <= mb * 2**20
    state = make_game("hex(size=6)").new_initial_state()
    search = BestFirstSearch(ZeroEvaluator(), SearchParams(hash_mb=1), mode="descent")
    result = search.run(state, Stopper(iterations=6000))
    assert search.table.compactions > 0
    assert search.table.bytes_allocated <= 2**20
    assert result.action in state.legal_actions()
    assert result.iterations == 6000


def test_a_node_wider_than_the_room_left_is_refused_not_written_past_the_table() -> None:
    """The room check subtracted the node's width from the children's free space in
    unsigned arithmetic: with less room than a 720-outcome chance node needs it wrapped
    round, passed, and the node's children were written past the table (EinStein, ubfm,
    a 1 MiB table: a segmentation fault)."""
    table = TreeTable(0.05)
    inserted = 0
    while table.insert_for_test(1000 + inserted, 720):
        inserted += 1
    assert 0 < inserted < 100 and len(table) == inserted
    state = make_game("einstein").new_initial_state()
    search = make_search("ubfm", ZeroEvaluator(), SearchParams(hash_mb=1, seed=1))
    result = search.run(state, Stopper(iterations=2000))
    assert result.iterations == 2000


def test_compaction_keeps_exactly_the_marked_nodes() -> None:
    table = TreeTable(1)
    for key in range(1, 200):
        assert table.insert_for_test(key * 7919, key % 5 + 1)
    table.keep_only([k * 7919 for k in range(1, 200, 3)])
    assert len(table) == len(range(1, 200, 3))
    for key in range(1, 200):
        node = table.node(key * 7919)
        assert (node is not None) == (key % 3 == 1)
        if node is not None:
            assert [kid[0] for kid in node[5]] == list(range(key % 5 + 1))


def test_the_tree_is_kept_across_moves() -> None:
    state = make_game("hex(size=5)").new_initial_state()
    search = BestFirstSearch(ZeroEvaluator(), SearchParams(hash_mb=8), mode="ubfms")
    first = search.run(state, Stopper(iterations=2000))
    state.apply_action(first.action)
    reply = search.table.node(state.hash)
    assert reply is not None and reply[1] > 0       # the new root is already expanded
    fresh = BestFirstSearch(ZeroEvaluator(), SearchParams(hash_mb=8, keep_tree=False),
                            mode="ubfms")
    fresh.run(state, Stopper(iterations=1))
    assert len(fresh.table) == 1


def test_result_fields() -> None:
    state = make_game("hex(size=5)").new_initial_state()
    result = make_search("ubfms", ZeroEvaluator(), SearchParams(hash_mb=8)).run(
        state, Stopper(iterations=200))
    assert result.iterations == 200 and result.nodes > 200 and result.depth >= 1
    assert result.pv[0] == result.action and len(result.pv) >= 2
    assert {c.action for c in result.children} == set(state.legal_actions())
    assert sum(c.visits for c in result.children) == 199      # the first iteration expands
    assert result.evaluations > 0 and result.nps > 0
    with pytest.raises(ValueError):
        make_search("nope", ZeroEvaluator())


def test_external_stop_from_another_thread() -> None:
    import threading

    state = make_game("hex(size=11)").new_initial_state()
    stopper = Stopper()
    timer = threading.Timer(0.2, stopper.stop)
    timer.start()
    result = make_search("descent", ZeroEvaluator(), SearchParams(hash_mb=64)).run(
        state, stopper)
    timer.join()
    assert result.stop_reason == "stopped"


# -- Rminimax -----------------------------------------------------------------------


def log_partition(table: TreeTable, state: GameState, root_player: int, theta: float,
                  stored: float, memo: dict[int, float]) -> float:
    """Rminimax's partition recurrence (eq. 10-11, no arc cost) written plainly over the
    tree stored in a table: a child without a node of its own is a leaf valued by its
    parent's record, in the root player's view."""
    node = None if state.is_terminal() else table.node(state.hash)
    if node is None:
        return theta * (stored if root_player == 0 else -stored)
    if state.hash in memo:
        return memo[state.hash]
    logs = []
    for action, value, _n, p, _r, _c in node[5]:
        state.apply_action(action)
        child = log_partition(table, state, root_player, theta, value, memo)
        state.undo()
        # an outcome's probability (only a chance node's children carry one)
        logs.append(p * child if p > 0 else child)
    if state.is_chance_node():
        out = sum(logs)
    elif state.current_player() == root_player:
        out = _logsumexp(logs) - math.log(len(logs))
    else:
        out = min(logs)
    memo[state.hash] = out
    return out


def _logsumexp(xs: list[float]) -> float:
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def reference_policy(table: TreeTable, state: GameState, theta: float) -> dict[int, float]:
    node = table.node(state.hash)
    assert node is not None
    player = state.current_player()
    logs = {}
    memo: dict[int, float] = {}
    for action, value, *_ in node[5]:
        state.apply_action(action)
        logs[action] = log_partition(table, state, player, theta, value, memo)
        state.undo()
    m = max(logs.values())
    weights = {a: math.exp(x - m) for a, x in logs.items()}
    total = sum(weights.values())
    return {a: w / total for a, w in weights.items()}


@pytest.mark.parametrize("theta", [3.0, 0.5, 0.001])
@pytest.mark.parametrize("spec", ["hex(size=3)", "einstein"])
def test_rminimax_policy_matches_the_recurrence_over_the_searched_tree(
        theta: float, spec: str) -> None:
    state = make_game(spec).new_initial_state()
    if spec == "einstein":
        state = make_game(spec).state_from_text("AB3/5/2a2/5/4b r roll")
        state.apply_action(2)
    evaluator = BatchEvaluator(fake_network, state)
    search = BestFirstSearch(evaluator, SearchParams(hash_mb=8), mode="descent")
    search.run(state, Stopper(iterations=150))
    policy = dict(search.rminimax_policy(state, theta))
    expected = reference_policy(search.table, state, theta)
    assert policy.keys() == expected.keys()
    assert sum(policy.values()) == pytest.approx(1.0)
    for action in policy:
        assert policy[action] == pytest.approx(expected[action], rel=1e-4, abs=1e-9)


def test_rminimax_two_level_binary_tree() -> None:
    # Hex 2x2 after Black a1 and White b2: Black has two moves, each leaving White
    # two moves: a two-level binary tree whose leaves are all terminal or nearly so
    state = make_game("hex(size=2)").new_initial_state()
    state.apply_move("a1")
    state.apply_move("b2")
    search = BestFirstSearch(ZeroEvaluator(), SearchParams(hash_mb=8, resolution_stop=False,
                                                           completion=False), mode="ubfm")
    search.run(state, Stopper(iterations=20))
    for theta in (3.0, 0.5, 0.001):
        policy = dict(search.rminimax_policy(state, theta))
        assert policy == pytest.approx(reference_policy(search.table, state, theta))


def test_rminimax_limits() -> None:
    state = make_game("hex(size=3)").new_initial_state()
    search = BestFirstSearch(ZeroEvaluator(), SearchParams(hash_mb=8), mode="ubfms")
    result = search.run(state, Stopper(nodes=2_000_000))
    greedy = dict(search.rminimax_policy(state, 1e6))
    assert max(greedy.values()) == pytest.approx(1.0)
    assert action_values(state)[max(greedy, key=lambda a: greedy[a])] == result.value == 1.0
    uniform = dict(search.rminimax_policy(state, 1e-9))
    for p in uniform.values():
        assert p == pytest.approx(1 / 9, rel=1e-6)
    with pytest.raises(ValueError):
        search.rminimax_policy(state, 0.0)


def test_mcts_values_each_new_state_with_its_children_in_one_batch() -> None:
    state = make_game("hex(size=5)").new_initial_state()
    calls: list[int] = []

    def network(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        calls.append(len(batch))
        return fake_network(batch)

    search = BestFirstSearch(BatchEvaluator(network, state), SearchParams(hash_mb=8),
                             mode="mcts")
    result = search.run(state, Stopper(iterations=40))
    assert calls[0] == 1 + 25                 # the root and its 25 children
    assert len(calls) <= 40
    visits = {child.action: child.visits for child in result.children}
    assert visits[result.action] == max(visits.values())


KING_CAPTURES = [
    # White rolled a knight: the knight on d6 takes the king on e8
    ("4k3/8/3N4/8/8/8/8/4K2R w - - 0 1 N", "d6e8"),
    # White rolled a rook: the h1 rook takes the king on h8 along the open file
    ("7k/8/8/8/8/8/8/4K2R w - - 0 1 R", "h1h8"),
    # Black rolled a queen: the queen takes the king on a1 along the diagonal
    ("4k3/8/8/8/3q4/8/8/K7 b - - 0 1 q", "d4a1"),
]


@pytest.mark.parametrize("fen,capture", KING_CAPTURES)
@pytest.mark.parametrize("mode", MODES)
def test_dice_chess_king_captures_are_always_taken(mode: str, fen: str, capture: str) -> None:
    from descent.search_cy.eval.heuristics import heuristic_for

    state = make_game("dicechess").state_from_text(fen)
    result = make_search(mode, heuristic_for(state), SearchParams(hash_mb=8)).run(
        state, Stopper(iterations=1))
    assert state.action_to_string(result.action) == capture
    assert result.resolved


def test_tree_learning_data_covers_the_stored_tree() -> None:
    state = make_game("hex(size=4)").new_initial_state()
    search = BestFirstSearch(ZeroEvaluator(), SearchParams(hash_mb=8), mode="descent")
    search.run(state, Stopper(iterations=200))
    before = state.hash
    planes, values, solved = search.learning_data(state)
    assert state.hash == before
    assert planes.shape[1:] == state.encoding_shape
    assert len(planes) > len(search.table) >= 200 // 2      # nodes plus terminal states
    assert values[0] == pytest.approx(search.table.node(state.hash)[0])
    assert solved.any() and set(np.unique(values[solved])) <= {-1.0, 0.0, 1.0} | set(
        values[solved].tolist())
    # terminal states carry their exact result
    assert set(np.round(values[solved], 6).tolist()) & {-1.0, 1.0}
    aug, aug_values, _ = search.learning_data(state, symmetries=range(state.num_symmetries))
    assert len(aug) == len(planes) * state.num_symmetries
    swapped = [k for k in range(state.num_symmetries) if state.symmetry_swaps_colours(k)]
    if swapped:
        k = swapped[0]
        assert aug_values[k] == pytest.approx(-values[0])
    limited, _, _ = search.learning_data(state, limit=10)
    assert len(limited) == 10 and state.hash == before


# -- the move at a solved root ----------------------------------------------------------

def _perfect(state: GameState, memo: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(winner, plies to the end) when the winner takes the quickest win and the loser
    the longest loss (Hex has no draw)."""
    key = state.hash
    if key in memo:
        return memo[key]
    if state.is_terminal():
        memo[key] = (0 if state.terminal_value() > 0 else 1, 0)
        return memo[key]
    mover = state.current_player()
    outcomes = []
    for action in state.legal_actions():
        state.apply_action(action)
        outcomes.append(_perfect(state, memo))
        state.undo()
    wins = [plies for winner, plies in outcomes if winner == mover]
    memo[key] = (mover, 1 + min(wins)) if wins else (1 - mover, 1 + max(p for _, p in outcomes))
    return memo[key]


def _positions(size: int, stones: int) -> list[GameState]:
    game = make_game(f"hex(size={size})")
    out, frontier = [], [game.new_initial_state()]
    for _ in range(stones):
        nxt = []
        for state in frontier:
            for action in state.legal_actions():
                child = state.clone()
                child.apply_action(action)
                if not child.is_terminal():
                    nxt.append(child)
        frontier = nxt
        out += frontier
    return out


@pytest.mark.parametrize("mode", ["ubfms", "ubfm", "descent", "mcts"])
def test_a_solved_root_takes_the_quickest_win_and_resists_a_loss_longest(mode: str) -> None:
    """Lost positions were answered with the first legal cell (``a1`` in 39 of 40 games
    against MoHex), walking into a loss in one when a longer defence existed."""
    memo: dict[int, tuple[int, int]] = {}
    checked_losses = checked_wins = 0
    for state in _positions(3, 4):
        mover = state.current_player()
        winner, _ = _perfect(state, memo)
        after = {}
        for action in state.legal_actions():
            state.apply_action(action)
            after[action] = _perfect(state, memo)[1]
            state.undo()
        search = make_search(mode, ZeroEvaluator(), SearchParams(hash_mb=4))
        result = search.run(state, Stopper(iterations=20000))
        assert result.resolved and result.value == (1.0 if winner == 0 else -1.0)
        if winner == mover and min(after.values()) == 0:
            checked_wins += 1
            assert after[result.action] == 0, state.to_text()     # the win in one
        if winner != mover and min(after.values()) == 1 and max(after.values()) >= 3:
            checked_losses += 1
            assert after[result.action] >= 3, state.to_text()     # not the loss in one
    assert checked_wins > 10 and checked_losses > 3, (checked_wins, checked_losses)


@pytest.mark.parametrize("mode", ["ubfms", "ubfm", "descent", "mcts"])
def test_among_equally_quick_losses_the_evaluator_picks_the_move(mode: str) -> None:
    """A root proven lost whose every move loses in one (a double threat): the move was
    the first legal cell; now it is the one the evaluator values best."""
    memo: dict[int, tuple[int, int]] = {}
    checked = 0
    for state in _positions(3, 4):
        mover = state.current_player()
        if _perfect(state, memo)[0] == mover:
            continue
        children = []
        for action in state.legal_actions():
            state.apply_action(action)
            if not state.is_terminal() and _perfect(state, memo)[1] == 1:
                children.append((action, state.clone()))
            state.undo()
        if len(children) != len(state.legal_actions()) or len(children) < 2:
            continue
        evaluator = BatchEvaluator(fake_network, state)
        values = evaluator.evaluate([child for _, child in children])
        sign = 1.0 if mover == 0 else -1.0
        favourite = children[int(np.argmax(sign * values))][0]
        if sum(sign * v == max(sign * values) for v in values) > 1:
            continue                             # a tie the evaluator cannot break
        result = make_search(mode, evaluator, SearchParams(hash_mb=4)).run(
            state, Stopper(iterations=20000))
        assert result.resolved and result.action == favourite, state.to_text()
        checked += 1
    assert checked >= 5, checked


# a game of UBFM_s against MoHex (docs/results/hex.md, UBFM_s and the C heuristics): White
# to move, Black connected in all but name; every White move had the same value and
# visits, and the engine answered a1
DECIDED = ("e2 a11 c10 c9 e8 e7 d7 d8 f7 f6 k2 k1 j2 g6 h6 j1 i2 i1 h2 h1 g2 g7 h7 g9 g8 f9 "
           "f8 d9 h5 e9 i8 h10 j9 j3 i3 g1 f2 f1 e1 h4 i4 a9 j8 k11 i11")


@pytest.mark.parametrize("mode", ["ubfms", "ubfm", "descent"])
def test_equal_children_are_ordered_by_the_evaluators_move_priors(mode: str) -> None:
    from descent.search_cy.eval.heuristics import heuristic_for

    state = make_game("hex(size=11)").state_from_text(DECIDED)
    evaluator = heuristic_for(state)
    result = make_search(mode, evaluator, SearchParams(hash_mb=16)).run(
        state, Stopper(iterations=2000))
    chosen = next(c for c in result.children if c.action == result.action)
    ties = [c.action for c in result.children
            if (c.value, c.visits, c.resolved) == (chosen.value, chosen.visits, chosen.resolved)]
    assert len(ties) > 10                      # the values cannot tell these moves apart
    move_priors = evaluator.move_priors(state)
    assert move_priors is not None
    priors = dict(zip(state.legal_actions(), move_priors, strict=True))
    assert priors[result.action] == max(priors[a] for a in ties)
    assert state.action_to_string(result.action) != "a1"


def test_evaluators_without_move_priors_leave_the_choice_alone() -> None:
    state = make_game("hex(size=5)").new_initial_state()
    assert ZeroEvaluator().move_priors(state) is None


@pytest.mark.parametrize("mode", MODES)
def test_an_expansion_keeps_only_the_moves_the_knowledge_does_not_prove_lost(
        mode: str) -> None:
    """Black c1 c2 c4 c5 against White a1 a2 a3, White to move: Black threatens c3, so the
    VC evaluator's knowledge keeps c3 and Black's captured cells (test_hex_vc.py); the
    search expands the root with those alone and still reaches its exact value. An
    evaluator without knowledge keeps every move."""
    from descent.search_cy.eval.heuristics import heuristic_for

    state = make_game("hex(size=5)").new_initial_state()
    for move in ["c1", "a1", "c2", "a2", "c4", "a3", "c5"]:
        state.apply_move(move)
    first = make_search(mode, heuristic_for(state, "vc"), SearchParams(hash_mb=8)).run(
        state, Stopper(iterations=1))
    assert sorted(state.action_to_string(c.action) for c in first.children) == [
        "c3", "d4", "d5", "e4", "e5"]
    plain = make_search(mode, ZeroEvaluator(), SearchParams(hash_mb=8)).run(
        state, Stopper(iterations=1))
    assert len(plain.children) == len(state.legal_actions())
    solved = make_search(mode, heuristic_for(state, "vc"), SearchParams(hash_mb=8)).run(
        state, Stopper(nodes=5_000_000))
    assert solved.resolved and solved.value == solve_hex(state, {})
