"""Inference backends, registered by name and imported only when asked for.

Each backend runs one loaded model behind one call::

    backend = make_backend("onnxruntime", model)        # or torch, native, tensorrt, auto
    values = backend.evaluate(batch)   # float32 (n, planes, H, W) -> float32 (n,)

``evaluate`` returns the raw network output (nets.evaluator applies the model's value
scale and view). Each backend reports ``device``, ``precision`` and ``max_batch``; larger
batches are split. ``probe(name)`` says whether a backend can run here and, when not, why
(``descent backends`` prints it).
"""

from descent.nets.backends.base import (
    DEFAULT_MAX_BATCH,
    Backend,
    BackendUnavailable,
    Batch,
    ChunkedBackend,
    Values,
    cache_dir,
    check_batch,
    split_batches,
)
from descent.nets.backends.registry import (
    AUTO,
    BACKENDS,
    Registration,
    make_backend,
    probe,
    registered_backends,
    runs_model,
)

__all__ = ["AUTO", "BACKENDS", "DEFAULT_MAX_BATCH", "Backend", "BackendUnavailable", "Batch",
           "ChunkedBackend", "Registration", "Values", "cache_dir", "check_batch",
           "make_backend", "probe", "registered_backends", "runs_model", "split_batches"]
