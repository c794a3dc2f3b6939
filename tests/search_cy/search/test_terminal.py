"""The reinforcement heuristics' terminal values (terminal.pxd, read by the searches and
through terminal.pyx by the learning targets) on terminal positions worked out by hand."""

from __future__ import annotations

import pytest

from descent.search_cy.eval.evaluator import ZeroEvaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper
from descent.search_cy.search.terminal import KINDS, value


def hex4_black_wins_at_ply_7() -> GameState:
    state = make_game("hex(size=4)").new_initial_state()
    for action in (0, 1, 4, 5, 8, 9, 12):      # a column for Black (player 0)
        state.apply_action(action)
    assert state.is_terminal() and state.terminal_value() == 1.0 and state.ply == 7
    return state


def hex4_white_wins_at_ply_8() -> GameState:
    state = make_game("hex(size=4)").new_initial_state()
    for action in (15, 0, 14, 1, 11, 2, 10, 3):   # White (player 1) fills row 1
        state.apply_action(action)
    assert state.is_terminal() and state.terminal_value() == -1.0 and state.ply == 8
    return state


def test_depth_heuristics_on_hex() -> None:
    win, loss = hex4_black_wins_at_ply_7(), hex4_white_wins_at_ply_8()
    P = 16.0
    assert value(win, "gain", P) == 1.0 and value(loss, "gain", P) == -1.0
    # additive: P - p + 1
    assert value(win, "depth_add", P) == 10.0
    assert value(loss, "depth_add", P) == -9.0
    # multiplicative: (P + 1) / p
    assert value(win, "depth_mul", P) == pytest.approx(17 / 7)
    assert value(loss, "depth_mul", P) == pytest.approx(-17 / 8)
    # past P the additive heuristic keeps a win worth 1
    assert value(win, "depth_add", 3.0) == 1.0
    # Hex has no balance: presence is the gain scaled into [1/3, 1]
    assert win.balance() != win.balance()
    assert value(win, "presence", P) == pytest.approx(1 / 1.5)


def test_presence_and_score_on_dice_chess() -> None:
    # White takes the black king with the rook: White keeps K + R, Black keeps its queen
    state = make_game("dicechess").state_from_text("7k/8/8/8/8/8/4K3/q6R w - - 0 1 R")
    state.apply_move("h1h8")
    assert state.is_terminal() and state.terminal_value() == 1.0
    assert state.balance() == pytest.approx((2 - 1) / 16)
    assert state.balance(material=True) == pytest.approx((5 - 9) / 39)
    assert value(state, "presence", 1000) == pytest.approx((1 + 0.5 / 16) / 1.5)
    assert value(state, "score", 1000) == pytest.approx((1 - 0.5 * 4 / 39) / 1.5)


def test_einstein_balance_counts_cubes() -> None:
    state = make_game("einstein").state_from_text("AB3/5/2a2/5/4b r roll")
    assert state.balance() == 0.0
    assert state.balance(material=True) != state.balance(material=True)   # no score


def test_bad_calls_are_refused() -> None:
    state = make_game("hex(size=4)").new_initial_state()
    with pytest.raises(ValueError, match="not terminal"):
        value(state, "gain", 16)
    with pytest.raises(ValueError, match="unknown terminal kind"):
        value(hex4_black_wins_at_ply_7(), "moves", 16)
    assert KINDS == ("gain", "depth_add", "depth_mul", "presence", "score", "mobility")


@pytest.mark.parametrize("kind", ["presence", "score", "mobility"])
def test_the_searches_value_terminal_states_with_the_heuristic(kind: str) -> None:
    # White to move takes the king at once: the root's value is the heuristic's own
    state = make_game("dicechess").state_from_text("7k/8/8/8/8/8/4K3/q6R w - - 0 1 R")
    for search in ("expectiminimax", "ubfms"):
        runner = make_search(search, ZeroEvaluator(), SearchParams(hash_mb=8, terminal=kind,
                                                                   max_depth=1))
        result = runner.run(state, Stopper(nodes=2000))
        after = state.clone()
        after.apply_move("h1h8")
        assert result.action == state.string_to_action("h1h8")
        assert result.value == pytest.approx(value(after, kind, 1000))


def test_cumulative_mobility_on_hex() -> None:
    # 4x4 Hex without swap: 16 cells, so Black (player 0) had 16, 14, 12, 10 moves on its
    # four turns and White 15, 13, 11 on its three: a first player's win is worth 1
    win = hex4_black_wins_at_ply_7()
    assert win.mobility is None                    # value() counts them from the history
    assert value(win, "mobility", 16) == 1.0
    assert win.mobility == ((4, 52), (3, 39))
    # White wins on its fourth move: -M1 / M0 = -12 / 13 (White 15..9, Black 16..10)
    loss = hex4_white_wins_at_ply_8()
    assert value(loss, "mobility", 16) == pytest.approx(-12 / 13)
    # under the swap rule White's first turn has one move more (the swap)
    swap = make_game("hex(size=4,swap=true)").new_initial_state()
    for action in (0, 1, 4, 5, 8, 9, 12):
        swap.apply_action(action)
    assert value(swap, "mobility", 16) == pytest.approx(13 / (40 / 3))


def test_cumulative_mobility_on_dice_chess() -> None:
    # from a set position the history, and so the counts, start there: White's one turn
    # had the rook's moves for the die rolled, Black has had none (its mean is taken as 1)
    state = make_game("dicechess").state_from_text("7k/8/8/8/8/8/4K3/q6R w - - 0 1 R")
    state.track_mobility()
    rook_moves = len(state.legal_actions())
    state.apply_move("h1h8")
    assert state.mobility == ((1, rook_moves), (0, 0))
    assert value(state, "mobility", 1000) == pytest.approx(rook_moves)


def test_cumulative_mobility_on_einstein() -> None:
    # set-ups and die rolls are nobody's turn: only the moves count
    state = make_game("einstein").new_initial_state()
    state.track_mobility()
    while state.phase_name != "move":
        state.apply_action(state.chance_outcomes()[0][0] if state.is_chance_node()
                           else state.legal_actions()[0])
    assert state.mobility == ((0, 0), (0, 0))
    mover, n = state.current_player(), len(state.legal_actions())
    state.apply_action(state.legal_actions()[0])
    assert state.mobility[mover] == (1, n) and state.mobility[1 - mover] == (0, 0)
