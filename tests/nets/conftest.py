"""Fixtures of the network tests: a private cache directory, small trained model files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from descent.nets.backends import probe
from descent.nets.modelfile import LoadedModel, save_model

CPU_BACKENDS = ("onnxruntime", "torch")


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test writes auto-backend choices and TensorRT engines under tmp."""
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    yield cache


def available(name: str) -> bool:
    return probe(name)[0]


def need(name: str) -> None:
    ok, why = probe(name)
    if not ok:
        pytest.skip(f"backend {name} unavailable: {why}")


@pytest.fixture(scope="session")
def trained_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


def _trained(spec: str, folder: Path, name: str) -> LoadedModel:
    import torch  # noqa: F401

    from descent.nets.train_quick import train_quick

    model = train_quick(spec, "tiny", steps=15, positions=128, seed=3)
    save_model(model, folder / name)
    return model


@pytest.fixture(scope="session")
def hex5_model(trained_dir: Path) -> LoadedModel:
    return _trained("hex(size=5)", trained_dir, "hex5.safetensors")


@pytest.fixture(scope="session")
def einstein_model(trained_dir: Path) -> LoadedModel:
    return _trained("einstein", trained_dir, "einstein.safetensors")
