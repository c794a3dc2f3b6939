"""The Hex NNUE (search_cy/eval/hex_nnue_eval.pyx, eval/hex_nnue.h): each view's features
are the ones the rules of hex_nnue.h give (checked against a plain reading of them), the
sums are the feature rows', values equal the torch module's, malformed weights and other
boards are refused, and searches on it keep their proofs exact."""

from __future__ import annotations

import numpy as np
import pytest

from descent.nets.arch import HEX_NNUE_PATTERNS, hex_nnue_features, init_weights, preset
from descent.search_cy.eval.hex_nnue_eval import HexNNUEEvaluator, features
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper
from tests.search_cy.search.test_bestfirst import MODES, action_values, solve

ARCH = preset("hex", "nnue_tiny")
NEIGHBOURS = ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0))


def evaluator(size: int, seed: int = 1) -> HexNNUEEvaluator:
    w = init_weights(ARCH, (3, size + 2, size + 2), seed)
    head = [(w[f"fc.{j}.weight"], w[f"fc.{j}.bias"]) for j in range(len(ARCH.fc) - 1)]
    head.append((w["head.weight"], w["head.bias"]))
    return HexNNUEEvaluator(w["ft.weight"], w["ft.bias"], head, size=size, tanh_output=True)


def random_position(size: int, rng: np.random.Generator, swap: bool = False):
    state = make_game(f"hex(size={size},swap={'true' if swap else 'false'})") \
        .new_initial_state()
    for _ in range(int(rng.integers(0, size * size - 1))):
        legal = state.legal_actions()
        state.apply_action(int(rng.choice(legal)))
        if state.is_terminal():
            state.undo()
            break
    return state


def plain_features(board: list[list[int]], view: int) -> list[int]:
    """hex_nnue.h's features read plainly: ``board[r][c]`` 0 empty, 1 Black, 2 White."""
    n = len(board)

    def state(r: int, c: int) -> int:      # in the view's frame
        if not 0 <= r < n:
            return 1 if 0 <= c < n else 0          # the viewer's edges; the corners
        if not 0 <= c < n:
            return 2                               # the opponent's edges
        s = board[c][r] if view else board[r][c]   # White's view: the transpose
        return 0 if s == 0 else 1 if s == view + 1 else 2

    out = []
    for r in range(n):
        for c in range(n):
            s = state(r, c)
            if s:
                out.append((s - 1) * n * n + r * n + c)
                continue
            pattern = sum(state(r + dr, c + dc) * 3 ** k for k, (dr, dc) in enumerate(NEIGHBOURS))
            line = min(r, n - 1 - r, 5) * 6 + min(c, n - 1 - c, 5)
            out.append(2 * n * n + line * HEX_NNUE_PATTERNS + pattern)
    return out


@pytest.mark.parametrize("size", [2, 5, 11, 13])
def test_each_view_sets_the_features_the_rules_give(size: int) -> None:
    rng = np.random.default_rng(size)
    ev = evaluator(size)
    assert features(size) == hex_nnue_features(size) == 2 * size * size + 36 * 729
    for k in range(30):
        s = random_position(size, rng, swap=k % 3 == 0)
        board = [[s.cell(r, c) for c in range(size)] for r in range(size)]
        for view in (0, 1):
            assert list(ev.indices(s, view)) == plain_features(board, view)


def test_the_sums_are_the_rows_of_the_features_set() -> None:
    rng = np.random.default_rng(2)
    w = init_weights(ARCH, (3, 7, 7), 3)
    ev = evaluator(5, seed=3)
    for _ in range(10):
        s = random_position(5, rng)
        acc = ev.accumulator(s)
        for view in (0, 1):
            rows = w["ft.weight"][:, ev.indices(s, view)].sum(1) + w["ft.bias"]
            assert np.array_equal(acc[view], np.round(rows * 1024).astype(np.int32))


