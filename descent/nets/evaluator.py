"""Network evaluators: a model + a backend behind the search's BatchEvaluator seam.

    evaluator = network_evaluator("hex11.safetensors", state, backend="auto")
    search = make_search("ubfms", evaluator, SearchParams(seed=1))

The search encodes every child of an expanded node into the BatchEvaluator's float32
buffer and makes one call per node; that call runs the backend once on the buffer itself
and turns the raw outputs into values in player 0's view: ``value = scale * output``,
negated where the model's outputs are in the side to move's view and player 1 is to move
(read from the encoding's to-move plane), then clipped to the model's declared bounds,
which are also the evaluator's [lo, hi].
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.nets.backends import AUTO, Backend, make_backend
from descent.nets.backends.native import NativeBackend, native_evaluator
from descent.nets.encoding import TO_MOVE_PLANE
from descent.nets.modelfile import LoadedModel, ModelFileError, as_model
from descent.search_cy.eval.evaluator import BatchEvaluator, Evaluator
from descent.search_cy.games.state import GameState


class NetworkFunction:
    """The batch callable: float32 (n, planes, H, W) -> float32 values, player 0's view."""

    def __init__(self, model: LoadedModel, backend: Backend) -> None:
        self.model = model
        self.backend = backend
        self.scale = float(model.value.scale)
        self.lo = float(model.value.lo)
        self.hi = float(model.value.hi)
        self.to_move_plane = (TO_MOVE_PLANE[model.game.name]
                              if model.value.view == "side_to_move" else -1)
        # a tanh output already lies in [-scale, scale]: clip only what can leave the bounds
        reach = abs(self.scale)
        self.clip = model.arch.output != "tanh" or self.lo > -reach or self.hi < reach
        self.calls = 0
        self.positions = 0

    def __call__(self, batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        # the backends return a fresh array: it is scaled and clipped in place
        values = self.backend.evaluate(batch)
        self.calls += 1
        self.positions += values.shape[0]
        if self.scale != 1.0:
            values *= np.float32(self.scale)
        if self.to_move_plane >= 0:
            player1 = batch[:, self.to_move_plane, 0, 0] < 0.5
            values[player1] = -values[player1]
        if self.clip:
            np.clip(values, self.lo, self.hi, out=values)
        return values


def network_function(model: LoadedModel | str | os.PathLike[str],
                     state_prototype: GameState | None = None, backend: str = AUTO,
                     **options: Any) -> NetworkFunction:
    """The batch callable for ``model`` on ``backend`` (options go to make_backend).
    ``auto`` takes the native backend for an mlp or nnue network without measuring: valued
    in C inside the search, it needs no batch call, which no other backend can match."""
    loaded = as_model(model, state_prototype)
    if loaded.arch.is_policy:
        raise ModelFileError(f"{loaded.name}: a move-policy network, not a value network "
                             "(the Hex search takes it as its policy option)")
    if backend == AUTO and loaded.arch.family in ("mlp", "nnue") \
            and options.get("device") != "cuda":
        backend = "native"
    return NetworkFunction(loaded, make_backend(backend, loaded, **options))


def network_evaluator(model: LoadedModel | str | os.PathLike[str] | NetworkFunction,
                      state_prototype: GameState, backend: str = AUTO, symmetry: int = 0,
                      capacity: int = 0, **options: Any) -> Evaluator:
    """A BatchEvaluator running the network (a model file, a loaded model or a prepared
    NetworkFunction). Blocks while the backend loads (``auto`` measures, tensorrt may build
    an engine). ``symmetry`` picks the kernel's input symmetry (colour-swapping ones are
    negated back by the BatchEvaluator); ``capacity`` presizes the batch buffer (default:
    the prototype's move bound). On the ``native`` backend (an mlp or nnue network, named or
    picked by ``auto``) the search gets the C evaluator itself: no batch, no Python call."""
    fn = model if isinstance(model, NetworkFunction) else network_function(
        model, state_prototype, backend, **options)
    loaded = fn.model
    if isinstance(fn.backend, NativeBackend):
        return native_evaluator(loaded, state_prototype, symmetry)
    if tuple(state_prototype.encoding_shape) != loaded.input_shape:
        raise ValueError(f"{loaded.name}: the model reads {loaded.input_shape}, the state "
                         f"encodes {state_prototype.encoding_shape}")
    size = capacity or max(state_prototype.max_actions, state_prototype.max_chance_outcomes, 1)
    return BatchEvaluator(fn, state_prototype, capacity=size, symmetry=symmetry,
                          lo=fn.lo, hi=fn.hi)
