"""Every registered search through the one API (search/api.py): no move without a search
behind it. A search stopped before its first iteration (a stop already asked for, a spent
clock) still completes one and answers its move, never the first legal move in move
order (issue 42)."""
from __future__ import annotations

import pytest

from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import (
    SearchParams,
    SearchResult,
    make_search,
    registered_searches,
    search_plays,
)
from descent.search_cy.search.stopper import Stopper

# (name, game, game spec, position, the winning move or None): positions whose first
# legal move in move order is plainly wrong
POSITIONS = [
    # Hex 11x11 early in the game, no stone connects: a1, a corner, is the first legal move
    ("hex", "hex", "hex(size=11)", "f6 e7 d8 g5", None),
    # EinStein, Blue rolled its a: b2a1 reaches the goal corner (b2a2 comes first)
    ("einstein", "einstein", "einstein", "AB3/1a3/5/5/5 b d1", "b2a1"),
    # dice chess, White rolled a rook: h1h8 takes the king (h1f1 comes first)
    ("dicechess", "dicechess", "dicechess", "7k/8/8/8/8/8/8/4K2R w - - 0 1 R", "h1h8"),
    # dice chess, White rolled a knight: d6e8 takes the king (last of eight)
    ("dicechess-knight", "dicechess", "dicechess", "4k3/8/3N4/8/8/8/8/4K2R w - - 0 1 N",
     "d6e8"),
]


def cases(names: set[str] | None = None) -> list[object]:
    """Every registered search on every position (named in ``names``) of a game it plays."""
    return [pytest.param(search, spec, text, win, id=f"{search}-{name}")
            for search in registered_searches()
            for name, game, spec, text, win in POSITIONS
            if search_plays(search, game) and (names is None or name in names)]


CASES = cases()
ONE_PER_GAME = cases({"hex", "einstein", "dicechess"})


def test_every_registered_search_is_covered() -> None:
    # a search registered later meets these tests too, if it plays one of their games
    for search in registered_searches():
        assert any(search_plays(search, game) for _, game, _, _, _ in POSITIONS), search


def position(spec: str, text: str) -> GameState:
    game = make_game(spec)
    if spec.startswith("hex"):
        state = game.new_initial_state()
        for move in text.split():
            state.apply_move(move)
        return state
    return game.state_from_text(text)


def run(search: str, state: GameState, stopper: Stopper, threads: int = 1) -> SearchResult:
    """A fresh search (no tree kept from an earlier run) of ``state``."""
    params = SearchParams(hash_mb=8, threads=threads)
    return make_search(search, heuristic_for(state), params).run(state, stopper)


def stopped() -> Stopper:
    """A stopper whose stop was asked for before the search starts (a protocol's ``stop``
    that came first, a ponder hit on a spent clock)."""
    stopper = Stopper()
    stopper.stop()
    return stopper


def check_reasoned(state: GameState, result: SearchResult, win: str | None) -> None:
    """A legal move that a search stands behind: not the first legal one, the win in one
    where there is one, and work counted."""
    legal = state.legal_actions()
    move = state.action_to_string(result.action)
    assert result.action in legal
    assert result.action != legal[0], f"{move}: the first legal move"
    if win is not None:
        assert move == win
    assert result.iterations >= 1
    assert result.nodes > 0
    assert result.depth >= 1 or result.children


@pytest.mark.parametrize(("search", "spec", "text", "win"), CASES)
def test_a_search_stopped_before_it_starts_plays_its_first_iterations_move(
        search: str, spec: str, text: str, win: str | None) -> None:
    state = position(spec, text)
    before = state.to_text()
    one = run(search, state, Stopper(iterations=1))
    result = run(search, state, stopped())
    assert result.stop_reason in ("stopped", "resolved")     # a win in one resolves
    # exactly one completed iteration: expectiminimax's depth 1 with the evaluation, a
    # best-first search's expansion of the root, one MCTS simulation
    assert result.action == one.action
    assert result.iterations == one.iterations == 1
    assert result.nodes == one.nodes
    assert result.value == pytest.approx(one.value)
    check_reasoned(state, result, win)
    assert state.to_text() == before


@pytest.mark.parametrize(("search", "spec", "text", "win"), CASES)
def test_a_search_with_a_spent_clock_still_completes_an_iteration(
        search: str, spec: str, text: str, win: str | None) -> None:
    state = position(spec, text)
    result = run(search, state, Stopper(time=1e-9))
    assert result.stop_reason in ("time", "resolved", "depth")
    check_reasoned(state, result, win)


@pytest.mark.parametrize(("search", "spec", "text", "win"), CASES)
def test_a_node_limit_under_one_iteration_still_completes_it(
        search: str, spec: str, text: str, win: str | None) -> None:
    state = position(spec, text)
    result = run(search, state, Stopper(nodes=1))
    check_reasoned(state, result, win)


@pytest.mark.parametrize(("search", "spec", "text", "win"), ONE_PER_GAME)
def test_threads_stopped_before_they_start_still_complete_an_iteration(
        search: str, spec: str, text: str, win: str | None) -> None:
    state = position(spec, text)
    result = run(search, state, stopped(), threads=2)
    check_reasoned(state, result, win)
