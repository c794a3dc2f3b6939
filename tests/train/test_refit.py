"""``descent train --refit``: a fresh network of another preset learns a run's replay
memory, deterministically, without touching the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from descent.train.refit import refit
from descent.train.trainer import Trainer
from tests.train.conftest import tiny_config


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("run")
    Trainer(tiny_config("hex(size=3)", run__max_iterations=6), folder).run()
    return folder


def test_refit_learns_the_memory_and_is_deterministic(run_dir: Path) -> None:
    before = sorted((p.name, p.stat().st_mtime_ns) for p in run_dir.rglob("*"))
    untrained = refit(run_dir, "mlp", steps=1, batch_size=64, holdout=0.34, seed=1)
    trained = refit(run_dir, "mlp", steps=300, batch_size=64, holdout=0.34, seed=1)
    again = refit(run_dir, "mlp", steps=300, batch_size=64, holdout=0.34, seed=1)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in run_dir.rglob("*")) == before
    assert trained.holdout_pairs > 0 and trained.train_pairs > 0
    assert trained.holdout_mse < 0.5 * untrained.holdout_mse
    assert np.mean(trained.losses[-2:]) < trained.losses[0]
    assert trained.model.arch.family == "mlp"
    assert trained.model.weights_sha256 == again.model.weights_sha256
    assert "refit as mlp" in trained.model.training.note
    assert trained.model.training.games == 6


def test_refit_cli_writes_a_model_the_native_backend_runs(run_dir: Path,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "mlp.dnet"
    done = _descent("--run-dir", str(run_dir), "--refit", "mlp", "--out", str(out),
                    "--refit-steps", "50", "--refit-batch", "32", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "held-out MSE" in done.stdout and "the run's own network" in done.stdout

    from descent.nets.evaluator import network_evaluator
    from descent.nets.modelfile import load_model
    from descent.search_cy.eval.mlp_eval import MLPEvaluator

    model = load_model(out, "hex(size=3)")
    state = model.game.new_initial_state()
    evaluator = network_evaluator(model, state, backend="native")
    assert isinstance(evaluator, MLPEvaluator)
    assert -1.0 <= float(evaluator.evaluate([state])[0]) <= 1.0


def test_refit_refuses_what_it_cannot_do(run_dir: Path, tmp_path: Path) -> None:
    no_out = _descent("--run-dir", str(run_dir), "--refit", "mlp")
    assert no_out.returncode == 2 and "--out" in no_out.stderr
    nowhere = _descent("--run-dir", str(tmp_path / "nowhere"), "--refit", "mlp", "--out",
                       str(tmp_path / "x.dnet"))
    assert nowhere.returncode == 2 and "config.toml" in nowhere.stderr
    with pytest.raises(ValueError, match="no preset 'huge'"):
        refit(run_dir, "huge", steps=1)


def _descent(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "descent", "train", *args],
                          capture_output=True, text=True, timeout=600)


def test_mlp_self_play_reads_the_live_weights_in_c(tmp_path: Path) -> None:
    """A run of the mlp preset searches with the native evaluator, and every update
    reaches it: its values equal the live network's after training."""
    from descent.nets.encoding import encode_batch, sample_positions
    from descent.search_cy.eval.mlp_eval import MLPEvaluator

    trainer = Trainer(tiny_config("hex(size=3)", network__preset="mlp",
                                  run__max_iterations=3), tmp_path)
    assert isinstance(trainer.network_evaluator, MLPEvaluator)
    states = [s for s in sample_positions(trainer.game, 20, seed=4) if not s.is_terminal()]
    before = trainer.network_evaluator.evaluate(states)
    trainer.run()
    after = trainer.network_evaluator.evaluate(states)
    live = trainer.learner.function(encode_batch(states))
    assert np.allclose(after, live, atol=1e-5)
    assert not np.allclose(after, before, atol=1e-4)
    assert trainer.counters.network_evaluations > 0


def test_a_run_starts_from_a_refit_network(run_dir: Path, tmp_path: Path) -> None:
    from descent.nets.modelfile import load_model, save_model

    report = refit(run_dir, "mlp", steps=20, batch_size=32, seed=2)
    source = save_model(report.model, tmp_path / "refit.dnet")
    trainer = Trainer(tiny_config("hex(size=3)", network__preset="mlp",
                                  network__init_model=str(source),
                                  data__init_memory=str(run_dir)), tmp_path / "warm")
    from descent.train.checkpoint import load_checkpoint
    from descent.train.memory_files import checkpoint_games

    state = load_checkpoint(run_dir)
    assert state is not None
    _shape, stored = checkpoint_games(run_dir, state)
    assert len(trainer.memory) == len(stored) > 0
    assert trainer.memory.pairs == sum(len(values) for _, values in stored)
    initial = load_model(tmp_path / "warm" / "models" / "iter-000000.dnet", "hex(size=3)")
    assert initial.weights_sha256 == report.model.weights_sha256
    assert "initial weights refit.dnet" in initial.training.note
    assert f"replay memory of {run_dir.name}" in initial.training.note
    state = trainer.game.new_initial_state()
    assert trainer.network_evaluator.evaluate([state])[0] == pytest.approx(
        _native_value(source, state), abs=1e-6)
    with pytest.raises(ValueError, match="not a training run of hex"):
        Trainer(tiny_config("hex(size=4)", data__init_memory=str(run_dir)), tmp_path / "w4")
    with pytest.raises(ValueError, match="architecture"):
        Trainer(tiny_config("hex(size=3)", network__preset="tiny",
                            network__init_model=str(source)), tmp_path / "wrong")


def _native_value(path: Path, state: object) -> float:
    from descent.nets.evaluator import network_evaluator

    return float(network_evaluator(str(path), state, backend="native")  # type: ignore[arg-type]
                 .evaluate([state])[0])
