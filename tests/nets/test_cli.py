"""``descent export``, ``descent backends`` and ``descent bench nets``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from descent.nets import bench
from descent.nets.backends import probe
from descent.nets.modelfile import LoadedModel


def descent(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run([sys.executable, "-m", "descent", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_export_writes_onnx_and_prints_parity(hex5_model: LoadedModel, tmp_path: Path,
                                              private_cache: Path) -> None:
    out = tmp_path / "out" / "hex5.onnx"
    result = descent("export", str(hex5_model.path), "--onnx", str(out), cache=private_cache)
    assert result.returncode == 0, result.stderr
    assert f"onnx: wrote {out}" in result.stdout
    line = next(x for x in result.stdout.splitlines() if x.startswith("parity onnxruntime"))
    assert line.endswith("ok") and "on 64 positions" in line
    diff = float(line.split("max |diff| ")[1].split()[0])
    assert diff <= 1e-4
    proto = onnx.load(str(out))
    props = {p.key: p.value for p in proto.metadata_props}
    assert props["weights_sha256"] == hex5_model.weights_sha256
    assert props["game"] == "hex(size=5,swap=false)"


def test_export_errors_are_one_clear_line(hex5_model: LoadedModel, tmp_path: Path,
                                          private_cache: Path) -> None:
    out = str(tmp_path / "x.onnx")
    wrong = descent("export", str(hex5_model.path), "--onnx", out, "--game", "einstein",
                    cache=private_cache)
    assert wrong.returncode == 2
    assert "descent export: error:" in wrong.stderr and "wrong game" in wrong.stderr
    assert "Traceback" not in wrong.stderr
    half = descent("export", str(hex5_model.path), "--onnx", out, "--fp16",
                   cache=private_cache)
    assert half.returncode == 2 and "--tensorrt" in half.stderr
    missing = descent("export", str(tmp_path / "none.safetensors"), "--onnx", out,
                      cache=private_cache)
    assert missing.returncode == 2 and "no such model file" in missing.stderr


def test_export_tensorrt(hex5_model: LoadedModel, tmp_path: Path, private_cache: Path) -> None:
    ok, why = probe("tensorrt")
    args = ["export", str(hex5_model.path), "--onnx", str(tmp_path / "m.onnx"),
            "--tensorrt", str(tmp_path / "m.plan"), "--fp16"]
    result = descent(*args, cache=private_cache)
    if not ok:
        assert result.returncode == 2 and "cannot build a TensorRT engine here" in result.stderr
        pytest.skip(f"tensorrt unavailable: {why}")
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("parity tensorrt fp16"))
    assert line.endswith("ok")
    assert (tmp_path / "m.plan").stat().st_size > 0


def test_backends_lists_every_backend_with_a_reason(hex5_model: LoadedModel,
                                                    private_cache: Path) -> None:
    result = descent("backends", "--model", str(hex5_model.path), cache=private_cache)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name in ("onnxruntime", "torch", "tensorrt", "auto"):
        row = next(x for x in lines if x.startswith(name + " "))
        ok, detail = probe(name)
        assert ("unavailable" not in row) == ok
        assert detail.split(" (")[0] in row
    assert any("onnxruntime on cpu, fp32" in x for x in lines)


def test_bench_nets_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    status = bench.main(game="hex", seconds=0.02, presets=("tiny",), batches=(1, 16))
    assert status == 0
    out = capsys.readouterr().out
    assert "positions/s" in out and "tiny" in out and "onnxruntime/fp32" in out
    assert "inside a search: ubfms on hex(size=11)" in out
    status = bench.main(game="einstein", as_json=True, seconds=0.02, presets=("tiny",),
                        batches=(1, 121), search=False)
    data = json.loads(capsys.readouterr().out)
    assert status == 0 and {r["batch"] for r in data["rates"]} == {1, 121}
    assert all(r["positions_per_s"] > 0 for r in data["rates"])
    assert np.isfinite([r["positions_per_s"] for r in data["rates"]]).all()


def test_bench_nets_times_the_native_leaf_inside_expectiminimax(
        capsys: pytest.CaptureFixture[str]) -> None:
    status = bench.main(game="dicechess", as_json=True, seconds=0.05, presets=("mlp",),
                        batches=(1,))
    data = json.loads(capsys.readouterr().out)
    assert status == 0
    leaves = {r["leaf"]: r for r in data["leaf"]}
    assert set(leaves) == {"heuristic", "mlp, planes", "mlp, list form", "nnue",
                           "nnue_small", "hybrid"}
    assert leaves["heuristic"]["heuristic_ratio"] == 1.0
    # the same values give the same tree: both network rows searched the same nodes
    assert leaves["mlp, planes"]["nodes"] == leaves["mlp, list form"]["nodes"]
    assert all(r["nodes_per_s"] > 0 for r in data["leaf"])


def test_bench_nets_is_a_suite_of_the_bench_command(private_cache: Path) -> None:
    result = descent("bench", "--help", cache=private_cache)
    assert result.returncode == 0 and "nets" in result.stdout


def test_models_run_and_export_without_torch(hex5_model: LoadedModel, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """torch is a training extra: loading, searching with and exporting a model need only
    onnx, onnxruntime and safetensors (the parity reference is then numpy float64)."""
    import argparse

    from descent.nets.cli import run_export
    from descent.nets.evaluator import network_evaluator
    from descent.nets.modelfile import load_model

    assert hex5_model.path is not None
    monkeypatch.setitem(sys.modules, "torch", None)   # import torch now fails
    model = load_model(hex5_model.path, "hex(size=5)")
    state = model.game.new_initial_state()
    values = network_evaluator(model, state, backend="auto",
                               measure_seconds=0.01).evaluate([state])
    assert values.shape == (1,) and -1.0 <= values[0] <= 1.0
    args = argparse.Namespace(model=str(hex5_model.path), onnx=str(tmp_path / "m.onnx"),
                              tensorrt=None, fp16=False, game=None, max_batch=256)
    assert run_export(args) == 0
    out = capsys.readouterr().out
    assert "vs numpy float64 reference on 64 positions" in out and out.rstrip().endswith("ok")
