"""The network being trained: a torch module, its Adam optimiser, and the search wiring.

The module is built from the model-file architecture (nets.arch presets, nets.models),
and self-play values positions through nets.evaluator's ``NetworkFunction`` and
``network_evaluator``, exactly as the engine does with a model file, except that the
backend is ``LiveBackend``: a thin adapter (implementing nets.backends.Backend) over the
live CPU module, so no model file is written. Where ONNX Runtime is installed, self-play
reads the network through an ORT session rebuilt from the weights after every update
(``refresh``): on the few-position batches of a node expansion it is about 2.7 times faster
than the torch module (Hex 7x7, fast preset, one self-play game under cProfile on a loaded
machine: 0.41 ms against 1.1 ms a call; the game's self-play 26 s against 66 s), which makes
self-play 2.5 times cheaper; the session is a pure function of the weights, so a
resumed run continues identically. Without ORT, the live torch module answers.
Training runs on ``update.device`` (a CUDA device when asked for or, with ``auto``,
present); the CPU copy that self-play reads is refreshed after every update.

Targets: a value ``y`` (player 0's view, value units) is trained as ``y / scale``, negated
for positions with player 1 to move when the model's view is ``side_to_move`` (the
to-move plane decides, as in nets.evaluator).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.nets.arch import Architecture, preset
from descent.nets.encoding import TO_MOVE_PLANE
from descent.nets.evaluator import NetworkFunction, network_evaluator
from descent.nets.modelfile import LoadedModel, Provenance, ValueSpec, make_model
from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.registry import Game
from descent.search_cy.games.state import GameState
from descent.train.heuristics import Reinforcement


class LiveBackend:
    """nets.backends.Backend over a live torch module on the CPU (no file), or over an
    ONNX Runtime session of the module's current weights once ``refresh`` built one."""

    name = "live-torch"
    device = "cpu"
    precision = "fp32"

    def __init__(self, module: Any, max_batch: int = 1 << 16) -> None:
        import torch

        self.torch = torch
        self.module = module
        self.max_batch = max_batch
        self.session: Any = None

    def refresh(self, model: LoadedModel | None) -> None:
        """Self-play reads ``model`` (the module's weights, exported) through ONNX Runtime
        from now on; ``None`` goes back to the torch module. Blocks (builds a session)."""
        if model is None:
            self.session = None
            return
        from descent.nets.backends.ort import OrtBackend

        self.session = OrtBackend(model, device="cpu", threads=1)

    def evaluate(self, batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        if self.session is not None:
            values: npt.NDArray[np.float32] = self.session.evaluate(batch)
            return values
        torch = self.torch
        # oneDNN re-plans its convolutions for each new batch size: on the few-position
        # batches of a node expansion the native kernels are 1.2-2x faster
        mkldnn = torch.backends.mkldnn
        was = bool(mkldnn.enabled)
        mkldnn.enabled = False
        try:
            with torch.inference_mode():
                out = self.module(torch.from_numpy(np.ascontiguousarray(batch)))
        finally:
            mkldnn.enabled = was
        result: npt.NDArray[np.float32] = out.numpy().astype(np.float32, copy=True)
        return result

    def describe(self) -> str:
        if self.session is not None:
            return "onnxruntime session of the live weights, cpu (training)"
        return "live torch module on cpu (training)"


def ort_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def pick_device(name: str, setting: str = "update.device") -> str:
    """``name`` (cpu, cuda or auto) as torch's device; ``setting`` names it in the error
    where cuda is asked for and torch sees no GPU."""
    import torch

    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{setting} = cuda, but torch sees no CUDA device")
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


class Learner:
    """The trained network: module(s), optimiser, evaluators for the searches, export."""

    def __init__(self, game: Game, arch_preset: str, reinforcement: Reinforcement, *,
                 view: str = "player0", seed: int = 0, lr: float = 1e-3,
                 weight_decay: float = 1e-4, device: str = "auto", threads: int = 0) -> None:
        import torch

        from descent.nets.models import module_from_weights

        if threads > 0:
            torch.set_num_threads(threads)
        self.torch = torch
        self.game = game
        self.reinforcement = reinforcement
        arch: Architecture = preset(game.name, arch_preset, output=reinforcement.output)
        self.value_spec = ValueSpec(view=view, scale=reinforcement.scale,
                                    lo=reinforcement.bounds[0], hi=reinforcement.bounds[1],
                                    heuristic=reinforcement.name,
                                    max_plies=reinforcement.max_plies)
        self.template: LoadedModel = make_model(game, arch, value=self.value_spec, seed=seed)
        self.arch = arch
        self.input_shape = self.template.input_shape
        self.device = pick_device(device)
        self.net = module_from_weights(arch, self.input_shape, self.template.weights)
        self.net.to(self.device)
        self.cpu_net = self.net if self.device == "cpu" else module_from_weights(
            arch, self.input_shape, self.template.weights)
        self.cpu_net.eval()
        self.optimiser = torch.optim.Adam(self.net.parameters(), lr=lr,
                                          weight_decay=weight_decay)
        self.backend = LiveBackend(self.cpu_net)
        self.function = NetworkFunction(self.template, self.backend)
        self.to_move_plane = TO_MOVE_PLANE[game.name] if view == "side_to_move" else -1
        self.natives: list[Any] = []       # C evaluators handed to searches (mlp networks)
        self.steps = 0
        self.use_ort = ort_available()
        self.sync()

    # -- search wiring -------------------------------------------------------------------

    def evaluator(self, prototype: GameState) -> Evaluator:
        """An evaluator over the live network (player 0's view, value units). An mlp
        network is valued in C inside the search (the native backend), its weights
        reloaded after every update."""
        if self.arch.family == "mlp":
            from descent.nets.backends.native import native_evaluator

            native = native_evaluator(self.current_model(), prototype)
            self.natives.append(native)
            return native
        return network_evaluator(self.function, prototype)

    @property
    def positions(self) -> int:
        """Positions the network has valued for the searches (all evaluators)."""
        return self.function.positions + sum(int(n.positions) for n in self.natives)

    @property
    def batches(self) -> int:
        """Batch calls (a native evaluator's flushes count as batches)."""
        return self.function.calls + sum(int(n.batches) for n in self.natives)

    def current_model(self) -> LoadedModel:
        """The CPU module's weights as a model (no provenance)."""
        from descent.nets.models import weights_from_module

        return make_model(self.game, self.arch, weights_from_module(self.cpu_net),
                          value=self.value_spec)

    # -- training ------------------------------------------------------------------------

    def targets(self, planes: npt.NDArray[np.float32],
                values: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Values (player 0's view, value units) -> network outputs to learn."""
        y = values.astype(np.float32) / np.float32(self.reinforcement.scale)
        if self.to_move_plane >= 0:
            player1 = planes[:, self.to_move_plane, 0, 0] < 0.5
            y = np.where(player1, -y, y).astype(np.float32)
        return y

    def fit(self, planes: npt.NDArray[np.float32], values: npt.NDArray[np.float32],
            rng: np.random.Generator, batch_size: int, epochs: int = 1) -> float:
        """Adam on MSE over shuffled minibatches; the mean minibatch loss (0 if no data)."""
        torch = self.torch
        n = len(values)
        if n == 0:
            return 0.0
        x_all = torch.from_numpy(np.ascontiguousarray(planes, dtype=np.float32))
        y_all = torch.from_numpy(self.targets(planes, values))
        if self.device != "cpu":
            x_all = x_all.to(self.device)
            y_all = y_all.to(self.device)
        self.net.train()
        total, count = 0.0, 0
        for _ in range(epochs):
            order = rng.permutation(n)
            for start in range(0, n, batch_size):
                idx = torch.from_numpy(order[start:start + batch_size])
                if self.device != "cpu":
                    idx = idx.to(self.device)
                loss = torch.mean((self.net(x_all[idx]) - y_all[idx]) ** 2)
                self.optimiser.zero_grad()
                loss.backward()
                self.optimiser.step()
                total += float(loss.detach())
                count += 1
                self.steps += 1
        self.net.eval()
        self.sync()
        return total / max(count, 1)

    def loss(self, planes: npt.NDArray[np.float32], values: npt.NDArray[np.float32],
             batch_size: int = 4096) -> float:
        """MSE of the current network on (planes, values), in output units."""
        torch = self.torch
        n = len(values)
        if n == 0:
            return 0.0
        y = self.targets(planes, values)
        total = 0.0
        with torch.inference_mode():
            for start in range(0, n, batch_size):
                x = torch.from_numpy(np.ascontiguousarray(planes[start:start + batch_size]))
                out = self.cpu_net(x).numpy()
                total += float(np.sum((out - y[start:start + batch_size]) ** 2))
        return total / n

    def sync(self) -> None:
        """Copies the trained weights into the CPU module (and the ORT session) self-play
        reads."""
        from descent.nets.models import weights_from_module

        if self.cpu_net is not self.net:
            self.cpu_net.load_state_dict(self.net.state_dict())
            self.cpu_net.eval()
        if self.natives:
            from descent.nets.backends.native import mlp_layers

            layers = mlp_layers(self.current_model())
            for native in self.natives:
                native.load(layers)
            # self-play reads the natives: no ORT session to rebuild, the live module
            # answers the (rare) batch calls
            self.backend.refresh(None)
        elif self.use_ort:
            self.backend.refresh(make_model(self.game, self.arch,
                                            weights_from_module(self.cpu_net),
                                            value=self.value_spec))

    def training_only(self) -> None:
        """No search reads this learner (a refit): drops the ORT session, and no update
        rebuilds one; batch calls go to the live torch module."""
        self.use_ort = False
        self.backend.refresh(None)

    # -- export and checkpoints ------------------------------------------------------------

    def export(self, *, games: int, seed: int, note: str = "") -> LoadedModel:
        """The current network as a model (nets.modelfile) with its provenance."""
        from descent.nets.models import weights_from_module

        self.sync()
        provenance = Provenance(steps=self.steps, games=games,
                                date=time.strftime("%Y-%m-%dT%H:%M:%S%z"), seed=seed,
                                note=note)
        return make_model(self.game, self.arch, weights_from_module(self.cpu_net),
                          value=self.value_spec, training=provenance)

    def load_weights(self, model: LoadedModel) -> None:
        """Starts from ``model``'s weights: same game, architecture and value convention
        (a refit of another run, an earlier network), else a ValueError says what differs."""
        from descent.nets.models import module_from_weights

        mine = self.template
        checks = (("game", model.game.spec, mine.game.spec),
                  ("architecture", model.arch.to_json() | {"preset": ""},
                   mine.arch.to_json() | {"preset": ""}),
                  ("input shape", model.input_shape, mine.input_shape),
                  ("value convention", model.value, mine.value))
        for what, theirs, ours in checks:
            if theirs != ours:
                raise ValueError(f"{model.name}: its {what} {theirs} differs from the run's "
                                 f"{ours}")
        source = module_from_weights(model.arch, model.input_shape, model.weights)
        self.net.load_state_dict(source.state_dict())
        self.sync()

    def state(self) -> dict[str, Any]:
        return {"model": {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()},
                "optimiser": self.optimiser.state_dict(), "steps": self.steps}

    def restore(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["model"])
        self.optimiser.load_state_dict(state["optimiser"])
        self.steps = int(state["steps"])
        self.net.eval()
        self.sync()
