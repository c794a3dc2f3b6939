"""The replay memory's segment files: each checkpoint writes only its new games, a kill at
any moment loses nothing, old (version 1) checkpoints still resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from descent.train.checkpoint import NAME, load_checkpoint
from descent.train.memory_files import FOLDER, checkpoint_games, read_games, write_segment
from descent.train.trainer import Trainer
from tests.train.conftest import tiny_config


def _config(**changes: Any) -> Any:
    # two games an iteration, a memory of five: the third checkpoint trims the first
    # segment whole, later ones trim segments partly
    base: dict[str, Any] = {"run__max_iterations": 6, "selfplay__games_per_iteration": 2,
                            "data__replay_games": 5, "data__replay_rate": 0.5,
                            "update__batch_size": 32}
    base.update(changes)
    return tiny_config("hex(size=3)", **base)


def _same_games(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(
        x[0].dtype == y[0].dtype and np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])
        for x, y in zip(a, b, strict=True))


def _stored(run_dir: Path) -> tuple[dict[str, Any], list[Any]]:
    state = load_checkpoint(run_dir)
    assert state is not None
    return state, checkpoint_games(run_dir, state)[1]


def _files(run_dir: Path) -> set[str]:
    return {p.name for p in (run_dir / FOLDER).iterdir()}


def test_each_checkpoint_writes_only_its_new_games(tmp_path: Path) -> None:
    trainer = Trainer(_config(), tmp_path)
    seen: list[set[str]] = []
    for iteration in range(1, 7):
        trainer.run(stop_after=1)
        state, games = _stored(tmp_path)
        assert _same_games(games, list(trainer.memory.games))
        assert state["version"] == 2 and "memory" not in state
        named = {name for name, _first, _count in state["memory_segments"]}
        assert _files(tmp_path) == named             # trimmed segments are gone
        new = named - set().union(*seen) if seen else named
        assert len(new) == 1                          # one segment per checkpoint ...
        (name,) = new
        entry = next(s for s in state["memory_segments"] if s[0] == name)
        assert entry[1:] == [2 * iteration - 2, 2]    # ... holding that iteration's games
        assert state["memory_first"] == max(0, 2 * iteration - 5)
        assert state["memory_end"] == 2 * iteration
        seen.append(named)
    assert not any("000000000000-" in name for name in seen[-1])


def test_a_kill_between_segment_and_checkpoint_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _config(run__max_iterations=4)
    whole = Trainer(cfg, tmp_path / "whole")
    whole.run()

    part = Trainer(cfg, tmp_path / "part")
    part.run(stop_after=2)
    state_before, games_before = _stored(tmp_path / "part")
    files_before = _files(tmp_path / "part")

    def killed(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyboardInterrupt("killed while writing the checkpoint")

    monkeypatch.setattr("descent.train.trainer.save_checkpoint", killed)
    with pytest.raises(KeyboardInterrupt):
        part.run(stop_after=1)
    monkeypatch.undo()
    orphans = _files(tmp_path / "part") - files_before
    assert len(orphans) == 1                           # the third iteration's segment
    assert (tmp_path / "part" / NAME).exists()

    resumed = Trainer(cfg, tmp_path / "part", resume=True)
    assert _files(tmp_path / "part") == files_before    # the orphan is removed
    assert resumed.memory.first == state_before["memory_first"]
    assert _same_games(list(resumed.memory.games), games_before)
    resumed.run()
    assert _same_games(list(resumed.memory.games), list(whole.memory.games))
    a, b = whole.learner.net.state_dict(), resumed.learner.net.state_dict()
    assert all(bool((a[k] == b[k]).all()) for k in a)


def test_a_version_1_checkpoint_resumes_and_moves_its_memory_to_a_segment(
        tmp_path: Path) -> None:
    import torch

    cfg = _config(run__max_iterations=3)
    trainer = Trainer(cfg, tmp_path)
    trainer.run(stop_after=2)
    raw = torch.load(tmp_path / NAME, map_location="cpu", weights_only=True)
    _state, games = _stored(tmp_path)
    raw["version"] = 1
    raw["memory"] = [(torch.from_numpy(p.copy()), torch.from_numpy(v.copy())) for p, v in games]
    for key in ("memory_segments", "memory_first", "memory_end"):
        del raw[key]
    torch.save(raw, tmp_path / NAME)
    for path in (tmp_path / FOLDER).iterdir():
        path.unlink()

    resumed = Trainer(cfg, tmp_path, resume=True)
    assert _same_games(list(resumed.memory.games), games)
    resumed.run()
    state, stored = _stored(tmp_path)
    assert state["version"] == 2
    assert _same_games(stored, list(resumed.memory.games))


def test_a_missing_or_short_segment_is_named(tmp_path: Path) -> None:
    games = [(np.packbits(np.ones((3, 16), np.uint8), axis=1), np.full(3, 0.5, np.float32)),
             (np.zeros((2, 16), np.float32), np.array([1.0, -1.0], np.float32))]
    entry = write_segment(tmp_path, 7, games)
    back = read_games(tmp_path, [entry], 7, 9)
    assert _same_games(back, games)
    assert _same_games(read_games(tmp_path, [entry], 8, 9), games[1:])
    with pytest.raises(ValueError, match="games up to 9"):
        read_games(tmp_path, [entry], 7, 10)
    with pytest.raises(ValueError, match="holds 2 games, the checkpoint says 3"):
        read_games(tmp_path, [(entry[0], 7, 3)], 7, 9)
    (tmp_path / FOLDER / entry[0]).unlink()
    with pytest.raises(ValueError, match=f"{entry[0]}: a memory segment the checkpoint "
                                         "names is missing"):
        read_games(tmp_path, [entry], 7, 9)



def test_reading_a_run_while_it_replaces_its_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from descent.train import checkpoint as checkpoint_module
    from descent.train.memory_files import MissingSegment, load_run_memory

    trainer = Trainer(_config(), tmp_path)
    trainer.run(stop_after=3)              # memory: games 1..5, in segments 0-1, 2-3, 4-5
    real = checkpoint_module.load_checkpoint
    calls = []

    def then_train(folder: Path) -> Any:
        state = real(folder)
        calls.append(state)
        if len(calls) == 1:
            trainer.run(stop_after=1)      # games 3..7: segment 0-1 is removed
        return state

    monkeypatch.setattr(checkpoint_module, "load_checkpoint", then_train)
    with pytest.raises(MissingSegment, match="games-000000000000-000000000002"):
        load_run_memory(tmp_path, attempts=1)
    calls.clear()
    loaded = load_run_memory(tmp_path)
    assert loaded is not None and len(calls) == 2
    state, _shape, games = loaded
    assert state["memory_first"] == 5 and state["memory_end"] == 10
    assert _same_games(games, list(trainer.memory.games))
