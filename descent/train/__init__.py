"""Descent learning: self-play training of value networks (``descent train``).

    from descent.train import TrainConfig, train
    cfg = TrainConfig(game="hex(size=4)").with_overrides(run__max_iterations=50)
    train(cfg, "runs/hex4")                      # blocks; resume=True continues a run

Modules: config (the TOML configuration), heuristics (reinforcement heuristics), data
(tree/root/terminal learning, symmetries, replay memory), selfplay (matches and their
data, determinization), network (the torch module, Adam, the search wiring), evaluation
(paired matches, Wilson intervals), checkpoint (atomic checkpoints), report (metrics,
progress bar, plots), trainer (the loop and the run directory), cli (``descent train``),
labels (Hex training data from self-play of the default player, ``descent labels``).
Training needs torch and plots matplotlib (the 'train' extra); the names below are
imported on first use, so that label generation and the configuration need neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from descent.train.config import TrainConfig, load_config
    from descent.train.trainer import Trainer, train

__all__ = ["TrainConfig", "Trainer", "load_config", "train"]
_HOMES = {"TrainConfig": "config", "load_config": "config", "Trainer": "trainer",
          "train": "trainer"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"descent.train.{_HOMES[name]}"), name)
