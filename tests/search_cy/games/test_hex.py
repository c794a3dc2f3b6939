"""Hex rules: wins, the canonical swap, notation, encoding, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from descent.search_cy.games.hex import HexState
from descent.search_cy.games.registry import GameSpecError, make_game
from descent.search_cy.games.state import IllegalActionError, NotationError


def play(spec: str, moves: str) -> HexState:
    state = make_game(spec).state_from_text(moves)
    assert isinstance(state, HexState)
    return state


def test_black_connects_top_to_bottom() -> None:
    # Black a1 a2 a3 (column a, rows 1..3) on 3x3; White plays elsewhere.
    state = play("hex(size=3)", "a1 c1 a2 c2")
    assert not state.is_terminal()
    state.apply_move("a3")
    assert state.is_terminal() and state.terminal_value() == 1.0
    assert state.winner_colour() == 0


def test_white_connects_left_to_right_along_a_zigzag() -> None:
    # White b2-c2 joined to a3 via the (r+1, c-1) neighbour, then a3 touches the left edge.
    state = play("hex(size=3)", "a1 c2 b1 b2 c3")
    assert not state.is_terminal()
    state.apply_move("a3")
    assert state.is_terminal() and state.terminal_value() == -1.0


def test_non_adjacent_diagonal_does_not_connect() -> None:
    # a1-b2 are not neighbours in Hex ((r+1, c+1) is not a neighbour).
    state = play("hex(size=2)", "a1 b1")
    state.apply_move("b2")
    assert not state.is_terminal()


def test_undo_of_winning_move_reopens_game() -> None:
    state = play("hex(size=3)", "a1 c1 a2 c2 a3")
    assert state.is_terminal()
    state.undo()
    assert not state.is_terminal() and state.current_player() == 0


def test_canonical_swap_transposes_and_black_moves_next() -> None:
    state = play("hex(size=5,swap=true)", "c2")
    before = state.snapshot()
    assert state.legal_actions()[-1] == 25
    state.apply_move("swap-pieces")
    assert state.cell(1, 2) == 0 and state.cell(2, 1) == 2  # c2 -> b3, now White's
    assert state.current_player() == 0 and state.ply == 2
    assert state.hash == state.recompute_hash()
    state.undo()
    assert state.snapshot() == before


def test_swap_only_as_whites_first_move() -> None:
    no_swap = play("hex(size=5,swap=false)", "c2")
    with pytest.raises(IllegalActionError):
        no_swap.apply_move("swap")
    later = play("hex(size=5,swap=true)", "c2 d4")
    with pytest.raises(IllegalActionError):
        later.apply_move("swap")
    with pytest.raises(IllegalActionError):
        make_game("hex(size=5,swap=true)").new_initial_state().apply_move("swap")


def test_swap_of_edge_stone_keeps_connectivity_right() -> None:
    # a1 swapped to a White stone on a1 (its own transpose) touching the left edge.
    state = play("hex(size=2,swap=true)", "b1 swap")
    assert state.cell(0, 0) == 0 and state.cell(1, 0) == 2
    state.apply_move("a1")  # Black a1 blocks; White b2 then joins a2-b2 left to right
    state.apply_move("b2")
    assert state.is_terminal() and state.terminal_value() == -1.0


def test_move_notation() -> None:
    state = make_game("hex(size=11)").new_initial_state()
    assert state.string_to_action("a1") == 0
    assert state.string_to_action("K11") == 120
    assert state.action_to_string(12) == "b2"
    assert state.string_to_action("swap-sides") == 121


@pytest.mark.parametrize(
    ("text", "problem"),
    [("z1", "off the"), ("a12", "off the"), ("a0", "off the"), ("1a", "malformed"),
     ("", "malformed"), ("pas", "malformed"), ("b", "malformed")],
)
def test_bad_moves_raise_and_leave_state(text: str, problem: str) -> None:
    state = play("hex(size=11)", "f6 e5")
    before = state.snapshot()
    with pytest.raises(NotationError, match=problem):
        state.apply_move(text)
    assert state.snapshot() == before


def test_occupied_cell_is_illegal() -> None:
    state = play("hex(size=11)", "f6")
    before = state.snapshot()
    with pytest.raises(IllegalActionError, match="f6"):
        state.apply_move("f6")
    with pytest.raises(IllegalActionError):
        state.apply_action(500)
    assert state.snapshot() == before


def test_no_move_after_the_end() -> None:
    state = play("hex(size=2)", "a1 b1 a2")
    with pytest.raises(IllegalActionError, match="over"):
        state.apply_move("b2")


@pytest.mark.parametrize(
    ("spec", "problem"),
    [("hex(size=1)", "out of range"), ("hex(size=26)", "out of range"),
     ("hex(size=x)", "not an integer"), ("hex(swap=maybe)", "not a boolean"),
     ("hex(colour=red)", "unknown parameter"), ("hexx", "unknown game"),
     ("hex(size=5", "malformed"), ("hex(size)", "malformed"),
     ("hex(size=5,size=6)", "twice")],
)
def test_bad_game_specs(spec: str, problem: str) -> None:
    with pytest.raises(GameSpecError, match=problem):
        make_game(spec)


def test_encoding_pads_each_side_with_its_edges() -> None:
    state = play("hex(size=3)", "b2")
    planes = state.encode()
    assert planes.shape == (3, 5, 5)
    black, white, to_move = planes
    assert black[0, 1:4].all() and black[4, 1:4].all() and black[2, 2] == 1.0
    assert black[1:4, 0].sum() == 0 and black[0, 0] == 0
    assert white[1:4, 0].all() and white[1:4, 4].all() and white[2, 2] == 0
    assert not to_move.any()  # White to move


def test_colour_exchange_symmetry() -> None:
    state = play("hex(size=3)", "a1 c2")
    assert state.symmetry_swaps_colours(2)
    image = state.encode(symmetry=2)
    # Black a1 (0,0) -> White (0,0); White c2 (1,2) -> Black (2,1); White to move.
    assert image[1, 1, 1] == 1.0 and image[0, 3, 2] == 1.0
    assert image[0].sum() - 6 == 1 and image[1].sum() - 6 == 1
    assert not image[2].any() and state.encode()[2].all()
    rotated = state.encode(symmetry=1)
    assert rotated[0, 3, 3] == 1.0 and rotated[1, 2, 1] == 1.0


def test_swap_games_have_two_symmetries() -> None:
    assert make_game("hex(swap=true)").new_initial_state().num_symmetries == 2
    assert make_game("hex(swap=false)").new_initial_state().num_symmetries == 4


def test_board_text() -> None:
    text = str(play("hex(size=3)", "b2"))
    assert "X" in text and "White to move" in text
    assert np.array_equal(play("hex(size=3)", "b2").encode(), play("hex(size=3)", "B2").encode())


def test_set_up_passes_keep_side_hash_and_undo_exact() -> None:
    from descent.search_cy.games.registry import make_game

    state = make_game("hex(size=5)").new_initial_state()
    state.apply_move("a1")
    state.apply_move("pass")          # Black places a second set-up stone
    state.apply_move("b1")
    assert state.current_player() == 1
    assert state.hash == state.recompute_hash()
    assert state.to_text() == "a1 pass b1"
    assert "pass" not in [state.action_to_string(a) for a in state.legal_actions()]
    again = make_game("hex(size=5)").state_from_text(state.to_text())
    assert again.hash == state.hash and again.snapshot() == state.snapshot()
    clone = state.clone()
    assert clone.snapshot() == state.snapshot()
    state.undo()
    state.undo()
    assert state.current_player() == 1 and state.to_text() == "a1"
    assert state.hash == state.recompute_hash()
    state.apply_move("pass")
    with pytest.raises(IllegalActionError, match="two passes"):
        state.apply_move("pass")
    assert state.to_text() == "a1 pass"


def test_a_pass_first_blocks_the_swap() -> None:
    from descent.search_cy.games.registry import make_game

    state = make_game("hex(size=5,swap=true)").new_initial_state()
    state.apply_move("pass")
    state.apply_move("c3")             # a White set-up stone, then Black's first stone
    state.apply_move("a1")
    assert state.current_player() == 1
    assert state.string_to_action("swap") not in state.legal_actions()


def test_no_swap_after_an_undone_set_up_stone() -> None:
    """A pass left alone in the history is not Black's first stone: no swap answers it."""
    from descent.search_cy.games.registry import make_game

    state = make_game("hex(size=5,swap=true)").new_initial_state()
    state.apply_move("pass")
    state.apply_move("d1")
    state.undo()
    assert state.string_to_action("swap") not in state.legal_actions()
    with pytest.raises(IllegalActionError):
        state.apply_move("swap")
    assert state.hash == state.recompute_hash()


def test_random_set_up_sequences_keep_the_kernel_exact() -> None:
    import random

    from descent.search_cy.games.registry import make_game

    rng = random.Random(1)
    for _ in range(400):
        n = rng.randint(2, 6)
        state = make_game(f"hex(size={n},swap={'true' if n % 2 else 'false'})") \
            .new_initial_state()
        for _ in range(rng.randint(1, 50)):
            r = rng.random()
            if r < 0.3 and not state.is_terminal():
                if not state.history() or state.history()[-1] != n * n + 1:
                    state.apply_move("pass")
            elif r < 0.45 and state.history_length:
                state.undo()
            elif not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))
            assert state.hash == state.recompute_hash()
            assert state.snapshot() == state.clone().snapshot()
