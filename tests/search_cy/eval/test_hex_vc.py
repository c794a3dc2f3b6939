"""The virtual-connection Hex evaluator: hand-made templates, and soundness against the
exact solver on small boards (a claimed connection is always a win)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pytest

from descent.search_cy.eval.heuristics import heuristic_for, heuristic_names
from descent.search_cy.eval.hex_eval import HexEvaluator, HexVCEvaluator, ziggurat_carriers
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from tests.search_cy.eval.test_heuristics import hex_position
from tests.train.conftest import solve


def cell(n: int, name: str) -> int:
    """``c2`` -> the cell index (column letter, row number from 1)."""
    return (int(name[1:]) - 1) * n + ord(name[0]) - ord("a")


def test_bridge_and_edge_templates_connect_whoever_moves() -> None:
    n = 5
    ev = HexVCEvaluator()
    # c2 (row 1: template II to the top) bridged to b4 (row 3: template II to the bottom)
    black = [cell(n, "c2"), cell(n, "b4")]
    white = [cell(n, "e1"), cell(n, "e5")]
    for black_to_move in (True, False):
        s = hex_position(n, black, white, black_to_move)
        assert ev.virtual_connection(s, 0)
        assert not ev.virtual_connection(s, 1)
        assert ev.evaluate([s])[0] == pytest.approx(0.99)
    # White intrudes into the bridge: Black to move answers in the other cell
    intruded = hex_position(n, black, white[:1] + [cell(n, "b3")], True)
    assert ev.virtual_connection(intruded, 0)
    # ... but with both bridge cells White's, the chain is cut
    cut = hex_position(n, black + [cell(n, "e4")], [cell(n, "b3"), cell(n, "c3")], False)
    assert not ev.virtual_connection(cut, 0)
    # an edge template whose carrier is taken holds no more: c2 with c1 and d1 White's
    broken = hex_position(n, [cell(n, "c2"), cell(n, "b4"), cell(n, "a5")],
                          [cell(n, "c1"), cell(n, "d1"), cell(n, "e5")], True)
    assert not ev.virtual_connection(broken, 0)


NEIGHBOURS = [(-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)]


def _holds(stone: tuple[int, int], carrier: list[tuple[int, int]]) -> bool:
    """Whether `stone` reaches row 0 through its own cells of `carrier` (rows counted from
    the edge, neighbours as on the board) whatever the intruder does, the intruder moving
    first: every line of play inside the carrier."""
    def connected(own: frozenset[tuple[int, int]]) -> bool:
        seen, todo = {stone}, [stone]
        while todo:
            r, c = todo.pop()
            if r == 0:
                return True
            for dr, dc in NEIGHBOURS:
                x = (r + dr, c + dc)
                if x in own and x not in seen:
                    seen.add(x)
                    todo.append(x)
        return False

    def wins(own: frozenset[tuple[int, int]], theirs: frozenset[tuple[int, int]],
             intruder: bool) -> bool:
        if connected(own):
            return True
        free = [x for x in carrier if x not in own and x not in theirs]
        if not free:
            return False
        if intruder:
            return all(wins(own, theirs | {x}, False) for x in free)
        return any(wins(own | {x}, theirs, True) for x in free)

    return wins(frozenset(), frozenset(), True)


def test_the_ziggurat_carriers_hold_and_every_cell_is_needed() -> None:
    for carrier in ziggurat_carriers():
        assert len(set(carrier)) == 8 and (2, 0) not in carrier
        assert _holds((2, 0), carrier)
        for cell in carrier:
            assert not _holds((2, 0), [x for x in carrier if x != cell])
    assert _holds((1, 0), [(0, 0), (0, 1)])          # template II, the same check


def test_the_ziggurat_connects_a_stone_two_rows_from_its_edge() -> None:
    # 5x5: c3 reaches the top through the ziggurat a3..d1 side (b3, b2 c2 d2, b1 c1 d1 e1)
    # and the bottom through its mirror image; the carriers are disjoint
    n = 5
    ev = HexVCEvaluator()
    assert ev.virtual_connection(hex_position(n, [cell(n, "c3")], [cell(n, "a1")], True), 0)
    # a White stone in the top carrier (c1) leaves no template to the top
    assert not ev.virtual_connection(hex_position(n, [cell(n, "c3")], [cell(n, "c1")], True),
                                     0)
    # on 3x3 the centre is bridged to both edges through disjoint pairs
    assert ev.virtual_connection(hex_position(3, [cell(3, "b2")], [], False), 0)


def solvable_positions(n: int, trials: int, seed: int) -> Iterator[GameState]:
    """Positions after a random number of random moves, small enough to solve exactly
    (at most 15 empty cells from 5x5 up), from ``trials`` random games."""
    game = make_game(f"hex(size={n})")
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        s = game.new_initial_state()
        for _ in range(int(rng.integers(0, n * n - 1))):
            if s.is_terminal():
                break
            s.apply_action(int(rng.choice(s.legal_actions())))
        if s.is_terminal() or (n >= 5 and len(s.legal_actions()) > 15):
            continue
        yield s


@pytest.mark.parametrize(("n", "trials"), [(3, 1500), (4, 1500), (5, 400), (6, 300)])
def test_a_claimed_connection_is_a_win_by_exact_solution(n: int, trials: int) -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    ev = HexVCEvaluator()
    memo: dict[int, float] = {}
    claims = 0
    for s in solvable_positions(n, trials, seed=n):
        for player in (0, 1):
            if ev.virtual_connection(s, player):
                claims += 1
                assert (solve(s, memo) > 0) == (player == 0), s.to_text()
    assert claims > trials // 10      # the detector finds connections, not just none


def test_values_agree_with_two_distance_where_no_connection_is_seen() -> None:
    game = make_game("hex(size=11)")
    rng = np.random.default_rng(3)
    vc, td = HexVCEvaluator(), HexEvaluator()
    seen = 0
    for _ in range(200):
        s = game.new_initial_state()
        for _ in range(int(rng.integers(0, 60))):
            s.apply_action(int(rng.choice(s.legal_actions())))
            if s.is_terminal():
                break
        if s.is_terminal():
            continue
        a, b = vc.evaluate([s])[0], td.evaluate([s])[0]
        if vc.virtual_connection(s, 0) or vc.virtual_connection(s, 1):
            seen += 1
            assert abs(a) == pytest.approx(0.99)
        else:
            assert a == pytest.approx(float(np.clip(b, -0.97, 0.97)))
    assert seen > 0


def test_the_registry_names_the_hex_heuristics() -> None:
    assert heuristic_names("hex(size=9)")[0] == "vc"
    assert heuristic_names("hex") == ["vc", "two_distance"]
    assert type(heuristic_for("hex", "two_distance")) is HexEvaluator
    with pytest.raises(ValueError, match="known: vc, two_distance"):
        heuristic_for("hex", "bogus")


@pytest.mark.parametrize("fill_in", [True, False])
@pytest.mark.parametrize(("n", "trials"), [(4, 1500), (5, 500), (6, 300)])
def test_knowledge_is_proven_by_exact_solution(n: int, trials: int, fill_in: bool) -> None:
    """c_knowledge's claims, checked by brute force: a win or a loss for the player to
    move is one; under a mustplay every move outside the kept set loses."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    ev = HexVCEvaluator()
    ev.fill_in = fill_in
    assert ev.spawn().fill_in == fill_in
    memo: dict[int, float] = {}
    seen = {"win": 0, "loss": 0, "mustplay": 0, "none": 0}
    pruned = 0
    for s in solvable_positions(n, trials, seed=100 + n):
        code, keep = ev.knowledge(s)
        seen[code] += 1
        mover_sign = 1.0 if s.current_player() == 0 else -1.0
        if code == "win":
            assert mover_sign * solve(s, memo) > 0, s.to_text()
        elif code == "loss":
            assert mover_sign * solve(s, memo) < 0, s.to_text()
        elif code == "mustplay":
            assert keep
            for action in s.legal_actions():
                if action in keep:
                    continue
                s.apply_action(action)
                assert mover_sign * solve(s, memo) < 0, s.to_text()
                s.undo()
                pruned += 1
    assert seen["win"] and seen["loss"] and seen["mustplay"] and pruned > 20, seen


