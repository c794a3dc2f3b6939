"""The ``onnxruntime`` backend: CPU, or the CUDA execution provider where installed.

The session runs the graph nets/onnx_graph.py builds from the model's weights (no torch,
no side file). On the CPU provider a plain ``run`` already reads a contiguous float32
numpy input in place (no copy of the search's preallocated batch), and IO binding measured
no faster there; with the CUDA provider, calls go through IO binding (input bound to the
caller's buffer, output to a buffer allocated once), which saves ORT's per-call output
allocation and device round trips. ``io_binding=True/False`` forces either path.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from descent.nets.backends.base import DEFAULT_MAX_BATCH, Batch, ChunkedBackend, Values
from descent.nets.modelfile import LoadedModel
from descent.nets.onnx_graph import INPUT, OUTPUT, build_onnx

log = logging.getLogger(__name__)


def probe() -> tuple[bool, str]:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        return False, f"onnxruntime does not import ({exc}); pip install onnxruntime"
    providers = ort.get_available_providers()
    shown = ", ".join(p.removesuffix("ExecutionProvider") for p in providers)
    return True, f"onnxruntime {ort.__version__}, providers {shown}"


class OrtBackend(ChunkedBackend):
    name = "onnxruntime"

    def __init__(self, model: LoadedModel, *, device: str = "auto", precision: str = "fp32",
                 max_batch: int = DEFAULT_MAX_BATCH, threads: int = 0,
                 io_binding: bool | None = None, **_: Any) -> None:
        import onnxruntime as ort

        if precision not in ("fp32", "fp16"):
            raise ValueError(f"onnxruntime: precision {precision!r} (fp32 or fp16)")
        available = ort.get_available_providers()
        has_cuda = "CUDAExecutionProvider" in available
        if device == "cuda" and not has_cuda:
            raise ValueError("onnxruntime: no CUDA execution provider here "
                             "(pip install onnxruntime-gpu on a CUDA machine)")
        use_cuda = device == "cuda" or (device == "auto" and has_cuda)
        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"onnxruntime: device {device!r} (auto, cpu or cuda)")
        providers = (["CUDAExecutionProvider", "CPUExecutionProvider"] if use_cuda
                     else ["CPUExecutionProvider"])
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only, and ORT writes them to stderr
        if threads > 0:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        self.model = model
        self.shape = model.input_shape
        self.precision = precision
        self.max_batch = max_batch
        self.session = ort.InferenceSession(
            build_onnx(model, fp16=precision == "fp16").SerializeToString(), options,
            providers=providers)
        self.device = "cuda:0" if use_cuda else "cpu"
        self.io_binding = use_cuda if io_binding is None else io_binding
        self._binding = self.session.io_binding()
        self._out = np.empty(max_batch, dtype=np.float32)

    def _run(self, batch: Batch) -> Values:
        n = batch.shape[0]
        if not self.io_binding:
            result = self.session.run([OUTPUT], {INPUT: batch})[0]
            return np.asarray(result, dtype=np.float32).reshape(-1)
        binding = self._binding
        binding.bind_cpu_input(INPUT, batch)
        binding.bind_output(OUTPUT, "cpu", 0, np.float32, [n], self._out.ctypes.data)
        self.session.run_with_iobinding(binding)
        return self._out[:n].copy()

    def describe(self) -> str:
        return (f"onnxruntime on {self.device}, {self.precision}, max batch {self.max_batch}, "
                f"io binding {'on' if self.io_binding else 'off'}")
