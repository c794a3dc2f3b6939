"""``descent swapmap`` (tools/swapmap.py): on 3x3, where the self-play is perfect, the
map swaps exactly the first stones a proof says win; records by seed; bad records."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from descent.research.swapmap import build, first_stones, play_game
from descent.search_cy.eval.evaluator import ZeroEvaluator
from descent.search_cy.games.hex_swap import SwapMap
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper


def winning_first_stones(size: int) -> set[int]:
    """The first stones that win for Black, by the rave solver's proof."""
    won = set()
    for cell in first_stones(size):
        state = make_game(f"hex(size={size})").new_initial_state()
        state.apply_action(cell)
        result = make_search("rave", ZeroEvaluator(), SearchParams(seed=1, hash_mb=16)) \
            .run(state, Stopper(iterations=10**6))
        assert result.resolved
        if result.value > 0:
            won.add(cell)
    return won


def test_the_three_by_three_map_swaps_the_proven_wins(tmp_path: Path) -> None:
    records, out = tmp_path / "r.jsonl", tmp_path / "map.json"
    run = [sys.executable, "-m", "descent", "swapmap"]
    subprocess.run(run + ["selfplay", str(records), "--size", "3", "--games", "2",
                          "--sims", "300", "-j", "2"], check=True, timeout=300)
    lines = [json.loads(x) for x in records.read_text().splitlines()]
    assert len(lines) == 2 * len(first_stones(3)) == 10
    done = subprocess.run(run + ["build", str(records), str(out)], check=True,
                          timeout=60, capture_output=True, text=True)
    assert "3x3: 5 first stones, 10 games" in done.stdout
    m = SwapMap.load(out)
    assert {c for c in first_stones(3) if m.swaps(3, c)} == winning_first_stones(3)
    assert {c for c in first_stones(3) if m.swaps(3, c)} == {2, 3, 4}  # c1, a2, b2


def test_a_game_is_fixed_by_its_seed() -> None:
    assert play_game(5, 7, 200, 42) == play_game(5, 7, 200, 42)
    record = play_game(5, 7, 200, 42)
    assert record["first"] == 7 and record["winner"] in (0, 1) and record["plies"] >= 5


def test_bad_records_are_refused_by_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"size": 3, "first": 2}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        build([bad])
    bad.write_text('{"size": 3, "first": 9, "winner": 0, "sims": 10}\n')
    with pytest.raises(ValueError, match="off a 3x3 board"):
        build([bad])
