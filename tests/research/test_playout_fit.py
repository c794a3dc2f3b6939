"""descent.research.playout_fit: the outcome fit of Hex playout policies."""

from __future__ import annotations

import json
import lzma
import random
from pathlib import Path

import numpy as np
import pytest

from descent.research.playout_fit import logistic_fit, main, read_records, sample_positions
from descent.search_cy.games.registry import make_game


def test_the_logistic_fit_recovers_a_known_model() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=40000)
    y = (rng.random(40000) < 1.0 / (1.0 + np.exp(-(2.0 * x - 0.5)))).astype(np.float64)
    loss, a, b = logistic_fit(x, y)
    assert a == pytest.approx(2.0, abs=0.1) and b == pytest.approx(-0.5, abs=0.05)
    # no model does better than the true one on its own data, and a constant does worse
    assert loss < logistic_fit(np.zeros_like(x), y)[0]


def random_games(size: int, count: int, seed: int) -> list[dict[str, object]]:
    rnd = random.Random(seed)
    game = make_game(f"hex(size={size})")
    out = []
    for _ in range(count):
        s = game.new_initial_state()
        moves = []
        while not s.is_terminal():
            a = rnd.choice([m for m in s.legal_actions() if m < size * size])
            s.apply_action(a)
            moves.append(a)
        out.append({"size": size, "moves": moves})
    return out


def test_records_are_read_and_sampled_with_the_last_mover_as_winner(tmp_path: Path) -> None:
    games = random_games(5, 4, 1)
    path = tmp_path / "g.jsonl.xz"
    with lzma.open(path, "wt", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(g) + "\n" for g in games))
    records = list(read_records(path))
    assert records == [(5, g["moves"]) for g in games]
    expect = [(size, moves[:k], 1.0 if len(moves) % 2 == 1 else 0.0)   # Black: odd plies
              for size, moves in records for k in range(2, len(moves) - 1, 3)]
    assert sample_positions(records, 2, 3, 1) == expect


def test_the_table_names_every_predictor(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in random_games(5, 6, 2)))
    assert main([str(path), "--playouts", "8", "--first", "2", "--step", "2", "--margin", "1",
                 "--caps", "4"]) == 0
    out = capsys.readouterr().out
    for name in ("uniform", "fill", "cap4", "two_distance", "vc", "base rate"):
        assert f"\n{name}" in out
    with pytest.raises(SystemExit):
        main([str(path), "--first", "200"])
