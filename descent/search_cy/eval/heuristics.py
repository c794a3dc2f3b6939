"""The heuristic evaluator of each game, by game name.

    evaluator = heuristic_for(state)          # or heuristic_for("hex"), ("hex(size=13)")

Every call returns a fresh instance: the evaluators keep scratch tables and counters, so
two searches must not share one.
"""

from __future__ import annotations

from collections.abc import Callable

from descent.search_cy.eval.dicechess_eval import DiceChessEvaluator
from descent.search_cy.eval.einstein_eval import EinsteinEvaluator
from descent.search_cy.eval.hex_eval import HexEvaluator
from descent.search_cy.games.registry import Game, parse_spec
from descent.search_cy.games.state import GameState
from descent.search_cy.search.evaluator import HeuristicEvaluator

HEURISTICS: dict[str, Callable[[], HeuristicEvaluator]] = {
    "hex": HexEvaluator,
    "einstein": EinsteinEvaluator,
    "dicechess": DiceChessEvaluator,
}


def game_name(state_or_game: GameState | Game | str) -> str:
    """The registry name of a state's game, a Game descriptor or a spec ``hex(size=9)``."""
    if isinstance(state_or_game, GameState):
        game = state_or_game.game
        if not isinstance(game, Game):
            raise ValueError(f"state {type(state_or_game).__name__} has no game descriptor")
        return game.name
    if isinstance(state_or_game, Game):
        return state_or_game.name
    if isinstance(state_or_game, str):
        return parse_spec(state_or_game)[0]
    raise TypeError(f"expected a GameState, a Game or a game name, "
                    f"got {type(state_or_game).__name__}")


def heuristic_for(state_or_game: GameState | Game | str) -> HeuristicEvaluator:
    """A fresh heuristic evaluator for a state's game, a Game or a game name/spec.

    Raises ValueError naming the game when no heuristic exists for it.
    """
    name = game_name(state_or_game)
    factory = HEURISTICS.get(name)
    if factory is None:
        known = ", ".join(sorted(HEURISTICS))
        raise ValueError(f"no heuristic evaluator for game {name!r} (known: {known})")
    return factory()
