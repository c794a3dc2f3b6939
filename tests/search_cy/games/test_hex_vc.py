"""H-search (``games/hex_vc.pyx``): hand-made templates, every carrier checked by
exhaustive play inside it, and the knowledge (win, loss, mustplay) against the exact
solver on small boards."""

from __future__ import annotations

import sys
from functools import cache

import pytest

from descent.search_cy.eval.hex_eval import HexVCEvaluator
from descent.search_cy.games.hex import HexState
from descent.search_cy.games.hex_vc import HexVC
from tests.search_cy.eval.test_heuristics import hex_position
from tests.search_cy.eval.test_hex_vc import cell, solvable_positions
from tests.train.conftest import solve

NEIGHBOURS = [(-1, 0), (-1, 1), (0, 1), (1, 0), (1, -1), (0, -1)]


@cache
def _masks(n: int, player: int) -> tuple[int, int, int, int]:
    """``player``'s first and last edges and the board's first and last columns, as bit
    masks (cell r * n + c: bit r * n + c)."""
    left = sum(1 << r * n for r in range(n))
    right = left << n - 1
    top, bottom = (1 << n) - 1, ((1 << n) - 1) << n * (n - 1)
    return (top, bottom, left, right) if player == 0 else (left, right, left, right)


def _joined(n: int, stones: int, player: int) -> bool:
    """Whether ``player``'s (0 Black top-bottom, 1 White left-right) stones, a bit a cell,
    join its edges: a flood fill from its first edge, each step adding the stones next to
    those reached. The six neighbours of cell i are i - n, i - n + 1, i - 1, i + 1,
    i + n - 1 and i + n (NEIGHBOURS), shifts of the bits; the steps to c + 1 leave out
    the last column and those to c - 1 the first, so that no row wraps onto the next."""
    first, last, left, right = _masks(n, player)
    reach = stones & first
    while True:
        east, west = reach & ~right, reach & ~left
        grown = (reach | reach >> n | reach << n | east << 1 | west >> 1
                 | east >> n - 1 | west << n - 1) & stones
        if grown == reach:
            return bool(reach & last)
        reach = grown


