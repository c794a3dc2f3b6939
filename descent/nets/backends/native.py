"""The ``native`` backend: mlp networks computed in C, inside the search.

An ``mlp`` model (nets/arch.py) runs in search_cy/eval/mlp_eval.pyx. Through
``network_evaluator`` the search gets that C evaluator itself: each position is valued
when the search queues it, with no Python call and no GIL, instead of one ONNX Runtime
call per expanded node. As a Backend
(``evaluate`` on a planes batch: ``descent bench nets``, ``auto``'s measurement) it runs
the same C code over the batch.

Only the mlp family runs here; a convolutional model is refused with a message saying so
(``auto`` then skips this backend).
"""

from __future__ import annotations

from typing import Any

from descent.nets.backends.base import DEFAULT_MAX_BATCH, Batch, Values, check_batch
from descent.nets.encoding import TO_MOVE_PLANE
from descent.nets.modelfile import LoadedModel
from descent.search_cy.eval.mlp_eval import MLPEvaluator
from descent.search_cy.games.state import GameState


def probe() -> tuple[bool, str]:
    return True, "C, in the search thread, without the GIL (mlp networks only)"


def mlp_layers(model: LoadedModel) -> list[tuple[Any, Any]]:
    """The model's (weight, bias) pairs in forward order: hidden layers, then the head."""
    if model.arch.family != "mlp":
        raise ValueError(f"native: {model.name} is a {model.arch.family} network; the "
                         f"native backend runs the mlp family only (use onnxruntime)")
    names = [f"fc.{j}" for j in range(len(model.arch.fc))] + ["head"]
    return [(model.weights[f"{name}.weight"], model.weights[f"{name}.bias"])
            for name in names]


def mlp_evaluator(model: LoadedModel, prototype: GameState, symmetry: int = 0,
                  list_form: bool = True) -> MLPEvaluator:
    """The C evaluator of ``model`` for searches on states like ``prototype``
    (``list_form=False``: from the planes even where the game has a list form)."""
    if tuple(prototype.encoding_shape) != model.input_shape:
        raise ValueError(f"{model.name}: the model reads {model.input_shape}, the state "
                         f"encodes {prototype.encoding_shape}")
    spec = model.value
    plane = TO_MOVE_PLANE[model.game.name] if spec.view == "side_to_move" else -1
    return MLPEvaluator(prototype, mlp_layers(model), tanh_output=model.arch.output == "tanh",
                        scale=spec.scale, lo=spec.lo, hi=spec.hi, to_move_plane=plane,
                        symmetry=symmetry, list_form=list_form)


class NativeBackend:
    name = "native"
    device = "cpu"
    precision = "fp32"

    def __init__(self, model: LoadedModel, *, device: str = "auto", precision: str = "fp32",
                 max_batch: int = DEFAULT_MAX_BATCH, **_: Any) -> None:
        if device not in ("auto", "cpu"):
            raise ValueError(f"native: device {device!r} (the native backend runs on the CPU)")
        if precision != "fp32":
            raise ValueError(f"native: precision {precision!r} (fp32 only)")
        self.model = model
        self.max_batch = max_batch
        self.evaluator = mlp_evaluator(model, model.game.new_initial_state())

    def evaluate(self, batch: Batch) -> Values:
        check_batch(batch, self.model.input_shape)
        out: Values = self.evaluator.forward(batch)
        return out

    def describe(self) -> str:
        widths = "-".join(map(str, self.evaluator.widths_))
        return f"native C mlp {widths} on the CPU, fp32, in the search thread"
