"""Atomic training checkpoints: everything a run needs to continue exactly.

One file, ``checkpoint.pt`` (torch.save of tensors, numbers and strings only, loaded back
with ``weights_only=True``: no code is unpickled): the network's weights, Adam's state,
the names of the replay memory's segment files and the serials of the games it keeps (the
games are in those files: train.memory_files; version 1 held them here, and still
loads), the RNG states (numpy's generator, Python's ``random``, torch's CPU and CUDA
generators), the counters, the size of ``metrics.jsonl`` at that moment and the path of
the previous evaluation's model. It is written to a temporary file in the same folder,
flushed to disk, then renamed over the old one (``os.replace``): a kill at any moment
leaves either the old checkpoint or the new one, never half of one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from descent.nets.files import atomic_write

Config = TypeVar("Config")

FORMAT = "descent-train-checkpoint"
VERSION = 2            # 2: the replay memory in segment files (train.memory_files)
READABLE = (1, 2)      # 1: the replay memory inside the checkpoint
NAME = "checkpoint.pt"


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """The RNG states as JSON-able data (numpy's generator, Python's random)."""
    py = random.getstate()
    return {"numpy": rng.bit_generator.state,
            "python": [py[0], list(py[1]), py[2]]}


def restore_rng(rng: np.random.Generator, data: dict[str, Any]) -> None:
    rng.bit_generator.state = data["numpy"]
    version, internal, gauss = data["python"]
    random.setstate((version, tuple(internal), gauss))


def save_checkpoint(folder: Path, payload: dict[str, Any]) -> Path:
    """Writes ``payload`` (plus format tags) atomically as ``folder/checkpoint.pt``."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / NAME
    data = {"format": FORMAT, "version": VERSION, **payload}
    data["rng_json"] = json.dumps(payload.get("rng_json", {}))
    data["torch_rng"] = torch.get_rng_state()
    if torch.cuda.is_available():
        data["cuda_rng"] = torch.cuda.get_rng_state_all()
    with atomic_write(target) as handle:      # the rename is made durable too
        torch.save(data, handle)
    return target


def load_checkpoint(folder: Path) -> dict[str, Any] | None:
    """The checkpoint in ``folder`` (None when there is none); restores torch's RNGs."""
    import torch

    path = folder / NAME
    if not path.exists():
        return None
    try:
        data: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a damaged file must say so, not crash with a trace
        raise ValueError(f"{path}: unreadable checkpoint ({exc})") from None
    if data.get("format") != FORMAT or data.get("version") not in READABLE:
        raise ValueError(f"{path}: not a training checkpoint of version "
                         f"{' or '.join(map(str, READABLE))}")
    data["rng_json"] = json.loads(data["rng_json"])
    torch.set_rng_state(data["torch_rng"])
    if "cuda_rng" in data and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(data["cuda_rng"])
    return data


def leftover_temporaries(folder: Path) -> list[Path]:
    """Temporary checkpoint files a kill left behind (removed on resume)."""
    return sorted(folder.glob(NAME + ".*.tmp"))


def run_config(run_dir: Path, cls: type[Config], config: Config | None,
               check: Callable[[Config], None] | None = None) -> Config:
    """A run folder's settings (a dataclass ``cls``): its ``config.json`` when it has one
    (a resumed run keeps its own), else ``config`` or the defaults, written there first;
    ``check`` (raising on settings that cannot run) sees them before they are written,
    so that a refused run leaves no settings behind."""
    path = run_dir / "config.json"
    if path.exists():
        kept = cls(**json.loads(path.read_text()))
        if check is not None:
            check(kept)
        return kept
    chosen = config if config is not None else cls()
    if check is not None:
        check(chosen)
    with atomic_write(path, "w") as f:
        f.write(json.dumps(asdict(chosen), indent=1) + "\n")   # type: ignore[call-overload]
    return chosen
