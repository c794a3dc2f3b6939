"""Fixtures of the network tests: a private cache directory, small trained model files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from descent.nets.backends import probe

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