@pytest.mark.parametrize("size", [3, 7, 11])
def test_sums_moved_from_board_to_board_equal_fresh_ones(size: int) -> None:
    """Games played and taken back, siblings, and jumps between unrelated boards: the
    sums the evaluator moves by the changed cells are those summed afresh."""
    rng = np.random.default_rng(size + 10)
    ev = evaluator(size, seed=2)
    for _ in range(6):
        s = make_game(f"hex(size={size},swap=true)").new_initial_state()
        played = 0
        while not s.is_terminal():
            legal = s.legal_actions()
            for a in legal[:3]:                    # a few siblings
                s.apply_action(a)
                assert np.array_equal(ev.accumulator(s), ev.accumulator(s, fresh=True))
                s.undo()
            s.apply_action(int(rng.choice(legal)))
            played += 1
            assert np.array_equal(ev.accumulator(s), ev.accumulator(s, fresh=True))
        for _ in range(played):
            s.undo()
            assert np.array_equal(ev.accumulator(s), ev.accumulator(s, fresh=True))
        far = random_position(size, rng)
        assert np.array_equal(ev.accumulator(far), ev.accumulator(far, fresh=True))


def test_values_are_the_torch_modules_for_the_side_to_move() -> None:
    torch = pytest.importorskip("torch")
    from descent.nets.models import module_from_weights

    rng = np.random.default_rng(4)
    w = init_weights(ARCH, (3, 8, 8), 5)
    net = module_from_weights(ARCH, (3, 8, 8), w)
    ev = evaluator(6, seed=5)
    states = [random_position(6, rng, swap=k % 2 == 0) for k in range(20)]
    planes = np.stack([np.asarray(s.encode(), np.float32) for s in states])
    with torch.no_grad():
        expected = net(torch.from_numpy(planes)).numpy()
    assert np.allclose(ev.forward(planes), expected, atol=1e-5)
    mover = np.array([s.current_player() for s in states])
    assert np.allclose([ev.value(s) for s in states],
                       np.where(mover == 0, expected, -expected), atol=1e-5)
    assert len(set(np.round(expected, 4))) > 10      # the positions are told apart


def test_malformed_weights_and_other_boards_are_refused() -> None:
    w = init_weights(ARCH, (3, 7, 7), 1)
    head = [(w["fc.0.weight"], w["fc.0.bias"]), (w["head.weight"], w["head.bias"])]
    with pytest.raises(ValueError, match="do not map the .* features of 6x6"):
        HexNNUEEvaluator(w["ft.weight"], w["ft.bias"], head, size=6, tanh_output=True)
    with pytest.raises(ValueError, match="not whole multiples of 1/1024"):
        HexNNUEEvaluator(w["ft.weight"] + 1e-4, w["ft.bias"], head, size=5, tanh_output=True)
    with pytest.raises(ValueError, match="do not take 32 inputs"):
        HexNNUEEvaluator(w["ft.weight"], w["ft.bias"], head[1:], size=5, tanh_output=True)
    ev = evaluator(5)
    with pytest.raises(ValueError, match="a 5x5 Hex NNUE cannot value a 7x7 board"):
        ev.value(make_game("hex(size=7)").new_initial_state())
    with pytest.raises(ValueError, match="values Hex states, not einstein"):
        ev.value(make_game("einstein").new_initial_state())
    with pytest.raises(ValueError, match="does not encode 5x5 Hex"):
        ev.forward(np.zeros((2, 3, 9, 9), np.float32))


@pytest.mark.parametrize("mode", MODES)
def test_searches_on_it_solve_small_positions_exactly(mode: str) -> None:
    rng = np.random.default_rng(6)
    for _ in range(8):
        state = random_position(3, rng)
        if state.is_terminal():
            continue
        result = make_search(mode, evaluator(3), SearchParams(hash_mb=8)).run(
            state, Stopper(nodes=2_000_000))
        assert result.resolved and result.value == solve(state)
        assert action_values(state)[result.action] == result.value


def test_rave_with_it_as_its_value_is_deterministic() -> None:
    from descent.search_cy.eval.heuristics import heuristic_for

    state = make_game("hex(size=6)").new_initial_state()
    runs = []
    for _ in range(2):
        search = make_search("rave", heuristic_for(state), SearchParams(seed=3, hash_mb=8))
        search.impl.value = evaluator(6)
        search.impl.value_at = 5
        result = search.run(state, Stopper(iterations=3000))
        runs.append((result.action, [(c.action, c.visits) for c in result.children]))
    assert runs[0] == runs[1]
    assert search.impl.value.positions > 0          # the network was asked
