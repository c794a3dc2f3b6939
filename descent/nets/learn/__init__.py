"""Descent learning: self-play training of value networks (``descent train``).

    from descent.nets.learn import TrainConfig, train
    cfg = TrainConfig(game="hex(size=4)").with_overrides(run__max_iterations=50)
    train(cfg, "runs/hex4")                      # blocks; resume=True continues a run

Modules: config (the TOML configuration), heuristics (reinforcement heuristics), data
(tree/root/terminal learning, symmetries, replay memory), selfplay (matches and their
data, determinization), network (the torch module, Adam, the search wiring), evaluation
(paired matches, Wilson intervals), checkpoint (atomic checkpoints), report (metrics,
progress bar, plots), trainer (the loop and the run directory), cli (``descent train``).
Needs torch (the 'torch' extra).
"""

from descent.nets.learn.config import TrainConfig, load_config
from descent.nets.learn.trainer import Trainer, train

__all__ = ["TrainConfig", "Trainer", "load_config", "train"]
