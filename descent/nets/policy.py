"""Move-policy model files for the search: a Hex policy network (nets/arch.py, output
``policy``) checked and handed to the C evaluator (``search_cy/eval/hex_policy.pyx``).

    policy = load_policy("data/runs/hex11-policy/model.dnet", "hex(size=11)")
    prior = policy.probabilities(state)        # the softmax over the empty cells
    actions, value = policy.values(state)      # a policy_value network's value heads

A policy network is fully convolutional (3x3 convolutions and a 1x1 head over the board
with its border, no layer that knows the board's size), so the network trained on one
board size reads any other: ``load_policy`` builds the evaluator for the game's size.
"""

from __future__ import annotations

import os

from descent.nets.modelfile import LoadedModel, ModelFileError, as_model, game_of
from descent.search_cy.eval.hex_policy import HexPolicy
from descent.search_cy.games.registry import Game
from descent.search_cy.games.state import GameState


def policy_from_model(model: LoadedModel, size: int = 0) -> HexPolicy:
    """The C evaluator of a Hex policy model for ``size`` x ``size`` boards (0: the board
    size it was saved for); a value network or another game's model is a ModelFileError
    naming it."""
    if not model.arch.is_policy:
        raise ModelFileError(f"{model.name}: a value network ({model.arch.output} output), "
                             "not a move-policy network")
    if model.game.name != "hex":
        raise ModelFileError(f"{model.name}: a {model.game.name} policy; only Hex has one")
    w = model.weights
    if model.arch.family == "resnet":
        names = ["stem"] + [f"blocks.{i}.{c}" for i in range(model.arch.blocks)
                            for c in ("conv1", "conv2")]
    else:
        names = [f"convs.{i}" for i in range(model.arch.convs)]
    convs = [(w[f"{name}.weight"], w[f"{name}.bias"]) for name in names]
    values = None
    if model.arch.output == "policy_value":
        values = {name: w[name] for name in w
                  if name.split(".")[0] in ("vconv", "qhead", "qglobal", "vfc", "vhead")}
    return HexPolicy(size or model.input_shape[1] - 2, convs, w["head.weight"],
                     float(w["head.bias"][0]), residual=model.arch.family == "resnet",
                     values=values)


def load_policy(model: LoadedModel | str | os.PathLike[str],
                game: Game | GameState | str | None = None) -> HexPolicy:
    """The C evaluator of the policy model file (or loaded model) ``model``, for the
    board size of ``game`` when given (a game other than Hex is a ModelFileError), else
    for the size it was saved for."""
    loaded = as_model(model)
    if game is None:
        return policy_from_model(loaded)
    wanted = game_of(game)
    if wanted.name != "hex":
        raise ModelFileError(f"{loaded.name}: a move-policy network guides Hex only, not "
                             f"{wanted.name}")
    return policy_from_model(loaded, int(wanted.params["size"]))
