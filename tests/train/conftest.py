"""Helpers of the learning tests: tiny configurations, an exact Hex solver."""

from __future__ import annotations

from typing import Any

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
    """Exact value (player 0's view) of a deterministic game state, memoised by hash."""
    key = state.hash
    if key in memo:
        return memo[key]
    if state.is_terminal():
        value = state.terminal_value()
    else:
        sign = 1.0 if state.current_player() == 0 else -1.0
        best = -2.0
        for action in state.legal_actions():
            state.apply_action(action)
            best = max(best, sign * solve(state, memo))
            state.undo()
            if best >= 1.0:
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