def holds(s: HexState, player: int, carrier: list[int], player_first: bool) -> bool:
    """Whether ``player`` joins its edges in ``s`` when every empty cell outside
    ``carrier`` is the opponent's and both play inside it (exhaustively; the cells a
    player holds and those still free are bit masks)."""
    n = s.size
    own = sum(1 << c for c in range(n * n) if s.cell(c // n, c % n) == player + 1)
    cells = [1 << c for c in set(carrier)]

    @cache
    def wins(mine: int, free: int, to_move: bool) -> bool:
        if _joined(n, mine, player):
            return True
        moves = [x for x in cells if free & x]
        if not moves:
            return False
        if to_move:
            return any(wins(mine | x, free & ~x, False) for x in moves)
        return all(wins(mine, free & ~x, True) for x in moves)

    return wins(own, sum(cells), player_first)


def test_a_bridge_chain_and_edge_templates_connect_whoever_moves() -> None:
    n = 5
    vc = HexVC(n)
    black = [cell(n, "c2"), cell(n, "b4")]
    white = [cell(n, "e1"), cell(n, "e5")]
    assert vc.knowledge(hex_position(n, black, white, True)) == ("win", None)
    assert vc.knowledge(hex_position(n, black, white, False)) == ("loss", None)
    s = hex_position(n, black, white, True)
    # after the fill-in the edge templates' cells are Black's: the middle bridge is left
    assert vc.connections(s, 0)[0][0] == [cell(n, "b3"), cell(n, "c3")]
    vc.fill_in = False
    # the search stops at the first edge-to-edge full: whichever it is, it holds
    carrier = vc.connections(s, 0)[0][0]
    assert holds(s, 0, carrier, player_first=False)


def test_the_ziggurat_comes_out_of_the_or_rule() -> None:
    """Black's column c3-c6 reaches the bottom; c3 reaches the top only by template IIIa
    (the ziggurat, eight cells), which no single AND gives: the OR of two semis does."""
    n = 6
    vc = HexVC(n, fill_in=False)
    black = [cell(n, x) for x in ("c3", "c4", "c5", "c6")]
    white = [cell(n, x) for x in ("f2", "f3", "f4")]
    s = hex_position(n, black, white, False)
    assert vc.knowledge(s) == ("loss", None)
    fulls, _ = vc.connections(s, 0)
    assert set(fulls[0]) >= {cell(n, x) for x in ("b1", "c1", "d1", "e1", "b2", "c2", "d2")}
    assert holds(s, 0, fulls[0], player_first=False)
    # with White in the ziggurat's row-two cell d2 it is one move from whole: a semi
    s = hex_position(n, black, white[:2] + [cell(n, "d2")], False)
    assert vc.knowledge(s)[0] == "mustplay"


@pytest.mark.parametrize(("n", "trials"), [(4, 250), (5, 300), (6, 200)])
def test_every_carrier_holds_by_exhaustive_play(n: int, trials: int) -> None:
    vc = HexVC(n, fill_in=False)
    checked = 0
    for s in solvable_positions(n, trials, seed=100 + n):
        for player in (0, 1):
            fulls, semis = vc.connections(s, player)
            # carriers of up to 11 cells: the exhaustive check doubles with each cell
            for carrier in [c for c in fulls if len(c) <= 11][:3]:
                assert holds(s, player, carrier, player_first=False), (s.to_text(), carrier)
                checked += 1
            for key, carrier in [(k, c) for k, c in semis if len(c) <= 11][:3]:
                assert key in carrier
                assert holds(s, player, carrier, player_first=True), (s.to_text(), carrier)
                checked += 1
    assert checked > trials // 4


@pytest.mark.parametrize(("n", "trials", "fill_in"),
                         [(3, 800, True), (4, 800, False), (4, 800, True),
                          (5, 200, True), (6, 250, True)])
def test_knowledge_is_proven_by_exact_solution(n: int, trials: int, fill_in: bool) -> None:
    """A win is a win, a loss a loss, and every move outside a mustplay loses."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    vc = HexVC(n, fill_in=fill_in)
    memo: dict[int, float] = {}
    seen: dict[str, int] = {}
    for s in solvable_positions(n, trials, seed=200 + n):
        code, keep = vc.knowledge(s)
        seen[code] = seen.get(code, 0) + 1
        mover = 1.0 if s.current_player() == 0 else -1.0
        value = mover * solve(s, memo)
        if code == "win":
            assert value > 0, s.to_text()
        elif code == "loss":
            assert value < 0, s.to_text()
        elif code == "mustplay":
            assert keep, s.to_text()
            for a in s.legal_actions():
                if a in keep:
                    continue
                s.apply_action(a)
                assert mover * solve(s, memo) < 0, (s.to_text(), a)
                s.undo()
    assert seen.get("win", 0) and seen.get("loss", 0), seen
    if n >= 4:                  # 3x3 is solved outright
        assert seen.get("mustplay", 0), seen


@pytest.mark.parametrize("n", [5, 6, 7])
def test_it_sees_every_connection_the_greedy_chains_see(n: int) -> None:
    """H-search's rules hold bridges, edge templates II and IIIa and their chains: where
    the greedy evaluator sees a connection, so does H-search (limits permitting)."""
    vc = HexVC(n, fill_in=False)
    ev = HexVCEvaluator()
    ev.fill_in = False
    claims = 0
    for s in solvable_positions(n, 300, seed=300 + n):
        for player in (0, 1):
            if ev.virtual_connection(s, player):
                claims += 1
                fulls, semis = vc.connections(s, player)
                if s.current_player() == player:
                    assert fulls or semis, s.to_text()
                else:
                    assert fulls, s.to_text()
    assert claims > 20


def test_boards_past_sixteen_are_refused_and_limits_checked() -> None:
    with pytest.raises(ValueError, match="outside"):
        HexVC(17)
    with pytest.raises(ValueError, match="max_fulls"):
        HexVC(5, max_fulls=0)
    vc = HexVC(5)
    with pytest.raises(ValueError, match="board"):
        vc.knowledge(hex_position(4, [], [], True))
    with pytest.raises(ValueError, match="neither"):
        vc.connections(hex_position(5, [], [], True), 2)


def test_a_small_pool_stops_the_search_but_stays_sound() -> None:
    n = 6
    vc = HexVC(n, max_entries=64)
    memo: dict[int, float] = {}
    stopped = 0
    for s in solvable_positions(n, 150, seed=7):
        code, _ = vc.knowledge(s)
        stopped += vc.overflowed
        mover = 1.0 if s.current_player() == 0 else -1.0
        if code == "win":
            assert mover * solve(s, memo) > 0
        elif code == "loss":
            assert mover * solve(s, memo) < 0
    assert stopped > 0


def _joins(s: HexState, player: int, ends: tuple[int, int], mover_first: bool) -> bool:
    """Whether ``player`` keeps its two ``ends`` (a cell of its group, or -1 / -2 for its
    first / second edge) joined in ``s`` against every play of the opponent, who moves
    first when ``mover_first`` (exhaustively, over every empty cell)."""
    n = s.size
    own = frozenset(c for c in range(n * n) if s.cell(c // n, c % n) == player + 1)
    free0 = frozenset(c for c in range(n * n) if s.cell(c // n, c % n) == 0)

    def on_edge(c: int, end: int) -> bool:
        line = c // n if player == 0 else c % n
        return line == (0 if end == -1 else n - 1)

    def joined(mine: frozenset[int]) -> bool:
        start = [c for c in mine if (c == ends[0] if ends[0] >= 0 else on_edge(c, ends[0]))]
        seen, todo = set(start), list(start)
        while todo:
            c = todo.pop()
            if c == ends[1] if ends[1] >= 0 else on_edge(c, ends[1]):
                return True
            r, k = divmod(c, n)
            for dr, dk in NEIGHBOURS:
                x = (r + dr) * n + k + dk
                if 0 <= r + dr < n and 0 <= k + dk < n and x in mine and x not in seen:
                    seen.add(x)
                    todo.append(x)
        return False

    @cache
    def keeps(mine: frozenset[int], free: frozenset[int], opponent_to_move: bool) -> bool:
        if joined(mine):
            return True
        if not free:
            return False
        if opponent_to_move:
            return all(keeps(mine, free - {x}, False) for x in free)
        return any(keeps(mine | {x}, free - {x}, True) for x in free)

    return keeps(own, free0, mover_first)


def test_maintenance_answers_a_probe_of_a_bridge_and_an_edge_template() -> None:
    n = 7
    s = hex_position(n, [cell(n, "b2"), cell(n, "c3")], [cell(n, "g7")], False)
    answers = HexVC(n, fill_in=False).maintenance(s)
    b2, c3 = cell(n, "b2"), cell(n, "c3")
    assert (cell(n, "b3"), cell(n, "c2"), b2, c3) in answers     # the bridge
    assert (cell(n, "b1"), cell(n, "c1"), -1, b2) in answers     # the edge template
    # after the fill-in the template's cells are Black's: nothing there to probe
    assert all(p not in (cell(n, "b1"), cell(n, "c1"))
               for p, _, _, _ in HexVC(n).maintenance(s))
    # a decided position has nothing to maintain: on 5x5 the same stones join Black's edges
    won = hex_position(5, [cell(5, "b2"), cell(5, "c3")], [cell(5, "e5")], False)
    assert HexVC(5).knowledge(won) == ("loss", None)
    assert HexVC(5).maintenance(won) == []


@pytest.mark.parametrize(("n", "fill_in", "trials", "least"),
                         [(4, False, 400, 15), (5, False, 2500, 15), (5, True, 2500, 5)])
def test_every_answer_to_a_probe_keeps_the_connection_by_exhaustive_play(
        n: int, fill_in: bool, trials: int, least: int) -> None:
    """(After the fill-in few probes are left on boards this small: it fills the
    captured edge pairs that hold most of them.)"""
    vc = HexVC(n, fill_in=fill_in)
    checked = 0
    for s in solvable_positions(n, trials, seed=500 + n):
        if len(s.legal_actions()) > 12:
            continue
        for probe, answer, x, y in vc.maintenance(s)[:6]:
            after = s.clone()
            after.apply_action(probe)
            if after.is_terminal():
                continue
            assert answer in after.legal_actions()
            opponent = after.current_player()
            after.apply_action(answer)
            if after.is_terminal():
                continue
            assert _joins(after, opponent, (x, y), mover_first=True), (s.to_text(), probe, answer)
            checked += 1
    assert checked >= least
