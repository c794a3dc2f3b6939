"""Files that a reader never sees half written: model files, checkpoints, replay memory
segments, ONNX exports, TensorRT engines, plots and caches all go through one writer."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """Makes the entries of ``folder`` (a rename, a new file) durable, where the system
    allows opening a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb", *,
                 durable: bool = True) -> Iterator[IO[Any]]:
    """Opens a temporary file beside ``path`` for writing (``mode`` "wb" or "w", the
    latter UTF-8); when the block ends it is flushed, fsynced (``durable``) and renamed
    over ``path``, and the folder is fsynced so that the rename survives a crash. An
    exception inside the block removes the temporary file and leaves ``path`` as it was.
    Parent folders are created."""
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_write writes whole files: mode 'wb' or 'w', not {mode!r}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    try:
        encoding = "utf-8" if mode == "w" else None
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(target.parent)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *,
                       durable: bool = True) -> Path:
    """``data`` as the whole content of ``path``, atomically (see atomic_write)."""
    with atomic_write(path, "wb", durable=durable) as handle:
        handle.write(data)
    return Path(path)
