"""Checkpoints: atomic writes, and a resumed run continues exactly like an unbroken one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from descent.train.checkpoint import NAME, load_checkpoint, save_checkpoint
from descent.train.report import without_timings
from descent.train.trainer import METRICS_NAME, Trainer
from tests.train.conftest import tiny_config


def _config() -> Any:
    # replay sampling, evaluation (random, previous, heuristic) and several updates per
    # iteration: everything that draws random numbers or keeps state is exercised
    return tiny_config("hex(size=3)", run__max_iterations=3, data__replay_rate=0.5,
                       evaluation__every=2, evaluation__games=2,
                       evaluation__opponents=("random", "previous", "heuristic"),
                       update__batch_size=32)


def _metrics(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / METRICS_NAME).read_text().splitlines()
    return [without_timings(json.loads(line)) for line in lines]


def test_interrupted_and_resumed_run_matches_an_unbroken_run(tmp_path: Path) -> None:
    cfg = _config()
    whole = Trainer(cfg, tmp_path / "whole")
    whole.run()
    assert whole.counters.iterations == 3

    part = Trainer(cfg, tmp_path / "part")
    part.run(stop_after=1)                       # "killed" after one iteration
    assert part.counters.iterations == 1
    # a kill in the middle of iteration 2: its metrics line was written, no checkpoint
    with open(tmp_path / "part" / METRICS_NAME, "a") as handle:
        handle.write('{"iteration": 2, "partial": true}\n')
    (tmp_path / "part" / (NAME + ".x1y2.tmp")).write_bytes(b"half a checkpoint")
    resumed = Trainer(cfg, tmp_path / "part", resume=True)
    assert resumed.counters.iterations == 1
    assert not list((tmp_path / "part").glob("*.tmp"))
    resumed.run()

    assert resumed.counters == _same_except_time(whole.counters, resumed.counters)
    assert _metrics(tmp_path / "part") == _metrics(tmp_path / "whole")
    assert resumed.learner.steps == whole.learner.steps
    a, b = whole.learner.net.state_dict(), resumed.learner.net.state_dict()
    assert all(bool((a[k] == b[k]).all()) for k in a)
    evals = [m for m in _metrics(tmp_path / "whole") if "eval" in m]
    assert evals and set(evals[0]["eval"]) == {"random", "previous", "heuristic"}
    assert (tmp_path / "part" / "model.dnet").exists()


def _same_except_time(reference: Any, other: Any) -> Any:
    from dataclasses import replace

    return replace(reference, seconds=other.seconds)


def test_checkpoint_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    save_checkpoint(tmp_path, {"counters": {"iterations": 1}, "rng_json": {}})
    before = (tmp_path / NAME).read_bytes()

    def broken(obj: Any, handle: Any) -> None:
        handle.write(b"partial bytes")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(tmp_path, {"counters": {"iterations": 2}, "rng_json": {}})
    monkeypatch.undo()
    assert (tmp_path / NAME).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [NAME]
    loaded = load_checkpoint(tmp_path)
    assert loaded is not None and loaded["counters"]["iterations"] == 1


def test_a_run_directory_is_not_overwritten_without_resume(tmp_path: Path) -> None:
    cfg = tiny_config(run__max_iterations=1)
    Trainer(cfg, tmp_path).run()
    with pytest.raises(ValueError, match="--resume"):
        Trainer(cfg, tmp_path)
    with pytest.raises(ValueError, match="network"):
        Trainer(cfg.with_overrides(network__preset="mlp"), tmp_path, resume=True)
    with pytest.raises(ValueError, match="game"):
        Trainer(cfg.with_overrides(game="hex(size=4)"), tmp_path, resume=True)
    # the limits may change on resume
    more = Trainer(cfg.with_overrides(run__max_iterations=2), tmp_path, resume=True)
    more.run()
    assert more.counters.iterations == 2


def test_a_resumed_run_may_change_its_schedule_and_records_it(tmp_path: Path) -> None:
    cfg = tiny_config(run__max_iterations=1)
    Trainer(cfg, tmp_path).run()
    changed = cfg.with_overrides(selfplay__iterations=5, selfplay__games_per_iteration=2,
                                 selfplay__workers=0, run__max_iterations=2)
    more = Trainer(changed, tmp_path, resume=True)
    more.run()
    assert more.counters.iterations == 2 and more.counters.games == 3
    records = [json.loads(x) for x in (tmp_path / METRICS_NAME).read_text().splitlines()]
    config = [r for r in records if r.get("kind") == "config"]
    assert config == [{"kind": "config", "iteration": 1, "games_total": 1, "changed": {
        "selfplay.games_per_iteration": [1, 2], "selfplay.iterations": [
            cfg.selfplay.iterations, 5]}}]


def test_a_change_stopped_before_its_checkpoint_is_recorded_on_the_next_resume(
        tmp_path: Path) -> None:
    cfg = tiny_config(run__max_iterations=1)
    Trainer(cfg, tmp_path).run()
    changed = cfg.with_overrides(selfplay__iterations=5, run__max_iterations=2)
    Trainer(changed, tmp_path, resume=True)      # killed before any checkpoint
    again = Trainer(changed, tmp_path, resume=True)
    again.run()
    records = [json.loads(x) for x in (tmp_path / METRICS_NAME).read_text().splitlines()]
    assert [r["changed"] for r in records if r.get("kind") == "config"] == [
        {"selfplay.iterations": [cfg.selfplay.iterations, 5]}]


def test_extend_counts_the_limits_from_where_the_run_stands(tmp_path: Path) -> None:
    cfg = tiny_config(run__max_iterations=1)
    Trainer(cfg, tmp_path).run()
    again = Trainer(cfg, tmp_path, resume=True)
    assert again.finished()
    again.extend(iterations=2)
    assert not again.finished() and again.cfg.run.max_iterations == 3
    assert again.cfg.run.hours == 0.0
    again.run()
    assert again.counters.iterations == 3
    stored = (tmp_path / "config.toml").read_text()
    assert "max_iterations = 3" in stored
    again.extend(hours=0.5)
    assert again.cfg.run.max_iterations == 0
    assert again.cfg.run.hours == pytest.approx(again.counters.seconds / 3600 + 0.5, abs=1e-3)


def test_a_run_without_its_replay_memory_resumes_with_an_empty_one(tmp_path: Path) -> None:
    # runs are committed without memory/ (the guide's long runs): a fresh clone resumes
    cfg = tiny_config(run__max_iterations=2)
    first = Trainer(cfg, tmp_path)
    first.run()
    end = first.memory.end
    for segment in (tmp_path / "memory").glob("*.npz"):
        segment.unlink()
    resumed = Trainer(cfg.with_overrides(run__max_iterations=3), tmp_path, resume=True)
    assert len(resumed.memory) == 0 and resumed.memory.end == end
    assert resumed.learner.steps == first.learner.steps
    resumed.run()
    assert resumed.counters.iterations == 3 and len(resumed.memory) == 1
    # its checkpoint names the new game's segment alone, and resumes in full
    again = Trainer(cfg.with_overrides(run__max_iterations=3), tmp_path, resume=True)
    assert len(again.memory) == 1 and again.memory.first == end
