"""Helpers of the learning tests: tiny configurations, an exact Hex solver."""

from __future__ import annotations

from functools import cache
from typing import Any

from descent.search_cy.games.hex import HexState
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState


def tiny_config(game: str = "hex(size=3)", **changes: Any) -> Any:
    """A TrainConfig small enough for tests (override with section__key=value)."""
    from descent.train.config import TrainConfig

    base: dict[str, Any] = {
        "selfplay__iterations": 12, "selfplay__hash_mb": 4, "update__batch_size": 64,
        "evaluation__every": 0, "evaluation__games": 0, "evaluation__nodes": 40,
        "run__progress": False, "data__replay_games": 8,
        # the CPU even where a GPU is present: bit-exact runs (resume tests), tiny nets
        "update__device": "cpu",
    }
    base.update(changes)
    return TrainConfig(game=game, seed=3).with_overrides(**base)


def solve(state: GameState, memo: dict[int, float]) -> float:
    """Exact value (player 0's view) of a Hex state, memoised by hash. Stopping at the
    first winning move, it looks for one where it is cheapest to see: a move that ends
    the game or reaches a position the memo holds won, then the cells nearest the centre
    and the last winning move at the same depth (a killer). The order changes only how
    soon a win is found, never a value: a loss is still every move refuted."""
    assert isinstance(state, HexState)
    return _solve(state, memo, _centre_first(state.size), {})


@cache
def _centre_first(n: int) -> dict[int, int]:
    """Each action's rank on an n x n board: the cells by hex distance from the centre,
    then the swap (n * n) and the set-up pass."""
    mid = (n - 1) / 2

    def distance(a: int) -> float:
        dr, dc = a // n - mid, a % n - mid
        return max(abs(dr), abs(dc), abs(dr + dc))

    order = sorted(range(n * n), key=distance) + [n * n, n * n + 1]
    return {a: k for k, a in enumerate(order)}


def _solve(state: GameState, memo: dict[int, float], rank: dict[int, int],
           killers: dict[int, int]) -> float:
    key = state.hash
    value = memo.get(key)
    if value is not None:
        return value
    if state.is_terminal():
        value = state.terminal_value()
        memo[key] = value
        return value
    sign = 1.0 if state.current_player() == 0 else -1.0
    moves = state.legal_actions()
    for action in moves:
        state.apply_action(action)
        if state.is_terminal():
            won = sign * state.terminal_value() >= 1.0
        else:
            known = memo.get(state.hash)
            won = known is not None and sign * known >= 1.0
        state.undo()
        if won:
            memo[key] = sign
            return sign
    moves.sort(key=rank.__getitem__)
    depth = len(moves)
    killer = killers.get(depth)
    if killer is not None and killer in moves:
        moves.remove(killer)
        moves.insert(0, killer)
    best = -2.0
    for action in moves:
        state.apply_action(action)
        best = max(best, sign * _solve(state, memo, rank, killers))
        state.undo()
        if best >= 1.0:
            killers[depth] = action
            break
    value = sign * best
    memo[key] = value
    return value


def all_states(spec: str) -> list[GameState]:
    """Every reachable non-terminal state of a small deterministic game."""
    game = make_game(spec)
    seen: set[int] = set()
    out: list[GameState] = []

    def walk(state: GameState) -> None:
        if state.hash in seen or state.is_terminal():
            return
        seen.add(state.hash)
        out.append(state.clone())
        for action in state.legal_actions():
            state.apply_action(action)
            walk(state)
            state.undo()

    walk(game.new_initial_state())
    return out
