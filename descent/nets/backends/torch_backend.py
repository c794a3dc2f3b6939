"""The ``torch`` backend: PyTorch eager on the CPU or a CUDA device (the 'torch' extra).

On the CPU the input tensor is ``torch.from_numpy`` of the caller's buffer (no copy). On
CUDA the batch goes through a pinned staging buffer allocated once, then one asynchronous
host-to-device copy. Precisions on CUDA: ``fp32`` (TF32 tensor cores switched off: their
10-bit mantissa misses the export's 1e-4 parity, measured 6e-4 on an H100), ``tf32``
(faster, close to fp16 accuracy) and ``fp16`` (the module in half precision); the CPU runs
fp32 only (no fast half kernels there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from descent.nets.backends.base import DEFAULT_MAX_BATCH, Batch, ChunkedBackend, Values
from descent.nets.modelfile import LoadedModel


def probe() -> tuple[bool, str]:
    try:
        import torch
    except ImportError as exc:
        return False, (f"torch does not import ({exc}); pip install "
                       "'descent-engine[torch]' (torch==2.13.0)")
    devices = "cpu"
    if torch.cuda.is_available():
        devices += ", cuda (" + torch.cuda.get_device_name(0) + ")"
    return True, f"torch {torch.__version__}, devices {devices}"


class TorchBackend(ChunkedBackend):
    name = "torch"

    def __init__(self, model: LoadedModel, *, device: str = "auto", precision: str = "fp32",
                 max_batch: int = DEFAULT_MAX_BATCH, threads: int = 0, **_: Any) -> None:
        import torch

        from descent.nets.models import module_from_weights

        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"torch: device {device!r} (auto, cpu or cuda)")
        if device == "cuda" and not torch.cuda.is_available():
            raise ValueError("torch: no CUDA device here")
        use_cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
        if precision not in ("fp32", "tf32", "fp16") or (precision != "fp32" and not use_cuda):
            raise ValueError(f"torch: precision {precision!r} is not supported on "
                             f"{'cuda' if use_cuda else 'cpu'}")
        if use_cuda:
            # process-wide switches: the engine runs one network backend at a time
            torch.backends.cudnn.allow_tf32 = precision == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        if threads > 0:
            # process-wide in torch: the engine runs one network backend at a time
            torch.set_num_threads(threads)
        self.torch = torch
        self.model = model
        self.shape = model.input_shape
        self.precision = precision
        self.max_batch = max_batch
        self._device = torch.device("cuda:0" if use_cuda else "cpu")
        self._dtype = torch.float16 if precision == "fp16" else torch.float32
        net = module_from_weights(model.arch, model.input_shape, model.weights).eval()
        self.net = net.to(self._device, self._dtype)
        self.device = (f"cuda:0 ({torch.cuda.get_device_name(0)})" if use_cuda else "cpu")
        if use_cuda:
            self._pinned = torch.empty((max_batch, *self.shape), dtype=torch.float32,
                                       pin_memory=True)
            self._staged = torch.empty((max_batch, *self.shape), dtype=torch.float32,
                                       device=self._device)

    def _run(self, batch: Batch) -> Values:
        torch = self.torch
        n = batch.shape[0]
        with torch.inference_mode():
            x = torch.from_numpy(batch)
            if self._device.type == "cuda":
                self._pinned[:n].copy_(x)
                x = self._staged[:n]
                x.copy_(self._pinned[:n], non_blocking=True)
            y = self.net(x.to(self._dtype))
            out: Values = y.to("cpu", torch.float32).numpy().astype(np.float32, copy=True)
            return out

    def _prepare(self, batch: Batch) -> Batch:
        if not batch.flags.c_contiguous or not batch.flags.writeable:
            # from_numpy wants a writeable array; the copy is the exception, not the rule
            return np.array(batch, dtype=np.float32, order="C")
        return batch

    def describe(self) -> str:
        return f"torch on {self.device}, {self.precision}, max batch {self.max_batch}"
