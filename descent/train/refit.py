"""A fresh network of another architecture, trained on a run's replay memory.

Self-play is the costly part of a Descent run: its replay memory holds the tree-learning
pairs of the last games (every searched state with its search value). ``refit`` trains a
network of another preset on those pairs, supervised, with the run's loss, optimiser
settings and value convention, and no new games. The use: carry a run's knowledge to a
cheaper network, e.g. the ``mlp`` preset that the native backend evaluates inside the
search, position by position, without a batch call.

The newest ``holdout`` fraction of the games is kept out of training. The report gives the
mean squared error on it, for the refitted network and for the run's own network (which
trained on those games: it is a reference, not a fair opponent).

Like ``--snapshot``, it only reads the run directory (safe while the run trains).
Deterministic for a seed: a fixed number of steps, seeded sampling and initial weights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.nets.modelfile import LoadedModel
from descent.search_cy.games.registry import make_game
from descent.train.config import load_config
from descent.train.data import stored_rows
from descent.train.heuristics import reinforcement_for
from descent.train.memory_files import load_run_memory
from descent.train.network import Learner
from descent.train.trainer import provenance_note

CHUNK_STEPS = 64   # minibatches unpacked at once (bounds the float32 copy of the planes)


@dataclass(frozen=True)
class RefitReport:
    model: LoadedModel
    train_pairs: int          # pairs of the memory trained on
    holdout_pairs: int
    steps: int
    holdout_mse: float        # the refitted network, output units
    run_holdout_mse: float    # the run's own network on the same pairs
    losses: tuple[float, ...]  # mean training loss per chunk of CHUNK_STEPS minibatches


class PackedRows:
    """A run's replay memory as one array of stored rows (bit-packed or float32)."""

    def __init__(self, shape: tuple[int, ...], games: list[tuple[Any, Any]]) -> None:
        self.shape = shape
        self.rows = np.concatenate([np.asarray(stored) for stored, _ in games])
        self.values = np.concatenate([np.asarray(v, dtype=np.float32) for _, v in games])

    def planes(self, index: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        return stored_rows(self.rows, index, self.shape)


def supervised_steps(learner: Learner,
                     planes: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.float32]],
                     values: npt.NDArray[np.float32], steps: int, batch_size: int,
                     rng: np.random.Generator, progress: Any = None) -> list[float]:
    """Adam steps on minibatches drawn uniformly (with replacement) from ``values`` and the
    ``planes`` of their indices, until ``learner`` has made ``steps``; CHUNK_STEPS
    minibatches are unpacked at once. Returns the mean loss of each chunk. Blocks."""
    losses: list[float] = []
    while learner.steps < steps:
        count = min(CHUNK_STEPS, steps - learner.steps) * batch_size
        index = rng.integers(0, len(values), size=count)
        losses.append(learner.fit(planes(index), values[index], rng, batch_size))
        if progress is not None:
            progress(learner.steps, steps, losses[-1])
    return losses


def trained_games(games: int, holdout: float) -> int:
    """How many of a memory's oldest games a refit trains on; the newest rest is held out."""
    return max(1, int(round(games * (1.0 - holdout)))) if holdout else games


def refit(run_dir: str | Path, preset: str, *, steps: int = 30000, batch_size: int = 512,
          holdout: float = 0.05, seed: int | None = None, lr: float | None = None,
          weight_decay: float | None = None, progress: Any = None) -> RefitReport:
    """Trains a fresh ``preset`` network on ``run_dir``'s replay memory. Blocks (minutes).
    ``lr`` and ``weight_decay`` default to the run's own [update] settings."""
    folder = Path(run_dir)
    stored = folder / "config.toml"
    if not stored.exists():
        raise ValueError(f"{folder}: no config.toml (not a training run directory)")
    if steps < 1 or batch_size < 1 or not 0.0 <= holdout < 1.0:
        raise ValueError("refit needs steps >= 1, batch_size >= 1 and 0 <= holdout < 1")
    cfg = load_config(stored)
    loaded = load_run_memory(folder)
    if loaded is None:
        raise ValueError(f"{folder}: no checkpoint yet")
    state, shape, games = loaded
    if not games:
        raise ValueError(f"{folder}: the replay memory is empty")
    seed = cfg.seed if seed is None else seed
    game = make_game(cfg.game)
    sp = cfg.selfplay
    reinforcement = reinforcement_for(game.new_initial_state(), sp.heuristic, sp.max_plies)
    kept = trained_games(len(games), holdout)
    train = PackedRows(shape, games[:kept])
    test = PackedRows(shape, games[kept:]) if kept < len(games) \
        else None

    def make(preset_name: str, learner_seed: int) -> Learner:
        return Learner(game, preset_name, reinforcement, view=cfg.network.view,
                       seed=learner_seed, lr=cfg.update.lr if lr is None else lr,
                       weight_decay=(cfg.update.weight_decay if weight_decay is None
                                     else weight_decay), device=cfg.update.device,
                       threads=cfg.update.threads)

    import torch

    torch.manual_seed(seed)
    learner = make(preset, seed)
    learner.training_only()
    rng = np.random.default_rng(seed)
    losses = supervised_steps(learner, train.planes, train.values, steps, batch_size, rng,
                              progress)
    n = len(train.values)

    def holdout_mse(net: Learner) -> float:
        if test is None:
            return float("nan")
        total = 0.0
        for start in range(0, len(test.values), 16384):
            index = np.arange(start, min(start + 16384, len(test.values)))
            total += net.loss(test.planes(index), test.values[index]) * len(index)
        return total / len(test.values)

    reference = make(cfg.network.preset, seed)
    reference.restore(state["learner"])
    counters = state.get("counters", {})
    note = provenance_note(cfg, reinforcement.name, int(counters.get("iterations", 0)),
                           f"refit as {preset} on the replay memory of {folder.name} "
                           f"({len(games)} games, {n} pairs, {steps} steps of {batch_size})")
    model = learner.export(games=int(counters.get("games", 0)), seed=seed, note=note)
    return RefitReport(model=model, train_pairs=n,
                       holdout_pairs=0 if test is None else len(test.values), steps=steps,
                       holdout_mse=holdout_mse(learner), run_holdout_mse=holdout_mse(reference),
                       losses=tuple(losses))
