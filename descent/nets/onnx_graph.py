"""ONNX graphs built straight from a model file's weights, without PyTorch.

The architecture families are a handful of operators (Conv, Relu, Add, Flatten, Gemm,
Tanh; the nnue's views Gather, Slice, Where and Clip), so the graph is written here with
``onnx.helper`` instead of tracing the torch module: the engine then needs neither torch
nor a second file next to each model to run it, the graph is the same bytes for the same
weights on every machine, and the model file stays the single source of truth. Parity
with the torch module is a test (tests/nets/test_parity.py) and part of ``descent
export``.

Input ``planes``: float32 (batch, planes, H, W); output ``value``: float32 (batch,), the
raw network output (before ValueSpec.scale and view). ``fp16=True`` stores the weights in
float16 and computes in float16 between a Cast at each end, the input and output staying
float32 (what ModelOpt AutoCast produces with keep_io_types, for runtimes that need the
low-precision graph spelled out, e.g. strongly typed TensorRT).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from descent.nets.arch import Weights
from descent.nets.encoding import DICECHESS_PLANES

if TYPE_CHECKING:
    import onnx

    from descent.nets.modelfile import LoadedModel

INPUT = "planes"
OUTPUT = "value"
OPSET = 17


def _graphable(model: LoadedModel) -> None:
    if model.arch.family == "nnue" and model.game.name == "hex":
        raise ValueError(f"{model.name} is a Hex nnue: its feature lookup has no ONNX graph "
                         f"here, the native and torch backends run it")
    if model.arch.base:
        raise ValueError(f"{model.name} corrects the C heuristic (base "
                         f"{model.arch.base!r}): no graph of planes computes it, the "
                         f"native backend runs it")


def build_onnx(model: LoadedModel, *, fp16: bool = False, opset: int = OPSET) -> onnx.ModelProto:
    """The model's ONNX graph (dynamic batch)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    arch = model.arch
    _graphable(model)
    weights: Weights = model.weights
    dtype = np.float16 if fp16 else np.float32
    nodes: list[onnx.NodeProto] = []
    inits = [numpy_helper.from_array(np.asarray(w, dtype=dtype), name)
             for name, w in weights.items()]
    counter = iter(range(1 << 30))

    def fresh(prefix: str) -> str:
        return f"{prefix}_{next(counter)}"

    def conv(x: str, name: str, relu: bool = True) -> str:
        out = fresh(name)
        nodes.append(helper.make_node("Conv", [x, f"{name}.weight", f"{name}.bias"], [out],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                      strides=[1, 1], name=name))
        return relu_(out) if relu else out

    def relu_(x: str) -> str:
        out = fresh("relu")
        nodes.append(helper.make_node("Relu", [x], [out]))
        return out

    def const(name: str, value: npt.NDArray[np.int64]) -> str:
        if all(i.name != name for i in inits):
            inits.append(numpy_helper.from_array(value, name))
        return name

    def op(kind: str, inputs: list[str], **attrs: Any) -> str:
        out = fresh(kind.lower())
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    x = INPUT
    if fp16:
        x = fresh("input_fp16")
        nodes.append(helper.make_node("Cast", [INPUT], [x], to=TensorProto.FLOAT16))
    if arch.family == "nnue":
        # nets/models.py NNUENet, operator by operator
        i64 = np.int64
        flat = const("nnue_flat", np.array([-1, 768], i64))
        white = op("Reshape", [op("Slice", [x, const("nnue_p0", np.array([0], i64)),
                                              const("nnue_p12", np.array([12], i64)),
                                              const("nnue_ax1", np.array([1], i64))]), flat])
        swapped = op("Gather", [x, const("nnue_black", np.array([*range(6, 12), *range(6)],
                                                                   i64))], axis=1)
        flipped = op("Gather", [swapped, const("nnue_ranks", np.arange(7, -1, -1, dtype=i64))],
                     axis=2)
        black = op("Reshape", [flipped, flat])
        views = [op("Gemm", [v, "ft.weight", "ft.bias"], transB=1) for v in (white, black)]

        def cell(lo: int, hi: int) -> str:
            # planes lo..hi-1 at the first cell, as (batch, hi - lo)
            part = op("Slice", [x, const(f"nnue_s{lo}", np.array([lo, 0, 0], i64)),
                                const(f"nnue_e{hi}", np.array([hi, 1, 1], i64)),
                                const("nnue_ax123", np.array([1, 2, 3], i64))])
            return op("Reshape", [part, const(f"nnue_w{hi - lo}", np.array([-1, hi - lo], i64))])

        half = np.array(0.5, dtype=dtype)
        inits.append(numpy_helper.from_array(half, "nnue_half"))
        to_move, castling, ep_at, die_at = (DICECHESS_PLANES[k] for k in (
            "to_move", "castling", "ep", "die"))
        white_moves = op("Greater", [cell(to_move, to_move + 1), "nnue_half"])
        us = op("Where", [white_moves, views[0], views[1]])
        them = op("Where", [white_moves, views[1], views[0]])
        lo_hi = [numpy_helper.from_array(np.array(v, dtype=dtype), n)
                 for v, n in ((0.0, "nnue_zero"), (1.0, "nnue_one"))]
        inits.extend(lo_hi)
        clamped = op("Clip", [op("Concat", [us, them], axis=1), "nnue_zero", "nnue_one"])
        rights = cell(castling, castling + 4)
        theirs = op("Gather", [rights, const("nnue_rights", np.array([2, 3, 0, 1], i64))],
                    axis=1)
        castle = op("Where", [white_moves, rights, theirs])
        ep_plane = op("Reshape", [op("Slice", [x, const("nnue_ep0", np.array([ep_at], i64)),
                                               const("nnue_ep1", np.array([ep_at + 1], i64)),
                                               const("nnue_ax1b", np.array([1], i64))]),
                                  const("nnue_w64", np.array([-1, 64], i64))])
        ep = op("ReduceMax", [ep_plane], axes=[1], keepdims=1)
        x = op("Concat", [clamped, cell(die_at, die_at + 6), castle, ep], axis=1)
        for j in range(len(arch.fc) - 1):
            x = relu_(op("Gemm", [x, f"fc.{j}.weight", f"fc.{j}.bias"], transB=1))
    elif arch.family == "resnet":
        x = conv(x, "stem")
        for i in range(arch.blocks):
            h = conv(x, f"blocks.{i}.conv1")
            h = conv(h, f"blocks.{i}.conv2", relu=False)
            summed = fresh("add")
            nodes.append(helper.make_node("Add", [x, h], [summed]))
            x = relu_(summed)
    else:
        for i in range(arch.convs):
            x = conv(x, f"convs.{i}")
    if arch.family != "nnue":
        flat = fresh("flatten")
        nodes.append(helper.make_node("Flatten", [x], [flat], axis=1))
        x = flat
        for j in range(len(arch.fc)):
            out = fresh(f"fc{j}")
            nodes.append(helper.make_node("Gemm", [x, f"fc.{j}.weight", f"fc.{j}.bias"],
                                          [out], transB=1, name=f"fc.{j}"))
            x = relu_(out)
    head = fresh("head")
    nodes.append(helper.make_node("Gemm", [x, "head.weight", "head.bias"], [head], transB=1,
                                  name="head"))
    x = head
    if arch.output == "tanh":
        act = fresh("tanh")
        nodes.append(helper.make_node("Tanh", [x], [act]))
        x = act
    inits.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), "flat_shape"))
    reshaped = fresh("reshape") if fp16 else OUTPUT
    nodes.append(helper.make_node("Reshape", [x, "flat_shape"], [reshaped]))
    if fp16:
        nodes.append(helper.make_node("Cast", [reshaped], [OUTPUT], to=TensorProto.FLOAT))
    planes, height, width = model.input_shape
    graph = helper.make_graph(
        nodes, f"descent_{model.game.name}_{arch.family}",
        [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT,
                                       ["batch", planes, height, width])],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch"])],
        initializer=inits)
    proto = helper.make_model(graph, producer_name="descent",
                              opset_imports=[helper.make_opsetid("", opset)])
    # ONNX Runtime and TensorRT read IR versions up to their own; pin one both accept.
    proto.ir_version = 8
    proto.doc_string = model.describe()
    for key, val in (("model_id", model.model_id), ("game", model.game.spec),
                     ("weights_sha256", model.weights_sha256),
                     ("precision", "fp16" if fp16 else "fp32")):
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, val
    onnx.checker.check_model(proto)
    return proto


