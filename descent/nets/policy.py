"""Move-policy model files for the search: a Hex policy network (nets/arch.py, output
``policy``) checked and handed to the C evaluator (``search_cy/eval/hex_policy.pyx``).

    policy = load_policy("data/runs/hex11-policy/model.dnet", "hex(size=11)")
    prior = policy.probabilities(state)        # the softmax over the empty cells
"""

from __future__ import annotations

import os

from descent.nets.modelfile import LoadedModel, ModelFileError, as_model
from descent.search_cy.eval.hex_policy import HexPolicy
from descent.search_cy.games.registry import Game
from descent.search_cy.games.state import GameState


def policy_from_model(model: LoadedModel) -> HexPolicy:
    """The C evaluator of a Hex policy model; a value network or another game's model is
    a ModelFileError naming it."""
    if model.arch.output != "policy":
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
    return HexPolicy(model.input_shape[1] - 2, convs, w["head.weight"],
                     float(w["head.bias"][0]), residual=model.arch.family == "resnet")


def load_policy(model: LoadedModel | str | os.PathLike[str],
                game: Game | GameState | str | None = None) -> HexPolicy:
    """The C evaluator of the policy model file (or loaded model) ``model``, checked
    against ``game`` when given."""
    return policy_from_model(as_model(model, game))
