"""Every compiled module has a hand-written stub, so that mypy types its callers and
``mypy.stubtest`` (in .ci/run) checks the stub against the module."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "descent" / "search_cy"


def test_every_cython_module_has_a_stub() -> None:
    sources = sorted(PACKAGE.rglob("*.pyx"))
    assert sources
    missing = [str(p.relative_to(PACKAGE)) for p in sources if not p.with_suffix(".pyi").exists()]
    assert not missing, f"compiled modules without a .pyi stub: {missing}"
