"""The heuristic evaluator of each game, by game name.

    evaluator = heuristic_for(state)          # or heuristic_for("hex"), ("hex(size=13)")

Every call returns a fresh instance: the evaluators keep scratch tables and counters, so
two searches must not share one.
"""

from __future__ import annotations

from collections.abc import Callable

from descent.search_cy.eval.dicechess_eval import DiceChessEvaluator, DiceChessFeatureEvaluator
from descent.search_cy.eval.einstein_eval import EinsteinEvaluator
from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.eval.hex_eval import HexEvaluator, HexVCEvaluator
from descent.search_cy.games.registry import Game, parse_spec
from descent.search_cy.games.state import GameState

# Each game's heuristics by name, its default first.
HEURISTICS: dict[str, dict[str, Callable[[], HeuristicEvaluator]]] = {
    "hex": {"vc": HexVCEvaluator, "two_distance": HexEvaluator},
    "einstein": {"distance": EinsteinEvaluator},
    # "features": the dice-chess study's kind of evaluation (its agent: at depth 2)
    "dicechess": {"material": DiceChessEvaluator, "features": DiceChessFeatureEvaluator},
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


def heuristic_names(state_or_game: GameState | Game | str) -> list[str]:
    """The names of a game's heuristics, its default first ([] for none)."""
    return list(HEURISTICS.get(game_name(state_or_game), {}))


def parse_weights(text: str) -> dict[str, float]:
    """``"tempo=0.4, scale=1.2"`` as {name: value}; ValueError on a malformed pair."""
    out: dict[str, float] = {}
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"heuristic weights: expected name=value, got {part!r}")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"heuristic weights: {name.strip()} = {value.strip()!r} is "
                             "not a number") from None
    return out


def format_weights(weights: dict[str, float]) -> str:
    """{name: value} as ``parse_weights`` reads it (shortest exact decimals)."""
    return ",".join(f"{name}={value!r}" for name, value in weights.items())


def heuristic_for(state_or_game: GameState | Game | str,
                  name: str | None = None, weights: str | dict[str, float] = ""
                  ) -> HeuristicEvaluator:
    """A fresh heuristic evaluator for a state's game, a Game or a game name/spec:
    ``name`` (one of ``heuristic_names``), else the game's default, with ``weights``
    (``"name=value,..."`` or a mapping) set over its defaults.

    Raises ValueError naming the game (and the known names) when there is none such, or
    naming a weight the heuristic does not have.
    """
    evaluator = _fresh(state_or_game, name)
    if weights:
        evaluator.set_weights(parse_weights(weights) if isinstance(weights, str) else weights)
    return evaluator


def _fresh(state_or_game: GameState | Game | str, name: str | None) -> HeuristicEvaluator:
    game = game_name(state_or_game)
    table = HEURISTICS.get(game)
    if table is None:
        known = ", ".join(sorted(HEURISTICS))
        raise ValueError(f"no heuristic evaluator for game {game!r} (known: {known})")
    if name is None:
        return next(iter(table.values()))()
    factory = table.get(name)
    if factory is None:
        raise ValueError(f"no heuristic {name!r} for {game} (known: {', '.join(table)})")
    return factory()


def heuristic_name(state_or_game: GameState | Game | str,
                   evaluator: HeuristicEvaluator) -> str:
    """The registry name of ``evaluator`` among its game's heuristics."""
    for name, factory in HEURISTICS.get(game_name(state_or_game), {}).items():
        if type(evaluator) is factory:
            return name
    raise ValueError(f"{type(evaluator).__name__} is not a heuristic of "
                     f"{game_name(state_or_game)}")
