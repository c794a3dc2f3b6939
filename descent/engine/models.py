"""Where the engine's networks come from: an explicit file, the network shipped for the
game, or none (the heuristic evaluator; for a move policy, the pattern prior alone).

Networks ship as package data of ``descent.nets`` (``shipped/`` loads by default,
``trained/`` only on request) and are found through ``importlib.resources``, so a name
such as ``nets/trained/hex-size11.dnet`` means the same file in a source checkout and
after a wheel install.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path, PurePosixPath

from descent.search_cy.games.registry import Game

PACKAGED_PREFIX = "nets"  # ``--model nets/...`` names package data of descent.nets


def packaged_file(*parts: str) -> Path | None:
    """A file shipped inside ``descent.nets`` (``packaged_file("shipped", "x.dnet")``), or
    None. The package is always installed unzipped (it holds extension modules), so the
    resource is a real path."""
    resource = resources.files("descent.nets").joinpath(*parts)
    return Path(str(resource)) if resource.is_file() else None


def model_file_name(game: Game) -> str:
    """The file stem of a network for this game spec: parentheses and commas flattened,
    ``hex(size=11,swap=false)`` -> ``hex-size11-swapfalse``."""
    return game.spec.replace("(", "-").replace(")", "").replace(",", "-").replace("=", "")


def shipped_model(game: Game) -> Path | None:
    """The shipped network for this exact game spec, if one was trained and packaged:
    ``nets/shipped/<spec with parentheses and commas flattened>.dnet``."""
    return packaged_file("shipped", f"{model_file_name(game)}.dnet")


# The shipped move-policy network of each Hex board size: a file under
# nets/shipped/policy/, named for the size it was trained at. A policy network is fully
# convolutional, so one file may serve several sizes; a size is listed only where the
# network was measured to make ``rave`` stronger there (docs/results/hex.md).
SHIPPED_POLICIES: dict[int, str] = {11: "hex-size11.dnet"}


def shipped_policy(game: Game) -> Path | None:
    """The shipped move-policy network for this Hex board size (SHIPPED_POLICIES), if
    any (a policy reads stones only: the swap rule does not change it)."""
    if game.name != "hex" or game.params["size"] not in SHIPPED_POLICIES:
        return None
    return packaged_file("shipped", "policy", SHIPPED_POLICIES[game.params["size"]])


def resolve_policy(setting: str, game: Game) -> Path | None:
    """The move-policy network to load: as ``resolve_model``, with the shipped policy as
    the default."""
    if setting.lower() == "none" or not setting:
        return None if setting else shipped_policy(game)
    return resolve_model(setting, game)


def resolve_model(setting: str, game: Game) -> Path | None:
    """The model to load: ``setting`` if given (a file, or ``nets/shipped/...`` /
    ``nets/trained/...`` naming package data), else the shipped one, else None.
    ``setting`` = "none" forces the heuristic evaluator."""
    if setting.lower() == "none":
        return None
    if setting:
        path = Path(setting)
        if path.exists():          # a folder or an unreadable file: load_model says which
            return path
        parts = PurePosixPath(setting.replace("\\", "/")).parts
        if len(parts) > 1 and parts[0] == PACKAGED_PREFIX and ".." not in parts:
            packaged = packaged_file(*parts[1:])
            if packaged is not None:
                return packaged
        raise ValueError(f"model file {setting} does not exist")
    return shipped_model(game)
