"""tools.checkpoint_times: resumes a copy of a run and times its checkpoints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch  # noqa: F401


def test_times_the_checkpoints_of_a_copy_and_removes_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from descent.research.checkpoint_times import main
    from descent.train.trainer import Trainer
    from tests.train.conftest import tiny_config

    run = tmp_path / "run"
    Trainer(tiny_config("hex(size=3)", run__max_iterations=2), run).run()
    before = sorted(p.name for p in run.rglob("*"))
    assert main([str(run), str(tmp_path / "copy"), "--iterations", "2"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"resumed in [\d.]+ s: 2 games, \d+ pairs", out)
    assert re.search(r"iteration 3: [\d.]+ s, checkpoints [\d.]+, [\d.]+ s", out)
    assert re.search(r"iteration 4: ", out)
    assert not (tmp_path / "copy").exists()
    assert sorted(p.name for p in run.rglob("*")) == before      # the run is untouched
