"""The backends by name (lc0's pattern): each is imported on first use from the module
its registration names, so a machine without a runtime never imports it, and nothing
here imports a backend module by name at load time (no import circle: the backends
import this registry, never the reverse)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from descent.nets.backends.base import Backend, BackendUnavailable

if TYPE_CHECKING:
    from descent.nets.modelfile import LoadedModel

@dataclass(frozen=True)
class Registration:
    module: str        # imported on first use
    cls: str           # the Backend class in it
    summary: str


BACKENDS: dict[str, Registration] = {
    "onnxruntime": Registration("descent.nets.backends.ort", "OrtBackend",
                                "ONNX Runtime: CPU, CUDA execution provider where present"),
    "torch": Registration("descent.nets.backends.torch_backend", "TorchBackend",
                          "PyTorch eager: CPU or CUDA (the 'torch' extra)"),
    "native": Registration("descent.nets.backends.native", "NativeBackend",
                           "C inside the search, no GIL (mlp and nnue networks only)"),
    "tensorrt": Registration("descent.nets.backends.tensorrt_backend", "TensorRTBackend",
                             "TensorRT engine built from the ONNX export, cached on disk"),
}
AUTO = "auto"
# ``auto`` measures the registered backends on the model and keeps the fastest
AUTO_FACTORY = ("descent.nets.backends.auto", "choose_backend")


def registered_backends() -> list[str]:
    return [*BACKENDS, AUTO]


def probe(name: str) -> tuple[bool, str]:
    """(available, detail): what the backend would run on here, or why it cannot run."""
    if name == AUTO:
        usable = [n for n in BACKENDS if probe(n)[0]]
        if not usable:
            return False, "no backend is available"
        return True, f"measures {', '.join(usable)} on the loaded model and takes the fastest"
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(registered_backends())})")
    module = importlib.import_module(BACKENDS[name].module)
    result: tuple[bool, str] = module.probe()
    return result


def runs_model(name: str, model: LoadedModel) -> bool:
    """Whether backend ``name`` computes ``model``'s architecture at all (the native
    backend runs the mlp and nnue families only; the others every family, but not a
    network on the C heuristic, whose planes do not carry the heuristic's value; a Hex
    nnue, whose feature lookup has no ONNX graph, runs on the native and torch backends)."""
    if model.arch.base:
        return name == "native"
    if model.arch.family == "nnue" and model.game.name == "hex":
        return name in ("native", "torch")
    return name != "native" or model.arch.family in ("mlp", "nnue")


def make_backend(name: str, model: LoadedModel, **options: Any) -> Backend:
    """A backend running ``model``. Options: device ("auto" | "cpu" | "cuda"), precision
    ("fp32" | "fp16"), max_batch, threads, and backend-specific ones. Blocks while the
    runtime loads (and, for tensorrt, while an engine is built on a cache miss)."""
    if name == AUTO:
        module, factory = AUTO_FACTORY
        chosen: Backend = getattr(importlib.import_module(module), factory)(model, **options)
        return chosen
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(registered_backends())})")
    if model.arch.base and not runs_model(name, model):
        raise ValueError(f"{name}: {model.name} corrects the C heuristic (base "
                         f"{model.arch.base!r}), which only the native backend computes")
    ok, why = probe(name)
    if not ok:
        raise BackendUnavailable(f"backend {name} is not available: {why}")
    reg = BACKENDS[name]
    cls = getattr(importlib.import_module(reg.module), reg.cls)
    backend: Backend = cls(model, **options)
    return backend


