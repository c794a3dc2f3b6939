"""Backends: one evaluate call each, the same values, batches split at max_batch, the auto
choice measured once and cached, TensorRT where it can run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from descent.nets.arch import preset
from descent.nets.backends import (
    BACKENDS,
    BackendUnavailable,
    make_backend,
    probe,
    registered_backends,
    runs_model,
)
from descent.nets.backends.auto import auto_select
from descent.nets.encoding import encode_batch, sample_positions
from descent.nets.modelfile import LoadedModel, make_model
from descent.nets.onnx_graph import reference_forward
from tests.nets.conftest import CPU_BACKENDS, need


@pytest.fixture(scope="module")
def model() -> LoadedModel:
    return make_model("hex(size=5)", preset("hex", "tiny"), seed=6)


@pytest.fixture(scope="module")
def batch(model: LoadedModel) -> np.ndarray:
    return encode_batch(sample_positions(model.game, 40, seed=2))


def test_registry_lists_every_backend_and_auto() -> None:
    assert registered_backends() == ["onnxruntime", "torch", "native", "tensorrt", "auto"]
    for name in registered_backends():
        ok, detail = probe(name)
        assert isinstance(ok, bool) and detail
    assert probe("onnxruntime")[0]   # a runtime dependency
    with pytest.raises(ValueError, match="unknown backend 'tflite'"):
        probe("tflite")


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_each_backend_matches_the_reference(name: str, model: LoadedModel,
                                            batch: np.ndarray) -> None:
    need(name)
    backend = make_backend(name, model, device="cpu", max_batch=16)
    assert backend.name == name and backend.device == "cpu"
    assert backend.precision == "fp32" and backend.max_batch == 16
    assert name in backend.describe()
    values = backend.evaluate(batch)            # 40 positions: split into 16 + 16 + 8
    assert values.shape == (40,) and values.dtype == np.float32
    assert float(np.max(np.abs(values - reference_forward(model, batch)))) <= 1e-4
    one = backend.evaluate(batch[3:4])
    assert one.shape == (1,) and one[0] == pytest.approx(values[3], abs=1e-5)


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_backends_refuse_a_batch_of_the_wrong_shape(name: str, model: LoadedModel) -> None:
    need(name)
    backend = make_backend(name, model, device="cpu")
    with pytest.raises(ValueError, match="batch shape"):
        backend.evaluate(np.zeros((2, 3, 9, 9), dtype=np.float32))
    with pytest.raises(ValueError, match="dtype"):
        backend.evaluate(np.zeros((2, 3, 7, 7), dtype=np.float64))


def test_onnxruntime_io_binding_and_plain_run_agree(model: LoadedModel,
                                                    batch: np.ndarray) -> None:
    bound = make_backend("onnxruntime", model, io_binding=True).evaluate(batch)
    plain = make_backend("onnxruntime", model, io_binding=False).evaluate(batch)
    assert np.array_equal(bound, plain)


def test_missing_torch_is_reported_with_the_reason(monkeypatch: pytest.MonkeyPatch,
                                                   model: LoadedModel) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)   # import torch now fails
    ok, why = probe("torch")
    assert not ok and "torch does not import" in why and "torch==2.13.0" in why
    with pytest.raises(BackendUnavailable, match="backend torch is not available"):
        make_backend("torch", model)


def test_auto_measures_picks_an_available_backend_and_caches(
        model: LoadedModel, private_cache: Path) -> None:
    choice, backend = auto_select(model, measure_seconds=0.02)
    assert not choice.cached
    assert choice.backend in BACKENDS and probe(choice.backend)[0]
    assert backend.name == choice.backend
    # every available backend that runs the model's family was measured
    assert set(choice.rates) == {n for n in BACKENDS if probe(n)[0] and runs_model(n, model)}
    assert choice.rates[choice.backend] == max(choice.rates.values())
    assert choice.cache_path is not None
    assert choice.cache_path.parent == private_cache / "descent"
    stored = json.loads(choice.cache_path.read_text())
    assert [e["backend"] for e in stored.values()] == [choice.backend]

    again, backend2 = auto_select(model, measure_seconds=0.02)
    assert again.cached and again.backend == choice.backend
    assert backend2.name == choice.backend

    other = make_model("hex(size=5)", preset("hex", "tiny"), seed=7)   # other weights
    assert not auto_select(other, measure_seconds=0.02)[0].cached


def test_auto_survives_a_corrupt_cache_file(model: LoadedModel, private_cache: Path) -> None:
    path = private_cache / "descent" / "auto-backend.json"
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    choice, _ = auto_select(model, measure_seconds=0.02)
    assert not choice.cached and json.loads(path.read_text())


def test_auto_through_make_backend(model: LoadedModel, batch: np.ndarray) -> None:
    backend = make_backend("auto", model, measure_seconds=0.02)
    assert backend.evaluate(batch).shape == (40,)


def test_auto_with_no_usable_candidate(model: LoadedModel) -> None:
    if probe("tensorrt")[0]:
        pytest.skip("tensorrt is available here")
    with pytest.raises(BackendUnavailable, match="no backend is available"):
        auto_select(model, candidates=["tensorrt"])


# ---------------------------------------------------------------- TensorRT (GPU machines)


@pytest.mark.parametrize(("precision", "limit"), [("fp32", 1e-4), ("fp16", 1e-2)])
def test_tensorrt_engine_matches_and_is_cached(precision: str, limit: float,
                                               private_cache: Path) -> None:
    need("tensorrt")
    from descent.nets.backends.tensorrt_backend import TensorRTBackend

    model = make_model("hex(size=11)", preset("hex", "cpu"), seed=3)
    batch = encode_batch(sample_positions(model.game, 130, seed=4))
    first = TensorRTBackend(model, precision=precision, max_batch=128)
    assert first.built and first.engine_path.is_file()
    assert first.engine_path.is_relative_to(private_cache)
    values = first.evaluate(batch)     # 130 positions: split at the profile's 128
    assert values.shape == (130,)
    assert float(np.max(np.abs(values - reference_forward(model, batch)))) <= limit
    second = TensorRTBackend(model, precision=precision, max_batch=128)
    assert not second.built and second.engine_path == first.engine_path
    assert np.array_equal(second.evaluate(batch), values)
    other = TensorRTBackend(model, precision=precision, max_batch=64)
    assert other.engine_path != first.engine_path     # the profile is part of the key


def test_tensorrt_is_skipped_here_with_its_reason() -> None:
    ok, why = probe("tensorrt")
    if ok:
        pytest.skip("tensorrt runs here: the engine tests above ran")
    assert "tensorrt does not import" in why or "CUDA" in why or "cuda-python" in why
    print(f"tensorrt tests skipped: {why}")


# ---------------------------------------------------------------- CUDA (GPU machines)


@pytest.mark.parametrize(("precision", "limit"), [("fp32", 1e-4), ("fp16", 1e-2)])
def test_torch_on_cuda(precision: str, limit: float) -> None:
    import torch
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch here")
    model = make_model("hex(size=11)", preset("hex", "cpu"), seed=3)
    batch = encode_batch(sample_positions(model.game, 130, seed=4))
    backend = make_backend("torch", model, device="cuda", precision=precision, max_batch=64)
    assert backend.device.startswith("cuda:0") and backend.precision == precision
    values = backend.evaluate(batch)
    assert values.shape == (130,) and values.dtype == np.float32
    assert float(np.max(np.abs(values - reference_forward(model, batch)))) <= limit


def test_onnxruntime_on_cuda(model: LoadedModel, batch: np.ndarray) -> None:
    import onnxruntime as ort

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("no CUDA execution provider in this onnxruntime build")
    backend = make_backend("onnxruntime", model, device="cuda")
    assert backend.device == "cuda:0"
    values = backend.evaluate(batch)
    assert float(np.max(np.abs(values - reference_forward(model, batch)))) <= 1e-4
