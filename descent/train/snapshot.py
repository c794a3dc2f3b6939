"""The network of a run's last checkpoint as a model file, without touching the run.

A training run may be live while this reads it: only ``config.toml`` and
``checkpoint.pt`` are read (the checkpoint is replaced atomically, so a reader sees a
whole one), nothing in the run directory is written, and the model goes wherever the
caller says. This is how a network is tried in ``descent arena`` during training.
"""

from __future__ import annotations

from pathlib import Path

from descent.nets.modelfile import save_model
from descent.search_cy.games.registry import make_game
from descent.train.checkpoint import load_checkpoint
from descent.train.config import load_config
from descent.train.heuristics import reinforcement_for
from descent.train.network import Learner
from descent.train.trainer import provenance_note


def export_snapshot(run_dir: str | Path, out: str | Path) -> Path:
    """Writes the network of ``run_dir``'s last checkpoint to ``out`` (a .dnet model file,
    with the run's provenance: games, seed, iteration). Blocks."""
    folder = Path(run_dir)
    stored = folder / "config.toml"
    if not stored.exists():
        raise ValueError(f"{folder}: no config.toml (not a training run directory)")
    cfg = load_config(stored)
    state = load_checkpoint(folder)
    if state is None:
        raise ValueError(f"{folder}: no checkpoint yet")
    game = make_game(cfg.game)
    sp = cfg.selfplay
    reinforcement = reinforcement_for(game.new_initial_state(), sp.heuristic, sp.max_plies)
    learner = Learner(game, cfg.network.preset, reinforcement, view=cfg.network.view,
                      seed=cfg.seed, device="cpu")
    learner.restore(state["learner"])
    counters = state.get("counters", {})
    iterations = int(counters.get("iterations", 0))
    games = int(counters.get("games", 0))
    note = provenance_note(cfg, reinforcement.name, iterations, f"snapshot of {folder.name}")
    return save_model(learner.export(games=games, seed=cfg.seed, note=note), out)
