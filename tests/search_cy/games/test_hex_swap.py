"""The swap map (games/hex_swap.py): scores by first stone and its half turn, the swap
and opening decisions, refusal of bad maps by name, and the shipped map's coverage."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from descent.search_cy.games.hex_swap import SwapMap, shipped_swap_map


def three_map(black_wins: dict[int, int], games: int = 4) -> SwapMap:
    cells = range(5)                       # the 3x3 classes under the half turn: 0..4
    return SwapMap({"3": {"games": {str(c): games for c in cells},
                          "black_wins": {str(c): black_wins[c] for c in cells}}})


def test_scores_swaps_and_the_half_turn() -> None:
    m = three_map({0: 0, 1: 1, 2: 3, 3: 2, 4: 4})
    assert m.sizes() == [3]
    assert m.black_score(3, 2) == 0.75 and m.black_score(3, 6) == 0.75   # c1 ~ a3
    assert m.swaps(3, 2) is True and m.swaps(3, 8) is False              # c3 ~ a1
    assert m.swaps(3, 3) is False                 # exactly one half: a move is as good
    assert m.swaps(5, 0) is None and m.black_score(4, 0) is None


def test_the_opening_is_the_stone_nearest_one_half() -> None:
    assert three_map({0: 0, 1: 1, 2: 3, 3: 2, 4: 4}).opening(3) == 3
    assert three_map({0: 0, 1: 1, 2: 3, 3: 4, 4: 4}).opening(3) == 1     # tie: smaller
    partial = SwapMap({"3": {"games": {"0": 4, "4": 4}, "black_wins": {"0": 2, "4": 4}}})
    assert partial.opening(3) is None          # a stone it lacks might open better
    assert partial.opening(11) is None


def test_bad_maps_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="missing.json"):
        SwapMap.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    for text in ("[1, 2]", "not json", json.dumps({"3": {"games": {"0": 4}}}),
                 json.dumps({"3": {"games": {"9": 4}, "black_wins": {"9": 1}}}),
                 json.dumps({"3": {"games": {"0": 4}, "black_wins": {"0": 5}}})):
        bad.write_text(text)
        with pytest.raises(ValueError, match="bad.json"):
            SwapMap.load(bad)


def test_the_shipped_map_covers_nine_and_eleven() -> None:
    m = shipped_swap_map()
    assert {9, 11} <= set(m.sizes())
    assert all(m.swaps(n, c) is not None for n in (9, 11) for c in range(n * n))
    assert m.swaps(9, 40) is True             # the 9x9 centre
    assert m.swaps(11, 60) is True            # the centre: the first player's best stone
    opening = m.opening(11)
    assert opening is not None and m.swaps(11, opening) is False
