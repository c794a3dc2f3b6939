"""``descent export`` and ``descent backends``: handlers registered in descent/tools/cli.py.

Each command is a (help, configure, run) triple; this module imports nothing heavy at
import time (the engine's command line builds its parser on every start).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PARITY_POSITIONS = 64
LIMITS = {"fp32": 1e-4, "fp16": 1e-2}


def _reference(model: Any, batch: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float64], str]:
    """The values the exported graph must reproduce: torch when installed, else numpy."""
    import numpy as np

    try:
        import torch
    except ImportError:
        from descent.nets.onnx_graph import reference_forward

        return reference_forward(model, batch), "numpy float64 reference"
    from descent.nets.models import module_from_weights

    net = module_from_weights(model.arch, model.input_shape, model.weights).eval()
    with torch.inference_mode():
        out = net(torch.from_numpy(batch)).numpy().astype(np.float64)
    return out, "torch"


def _parity_line(what: str, ref_name: str, diff: float, count: int, precision: str) -> str:
    limit = LIMITS[precision]
    verdict = "ok" if diff <= limit else "FAILED"
    return (f"parity {what} {precision} vs {ref_name} on {count} positions: "
            f"max |diff| {diff:.3g} (limit {limit:g}) {verdict}")


def configure_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model file (.safetensors)")
    p.add_argument("--onnx", required=True, metavar="OUT", help="write the ONNX graph here")
    p.add_argument("--tensorrt", metavar="OUT", default=None,
                   help="also build a TensorRT engine (needs tensorrt and a CUDA device)")
    p.add_argument("--fp16", action="store_true", help="the TensorRT engine in fp16")
    p.add_argument("--game", default=None, help="check the model against this game spec")
    p.add_argument("--max-batch", type=int, default=256,
                   help="largest batch of the TensorRT optimisation profile")


def run_export(args: argparse.Namespace) -> int:
    import numpy as np
    import onnxruntime as ort

    from descent.nets.encoding import encode_batch, sample_positions
    from descent.nets.files import atomic_write
    from descent.nets.modelfile import load_model
    from descent.nets.onnx_graph import INPUT, build_onnx

    if args.fp16 and not args.tensorrt:
        raise ValueError("--fp16 applies to the TensorRT engine: give --tensorrt OUT too")
    if args.tensorrt:
        from descent.nets.backends import probe

        ok, why = probe("tensorrt")
        if not ok:
            raise ValueError(f"cannot build a TensorRT engine here: {why}")
    model = load_model(args.model, args.game)
    print(model.describe())
    out = Path(args.onnx)
    with atomic_write(out) as handle:
        handle.write(build_onnx(model).SerializeToString())
    print(f"onnx: wrote {out} ({out.stat().st_size} bytes, input {INPUT} "
          f"(batch, {', '.join(map(str, model.input_shape))}))")

    batch = encode_batch(sample_positions(model.game, PARITY_POSITIONS, seed=0))
    reference, ref_name = _reference(model, batch)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    got = np.asarray(session.run(None, {INPUT: batch})[0], dtype=np.float64).reshape(-1)
    diff = float(np.max(np.abs(got - reference)))
    print(_parity_line("onnxruntime", ref_name, diff, len(batch), "fp32"))
    status = 0 if diff <= LIMITS["fp32"] else 1

    if args.tensorrt:
        from descent.nets.backends.tensorrt_backend import TensorRTBackend, cached_engine

        precision = "fp16" if args.fp16 else "fp32"
        plan, cached_path, built = cached_engine(model, precision, args.max_batch,
                                                 min(args.max_batch, 128))
        target = Path(args.tensorrt)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(plan)
        print(f"tensorrt: wrote {target} ({len(plan)} bytes, {precision}, batch 1.."
              f"{args.max_batch}, {'built' if built else 'from the cache'} {cached_path})")
        engine = TensorRTBackend(model, precision=precision, max_batch=args.max_batch,
                                 engine_file=target)
        trt_values = engine.evaluate(batch).astype(np.float64)
        trt_diff = float(np.max(np.abs(trt_values - reference)))
        print(_parity_line("tensorrt", ref_name, trt_diff, len(batch), precision))
        if trt_diff > LIMITS[precision]:
            status = 1
    return status


def configure_backends(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None,
                   help="also load this model on every available backend and describe it")


def run_backends(args: argparse.Namespace) -> int:
    from descent.nets.backends import BACKENDS, make_backend, probe, registered_backends

    model = None
    if args.model:
        from descent.nets.modelfile import load_model

        model = load_model(args.model)
        print(model.describe())
    for name in registered_backends():
        ok, detail = probe(name)
        print(f"{name:12s} {'available' if ok else 'unavailable':12s} {detail}")
        if ok and model is not None and name in BACKENDS:
            try:
                print(f"{'':12s} {'':12s} {make_backend(name, model).describe()}")
            except (RuntimeError, ValueError) as exc:
                print(f"{'':12s} {'':12s} cannot load the model: {exc}")
    return 0


EXPORT = ("export a model file to ONNX (and a TensorRT engine), with a parity check",
          configure_export, run_export)
BACKENDS_COMMAND = ("list the inference backends available here, and why others are not",
                    configure_backends, run_backends)
