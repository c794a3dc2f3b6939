"""The self-play throughput measurement: every mode plays the same games."""

from __future__ import annotations

import pytest

from descent.tools.bench_selfplay import _model, main, measure
from descent.train.config import TrainConfig


def _cfg() -> TrainConfig:
    return TrainConfig(game="hex(size=3)", seed=4).with_overrides(
        network__preset="tiny", selfplay__iterations=8, selfplay__hash_mb=4,
        run__progress=False)


def test_one_worker_and_batched_games_play_the_same_games() -> None:
    cfg = _cfg()
    model = _model(cfg, None)
    one = measure(cfg, "worker", model, games=3, warmup=0)
    batched = measure(cfg, "batched:3", model, games=3, warmup=1)
    assert (one.games, one.plies, one.positions) == (batched.games, batched.plies,
                                                      batched.positions)
    assert one.positions > 0 and one.seconds > 0
    # the batch only groups the calls: fewer, larger ones
    assert batched.calls <= one.calls and batched.per_call >= one.per_call


def test_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "hex(size=3)", "--preset", "tiny", "--iterations", "4",
                 "--games", "4", "--warmup", "0", "--modes", "worker,workers:2,batched:2x2"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[2:]]
    assert [r[0] for r in rows] == ["worker", "workers:2", "batched:2x2"]
    assert rows[0][3] == rows[1][3] == rows[2][3]    # the same network evaluations
    with pytest.raises(ValueError, match="unknown mode"):
        main(["--game", "hex(size=3)", "--preset", "tiny", "--games", "1", "--warmup", "0",
              "--modes", "threads:2"])