def test_the_fill_in_proves_more() -> None:
    """On the same positions the fill-in never loses a proof and finds more."""
    plain = HexVCEvaluator()
    plain.fill_in = False
    filled = HexVCEvaluator()
    more = 0
    for s in solvable_positions(6, 300, seed=106):
        a = plain.knowledge(s)[0]
        b = filled.knowledge(s)[0]
        if a in ("win", "loss"):
            assert b == a, s.to_text()
        more += a not in ("win", "loss") and b in ("win", "loss")
    assert more > 0
    # an edge pair captured by a second-row stone is an edge link: Black b2 and b4 on
    # 5x5 with the bridge b3-c3 between them... Black c2 with c1 d1 captured and a
    # bridge to c4, whose d5 c5 are captured too, is connected after the fill-in
    s = make_game("hex(size=5)").new_initial_state()
    for m in ["c2", "a1", "b4", "a2"]:
        s.apply_move(m)
    assert filled.knowledge(s)[0] == plain.knowledge(s)[0] == "win"


def test_knowledge_on_hand_worked_positions() -> None:
    ev = HexVCEvaluator()

    def position(n: int, moves: list[str]):  # type: ignore[no-untyped-def]
        s = make_game(f"hex(size={n})").new_initial_state()
        for m in moves:
            s.apply_move(m)
        return s

    # Black c1 c2 c4 c5, White a3 b3 d3 e3: Black to move connects at c3
    assert ev.knowledge(position(5, ["c1", "a3", "c2", "b3", "c4", "d3", "c5", "e3"])) == (
        "win", None)
    # White to move after Black c5 instead: White also connects at c3 first
    assert ev.knowledge(position(5, ["c1", "a3", "c2", "b3", "c4", "d3", "c5"]))[0] == "win"
    # Black c1 c2 c4 c5 against White a1 a2 a3 (White to move): Black threatens c3 only,
    # so White must play there
    s = position(5, ["c1", "a1", "c2", "a2", "c4", "a3", "c5"])
    ev.fill_in = False
    code, keep = ev.knowledge(s)
    assert code == "mustplay" and [s.action_to_string(a) for a in keep] == ["c3"]
    # after the fill-in, Black's captured cells d4 e4 d5 e5 join its chain's group: a
    # White stone there forces Black's answer, so they are kept too (the search prunes
    # them as inferior anyway)
    ev.fill_in = True
    code, keep = ev.knowledge(s)
    assert code == "mustplay"
    assert sorted(s.action_to_string(a) for a in keep) == ["c3", "d4", "d5", "e4", "e5"]
    # the empty board: nothing is proven
    assert ev.knowledge(make_game("hex(size=7)").new_initial_state()) == ("none", None)
