"""Iterative-deepening expectiminimax: exact values on solved cases, Star1/Star2 and the
transposition table against the plain search, dice chess tactics, determinism, limits."""

from __future__ import annotations

import math
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from descent.search_cy.eval.evaluator import BatchEvaluator, Evaluator, ZeroEvaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import TERMINAL_KINDS, SearchParams, make_search
from descent.search_cy.search.expectimax import Expectiminimax
from descent.search_cy.search.result import SearchResult
from descent.search_cy.search.stopper import Stopper

# ---------------------------------------------------------------- the reference


def terminal_target(state: GameState, kind: str, max_plies: int) -> float:
    """terminal.pxd's f_t, written again in Python."""
    gain = state.terminal_value()
    if kind in ("presence", "score"):
        b = state.balance(kind == "score")
        return (gain + 0.5 * (0.0 if math.isnan(b) else b)) / 1.5
    if kind == "gain" or gain == 0.0:
        return gain
    if kind == "depth_add":
        return gain * max(max_plies - state.ply + 1.0, 1.0)
    if kind == "mobility":
        # each player's mean of legal moves over its turns, replayed from the start
        replay = state.game.new_initial_state()
        turns, moves = [0, 0], [0, 0]
        for action in state.history():
            if replay.current_player() in (0, 1):
                turns[replay.current_player()] += 1
                moves[replay.current_player()] += len(replay.legal_actions())
            replay.apply_action(action)
        mean = [max(moves[p] / turns[p], 1.0) if turns[p] else 1.0 for p in (0, 1)]
        return mean[0] / mean[1] if gain > 0 else -mean[1] / mean[0]
    return gain * (max_plies + 1.0) / max(state.ply, 1)


def brute_force(state: GameState, kind: str = "gain", max_plies: int = 0) -> float:
    """Exhaustive expectimax to the end of the game: max for player 0, min for player 1,
    the probability-weighted sum (in outcome order) at chance nodes. Memoised on the
    position text and ply (the values below a state depend on nothing else here)."""
    memo: dict[tuple[str, int, int], float] = {}

    def key(s: GameState) -> tuple[str, int, int]:
        text = str(s) if s.game.name == "hex" else s.to_text()
        return text, s.ply, s.current_player()

    def value(s: GameState) -> float:
        if s.is_terminal():
            return terminal_target(s, kind, max_plies)
        k = key(s)
        if k in memo:
            return memo[k]
        if s.is_chance_node():
            total = 0.0
            for outcome, prob in s.chance_outcomes():
                s.apply_action(outcome)
                total += prob * value(s)
                s.undo()
            result = total
        else:
            values = []
            for action in s.legal_actions():
                s.apply_action(action)
                values.append(value(s))
                s.undo()
            result = max(values) if s.current_player() == 0 else min(values)
        memo[k] = result
        return result

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))
    try:
        return value(state)
    finally:
        sys.setrecursionlimit(limit)


def search(state: GameState, evaluator: Evaluator, stopper: Stopper | None = None,
           use_tt: bool = True, exact_depth: bool = False,
           **params: Any) -> SearchResult:
    engine = Expectiminimax(evaluator, SearchParams(**params), use_tt=use_tt,
                            exact_depth=exact_depth)
    before = state.snapshot()
    result = engine.run(state, stopper or Stopper())
    assert state.snapshot() == before      # the state is restored
    return result


# ---------------------------------------------------------------- exact values

EINSTEIN_ENDGAMES = [
    # (spec, position): two and three cubes, at roll (chance) and move nodes
    ("einstein", "A4/5/5/5/4a r roll"),
    ("einstein", "A4/5/5/5/4a r d3"),
    ("einstein", "AB3/5/5/5/4a b d1"),
    ("einstein", "5/1A3/5/3b1/4c b roll"),
    ("einstein(merge_dice=true)", "5/1C3/5/3b1/4a r roll"),
]


@pytest.mark.parametrize("star", [0, 1, 2])
@pytest.mark.parametrize("spec, text", EINSTEIN_ENDGAMES)
def test_einstein_endgames_solve_exactly(spec: str, text: str, star: int) -> None:
    state = make_game(spec).state_from_text(text)
    expected = brute_force(state)
    result = search(state, ZeroEvaluator(), star=star, max_depth=40)
    assert result.value == expected
    assert result.resolved
    assert result.iterations == result.depth < 40     # stopped once resolved
    assert result.nodes > 0


