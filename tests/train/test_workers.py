"""Self-play workers: the same run whatever their number, games in order, real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from descent.train.report import without_timings
from descent.train.trainer import METRICS_NAME, Trainer
from tests.train.conftest import tiny_config


def _metrics(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / METRICS_NAME).read_text().splitlines()
    return [without_timings(json.loads(line)) for line in lines]


def _same_weights(a: Trainer, b: Trainer) -> bool:
    x, y = a.learner.net.state_dict(), b.learner.net.state_dict()
    return all(bool((x[k] == y[k]).all()) for k in x)


def _hex(**changes: Any) -> Any:
    # eight games an iteration (tasks of two games for one worker, of one for two), the
    # first five with the heuristic (the warm start ends inside the first iteration),
    # replay sampling and an evaluation
    base: dict[str, Any] = {"run__max_iterations": 3, "selfplay__games_per_iteration": 8,
                            "selfplay__bootstrap_games": 5, "data__replay_rate": 0.5,
                            "evaluation__every": 3, "evaluation__games": 2,
                            "evaluation__opponents": ("random",), "update__batch_size": 32}
    base.update(changes)
    return tiny_config("hex(size=3)", **base)


def test_one_worker_and_two_workers_make_the_same_run(tmp_path: Path) -> None:
    one = Trainer(_hex(selfplay__workers=1), tmp_path / "one")
    one.run()
    two = Trainer(_hex(selfplay__workers=2), tmp_path / "two")
    two.run()
    assert one.pool is None and two.pool is None       # stopped with the run
    assert _metrics(tmp_path / "one") == _metrics(tmp_path / "two")
    assert _same_weights(one, two)
    records = _metrics(tmp_path / "two")
    assert records[0].get("bootstrap") is True and records[0]["network_evaluations"] > 0
    assert two.counters.network_evaluations == sum(r["network_evaluations"] for r in records)
    # the games differ from one another (their generators are not one stream reused)
    assert len({(r["mean_plies"], r["mean_result"]) for r in records}) > 1


def test_a_pool_plays_the_games_a_worker_plays_in_order() -> None:
    from descent.train.network import Learner
    from descent.train.workers import SelfPlayPool, _Player

    cfg = tiny_config("einstein", network__preset="mlp", selfplay__search="expectiminimax",
                      selfplay__learning="root", selfplay__iterations=2,
                      selfplay__eps_start=0.5)
    trainer_learner = Learner(_game(cfg), "mlp", _reinforcement(cfg), seed=5)
    model = trainer_learner.current_model()
    here = _Player(cfg).play([7, 8, 9, 10, 11], 0.5, model)
    pool = SelfPlayPool(cfg, 2)
    try:
        there = pool.play(7, 5, 0.5, model)
    finally:
        pool.close()
    assert [g.record.actions for g in there] == [g.record.actions for g in here]
    for a, b in zip(here, there, strict=True):
        assert np.array_equal(a.record.planes, b.record.planes)
        assert np.array_equal(a.record.values, b.record.values)
        assert a.positions == b.positions > 0
    # chance outcomes come from each game's own generator: the games differ
    assert len({tuple(g.record.actions[:12]) for g in here}) == 5

    # new weights reach the workers (a pool that kept its first network would not match)
    other = Learner(_game(cfg), "mlp", _reinforcement(cfg), seed=6).current_model()
    pool = SelfPlayPool(cfg, 2)
    try:
        pool.play(7, 5, 0.5, model)
        again = pool.play(7, 5, 0.5, other)
    finally:
        pool.close()
    fresh = _Player(cfg).play([7, 8, 9, 10, 11], 0.5, other)
    assert not all(np.array_equal(a.record.values, b.record.values)
                   for a, b in zip(here, fresh, strict=True))
    for a, b in zip(fresh, again, strict=True):
        assert a.record.actions == b.record.actions
        assert np.array_equal(a.record.values, b.record.values)


def test_batched_self_play_plays_the_same_games() -> None:
    """Games played together, their network calls gathered into shared backend calls,
    are the games played one at a time: the batch only groups the evaluations."""
    from descent.train.network import Learner
    from descent.train.workers import _Player

    cfg = tiny_config("hex(size=4)", selfplay__workers=1, selfplay__iterations=30,
                      selfplay__eps_start=0.5)
    model = Learner(_game(cfg), "tiny", _reinforcement(cfg), seed=5).current_model()
    alone = _Player(cfg).play([20, 21, 22, 23, 24], 0.5, model)
    player = _Player(cfg.with_overrides(selfplay__batch_games=3))
    together = player.play([20, 21, 22, 23, 24], 0.5, model)
    for a, b in zip(alone, together, strict=True):
        assert a.record.actions == b.record.actions
        assert np.array_equal(a.record.planes, b.record.planes)
        assert np.array_equal(a.record.values, b.record.values)
        assert a.positions == b.positions > 0
    # fewer, larger backend calls
    assert sum(g.batches for g in together) < sum(g.batches for g in alone)
    assert len({tuple(g.record.actions) for g in together}) > 1
    from descent.train.config import validate

    with pytest.raises(ValueError, match="batch_games"):
        validate(cfg.with_overrides(selfplay__workers=0, selfplay__batch_games=2))


def test_the_workers_may_change_on_resume_and_to_none_is_recorded(tmp_path: Path) -> None:
    whole = Trainer(_hex(selfplay__workers=2), tmp_path / "whole")
    whole.run()
    part = Trainer(_hex(selfplay__workers=2), tmp_path / "part")
    part.run(stop_after=1)
    resumed = Trainer(_hex(selfplay__workers=1), tmp_path / "part", resume=True)
    resumed.run()
    assert _metrics(tmp_path / "part") == _metrics(tmp_path / "whole")
    assert _same_weights(whole, resumed)
    assert not [r for r in _metrics(tmp_path / "part") if r.get("kind") == "config"]
    # none plays other games (the run's generator): allowed, and the history says so
    alone = Trainer(_hex(selfplay__workers=0, run__max_iterations=4), tmp_path / "part",
                    resume=True)
    alone.run()
    changes = [r for r in _metrics(tmp_path / "part") if r.get("kind") == "config"]
    assert changes == [{"kind": "config", "iteration": 3, "games_total": 24,
                        "changed": {"selfplay.workers": [1, 0]}}]


def test_workers_on_the_torch_backend_play_the_same_kind_of_run(tmp_path: Path) -> None:
    cfg = _hex(selfplay__workers=1, selfplay__backend="torch", selfplay__bootstrap_games=0,
               run__max_iterations=1, selfplay__games_per_iteration=2)
    run = Trainer(cfg, tmp_path / "torch")
    run.run()
    records = _metrics(tmp_path / "torch")
    assert records[0]["games"] == 2 and records[0]["network_evaluations"] > 0
    from descent.train.config import validate

    with pytest.raises(ValueError, match="needs selfplay.backend = torch"):
        validate(_hex(selfplay__workers=1, selfplay__device="cuda"))
    with pytest.raises(ValueError, match="need selfplay.workers >= 1"):
        validate(_hex(selfplay__workers=0, selfplay__backend="torch"))


def test_workers_must_not_be_negative() -> None:
    from descent.train.config import validate

    with pytest.raises(ValueError, match="selfplay.workers must be >= 0"):
        validate(_hex(selfplay__workers=-1))


def _game(cfg: Any) -> Any:
    from descent.search_cy.games.registry import make_game

    return make_game(cfg.game)


def _reinforcement(cfg: Any) -> Any:
    from descent.train.heuristics import reinforcement_for

    sp = cfg.selfplay
    return reinforcement_for(_game(cfg).new_initial_state(), sp.heuristic, sp.max_plies)


NO_LIMIT = """
game = "hex(size=3)"
seed = 3
[network]
preset = "tiny"
[selfplay]
iterations = 12
hash_mb = 4
games_per_iteration = 4
workers = 2
[data]
replay_games = 8
[update]
batch_size = 64
device = "cpu"
[eval]
every = 0
games = 0
"""


def _start_unlimited(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    config = tmp_path / "run.toml"
    config.write_text(NO_LIMIT, encoding="utf-8")
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "descent", "train", "--config", str(config), "--run-dir",
         str(run), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    metrics = run / METRICS_NAME
    while not (metrics.exists() and len(metrics.read_text().splitlines()) >= 2):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the run did not start: {proc.communicate()[1][-2000:]}")
        time.sleep(0.2)
    return proc, run


def _live_in_group(group: int) -> list[int]:
    """Processes of process group ``group`` that are not zombies (from /proc)."""
    live = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == group and fields[0] != "Z":
            live.append(int(entry.name))
    return live


def _wait_until_empty(group: int, seconds: float = 15.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _live_in_group(group)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="reads process groups from /proc")


@needs_proc
def test_ctrl_c_to_the_process_group_stops_a_run_with_workers_cleanly(
        tmp_path: Path) -> None:
    proc, run = _start_unlimited(tmp_path)
    assert len(_live_in_group(proc.pid)) >= 3        # the trainer and its two workers
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert "stopping after this iteration" in err
    assert "Traceback" not in err
    assert (run / "model.dnet").exists() and (run / "checkpoint.pt").exists()
    assert _wait_until_empty(proc.pid) == []


@needs_proc
def test_workers_end_when_the_trainer_is_killed(tmp_path: Path) -> None:
    proc, run = _start_unlimited(tmp_path)
    assert len(_live_in_group(proc.pid)) >= 3
    proc.kill()
    proc.communicate(timeout=60)
    assert _wait_until_empty(proc.pid) == []
    resumed = Trainer(_unlimited_config(tmp_path), run, resume=True)   # nothing lost
    assert resumed.counters.iterations >= 1


def _unlimited_config(tmp_path: Path) -> Any:
    from descent.train.config import load_config

    return load_config(tmp_path / "run.toml")
