"""The ``tensorrt`` backend: a TensorRT engine built from the model's ONNX graph.

Follows the TensorRT 11 Python API (strongly typed networks only: ``BuilderFlag.FP16`` is
gone, so an fp16 engine is built from an ONNX graph already in mixed precision):

- fp32: the graph of nets/onnx_graph.py as is;
- fp16: NVIDIA Model Optimizer's AutoCast (``modelopt.onnx.autocast.
  convert_to_mixed_precision(..., low_precision_type="fp16", keep_io_types=True)``) when
  it imports, else nets/onnx_graph.py's own fp16 graph (float16 weights and compute
  between a Cast at each end: the same float32 input and output).

Build: ``Builder`` -> ``create_network`` -> ``OnnxParser.parse`` -> builder config with one
optimisation profile (batch 1 .. max_batch, tuned for the typical child count) ->
``build_serialized_network``. The serialized engine is cached on disk under the user cache
directory, keyed by model id, TensorRT version, GPU name, precision, the profile and the
fp16 converter; a later start deserializes it instead of building (seconds, not minutes).

Run: device buffers from the CUDA runtime (cuda-python), ``set_input_shape`` +
``set_tensor_address`` + ``execute_async_v3`` on a stream of our own; the input is copied
from the caller's buffer straight to the device (no intermediate host copy).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from descent.nets.backends.base import (
    DEFAULT_MAX_BATCH,
    Batch,
    ChunkedBackend,
    Values,
    cache_dir,
)
from descent.nets.files import atomic_write_bytes
from descent.nets.modelfile import LoadedModel
from descent.nets.onnx_graph import build_onnx

log = logging.getLogger(__name__)


def _cudart() -> Any:
    try:
        from cuda.bindings import runtime as cudart
    except ImportError:
        from cuda import cudart  # cuda-python before 12.6
    return cudart


def _check(result: Any) -> Any:
    """Unwraps cuda-python's (error, value...) tuples, raising on an error code."""
    cudart = _cudart()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cudart.cudaError_t.cudaSuccess:
        name = cudart.cudaGetErrorString(err)[1]
        raise RuntimeError(f"CUDA error {err}: {name!r}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def gpu_name(device: int = 0) -> str:
    props = _check(_cudart().cudaGetDeviceProperties(device))
    raw = props.name
    return (raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)).rstrip("\0")


def probe() -> tuple[bool, str]:
    try:
        import tensorrt as trt
    except ImportError as exc:
        return False, (f"tensorrt does not import ({exc}); it installs from NVIDIA's "
                       "package index on a CUDA machine (pip install 'descent-engine[tensorrt]')")
    try:
        _cudart()
    except ImportError as exc:
        return False, f"cuda-python does not import ({exc}); pip install cuda-python"
    try:
        count = _check(_cudart().cudaGetDeviceCount())
    except RuntimeError as exc:
        return False, f"no usable CUDA device ({exc})"
    if not count:
        return False, "no CUDA device"
    return True, f"TensorRT {trt.__version__} on {gpu_name(0)}"


def _trt_logger() -> Any:
    """A TensorRT logger that writes through Python logging (stderr), never stdout."""
    import tensorrt as trt

    class _Logger(trt.ILogger):  # type: ignore[misc]
        def __init__(self) -> None:
            trt.ILogger.__init__(self)

        def log(self, severity: Any, msg: str) -> None:
            level = {trt.ILogger.Severity.INTERNAL_ERROR: logging.ERROR,
                     trt.ILogger.Severity.ERROR: logging.ERROR,
                     trt.ILogger.Severity.WARNING: logging.WARNING,
                     trt.ILogger.Severity.INFO: logging.DEBUG}.get(severity, logging.DEBUG)
            log.log(level, "tensorrt: %s", msg)

    return _Logger()


def onnx_for_precision(model: LoadedModel, precision: str) -> tuple[bytes, str]:
    """(serialized ONNX, converter name) for an engine of ``precision``."""
    if precision == "fp32":
        return build_onnx(model).SerializeToString(), "fp32"
    if precision != "fp16":
        raise ValueError(f"tensorrt: precision {precision!r} (fp32 or fp16)")
    try:
        from modelopt.onnx.autocast import convert_to_mixed_precision
    except ImportError:
        log.info("modelopt does not import: fp16 graph written by nets.onnx_graph")
        return build_onnx(model, fp16=True).SerializeToString(), "descent-fp16"
    import onnx

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(build_onnx(model), path)
        converted = convert_to_mixed_precision(onnx_path=path, low_precision_type="fp16",
                                               keep_io_types=True)
    return converted.SerializeToString(), "modelopt-autocast"


def build_engine(onnx_bytes: bytes, input_shape: tuple[int, int, int], max_batch: int,
                 opt_batch: int) -> bytes:
    """A serialized TensorRT engine for the ONNX graph, batch 1..max_batch. Blocks
    (seconds to minutes)."""
    import tensorrt as trt

    from descent.nets.onnx_graph import INPUT

    logger = _trt_logger()
    builder = trt.Builder(logger)
    flags = 0
    strongly = getattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED", None)
    if strongly is not None:
        # required on TensorRT 10.x for the fp16 graph's types to hold; ignored by 11.x
        flags |= 1 << int(strongly)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(onnx_bytes):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise RuntimeError(f"tensorrt: the ONNX parser rejected the graph: {errors}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)
    profile = builder.create_optimization_profile()
    profile.set_shape(INPUT, (1, *input_shape), (opt_batch, *input_shape),
                      (max_batch, *input_shape))
    config.add_optimization_profile(profile)
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        raise RuntimeError("tensorrt: build_serialized_network failed (see the log)")
    return bytes(plan)


def engine_key(model: LoadedModel, precision: str, max_batch: int, opt_batch: int,
               converter: str) -> str:
    import tensorrt as trt

    ident = {"model": model.model_id, "tensorrt": trt.__version__, "gpu": gpu_name(0),
             "precision": precision, "max_batch": max_batch, "opt_batch": opt_batch,
             "converter": converter}
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]


