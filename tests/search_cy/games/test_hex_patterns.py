"""Hex cell patterns (games/hex_patterns.pyx): keys against a reading written here from
coordinates, their symmetries, local codes, the prior, and the weights files."""
from __future__ import annotations

import random

import numpy as np
import pytest

from descent.search_cy.games.hex_patterns import (
    LOCAL_COUNT,
    PATTERN_COUNT,
    ROUTE_COUNT,
    HexPatterns,
    load_weights,
    save_weights,
    shipped_weights,
    unit_weights,
)
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState

# neighbours in cyclic order, then the bridge point between neighbours k and k + 1
OFFSETS = [(-1, 0), (-1, 1), (0, 1), (1, 0), (1, -1), (0, -1),
           (-2, 1), (-1, 2), (1, 1), (2, -1), (1, -2), (-1, -1)]


def board_of(state: GameState, n: int) -> list[list[int]]:
    return [[state.cell(r, c) for c in range(n)] for r in range(n)]  # type: ignore[attr-defined]


def reference_key(board: list[list[int]], r: int, c: int, side: int) -> int:
    """The pattern key read from coordinates: White reads the transposed board with the
    colours exchanged; the key is the smaller of the reading and its half turn."""
    n = len(board)

    def point(dr: int, dc: int) -> int:
        if side == 1:                      # transposed frame: (r, c) -> (c, r)
            rr, cc = r + dc, c + dr        # the point (c + dr, r + dc) of the transpose
        else:
            rr, cc = r + dr, c + dc
        row_off = not 0 <= rr < n
        col_off = not 0 <= cc < n
        if row_off and col_off:
            return 1                       # beyond two edges: the mover's
        if row_off:
            colour = 1                     # beyond top or bottom: Black's edge
        elif col_off:
            colour = 2
        else:
            colour = board[rr][cc]
        if colour == 0:
            return 0
        return 1 if colour == side + 1 else 2

    digits = [point(dr, dc) for dr, dc in OFFSETS]
    turned = [point(-dr, -dc) for dr, dc in OFFSETS]
    a = sum(d * 3 ** k for k, d in enumerate(digits))
    b = sum(d * 3 ** k for k, d in enumerate(turned))
    return min(a, b)


def random_hex(n: int, plies: int, rnd: random.Random) -> GameState | None:
    state = make_game(f"hex(size={n})").new_initial_state()
    for _ in range(plies):
        state.apply_action(rnd.choice(state.legal_actions()))
        if state.is_terminal():
            return None
    return state


