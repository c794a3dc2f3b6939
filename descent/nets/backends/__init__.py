"""Inference backends, registered by name and imported only when asked for.

Each backend runs one loaded model behind one call::

    backend = make_backend("onnxruntime", model)        # or torch, native, tensorrt, auto
    values = backend.evaluate(batch)   # float32 (n, planes, H, W) -> float32 (n,)

``evaluate`` returns the raw network output (nets.evaluator applies the model's value
scale and view). Each backend reports ``device``, ``precision`` and ``max_batch``; larger
batches are split. ``probe(name)`` says whether a backend can run here and, when not, why
(``descent backends`` prints it).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from descent.nets.modelfile import LoadedModel

Batch = npt.NDArray[np.float32]
Values = npt.NDArray[np.float32]

DEFAULT_MAX_BATCH = 256


class Backend(Protocol):
    name: str
    device: str        # "cpu", "cuda:0 (NVIDIA H100 ...)", ...
    precision: str     # fp32 | fp16
    max_batch: int     # the largest batch one runtime call takes (larger ones are split)

    def evaluate(self, batch: Batch) -> Values: ...

    def describe(self) -> str: ...


class BackendUnavailable(RuntimeError):
    """The backend cannot run here (its runtime is missing, or no device); says why."""


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
                           "C inside the search, no GIL (mlp networks only)"),
    "tensorrt": Registration("descent.nets.backends.tensorrt_backend", "TensorRTBackend",
                             "TensorRT engine built from the ONNX export, cached on disk"),
}
AUTO = "auto"


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
    """Whether backend ``name`` computes ``model``'s architecture family at all (the
    native backend runs the mlp family only; the others run every family)."""
    return name != "native" or model.arch.family == "mlp"


def make_backend(name: str, model: LoadedModel, **options: Any) -> Backend:
    """A backend running ``model``. Options: device ("auto" | "cpu" | "cuda"), precision
    ("fp32" | "fp16"), max_batch, threads, and backend-specific ones. Blocks while the
    runtime loads (and, for tensorrt, while an engine is built on a cache miss)."""
    if name == AUTO:
        from descent.nets.backends.auto import choose_backend

        return choose_backend(model, **options)
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(registered_backends())})")
    ok, why = probe(name)
    if not ok:
        raise BackendUnavailable(f"backend {name} is not available: {why}")
    reg = BACKENDS[name]
    cls = getattr(importlib.import_module(reg.module), reg.cls)
    backend: Backend = cls(model, **options)
    return backend


def cache_dir() -> Path:
    """The user cache directory of the engine ($XDG_CACHE_HOME/descent, ~/.cache/descent)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "descent"


def split_batches(run: Any, batch: Batch, max_batch: int) -> Values:
    """``run`` over chunks of at most ``max_batch`` positions, results concatenated."""
    n = batch.shape[0]
    if n <= max_batch:
        out: Values = run(batch)
        return out
    parts = [run(batch[i:i + max_batch]) for i in range(0, n, max_batch)]
    return np.concatenate(parts).astype(np.float32, copy=False)


class ChunkedBackend:
    """The one batch ``evaluate`` of the backends that run a runtime call per chunk
    (onnxruntime, torch, tensorrt): the batch is checked, made C-contiguous and split
    into chunks of at most ``max_batch``. Subclasses set ``shape`` and ``max_batch`` and
    implement ``_run`` (one chunk)."""

    shape: tuple[int, int, int]
    max_batch: int

    def evaluate(self, batch: Batch) -> Values:
        """Values of a float32 batch (n, planes, H, W). Blocks while the runtime runs."""
        check_batch(batch, self.shape)
        return split_batches(self._run, self._prepare(batch), self.max_batch)

    def _prepare(self, batch: Batch) -> Batch:
        """The batch as the runtime reads it (C-contiguous; a copy only when it is not)."""
        return batch if batch.flags.c_contiguous else np.ascontiguousarray(batch)

    def _run(self, batch: Batch) -> Values:
        raise NotImplementedError


def check_batch(batch: Batch, shape: tuple[int, int, int]) -> None:
    if batch.ndim != 4 or tuple(batch.shape[1:]) != shape:
        raise ValueError(f"batch shape {tuple(batch.shape)}, the model reads (n, "
                         f"{', '.join(map(str, shape))})")
    if batch.dtype != np.float32:
        raise ValueError(f"batch dtype {batch.dtype}, the model reads float32")