def cached_engine(model: LoadedModel, precision: str, max_batch: int, opt_batch: int,
                  cache: Path | None = None) -> tuple[bytes, Path, bool]:
    """(serialized engine, its cache path, whether it was built now)."""
    onnx_bytes, converter = onnx_for_precision(model, precision)
    folder = cache or cache_dir() / "tensorrt"
    path = folder / f"{engine_key(model, precision, max_batch, opt_batch, converter)}.plan"
    if path.is_file():
        return path.read_bytes(), path, False
    log.info("building a TensorRT %s engine for %s (max batch %d)", precision, model.name,
             max_batch)
    plan = build_engine(onnx_bytes, model.input_shape, max_batch, opt_batch)
    atomic_write_bytes(path, plan)
    return plan, path, True


class TensorRTBackend(ChunkedBackend):
    name = "tensorrt"

    def __init__(self, model: LoadedModel, *, device: str = "auto", precision: str = "fp32",
                 max_batch: int = DEFAULT_MAX_BATCH, opt_batch: int = 0,
                 engine_file: str | os.PathLike[str] | None = None,
                 cache: Path | None = None, **_: Any) -> None:
        import tensorrt as trt

        if device not in ("auto", "cuda"):
            raise ValueError(f"tensorrt: device {device!r} (TensorRT runs on CUDA only)")
        self.model = model
        self.shape = model.input_shape
        self.precision = precision
        self.max_batch = max_batch
        opt = opt_batch or min(max_batch, 128)
        if engine_file is not None:
            plan, self.engine_path, self.built = Path(engine_file).read_bytes(), \
                Path(engine_file), False
        else:
            plan, self.engine_path, self.built = cached_engine(model, precision, max_batch,
                                                               opt, cache)
        self._logger = _trt_logger()
        self._runtime = trt.Runtime(self._logger)
        self.engine = self._runtime.deserialize_cuda_engine(plan)
        if self.engine is None:
            raise RuntimeError(f"tensorrt: cannot deserialize {self.engine_path} (built by "
                               "another TensorRT version or GPU?)")
        self.context = self.engine.create_execution_context()
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        inputs = [n for n in names
                  if self.engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT]
        outputs = [n for n in names if n not in inputs]
        if len(inputs) != 1 or len(outputs) != 1:
            raise RuntimeError(f"tensorrt: expected one input and one output, got {names}")
        self.input_name, self.output_name = inputs[0], outputs[0]
        for name in names:
            if self.engine.get_tensor_dtype(name) != trt.DataType.FLOAT:
                raise RuntimeError(f"tensorrt: I/O tensor {name} is not float32")
        cudart = _cudart()
        self._cudart = cudart
        per = int(np.prod(self.shape))
        self._per_bytes = per * 4
        self._d_in = _check(cudart.cudaMalloc(max_batch * self._per_bytes))
        self._d_out = _check(cudart.cudaMalloc(max_batch * 4))
        self._stream = _check(cudart.cudaStreamCreate())
        self._out = np.empty(max_batch, dtype=np.float32)
        self.context.set_tensor_address(self.input_name, int(self._d_in))
        self.context.set_tensor_address(self.output_name, int(self._d_out))
        self.device = f"cuda:0 ({gpu_name(0)})"

    def _run(self, batch: Batch) -> Values:
        cudart = self._cudart
        n = batch.shape[0]
        kinds = cudart.cudaMemcpyKind
        _check(cudart.cudaMemcpyAsync(self._d_in, batch.ctypes.data, n * self._per_bytes,
                                      kinds.cudaMemcpyHostToDevice, self._stream))
        if not self.context.set_input_shape(self.input_name, (n, *self.shape)):
            raise RuntimeError(f"tensorrt: batch {n} outside the engine's profile")
        if not self.context.execute_async_v3(int(self._stream)):
            raise RuntimeError("tensorrt: execute_async_v3 failed")
        _check(cudart.cudaMemcpyAsync(self._out.ctypes.data, self._d_out, n * 4,
                                      kinds.cudaMemcpyDeviceToHost, self._stream))
        _check(cudart.cudaStreamSynchronize(self._stream))
        return self._out[:n].copy()

    def describe(self) -> str:
        return (f"tensorrt on {self.device}, {self.precision}, max batch {self.max_batch}, "
                f"engine {self.engine_path}")

    def __del__(self) -> None:
        cudart = getattr(self, "_cudart", None)
        if cudart is None:
            return
        for ptr in (getattr(self, "_d_in", None), getattr(self, "_d_out", None)):
            if ptr is not None:
                cudart.cudaFree(ptr)
        if getattr(self, "_stream", None) is not None:
            cudart.cudaStreamDestroy(self._stream)