@pytest.mark.parametrize("n", [2, 3, 5, 11])
def test_keys_match_the_reading_from_coordinates(n: int) -> None:
    rnd = random.Random(n)
    table = HexPatterns(n)
    for _ in range(30):
        state = random_hex(n, rnd.randrange(n * n), rnd)
        if state is None:
            continue
        board = board_of(state, n)
        side = state.current_player()
        cells, keys, _ = table.features(state)
        assert len(cells) == sum(row.count(0) for row in board)
        for cell, key in zip(cells, keys, strict=True):
            assert key == reference_key(board, cell // n, cell % n, side)
            assert table.key(state, int(cell)) == key


@pytest.mark.parametrize("n", [3, 5, 11])
def test_keys_followed_stone_by_stone_match_the_final_board(n: int) -> None:
    rnd = random.Random(10 + n)
    table = HexPatterns(n)
    for _ in range(20):
        start = random_hex(n, rnd.randrange(n * n // 2), rnd)
        if start is None:
            continue
        empty = [a for a in start.legal_actions() if a < n * n]
        moves = rnd.sample(empty, rnd.randrange(len(empty) + 1))
        followed = table.keys_after(start, moves)
        # the final board, coloured from the player to move in start on
        board = board_of(start, n)
        colour = start.current_player() + 1
        for m in moves:
            board[m // n][m % n] = colour
            colour = 3 - colour
        for cell in range(n * n):
            assert followed[cell] == tuple(
                reference_key(board, cell // n, cell % n, side) for side in (0, 1))
    with pytest.raises(ValueError, match="not an empty cell"):
        table.keys_after(make_game(f"hex(size={n})").new_initial_state(), [0, 0])


def test_a_corner_worked_by_hand() -> None:
    # a1 on an empty board, Black to move: the neighbours above are Black's edge, those
    # to the left White's; the bridge point above-left lies beyond both edges (the mover's)
    state = make_game("hex(size=11)").new_initial_state()
    ring = [1, 1, 0, 0, 2, 2]
    bridges = [1, 1, 0, 2, 2, 1]
    reading = sum(d * 3 ** k for k, d in enumerate(ring + bridges))
    turned = [0, 2, 2, 1, 1, 0] + [2, 2, 1, 1, 1, 0]   # the same points, half a turn on
    other = sum(d * 3 ** k for k, d in enumerate(turned))
    assert HexPatterns(11).key(state, 0) == min(reading, other)
    assert HexPatterns(11).key(state, 5 * 11 + 5) == 0     # the centre: all empty


def test_colour_and_transpose_symmetry() -> None:
    # Black to move on a board reads as White to move on its transpose with the colours
    # exchanged (one more Black stone, the spare, far from the cells compared)
    n = 9
    spare = n * n - 1
    rnd = random.Random(3)
    table = HexPatterns(n)

    def t(cell: int) -> int:
        return (cell % n) * n + cell // n

    for _ in range(20):
        moves = rnd.sample(range(n * n - 1), 2 * rnd.randrange(1, 8))
        a = make_game(f"hex(size={n})").new_initial_state()
        b = make_game(f"hex(size={n})").new_initial_state()
        b.apply_action(spare)
        for m in moves:
            a.apply_action(m)
            b.apply_action(t(m))
        if a.is_terminal() or b.is_terminal():
            continue
        assert a.current_player() == 0 and b.current_player() == 1
        for m in range(n * n):
            r, c = divmod(t(m), n)
            near = {(r + dr) * n + c + dc for dr, dc in OFFSETS
                    if 0 <= r + dr < n and 0 <= c + dc < n}
            if m in moves or t(m) == spare or spare in near:
                continue
            assert table.key(a, m) == table.key(b, t(m))


def test_half_turn_symmetry() -> None:
    n = 9
    rnd = random.Random(4)
    table = HexPatterns(n)
    for _ in range(20):
        moves = rnd.sample(range(n * n), rnd.randrange(0, 20))
        a = make_game(f"hex(size={n})").new_initial_state()
        b = make_game(f"hex(size={n})").new_initial_state()
        for m in moves:
            a.apply_action(m)
            b.apply_action(n * n - 1 - m)
            if a.is_terminal():
                break
        if a.is_terminal():
            continue
        for m in range(n * n):
            if m not in moves:
                assert table.key(a, m) == table.key(b, n * n - 1 - m)


def test_local_codes() -> None:
    state = make_game("hex(size=9)").new_initial_state()
    state.apply_move("e5")
    last = state.history()[-1]
    cells, _, codes = HexPatterns(9).features(state, last)
    code = dict(zip(cells.tolist(), codes.tolist(), strict=True))
    r, c = divmod(last, 9)
    for (dr, dc), expect in zip(OFFSETS, [1] * 6 + [2] * 6, strict=True):
        assert code[(r + dr) * 9 + c + dc] == expect
    assert sum(1 for v in code.values() if v) == 12
    assert all(v == 0 for v in HexPatterns(9).features(state)[2])


def test_prior_is_a_distribution_and_follows_the_gammas(tmp_path) -> None:
    state = make_game("hex(size=5)").new_initial_state()
    state.apply_move("c3")
    table = HexPatterns(5)
    gp, gl, _ = unit_weights()
    key = table.key(state, 0)
    gp[key] = 50.0
    prior = HexPatterns(5, (gp, gl)).prior(state)
    assert sum(prior.values()) == pytest.approx(1.0)
    favoured = [c for c in prior if table.key(state, c) == key]
    others = [c for c in prior if table.key(state, c) != key]
    assert prior[favoured[0]] == pytest.approx(50 * prior[others[0]])
    assert all(p == pytest.approx(1 / 24) for p in HexPatterns(5).prior(state).values())


def test_weights_round_trip_and_refusals(tmp_path) -> None:
    gp, gl, gr = unit_weights()
    gp[[3, 77, PATTERN_COUNT - 1]] = [2.0, 0.25, 9.0]
    gl = np.array([1.0, 4.0, 2.0], np.float32)
    gr = np.linspace(1.0, 0.1, ROUTE_COUNT).astype(np.float32)
    path = tmp_path / "w.npz"
    save_weights(path, gp, gl, gr)
    got_p, got_l, got_r = load_weights(path)
    assert np.array_equal(got_p, gp) and np.array_equal(got_l, gl)
    assert np.array_equal(got_r, gr)
    # a file written before the route factor: every route gamma 1
    old = tmp_path / "old.npz"
    keys = np.flatnonzero(gp != 1.0)
    np.savez_compressed(old, keys=keys.astype(np.int32), gammas=gp[keys], local=gl)
    assert np.array_equal(load_weights(old)[2], np.ones(ROUTE_COUNT, np.float32))
    assert np.array_equal(HexPatterns(5, (gp, gl)).weights[2], np.ones(ROUTE_COUNT))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a file of weights")
    with pytest.raises(ValueError, match="bad.npz"):
        load_weights(bad)
    short = tmp_path / "short.npz"
    np.savez_compressed(short, keys=keys.astype(np.int32), gammas=gp[keys], local=gl,
                        route=gr[:5])
    with pytest.raises(ValueError, match="short.npz"):
        load_weights(short)
    with pytest.raises(ValueError, match="shapes"):
        HexPatterns(5, (gp[:10], gl))
    with pytest.raises(ValueError, match="shapes"):
        HexPatterns(5, (gp, gl, gr[:5]))
    with pytest.raises(ValueError, match="route"):
        HexPatterns(5, (gp,))
    gp[5] = 0.0
    with pytest.raises(ValueError, match="positive"):
        HexPatterns(5, (gp, gl))


def test_the_shipped_weights_load() -> None:
    gp, gl, gr = shipped_weights()
    assert gp.shape == (PATTERN_COUNT,) and gl.shape == (LOCAL_COUNT,)
    # a cell on both players' shortest routes is the likeliest, one off every route of
    # both far less
    assert gr.shape == (ROUTE_COUNT,) and gr[0] == 1.0 and gr[4 * 6 + 4] < 0.2
    assert np.all(gp > 0) and int(np.sum(gp != 1.0)) > 1000
    assert gl[0] == 1.0 and gl[1] > 1.0     # a move beside the last one is likelier
