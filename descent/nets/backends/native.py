"""The ``native`` backend: mlp and nnue networks computed in C, inside the search.

An ``mlp`` model (nets/arch.py) runs in search_cy/eval/mlp_eval.pyx, a dice-chess
``nnue`` in search_cy/eval/nnue_eval.pyx (its first layer kept by the position). Through
``network_evaluator`` the search gets that C evaluator itself: each position is valued
when the search queues it, with no Python call and no GIL, instead of one ONNX Runtime
call per expanded node. As a Backend
(``evaluate`` on a planes batch: ``descent bench nets``, ``auto``'s measurement) it runs
the same C code over the batch, except for a network on the C heuristic (nets/arch.py's
``base``), which values positions only: the heuristic does not read planes.

Only those two families run here; a convolutional model is refused with a message saying
so (``auto`` then skips this backend).
"""

from __future__ import annotations

from typing import Any

from descent.nets.arch import BASE_CLIP
from descent.nets.backends.base import DEFAULT_MAX_BATCH, Batch, Values, check_batch
from descent.nets.encoding import TO_MOVE_PLANE
from descent.nets.modelfile import LoadedModel
from descent.search_cy.eval.based_eval import BasedEvaluator
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.eval.hex_nnue_eval import HexNNUEEvaluator
from descent.search_cy.eval.mlp_eval import MLPEvaluator
from descent.search_cy.eval.nnue_eval import NNUEEvaluator
from descent.search_cy.games.state import GameState

FAMILIES = ("mlp", "nnue")
RAW_BOUND = 1e9        # bounds that never bind: a raw output under a base


def probe() -> tuple[bool, str]:
    return True, "C, in the search thread, without the GIL (mlp and nnue networks only)"


def mlp_layers(model: LoadedModel) -> list[tuple[Any, Any]]:
    """The model's dense (weight, bias) pairs in forward order: hidden layers, then the
    head (an nnue's after its feature transformer)."""
    if model.arch.family not in FAMILIES:
        raise ValueError(f"native: {model.name} is a {model.arch.family} network; the "
                         f"native backend runs the mlp and nnue families only (use "
                         f"onnxruntime)")
    hidden = len(model.arch.fc) - (model.arch.family == "nnue")
    names = [f"fc.{j}" for j in range(hidden)] + ["head"]
    return [(model.weights[f"{name}.weight"], model.weights[f"{name}.bias"])
            for name in names]


def native_evaluator(model: LoadedModel, prototype: GameState, symmetry: int = 0,
                     list_form: bool = True
                     ) -> MLPEvaluator | NNUEEvaluator | HexNNUEEvaluator | BasedEvaluator:
    """The C evaluator of ``model`` for searches on states like ``prototype``
    (``list_form=False``: an mlp reads the planes even where the game has a list form; an
    nnue reads neither: its first layer is the position's accumulator). A model with a
    base is its network's raw output on top of the game's C heuristic (BasedEvaluator)."""
    if tuple(prototype.encoding_shape) != model.input_shape:
        raise ValueError(f"{model.name}: the model reads {model.input_shape}, the state "
                         f"encodes {prototype.encoding_shape}")
    spec = model.value
    layers = mlp_layers(model)
    based = bool(model.arch.base)
    # under a base the network gives its raw sum, which the composition turns and bounds
    out: dict[str, Any] = ({"tanh_output": False, "scale": 1.0, "lo": -RAW_BOUND,
                            "hi": RAW_BOUND} if based else
                           {"tanh_output": model.arch.output == "tanh", "scale": spec.scale,
                            "lo": spec.lo, "hi": spec.hi})
    network: MLPEvaluator | NNUEEvaluator | HexNNUEEvaluator
    if model.arch.family == "nnue":
        if spec.view != "side_to_move" or symmetry:
            raise ValueError(f"native: {model.name} is an nnue, which speaks for the side "
                             f"to move in the board's own frame (no symmetry)")
        try:
            if model.game.name == "hex":
                hex_network = HexNNUEEvaluator(model.weights["ft.weight"],
                                               model.weights["ft.bias"], layers,
                                               size=int(model.input_shape[1]) - 2, **out)
                # the VC evaluator's proofs and mustplays beside the network's values
                hex_network.know = heuristic_for(prototype)
                network = hex_network
            else:
                network = NNUEEvaluator(model.weights["ft.weight"],
                                        model.weights["ft.bias"], layers, **out)
        except ValueError as exc:
            raise ValueError(f"native: {model.name}: {exc}") from None
    else:
        plane = TO_MOVE_PLANE[model.game.name] if spec.view == "side_to_move" else -1
        network = MLPEvaluator(prototype, layers, to_move_plane=plane, symmetry=symmetry,
                               list_form=list_form, **out)
    if not based:
        return network
    return BasedEvaluator(network, heuristic_for(prototype),
                          base_scale=float(model.weights["base.scale"][0]),
                          base_clip=BASE_CLIP, scale=spec.scale, lo=spec.lo, hi=spec.hi)


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
        self.evaluator = native_evaluator(model, model.game.new_initial_state())

    def evaluate(self, batch: Batch) -> Values:
        check_batch(batch, self.model.input_shape)
        out: Values = self.evaluator.forward(batch)
        return out

    def describe(self) -> str:
        widths = "-".join(map(str, self.evaluator.widths_))
        base = " on the C heuristic" if self.model.arch.base else ""
        return (f"native C {self.model.arch.family} {widths}{base} on the CPU, fp32, in "
                f"the search thread")
