"""Files that a reader never sees half written: model files, checkpoints, replay memory
segments, ONNX exports, TensorRT engines, plots and caches all go through one writer."""

from __future__ import annotations

import os
import secrets
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


def _create_beside(target: Path) -> tuple[int, str]:
    """A new temporary file in ``target``'s folder, created with mode 0666 less the umask
    (as ``open`` would create ``target`` itself; ``tempfile.mkstemp`` would make it 0600)."""
    for _ in range(100):
        tmp = str(target.parent / f"{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {target}")


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
    fd, tmp = _create_beside(target)
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
