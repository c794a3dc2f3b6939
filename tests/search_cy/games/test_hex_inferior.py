"""Inferior-cell analysis: the ring table against hand-worked rings, hand-made positions,
and soundness against the exact solver on small boards (the moves kept always include
a best move, and a vulnerable cell's killer does at least as well)."""

from __future__ import annotations

import sys

import pytest

from descent.search_cy.games.hex_inferior import LABELS, HexInferior, dead_ring
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from tests.search_cy.eval.test_heuristics import hex_position
from tests.search_cy.eval.test_hex_vc import cell, solvable_positions
from tests.train.conftest import solve


def ring(points: str) -> int:
    """``"BBBB.."`` -> the ring code (points in cyclic order: . empty, B, W)."""
    return sum({".": 0, "B": 1, "W": 2}[p] * 3 ** k for k, p in enumerate(points))


def test_ring_code_reads_points_in_order() -> None:
    assert ring("......") == 0
    assert ring("B.....") == 1
    assert ring(".W....") == 6


@pytest.mark.parametrize("points", [
    "BBBB..", ".BBBB.", "WWWW..", "BBBBBB", "BBB.WW", "BB.WW.", "B.BBBB", "WWWWWB", "BBB.W.",
])
def test_hand_worked_dead_rings(points: str) -> None:
    assert dead_ring(ring(points))


@pytest.mark.parametrize("points", [
    "......", "B.....", "B..B..", "BBB...", "BB..W.", "BW.BW.", "B.B.B.",
])
def test_hand_worked_live_rings(points: str) -> None:
    assert not dead_ring(ring(points))


def test_the_table_is_closed_under_rotation_and_colour_swap() -> None:
    def rotate(code: int) -> int:
        digits = [code // 3 ** k % 3 for k in range(6)]
        return sum(digits[(k + 1) % 6] * 3 ** k for k in range(6))

    def swap(code: int) -> int:
        return sum((0, 2, 1)[code // 3 ** k % 3] * 3 ** k for k in range(6))

    for code in range(729):
        assert dead_ring(code) == dead_ring(rotate(code)) == dead_ring(swap(code))


def test_the_cells_under_a_second_row_stone_are_captured_by_the_edge_owner() -> None:
    n = 5
    # Black c2 above c1 and d1 on Black's top edge; White far away
    s = hex_position(n, [cell(n, "c2")], [cell(n, "a5")], True)
    labels = HexInferior(n).labels(s)
    assert labels[cell(n, "c1")] == labels[cell(n, "d1")] == "black"
    assert labels[cell(n, "c3")] == "keep"
    # the same shape on White's left edge
    s = hex_position(n, [cell(n, "e5")], [cell(n, "b3")], True)
    labels = HexInferior(n).labels(s)
    assert labels[cell(n, "a3")] == labels[cell(n, "a4")] == "white"


def test_a_cell_walled_by_four_stones_is_dead() -> None:
    n = 5
    # c3's ring: c2 d2 (above), d3 (right), c4 (below); all White's; b4 b3 empty
    white = [cell(n, x) for x in ("c2", "d2", "d3", "c4")]
    black = [cell(n, x) for x in ("a1", "e1", "a5", "e5", "e4")]
    s = hex_position(n, black, white, False)
    assert HexInferior(n).labels(s)[cell(n, "c3")] == "dead"


def test_labels_and_kept_moves_are_checked() -> None:
    s = make_game("hex(size=4)").new_initial_state()
    with pytest.raises(ValueError, match="4x4 board given to a 5x5"):
        HexInferior(5).labels(s)
    with pytest.raises(ValueError, match="outside"):
        HexInferior(0)
    with pytest.raises(ValueError, match="ring code"):
        dead_ring(729)
    # on an empty board only the acute corners are inferior: a stone there dies when
    # the opponent takes the cell beside it on the second row or column
    labels = HexInferior(4).labels(s)
    assert labels[0] == labels[15] == "vulnerable"
    assert labels[1:15] == ["keep"] * 14
    assert set(LABELS) >= set(HexInferior(4).labels(s))


def test_the_swap_is_always_kept() -> None:
    s = make_game("hex(size=4,swap=true)").new_initial_state()
    s.apply_action(0)
    assert 16 in HexInferior(4).kept(s)  # the swap: action n * n


@pytest.mark.parametrize(("n", "trials"), [(3, 600), (4, 1200), (5, 250)])
def test_a_best_move_is_always_kept_by_exact_solution(n: int, trials: int) -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    inf = HexInferior(n)
    memo: dict[int, float] = {}
    pruned = {label: 0 for label in LABELS}
    for s in solvable_positions(n, trials, seed=300 + n):
        mover = 1.0 if s.current_player() == 0 else -1.0
        labels = inf.labels(s)
        kept = inf.kept(s)
        value = mover * solve(s, memo)

        def after(a: int, s: GameState = s, mover: float = mover) -> float:
            s.apply_action(a)
            v = mover * solve(s, memo)
            s.undo()
            return v

        assert max(after(a) for a in kept) == value, s.to_text()
        for a in s.legal_actions():
            if a < n * n and labels[a] != "keep":
                pruned[labels[a]] += 1
            if a < n * n and labels[a] == "vulnerable" and len(kept) < len(s.legal_actions()):
                # some kept neighbour (its killer) does at least as well
                neighbours = [k for k in kept if k < n * n and _adjacent(n, a, k)]
                assert any(after(k) >= after(a) for k in neighbours), (s.to_text(), a)
    # the test saw every kind of pruning
    assert min(pruned["dead"], pruned["black"], pruned["white"], pruned["vulnerable"]) > 0, pruned


def _adjacent(n: int, a: int, b: int) -> bool:
    (ra, ca), (rb, cb) = divmod(a, n), divmod(b, n)
    return (rb - ra, cb - ca) in {(-1, 0), (-1, 1), (0, 1), (1, 0), (1, -1), (0, -1)}
