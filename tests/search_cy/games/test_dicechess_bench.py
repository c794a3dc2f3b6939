"""Dice chess perft benchmark (pytest-benchmark): our kernel next to the python-chess
reference under the same rules, same position and depth, in the same run.

Disabled by default (pyproject addopts), so the suite only checks that both run and
agree; measure with
``python -m pytest tests/search_cy/games/test_dicechess_bench.py --benchmark-enable``.
Both sides count the same leaves, so the ratio of the means in a group is the speed ratio
(leaves per second = leaves / mean). Timings are never asserted.
"""

from __future__ import annotations

from typing import Any

import pytest

from descent.search_cy.games import dicechess
from descent.search_cy.games.registry import make_game
from descent.tools import dicechess_reference as ref  # noqa: E402

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
CASES = [
    ("start", dicechess.START_FEN, 3),
    ("kiwipete", KIWIPETE, 2),
]


@pytest.mark.parametrize(("name", "fen", "depth"), CASES)
def test_bench_ours_perft(benchmark: Any, name: str, fen: str, depth: int) -> None:
    benchmark.group = f"dicechess perft {name} depth {depth}"
    state = make_game("dicechess").state_from_text(fen)
    assert isinstance(state, dicechess.DiceChessState)
    per_die = benchmark(dicechess.perft_per_die, state, depth)
    assert per_die == ref.reference_perft_per_die(fen, depth)
    benchmark.extra_info["leaves"] = sum(per_die.values())


@pytest.mark.parametrize(("name", "fen", "depth"), CASES)
def test_bench_python_chess_perft(benchmark: Any, name: str, fen: str, depth: int) -> None:
    benchmark.group = f"dicechess perft {name} depth {depth}"
    per_die = benchmark(ref.reference_perft_per_die, fen, depth)
    benchmark.extra_info["leaves"] = sum(per_die.values())
