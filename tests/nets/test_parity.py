"""The ONNX graph built from the weights computes what the torch module computes, on every
preset of every game (fp32 within 1e-4), and the torch-free numpy reference agrees."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from descent.nets.arch import PRESETS, preset
from descent.nets.encoding import encode_batch, sample_positions
from descent.nets.modelfile import make_model
from descent.nets.onnx_graph import INPUT, build_onnx, reference_forward

SPECS = {"hex": "hex(size=11)", "einstein": "einstein", "dicechess": "dicechess"}
# (a network on the C heuristic has no graph: its refusal is tests/nets/test_based_model.py's)
# every preset ONNX graphs: not those on the C heuristic, nor Hex's nnue (its feature
# lookup runs on the native and torch backends, test_hex_nnue_model.py)
CASES = [(game, name, output) for game in PRESETS for name in PRESETS[game]
         if not PRESETS[game][name].base
         and not (game == "hex" and PRESETS[game][name].family == "nnue")
         for output in ("tanh", "linear")]


def session(proto_bytes: bytes) -> ort.InferenceSession:
    return ort.InferenceSession(proto_bytes, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize(("game", "name", "output"), CASES)
def test_torch_and_onnxruntime_agree(game: str, name: str, output: str) -> None:
    import torch

    from descent.nets.models import module_from_weights

    model = make_model(SPECS[game], preset(game, name, output), seed=4)
    batch = encode_batch(sample_positions(model.game, 6, seed=8))
    net = module_from_weights(model.arch, model.input_shape, model.weights).eval()
    with torch.inference_mode():
        expected = net(torch.from_numpy(batch)).numpy()
    got = session(build_onnx(model).SerializeToString()).run(None, {INPUT: batch})[0]
    assert got.shape == (6,) and got.dtype == np.float32
    assert float(np.max(np.abs(got - expected))) <= 1e-4
    assert float(np.std(expected)) > 1e-3   # the comparison is not between constants
    assert float(np.max(np.abs(reference_forward(model, batch) - expected))) <= 1e-4


@pytest.mark.parametrize("game", list(PRESETS))
def test_fp16_graph_is_within_the_fp16_limit(game: str) -> None:
    model = make_model(SPECS[game], preset(game, "cpu"), seed=4)
    batch = encode_batch(sample_positions(model.game, 6, seed=8))
    try:
        half = session(build_onnx(model, fp16=True).SerializeToString())
    except Exception as exc:  # an ONNX Runtime build without CPU fp16 kernels
        pytest.skip(f"onnxruntime cannot run the fp16 graph here: {exc}")
    got = half.run(None, {INPUT: batch})[0]
    assert got.dtype == np.float32   # float32 in and out around the fp16 body
    assert float(np.max(np.abs(got - reference_forward(model, batch)))) <= 1e-2


def test_graph_bytes_are_deterministic() -> None:
    model = make_model("hex(size=5)", preset("hex", "tiny"), seed=1)
    assert build_onnx(model).SerializeToString() == build_onnx(model).SerializeToString()


def test_dynamic_batch() -> None:
    model = make_model("hex(size=5)", preset("hex", "tiny"), seed=1)
    sess = session(build_onnx(model).SerializeToString())
    for n in (1, 7, 300):
        batch = encode_batch(sample_positions(model.game, n, seed=n))
        assert sess.run(None, {INPUT: batch})[0].shape == (n,)
