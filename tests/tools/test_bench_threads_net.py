"""The threads-with-a-network measurement runs on a CPU backend with the repo's network."""

from __future__ import annotations

from pathlib import Path

import pytest

from descent.tools.bench_threads_net import main, measure

MODEL = Path(__file__).resolve().parents[2] / "data" / "runs" / "hex11" / "model.dnet"


def test_it_counts_positions_and_calls_with_and_without_gathering() -> None:
    rows = measure(str(MODEL), backend="onnxruntime", device="cpu", seconds=0.2,
                   configs=((1, False), (2, True)))
    assert [(r.threads, r.gather) for r in rows] == [(1, False), (2, True)]
    for r in rows:
        assert r.positions > 0 and r.calls > 0 and r.iterations > 0
        assert r.per_second > 0 and r.per_call >= 1


def test_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(MODEL), "--backend", "onnxruntime", "--device", "cpu",
                 "--seconds", "0.05"]) == 0
    assert capsys.readouterr().out.count("threads=") == 6