def reference_forward(model: LoadedModel,
                      batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """The network in float64 numpy: the torch-free reference of the export parity check."""
    arch = model.arch
    _graphable(model)
    w = {k: v.astype(np.float64) for k, v in model.weights.items()}

    def conv(x: npt.NDArray[np.float64], name: str) -> npt.NDArray[np.float64]:
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
        out = np.einsum("nchwij,fcij->nfhw", windows, w[f"{name}.weight"], optimize=True)
        result: npt.NDArray[np.float64] = out + w[f"{name}.bias"][None, :, None, None]
        return result

    x = np.asarray(batch, dtype=np.float64)
    if arch.family == "nnue":
        n = x.shape[0]
        white = x[:, :12].reshape(n, -1) @ w["ft.weight"].T + w["ft.bias"]
        mirrored = x[:, [*range(6, 12), *range(6)], ::-1].reshape(n, -1)
        black = mirrored @ w["ft.weight"].T + w["ft.bias"]
        to_move, castling, ep_at, die_at = (DICECHESS_PLANES[k] for k in (
            "to_move", "castling", "ep", "die"))
        white_moves = x[:, to_move, 0, 0:1] > 0.5
        views = np.concatenate([np.where(white_moves, white, black),
                                np.where(white_moves, black, white)], 1)
        rights = x[:, castling:castling + 4, 0, 0]
        castle = np.where(white_moves, rights, rights[:, [2, 3, 0, 1]])
        ep = x[:, ep_at].reshape(n, -1).max(1, keepdims=True)
        h = np.concatenate([np.clip(views, 0, 1), x[:, die_at:die_at + 6, 0, 0], castle, ep],
                           1)
        for j in range(len(arch.fc) - 1):
            h = np.maximum(h @ w[f"fc.{j}.weight"].T + w[f"fc.{j}.bias"], 0)
        h = h @ w["head.weight"].T + w["head.bias"]
        result: npt.NDArray[np.float64] = (np.tanh(h) if arch.output == "tanh" else h)
        return result.reshape(-1)
    if arch.family == "resnet":
        x = np.maximum(conv(x, "stem"), 0)
        for i in range(arch.blocks):
            h = np.maximum(conv(x, f"blocks.{i}.conv1"), 0)
            x = np.maximum(x + conv(h, f"blocks.{i}.conv2"), 0)
    else:
        for i in range(arch.convs):
            x = np.maximum(conv(x, f"convs.{i}"), 0)
    x = x.reshape(x.shape[0], -1)
    for j in range(len(arch.fc)):
        x = np.maximum(x @ w[f"fc.{j}.weight"].T + w[f"fc.{j}.bias"], 0)
    x = x @ w["head.weight"].T + w["head.bias"]
    if arch.output == "tanh":
        x = np.tanh(x)
    out: npt.NDArray[np.float64] = x.reshape(-1)
    return out
