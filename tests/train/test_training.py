"""Learning happens: a short run on Hex 3x3 moves the network toward the exact values and
makes it beat a random player; ``descent train`` runs end to end and its model loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from descent.nets.encoding import encode_batch
from descent.train.evaluation import RandomPlayer, paired_matches
from descent.train.trainer import Trainer
from tests.train.conftest import all_states, solve, tiny_config


def test_short_run_on_hex3_learns_the_exact_values_and_beats_random(tmp_path: Path) -> None:
    states = all_states("hex(size=3)")
    memo: dict[int, float] = {}
    exact = np.array([solve(s, memo) for s in states], dtype=np.float64)
    inputs = encode_batch(states)
    cfg = tiny_config("hex(size=3)", run__max_iterations=10, data__replay_rate=0.5,
                      selfplay__anneal_iterations=10)
    trainer = Trainer(cfg, tmp_path)

    def measure() -> tuple[float, float]:
        predicted = trainer.learner.function(inputs.copy())
        mse = float(np.mean((predicted - exact) ** 2))
        # the network alone (a one-node search: the best child by its value) vs random
        player = trainer.network_player(trainer._export("test"), "network")
        player.nodes = 1
        stats = paired_matches(trainer.game, player, RandomPlayer(), 60, seed=11)
        return mse, stats.win_rate

    mse_before, rate_before = measure()
    losses = []
    trainer.run()
    losses = [r["fresh_loss"] for r in trainer.records if r.get("kind") == "iteration"]
    mse_after, rate_after = measure()
    assert mse_after < 0.6 * mse_before
    assert np.mean(losses[-3:]) < np.mean(losses[:3])
    assert rate_after >= 0.8 and rate_after > rate_before


def _descent(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "descent", "train", *args],
                          capture_output=True, text=True, timeout=240)


def test_cli_trains_resumes_and_writes_a_loadable_model(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text("seed = 5\n[selfplay]\niterations = 8\nhash_mb = 4\n"
                      "[update]\nbatch_size = 64\n"
                      "[eval]\nevery = 1\ngames = 2\nnodes = 30\nopponents = ['heuristic']\n",
                      encoding="utf-8")
    run_dir = tmp_path / "run"
    done = _descent("--game", "hex(size=3)", "--config", str(config), "--run-dir",
                    str(run_dir), "--hours", "0.00001")
    assert done.returncode == 0, done.stderr
    assert "model:" in done.stdout and "vs heuristic" in done.stdout
    records = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert records[0]["iteration"] == 1 and "eval" in records[0]
    # the time limit stops the run after its first iteration or, on a fast machine whose
    # first iteration took less than the limit, a later one: count what it did
    first = max(int(r["iteration"]) for r in records if r.get("kind") == "iteration")
    for name in ("config.toml", "checkpoint.pt", "model.dnet", "plots/loss.png",
                 "plots/winrate.png", "models/iter-000001.dnet"):
        assert (run_dir / name).exists(), name
    assert (run_dir / "plots" / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    again = _descent("--game", "hex(size=3)", "--run-dir", str(run_dir))
    assert again.returncode == 2 and "--resume" in again.stderr

    # on resume the limits count from where the run stands: one more iteration
    more = _descent("--run-dir", str(run_dir), "--resume", "--max-iterations", "1")
    assert more.returncode == 0, more.stderr
    assert f"iterations: {first + 1}" in more.stdout
    # resuming a run that has reached its (stored) limit says so instead of training on
    finished = _descent("--run-dir", str(run_dir), "--resume")
    assert finished.returncode == 0 and f"is finished ({first + 1} iterations" in finished.stderr
    assert "model:" not in finished.stdout

    from descent.nets.evaluator import network_evaluator
    from descent.nets.modelfile import load_model
    from descent.search_cy.games.registry import make_game

    model = load_model(run_dir / "model.dnet", "hex(size=3)")
    assert model.training.games == first + 1 and model.training.steps > 0
    assert model.training.date and "descent train" in model.training.note
    assert model.value.heuristic == "gain" and model.arch.output == "tanh"
    state = make_game("hex(size=3)").new_initial_state()
    values = network_evaluator(model, state, backend="torch").evaluate([state])
    assert -1.0 <= float(values[0]) <= 1.0

    # a snapshot reads the run only and carries the same network as the final model
    before = sorted((p.name, p.stat().st_mtime_ns) for p in run_dir.rglob("*"))
    snap = _descent("--run-dir", str(run_dir), "--snapshot", str(tmp_path / "snap.dnet"))
    assert snap.returncode == 0, snap.stderr
    assert sorted((p.name, p.stat().st_mtime_ns) for p in run_dir.rglob("*")) == before
    snapshot = load_model(tmp_path / "snap.dnet", "hex(size=3)")
    assert snapshot.weights_sha256 == model.weights_sha256
    assert snapshot.training.games == first + 1 and "snapshot" in snapshot.training.note
    missing = _descent("--run-dir", str(tmp_path / "nowhere"), "--snapshot",
                       str(tmp_path / "x.dnet"))
    assert missing.returncode == 2 and "config.toml" in missing.stderr


def test_bootstrap_games_search_with_the_heuristic_then_the_network(tmp_path: Path) -> None:
    from descent.train.config import TrainConfig
    from descent.train.trainer import Trainer

    cfg = TrainConfig().with_overrides(game="hex(size=3)", seed=4, selfplay__iterations=6,
                                       selfplay__hash_mb=4, selfplay__bootstrap_games=2,
                                       evaluation__every=0, run__progress=False)
    trainer = Trainer(cfg, tmp_path / "run")
    records = [trainer.iteration() for _ in range(3)]
    # the heuristic leads the first two games: the network values nothing for them
    assert [r.get("bootstrap", False) for r in records] == [True, True, False]
    assert [r["network_evaluations"] == 0 for r in records] == [True, True, False]
    assert all(r["pairs"] > 0 and -1.0 <= r["value_min"] <= r["value_max"] <= 1.0
               for r in records)
    with pytest.raises(ValueError, match="bootstrap_games"):
        cfg.with_overrides(selfplay__heuristic="depth_add")


def test_train_without_torch_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    import importlib.util

    from descent.tools.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    assert main(["train", "--game", "hex(size=3)", "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install torch==2.13.0" in err[0], err
