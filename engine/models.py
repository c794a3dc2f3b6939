"""Where the engine's value network comes from: an explicit file, the network shipped for
the game, or none (the heuristic evaluator)."""

from __future__ import annotations

from pathlib import Path

from search_cy.games.registry import Game

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "nets" / "shipped"
# trained networks that did not beat the C heuristic at equal time: loaded only on request
# (``--model nets/trained/<name>.dnet``), never by default
TRAINED_DIR = SHIPPED_DIR.parent / "trained"


def model_file_name(game: Game) -> str:
    """The file stem of a network for this game spec: parentheses and commas flattened,
    ``hex(size=11,swap=false)`` -> ``hex-size11-swapfalse``."""
    return game.spec.replace("(", "-").replace(")", "").replace(",", "-").replace("=", "")


def shipped_model(game: Game) -> Path | None:
    """The shipped network for this exact game spec, if one was trained and packaged:
    ``nets/shipped/<spec with parentheses and commas flattened>.dnet``."""
    path = SHIPPED_DIR / f"{model_file_name(game)}.dnet"
    return path if path.is_file() else None


def resolve_model(setting: str, game: Game) -> Path | None:
    """The model to load: ``setting`` if given (must exist), else the shipped one, else
    None. ``setting`` = "none" forces the heuristic evaluator."""
    if setting.lower() == "none":
        return None
    if setting:
        path = Path(setting)
        if not path.is_file():
            raise ValueError(f"model file {setting} does not exist")
        return path
    return shipped_model(game)
