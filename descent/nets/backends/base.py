"""What every inference backend shares: the batch types, the ``Backend`` protocol, the
chunked ``evaluate`` of the runtimes that take one call a chunk, and the user cache
directory (auto-backend choices, TensorRT engines)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

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