@pytest.mark.parametrize("star", [0, 1, 2])
@pytest.mark.parametrize("use_tt", [True, False])
@pytest.mark.parametrize("text", ["5/5/2A2/3a1/5 r roll", "5/5/2AB1/3a1/4b b d2"])
def test_small_einstein_endgames_with_and_without_the_table(
        text: str, use_tt: bool, star: int) -> None:
    state = make_game("einstein(merge_dice=true)").state_from_text(text)
    expected = brute_force(state)
    result = search(state, ZeroEvaluator(), use_tt=use_tt, star=star, max_depth=20)
    assert result.value == expected
    assert result.resolved


@pytest.mark.parametrize("kind", sorted(TERMINAL_KINDS))
@pytest.mark.parametrize("star", [0, 1, 2])
@pytest.mark.parametrize("size, moves", [(2, []), (3, []), (3, [4]), (3, [0, 8])])
def test_tiny_hex_full_solve(size: int, moves: list[int], star: int, kind: str) -> None:
    state = make_game(f"hex(size={size})").new_initial_state()
    for move in moves:
        state.apply_action(move)
    max_plies = size * size
    expected = brute_force(state, kind, max_plies)
    for use_tt in (True, False):
        result = search(state, ZeroEvaluator(), use_tt=use_tt, star=star, max_depth=12,
                        terminal=kind)
        assert result.value == expected
        assert result.resolved
        assert result.action in state.legal_actions()
    # the best move keeps the value
    result = search(state, ZeroEvaluator(), star=star, max_depth=12, terminal=kind)
    state.apply_action(result.action)
    assert brute_force(state, kind, max_plies) == expected
    state.undo()


def test_depth_heuristic_endgame_with_a_batch_evaluator() -> None:
    """depth_add values exceed 1: the Star bounds widen and stay exact."""
    state = make_game("einstein(merge_dice=true)").state_from_text("5/5/2AB1/3a1/4b b d2")
    evaluator = tanh_evaluator(state, seed=3)
    expected = brute_force(state, "depth_add", 100)
    for star in (0, 1, 2):
        result = search(state, evaluator, star=star, max_depth=20, terminal="depth_add",
                        max_plies=100)
        assert result.value == expected
        assert result.resolved


def test_the_depth_heuristics_p_is_the_games_maximum_length() -> None:
    assert make_game("hex(size=5)").max_game_length == 25
    assert make_game("hex(size=5,swap=true)").max_game_length == 26
    assert make_game("einstein").max_game_length == 100
    assert make_game("dicechess").max_game_length == 1000


# ---------------------------------------------------------------- Star1/Star2 and the table


