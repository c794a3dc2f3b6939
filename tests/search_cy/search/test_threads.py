"""Searches on several threads: the parallel best-first tree and Lazy SMP expectiminimax
give the solved values at every thread count, keep the tree's invariants under many short
parallel searches, honour stops and limits, surface an evaluator's error, and one thread
stays the serial search bit for bit."""

from __future__ import annotations

import threading
from dataclasses import asdict
from types import SimpleNamespace

import numpy as np
import numpy.typing as npt
import pytest

from descent.search_cy.eval.evaluator import BatchEvaluator, Evaluator, ZeroEvaluator
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.bestfirst import BestFirstSearch
from descent.search_cy.search.evalcache import CachedEvaluator
from descent.search_cy.search.expectimax import Expectiminimax
from descent.search_cy.search.gather import BatchGatherer
from descent.search_cy.search.stopper import Stopper
from tests.search_cy.search.test_bestfirst import ENDGAMES, solve
from tests.search_cy.search.test_expectimax import EINSTEIN_ENDGAMES, brute_force

MODES = ("ubfm", "ubfms", "descent", "mcts")
THREADS = (1, 2, 4)


def tanh_network(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """A deterministic stand-in for a value network (any values in (-1, 1))."""
    flat = batch.reshape(len(batch), -1).astype(np.float64)
    weights = np.sin(np.arange(flat.shape[1]) * 0.37)
    out: npt.NDArray[np.float64] = np.tanh(flat @ weights * 0.1)
    return out


# -- exact values at every thread count ----------------------------------------------


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("mode", MODES)
def test_hex_4x4_is_solved_at_every_thread_count(mode: str, threads: int) -> None:
    state = make_game("hex(size=4)").new_initial_state()
    search = make_search(mode, heuristic_for(state), SearchParams(hash_mb=16, threads=threads))
    result = search.run(state, Stopper(nodes=20_000_000))
    assert result.resolved and result.value == 1.0 and result.stop_reason == "resolved"
    chosen = next(c for c in result.children if c.action == result.action)
    assert chosen.resolved and chosen.outcome == 1     # the move played is a proven win
    impl = search.impl
    assert isinstance(impl, BestFirstSearch) and impl.threads == threads
    assert impl.audit() == []


@pytest.mark.parametrize("threads", [2, 4])
@pytest.mark.parametrize("mode", ["ubfms", "descent", "mcts"])
def test_a_network_leaf_solves_hex_3x3_on_threads(mode: str, threads: int) -> None:
    state = make_game("hex(size=3)").new_initial_state()
    evaluator = BatchEvaluator(tanh_network, state)
    search = make_search(mode, evaluator, SearchParams(hash_mb=16, threads=threads))
    result = search.run(state, Stopper(nodes=5_000_000))
    assert result.resolved and result.value == solve(state)
    assert result.evaluations > 0


@pytest.mark.parametrize("threads", [2, 4])
@pytest.mark.parametrize("text", ENDGAMES[:2])
def test_descent_expectiminimax_on_threads_reaches_the_exact_value(
        text: str, threads: int) -> None:
    state = make_game("einstein").state_from_text(text)
    # the proof within the budget needs the unresolved draw (test_bestfirst says why)
    search = make_search("descent", ZeroEvaluator(),
                         SearchParams(hash_mb=64, threads=threads, chance_sampling="unresolved"))
    result = search.run(state, Stopper(nodes=50_000_000))
    assert result.resolved
    assert result.value == pytest.approx(solve(state), abs=1e-5)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("spec, text", EINSTEIN_ENDGAMES)
def test_lazy_smp_solves_einstein_endgames(spec: str, text: str, threads: int) -> None:
    state = make_game(spec).state_from_text(text)
    before = state.snapshot()
    search = Expectiminimax(ZeroEvaluator(), SearchParams(max_depth=40, threads=threads))
    result = search.run(state, Stopper())
    assert state.snapshot() == before
    assert result.resolved and result.value == brute_force(state)
    assert not search.tt.shared          # the helpers are gone, statistics count again


@pytest.mark.parametrize("threads", [2, 4])
def test_lazy_smp_solves_tiny_hex_with_a_tiny_table(threads: int) -> None:
    # a 1 MiB table of a few thousand entries: the threads overwrite each other's
    # entries all the time, and a torn entry must read as a miss, never as a value
    for moves in ([], [4], [0, 8]):
        state = make_game("hex(size=3)").new_initial_state()
        for move in moves:
            state.apply_action(move)
        expected = brute_force(state)
        for _ in range(5):
            search = Expectiminimax(ZeroEvaluator(), SearchParams(hash_mb=1, max_depth=12,
                                                                  threads=threads))
            result = search.run(state, Stopper())
            assert result.resolved and result.value == expected


# -- the tree under concurrency ------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_many_short_parallel_searches_keep_the_tree_sound(mode: str) -> None:
    game = make_game("hex(size=5)")
    search = make_search(mode, heuristic_for(game), SearchParams(hash_mb=2, threads=4))
    impl = search.impl
    assert isinstance(impl, BestFirstSearch)
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    for _ in range(40):
        result = search.run(state, Stopper(iterations=int(rng.integers(1, 60))))
        assert impl.audit() == []
        assert result.action in state.legal_actions()
        state.apply_action(result.action if rng.random() < 0.5
                           else int(rng.choice(state.legal_actions())))
        if state.is_terminal():
            state = game.new_initial_state()
            search.clear()


def test_a_full_table_is_compacted_between_rounds_of_threads() -> None:
    state = make_game("hex(size=11)").new_initial_state()
    search = make_search("ubfms", heuristic_for(state), SearchParams(hash_mb=1, threads=2))
    impl = search.impl
    assert isinstance(impl, BestFirstSearch)
    result = search.run(state, Stopper(iterations=3000))
    assert result.iterations == 3000 and impl.table.compactions > 0
    assert impl.audit() == []


@pytest.mark.parametrize("threads", [2, 3])
def test_limits_count_every_thread(threads: int) -> None:
    state = make_game("hex(size=7)").new_initial_state()
    search = make_search("ubfms", heuristic_for(state), SearchParams(threads=threads))
    result = search.run(state, Stopper(iterations=500))
    assert result.iterations == 500 and result.stop_reason == "iterations"
    result = search.run(state, Stopper(nodes=20_000))
    assert result.nodes >= 20_000 and result.stop_reason == "nodes"


@pytest.mark.parametrize("name", ["descent", "expectiminimax"])
def test_a_stop_from_another_thread_ends_every_thread(name: str) -> None:
    state = make_game("hex(size=11)" if name == "descent" else "einstein").new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    search = make_search(name, heuristic_for(state),
                         SearchParams(threads=2, max_depth=64))
    stopper = Stopper()
    timer = threading.Timer(0.2, stopper.stop)
    timer.start()
    result = search.run(state, stopper)
    timer.join()
    assert result.stop_reason == "stopped"
    # no search thread outlives its search
    assert not [t for t in threading.enumerate() if t.name.endswith(("(_work)", "(_help)"))]


@pytest.mark.parametrize("name", ["ubfms", "mcts", "expectiminimax"])
def test_a_time_limit_holds_on_two_threads(name: str) -> None:
    state = make_game("hex(size=9)").new_initial_state()
    search = make_search(name, heuristic_for(state), SearchParams(threads=2))
    result = search.run(state, Stopper(time=0.1))
    assert result.stop_reason == "time" and result.action in state.legal_actions()


def test_an_evaluator_error_on_a_thread_surfaces_and_the_search_recovers() -> None:
    state = make_game("hex(size=5)").new_initial_state()
    calls = [0]

    def flaky(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        calls[0] += 1
        if calls[0] == 30:
            raise RuntimeError("backend lost")
        return tanh_network(batch)

    search = make_search("ubfms", BatchEvaluator(flaky, state), SearchParams(threads=2))
    with pytest.raises(RuntimeError, match="backend lost"):
        search.run(state, Stopper(iterations=10_000))
    assert state.snapshot() == make_game("hex(size=5)").new_initial_state().snapshot()
    result = search.run(state, Stopper(iterations=50))
    assert result.iterations == 50
    impl = search.impl
    assert isinstance(impl, BestFirstSearch) and impl.audit() == []


# -- one thread is the serial search ---------------------------------------------------


@pytest.mark.parametrize("name", ["ubfms", "descent", "mcts", "expectiminimax"])
def test_one_thread_is_the_serial_search(name: str) -> None:
    state = make_game("einstein").new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    runs = []
    for params in (SearchParams(seed=3, max_depth=4), SearchParams(seed=3, max_depth=4,
                                                                    threads=1)):
        search = make_search(name, heuristic_for(state), params)
        limit = Stopper(iterations=4) if name == "expectiminimax" else Stopper(iterations=2000)
        result = search.run(state, limit)
        runs.append((result.action, result.value, result.nodes, result.evaluations,
                     [(c.action, c.value, c.visits) for c in result.children]))
    assert runs[0] == runs[1]


def test_thread_counts_are_validated() -> None:
    with pytest.raises(ValueError, match="threads"):
        SearchParams(threads=0)
    unchecked = SimpleNamespace(**{**asdict(SearchParams()), "threads": 2000})
    with pytest.raises(ValueError, match="threads"):
        BestFirstSearch(ZeroEvaluator(), unchecked)
    with pytest.raises(ValueError, match="threads"):
        Expectiminimax(ZeroEvaluator(), unchecked)


# -- evaluators for other threads --------------------------------------------------------


def sample_states(spec: str, count: int = 6) -> list[GameState]:
    rng = np.random.default_rng(11)
    out = []
    while len(out) < count:
        state = make_game(spec).new_initial_state()
        for _ in range(int(rng.integers(0, 12))):
            if state.is_terminal():
                break
            if state.is_chance_node():
                state.apply_action(state.chance_outcomes()[0][0])
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        if not state.is_terminal():
            out.append(state)
    return out


@pytest.mark.parametrize("spec", ["hex(size=7)", "einstein", "dicechess"])
def test_a_spawned_evaluator_gives_the_same_values(spec: str) -> None:
    states = sample_states(spec)
    prototype = states[0]
    evaluators: list[Evaluator] = [
        heuristic_for(prototype), BatchEvaluator(tanh_network, prototype, symmetry=0),
        CachedEvaluator(BatchEvaluator(tanh_network, prototype), entries=64)]
    for evaluator in evaluators:
        twin = evaluator.spawn()
        assert type(twin) is type(evaluator) and twin is not evaluator
        assert twin.bounds == evaluator.bounds
        assert np.array_equal(twin.evaluate(states), evaluator.evaluate(states))


def test_an_evaluator_that_cannot_be_spawned_says_so() -> None:
    state = make_game("hex(size=5)").new_initial_state()

    class Opaque(Evaluator):
        pass

    with pytest.raises(TypeError, match="cannot be spawned"):
        Opaque().spawn()
    # a search on one thread never asks
    make_search("ubfms", ZeroEvaluator(), SearchParams(threads=1)).run(
        state, Stopper(iterations=5))


# -- shared backend calls (GPU backends) -------------------------------------------------


def test_a_gatherer_joins_concurrent_calls_into_one() -> None:
    sizes: list[int] = []

    def fn(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        sizes.append(len(batch))
        return batch.reshape(len(batch), -1)[:, 0].astype(np.float64)

    gatherer = BatchGatherer(fn, threads=4, wait=5.0)
    results: dict[int, npt.NDArray[np.float64]] = {}

    def call(k: int) -> None:
        results[k] = gatherer(np.full((k + 1, 1, 1, 1), float(k), dtype=np.float32))

    workers = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    # four callers, one call of 1 + 2 + 3 + 4 rows; each caller gets its own rows back
    assert sizes == [10] and gatherer.calls == 1 and gatherer.positions == 10
    assert all(np.array_equal(results[k], np.full(k + 1, float(k))) for k in range(4))


def test_a_lone_caller_waits_no_longer_than_the_gatherers_wait() -> None:
    gatherer = BatchGatherer(tanh_network, threads=8, wait=0.0)
    state = make_game("hex(size=3)").new_initial_state()
    batch = np.zeros((2, *state.encoding_shape), dtype=np.float32)
    assert np.array_equal(gatherer(batch), tanh_network(batch))
    assert gatherer.calls == 1


def test_callers_that_left_are_not_waited_for() -> None:
    # four callers expected, three left for good (their games ended): the last caller's
    # call runs at once, not after the long wait
    gatherer = BatchGatherer(tanh_network, threads=4, wait=60.0)
    for _ in range(3):
        gatherer.leave()
    state = make_game("hex(size=3)").new_initial_state()
    batch = np.zeros((2, *state.encoding_shape), dtype=np.float32)
    done: list[npt.NDArray[np.float64]] = []
    caller = threading.Thread(target=lambda: done.append(gatherer(batch)), daemon=True)
    caller.start()
    caller.join(timeout=30.0)
    assert done and np.array_equal(done[0], tanh_network(batch))
    assert gatherer.threads == 1


def test_an_error_reaches_every_caller_of_the_batch() -> None:
    def broken(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        raise RuntimeError("device lost")

    gatherer = BatchGatherer(broken, threads=2, wait=5.0)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            gatherer(np.zeros((1, 1, 1, 1), dtype=np.float32))
        except RuntimeError as exc:
            errors.append(exc)

    workers = [threading.Thread(target=call) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(errors) == 2


@pytest.mark.parametrize("mode", ["ubfms", "descent", "mcts"])
def test_gathered_threads_solve_hex_3x3_with_larger_backend_calls(mode: str) -> None:
    state = make_game("hex(size=3)").new_initial_state()
    sizes: list[int] = []

    def counted(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        sizes.append(len(batch))
        return tanh_network(batch)

    search = make_search(mode, BatchEvaluator(counted, state),
                         SearchParams(hash_mb=16, threads=4, gather=True))
    impl = search.impl
    assert isinstance(impl, BestFirstSearch)
    result = search.run(state, Stopper(nodes=5_000_000))
    assert result.resolved and result.value == solve(state)
    gatherer = impl.gatherer
    assert isinstance(gatherer, BatchGatherer) and gatherer.calls == len(sizes)
    assert sum(sizes) == result.evaluations
    assert impl.audit() == []


def test_gathering_needs_threads_and_a_batch_evaluator() -> None:
    state = make_game("hex(size=5)").new_initial_state()
    for evaluator, params in ((BatchEvaluator(tanh_network, state), SearchParams(gather=True)),
                              (heuristic_for(state), SearchParams(threads=2, gather=True))):
        search = make_search("ubfms", evaluator, params)
        search.run(state, Stopper(iterations=20))
        impl = search.impl
        assert isinstance(impl, BestFirstSearch) and impl.gatherer is None
