"""The one atomic file writer: whole files or nothing, the umask respected."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from descent.nets.files import atomic_write, atomic_write_bytes


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "model.dnet"
    atomic_write_bytes(target, b"old")
    with atomic_write(target, "w") as handle:
        handle.write("new text")
    assert target.read_text() == "new text"
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.dnet"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "checkpoint.pt"
    atomic_write_bytes(target, b"complete")
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write(b"half")
        raise RuntimeError("killed while writing")
    assert target.read_bytes() == b"complete"
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_respect_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        path = atomic_write_bytes(tmp_path / f"m{umask:o}.onnx", b"x")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_only_whole_file_modes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="whole files"), atomic_write(tmp_path / "x", "ab"):
        pass