def tanh_evaluator(prototype: GameState, seed: int = 0) -> BatchEvaluator:
    """A deterministic fake network: tanh(planes . w) with fixed random w."""
    weights = np.random.default_rng(seed).normal(
        0.0, 0.3, size=prototype.encoding_shape).astype(np.float32)

    def fn(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        values: npt.NDArray[np.float64] = np.tanh(
            (batch.astype(np.float64) * weights).sum(axis=(1, 2, 3)))
        return values

    return BatchEvaluator(fn, prototype)


def random_position(spec: str, seed: int, lo: int, hi: int) -> GameState | None:
    """A player-node position after a seeded random playout of lo..hi moves."""
    rng = random.Random(seed)
    state = make_game(spec).new_initial_state()
    target = rng.randint(lo, hi)
    while True:
        while state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(rng.choices([a for a, _ in outcomes],
                                           [p for _, p in outcomes])[0])
        if state.is_terminal():
            return None
        if state.ply >= target:
            return state
        state.apply_action(rng.choice(state.legal_actions()))


def positions(spec: str, count: int, lo: int, hi: int) -> list[GameState]:
    out: list[GameState] = []
    seed = 0
    while len(out) < count:
        state = random_position(spec, seed, lo, hi)
        seed += 1
        if state is not None:
            out.append(state)
    return out


PROPERTY_CASES = [
    ("einstein", 10, 2, 14, (1, 2, 3)),
    ("einstein(merge_dice=true)", 4, 2, 14, (3,)),
    ("dicechess", 6, 4, 30, (1, 2, 3)),
]


@pytest.mark.parametrize("spec, count, lo, hi, depths", PROPERTY_CASES)
def test_star_pruning_keeps_the_plain_value(
        spec: str, count: int, lo: int, hi: int, depths: tuple[int, ...]) -> None:
    """At a fixed depth Star1 and Star2 return the star=0 value bit for bit, with the
    table (both modes) or without; Star1 never visits more nodes than star=0."""
    totals = {star: 0 for star in (0, 1, 2)}
    for k, state in enumerate(positions(spec, count, lo, hi)):
        for depth in depths:
            reference = None
            nodes: dict[int, int] = {}
            for star in (0, 1, 2):
                for use_tt, exact_depth in ((True, False), (True, True), (False, False)):
                    result = search(state, tanh_evaluator(state, seed=k), use_tt=use_tt,
                                    exact_depth=exact_depth, star=star, max_depth=depth)
                    assert result.depth == depth
                    if reference is None:
                        reference = result.value
                    assert result.value == reference, (state.to_text(), depth, star,
                                                          use_tt, exact_depth)
                    if use_tt and not exact_depth:
                        nodes[star] = result.nodes
            assert nodes[1] <= nodes[0], (state.to_text(), depth, nodes)
            for star in nodes:
                totals[star] += nodes[star]
    ratio1 = totals[1] / totals[0]
    ratio2 = totals[2] / totals[0]
    print(f"\n{spec}: nodes star0 {totals[0]}, Star1 {totals[1]} ({ratio1:.3f}), "
          f"Star2 {totals[2]} ({ratio2:.3f})")
    assert ratio1 <= 1.0
    assert ratio2 <= 1.0


def depth_limited(state: GameState, depth: int, value_of: Callable[[GameState], float]) -> float:
    """Full-width expectimax to ``depth`` player plies (chance nodes take no ply; a
    leaf is whatever state the last ply reached, a roll included), valued by
    ``value_of``: the reference of the network-evaluator paths."""
    if state.is_terminal():
        return state.terminal_value()
    if depth == 0:
        return value_of(state)
    if state.is_chance_node():
        total = 0.0
        for outcome, prob in state.chance_outcomes():
            state.apply_action(outcome)
            total += prob * depth_limited(state, depth, value_of)
            state.undo()
        return total
    values = []
    for action in state.legal_actions():
        state.apply_action(action)
        values.append(depth_limited(state, depth - 1, value_of))
        state.undo()
    return max(values) if state.current_player() == 0 else min(values)


@pytest.mark.parametrize("spec, count, lo, hi, depths", [
    ("einstein", 6, 2, 14, (1, 2, 3)),
    ("einstein(merge_dice=true)", 3, 2, 14, (2, 3)),
    ("dicechess", 3, 4, 30, (1, 2)),
])
def test_network_values_match_a_python_expectimax(
        spec: str, count: int, lo: int, hi: int, depths: tuple[int, ...]) -> None:
    """With a batch evaluator (whose frontier chance nodes value every outcome's moves in
    one flush) each depth's root value is the full-width expectimax value, every star
    mode, with and without the table."""
    for k, state in enumerate(positions(spec, count, lo, hi)):
        evaluator = tanh_evaluator(state, seed=k)
        weights = np.random.default_rng(k).normal(
            0.0, 0.3, size=state.encoding_shape).astype(np.float32)

        def value_of(s: GameState, weights: npt.NDArray[np.float32] = weights) -> float:
            planes = s.encode().astype(np.float64)
            return float(np.tanh((planes * weights).sum()))

        for depth in depths:
            expected = depth_limited(state, depth, value_of)
            for star in (0, 1, 2):
                for use_tt in (True, False):
                    result = search(state, evaluator, use_tt=use_tt, exact_depth=True,
                                    star=star, max_depth=depth)
                    assert result.value == pytest.approx(expected, abs=1e-9), (
                        state.to_text(), depth, star, use_tt)


def test_a_frontier_chance_node_is_one_network_call() -> None:
    """Depth 2 from an EinStein move node: every root move leads to a roll whose
    outcomes' moves are valued in one call (iteration 1 values the root's children one
    by one); the positions are every outcome's moves."""
    state = make_game("einstein").state_from_text("A4/5/5/5/4a r d3")
    sizes: list[int] = []

    def fn(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        sizes.append(len(batch))
        return np.zeros(len(batch))

    search(state, BatchEvaluator(fn, state), use_tt=False, star=2, max_depth=2)
    roots = state.legal_actions()
    assert sizes[:len(roots)] == [1] * len(roots)
    second = sizes[len(roots):]
    assert len(second) == len(roots)
    expected = []
    for action in roots:
        state.apply_action(action)
        grandchildren = 0
        for outcome, _ in state.chance_outcomes():
            state.apply_action(outcome)
            for move in state.legal_actions():
                state.apply_action(move)
                grandchildren += 0 if state.is_terminal() else 1
                state.undo()
            state.undo()
        state.undo()
        expected.append(grandchildren)
    assert second == expected


def test_an_error_inside_a_chance_batch_restores_the_state() -> None:
    state = make_game("einstein").state_from_text("A4/5/5/5/4a r d3")
    calls = 0

    def fn(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        nonlocal calls
        calls += 1
        if len(batch) > 1:                  # the first frontier chance batch
            raise RuntimeError("network down")
        return np.zeros(len(batch))

    engine = Expectiminimax(BatchEvaluator(fn, state), SearchParams(max_depth=3))
    before = state.snapshot()
    with pytest.raises(RuntimeError, match="network down"):
        engine.run(state, Stopper())
    assert state.snapshot() == before
    assert calls > len(state.legal_actions())


def test_star2_prunes_with_the_heuristic_leaf() -> None:
    """With a C heuristic (the fast path) the three variants agree as well."""
    from descent.search_cy.eval import heuristics
    totals = {star: 0 for star in (0, 1, 2)}
    for state in positions("einstein", 4, 4, 12):
        values = set()
        for star in (0, 1, 2):
            result = search(state, heuristics.heuristic_for(state), exact_depth=True,
                            star=star, max_depth=5)
            values.add(result.value)
            totals[star] += result.nodes
        assert len(values) == 1
    print(f"\neinstein heuristic depth 5: nodes star0 {totals[0]}, "
          f"Star1 {totals[1]} ({totals[1] / totals[0]:.3f}), "
          f"Star2 {totals[2]} ({totals[2] / totals[0]:.3f})")
    assert totals[2] < totals[0]


# ---------------------------------------------------------------- dice chess


@pytest.mark.parametrize("star", [0, 1, 2])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_dice_chess_takes_the_king(star: int, depth: int) -> None:
    # White to move with a rook rolled: h1xa1 wins a queen, h1xh8 takes the king (wins)
    state = make_game("dicechess").state_from_text("7k/8/8/8/8/8/4K3/q6R w - - 0 1 R")
    for evaluator in (tanh_evaluator(state), ZeroEvaluator()):
        result = search(state, evaluator, star=star, max_depth=depth)
        assert state.action_to_string(result.action) == "h1h8"
        assert result.value == 1.0
        assert result.resolved
        assert result.pv[0] == result.action


def test_dice_chess_black_takes_the_king() -> None:
    # Black to move with a knight rolled: Nf3xe1 takes the king (value -1 for White)
    state = make_game("dicechess").state_from_text("4k3/8/8/8/8/5n2/8/Q3K3 b - - 0 1 n")
    result = search(state, tanh_evaluator(state), star=2, max_depth=3)
    assert state.action_to_string(result.action) == "f3e1"
    assert result.value == -1.0


# ---------------------------------------------------------------- determinism and limits


def test_same_node_budget_same_result() -> None:
    state = positions("dicechess", 1, 6, 12)[0]
    first = search(state, tanh_evaluator(state), Stopper(nodes=3000), max_depth=10)
    second = search(state, tanh_evaluator(state), Stopper(nodes=3000), max_depth=10)
    assert replace(first, time=0.0) == replace(second, time=0.0)
    assert first.nodes <= 3000 + state.max_actions    # a batch may finish its flush
    assert first.action in state.legal_actions()
    # the same object after clear() repeats itself too
    heuristic_state = positions("einstein", 1, 4, 12)[0]
    engine = Expectiminimax(ZeroEvaluator(), SearchParams(max_depth=30))
    a = engine.run(heuristic_state, Stopper(nodes=20000))
    engine.clear()
    b = engine.run(heuristic_state, Stopper(nodes=20000))
    assert replace(a, time=0.0) == replace(b, time=0.0)
    assert a.nodes == 20000
    assert a.iterations == a.depth


def test_an_interrupted_depth_counts_only_where_it_found_a_better_move() -> None:
    """Node budgets inside depth 4: the result is depth 3's, unless depth 4's searched
    part holds a move better than its first (depth 3's best); then it is that move, the
    searched moves being a prefix of the full depth 4's children with the same values."""
    kept = switched = 0
    for k, state in enumerate(positions("einstein", 20, 4, 12)):
        evaluator = tanh_evaluator(state, seed=k)
        full = {d: search(state, evaluator, max_depth=d) for d in (3, 4)}
        if full[3].resolved:
            continue                        # solved before depth 4: nothing to interrupt
        for part in range(1, 16):
            budget = full[3].nodes + (full[4].nodes - full[3].nodes) * part // 16
            result = search(state, evaluator, Stopper(nodes=budget), max_depth=20)
            assert result.depth == result.iterations == 3
            assert result.nodes >= budget          # a batch finishes before the poll
            if result.action == full[3].action:
                assert result.value == full[3].value
                kept += 1
                continue
            switched += 1
            searched = result.children
            assert searched == full[4].children[:len(searched)]
            assert searched[0].action == full[3].action
            sign = 1 if state.current_player() == 0 else -1
            best = max(searched, key=lambda child: sign * child.value)
            assert (result.action, result.value) == (best.action, best.value)
    assert kept and switched, (kept, switched)


def test_a_tiny_budget_still_completes_depth_1() -> None:
    # no move without a search behind it: a node budget under depth 1's nodes is heeded
    # only once depth 1 is complete
    state = make_game("dicechess").new_initial_state()
    state.apply_action(state.chance_outcomes()[0][0])
    result = search(state, ZeroEvaluator(), Stopper(nodes=1), max_depth=5)
    depth1 = search(state, ZeroEvaluator(), Stopper(iterations=1), max_depth=5)
    assert result.action in state.legal_actions()
    assert (result.iterations, result.depth) == (1, 1)
    assert (result.action, result.nodes) == (depth1.action, depth1.nodes)
    assert result.stop_reason == "nodes"


def test_iteration_and_time_limits_and_the_runner() -> None:
    state = make_game("dicechess").new_initial_state()
    state.apply_action(state.chance_outcomes()[1][0])
    runner = make_search("expectiminimax", tanh_evaluator(state), SearchParams(max_depth=8))
    result = runner.run(state, Stopper(iterations=2))
    assert result.iterations == result.depth == 2
    assert result.stop_reason == "iterations"
    assert result.action in state.legal_actions()
    assert result.pv[0] == result.action
    assert result.evaluations > 0
    assert {c.action for c in result.children} == set(state.legal_actions())
    best = [c for c in result.children if c.action == result.action][0]
    assert best.value == result.value
    assert sum(c.visits for c in result.children) <= result.nodes
    timed = runner.run(state, Stopper(time=0.05))
    assert timed.stop_reason in ("time", "depth")
    assert timed.action in state.legal_actions()
    runner.clear()
    depth = make_search("expectiminimax", ZeroEvaluator(), SearchParams(max_depth=2))
    assert depth.run(state, Stopper()).stop_reason == "depth"


def test_stop_from_another_thread() -> None:
    state = make_game("dicechess").new_initial_state()
    state.apply_action(state.chance_outcomes()[0][0])
    engine = Expectiminimax(ZeroEvaluator(), SearchParams(max_depth=64))
    stopper = Stopper(time=60.0)
    out: list[SearchResult] = []
    thread = threading.Thread(target=lambda: out.append(engine.run(state, stopper)))
    thread.start()
    time.sleep(0.2)                       # let it run (without the GIL) for a while
    stopper.stop()
    thread.join(30.0)
    assert not thread.is_alive()
    assert stopper.reason_name == "stopped"
    assert out and out[0].iterations >= 1
    assert out and out[0].action in state.legal_actions()


def test_chance_root_is_the_expectation_of_its_outcomes() -> None:
    state = make_game("einstein").state_from_text("5/1A3/5/3b1/4c b roll")
    result = search(state, ZeroEvaluator(), star=2, max_depth=3)
    probs = dict(state.chance_outcomes())
    assert {c.action for c in result.children} == set(probs)
    total = 0.0
    for action, value in ((c.action, c.value) for c in result.children):
        total += probs[action] * value
    assert result.value == total
    assert result.action in probs


def test_heuristic_fast_path_is_detected() -> None:
    state = make_game("hex(size=3)").new_initial_state()
    assert Expectiminimax(ZeroEvaluator(), SearchParams()).heuristic_path
    assert not Expectiminimax(tanh_evaluator(state), SearchParams()).heuristic_path
    for bad in ("x", None):
        with pytest.raises(TypeError):
            Expectiminimax(bad, SearchParams())  # type: ignore[arg-type]


def test_errors_of_a_batch_function_surface_and_restore_the_state() -> None:
    state = make_game("hex(size=4)").new_initial_state()

    def broken(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        raise RuntimeError("network down")

    fn: Callable[[npt.NDArray[np.float32]], npt.NDArray[np.float64]] = broken
    engine = Expectiminimax(BatchEvaluator(fn, state), SearchParams(max_depth=3))
    before = state.snapshot()
    with pytest.raises(RuntimeError, match="network down"):
        engine.run(state, Stopper())
    assert state.snapshot() == before
    terminal = make_game("hex(size=2)").new_initial_state()
    for move in (0, 1, 2):
        terminal.apply_action(move)
    if terminal.is_terminal():
        with pytest.raises(ValueError):
            engine.run(terminal, Stopper())


# ---------------------------------------------------------------- benchmark


def test_bench_runs() -> None:
    import pyspiel  # noqa: F401

    from descent.tools.bench_emm import bench_expectiminimax

    rows = bench_expectiminimax(0.01, depth=2, positions=2)
    assert len(rows) >= 1
    for row in rows:
        assert row["agree"]
        assert row["nodes"] > 0 and row["os_nodes"] > 0
        assert row["nps"] > 0 and row["os_nps"] > 0


def test_a_chance_batch_below_a_chance_batch() -> None:
    """EinStein's random set-ups are three chance events in a row (Red's set-up, Blue's,
    the first roll): the set-up's chance batch searches each roll, itself a chance batch.
    The first set-up's value at depth 1 is the full-width expectimax value."""
    root = make_game("einstein").new_initial_state()
    assert root.is_chance_node()
    evaluator = tanh_evaluator(root, seed=3)
    weights = np.random.default_rng(3).normal(
        0.0, 0.3, size=root.encoding_shape).astype(np.float32)

    def value_of(s: GameState) -> float:
        return float(np.tanh((s.encode().astype(np.float64) * weights).sum()))

    first = root.chance_outcomes()[0][0]
    root.apply_action(first)
    expected = depth_limited(root, 1, value_of)
    root.undo()
    per_setup = 1 + 720 * (1 + 6 * 4)       # about the nodes of one Red set-up at depth 1
    result = search(root, evaluator, Stopper(nodes=2 * per_setup), max_depth=1)
    assert result.depth == 0                # depth 1 interrupted: its searched part
    action, value = result.children[0].action, result.children[0].value
    assert action == first
    assert value == pytest.approx(expected, abs=1e-9)


def test_a_failed_batch_leaves_no_stale_queue() -> None:
    """A refused batch (``evaluate`` given a terminal state) queues nothing, so the next
    search's batches hold only its own states (each search also drops a leftover queue
    when it starts)."""
    state = positions("einstein", 1, 4, 12)[0]
    evaluator = tanh_evaluator(state, seed=0)
    reference = search(state, tanh_evaluator(state, seed=0), max_depth=2)
    terminal = make_game("einstein").state_from_text("A4/5/5/5/4a r d3")
    terminal.apply_action(terminal.legal_actions()[0])
    while not terminal.is_terminal():
        if terminal.is_chance_node():
            terminal.apply_action(terminal.chance_outcomes()[0][0])
        else:
            terminal.apply_action(terminal.legal_actions()[0])
    with pytest.raises(ValueError, match="non-terminal"):
        evaluator.evaluate([state, terminal])
    assert search(state, evaluator, max_depth=2).value == reference.value
