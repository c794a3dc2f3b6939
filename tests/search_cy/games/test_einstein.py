"""EinStein wurfelt nicht! rules: set-up modes, dice, moves, captures, wins, notation,
hashing, encoding, and bad input (each rejected with a clear error, state unchanged)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from descent.search_cy.games.einstein import (
    EinsteinState,
    cell_name,
    cells_to_rank,
    home_cells,
    parse_cell,
    rank_to_cells,
)
from descent.search_cy.games.registry import GameSpecError, make_game
from descent.search_cy.games.state import PLAYER_CHANCE, IllegalActionError, NotationError
from tests.conftest import random_action

RED, BLUE = 0, 1


def cell(name: str) -> int:
    return parse_cell(name)


def position(text: str, spec: str = "einstein") -> EinsteinState:
    state = make_game(spec).state_from_text(text)
    assert isinstance(state, EinsteinState)
    return state


def moves(state: EinsteinState) -> set[str]:
    return {state.action_to_string(a) for a in state.legal_actions()}


def fresh(spec: str = "einstein") -> EinsteinState:
    state = make_game(spec).new_initial_state()
    assert isinstance(state, EinsteinState)
    return state


def cells(text: str) -> tuple[int, ...]:
    return tuple(parse_cell(name) for name in text.split())


def set_up(spec: str = "einstein", red: int = 0, blue: int = 0) -> EinsteinState:
    state = fresh(spec)
    state.apply_action(red)
    if state.phase_name == "setup":
        state.apply_action(blue)
    return state


# ---- set-up ----

def test_rank_zero_is_the_row_major_identity() -> None:
    assert rank_to_cells(RED, 0) == cells("a1 b1 c1 a2 b2 a3")
    assert rank_to_cells(BLUE, 0) == cells("e3 d4 e4 c5 d5 e5")
    assert home_cells(RED) == rank_to_cells(RED, 0)
    # rank 719 is the reversed sequence: cube 6 on the first home cell
    assert rank_to_cells(RED, 719)[5] == cell("a1")
    # rank 1 swaps the last two home cells (a3 <-> b2): cube 5 on a3, cube 6 on b2
    assert rank_to_cells(RED, 1)[4:] == (cell("a3"), cell("b2"))


@pytest.mark.parametrize("side", [RED, BLUE])
def test_rank_cells_round_trip(side: int) -> None:
    seen = set()
    for rank in range(720):
        cells = rank_to_cells(side, rank)
        assert sorted(cells) == sorted(home_cells(side))
        assert cells_to_rank(side, cells) == rank
        seen.add(cells)
    assert len(seen) == 720


def test_random_setup_is_two_uniform_chance_nodes() -> None:
    state = fresh()
    for side in (RED, BLUE):
        assert state.current_player() == PLAYER_CHANCE
        outcomes = state.chance_outcomes()
        assert [a for a, _ in outcomes] == list(range(720))
        assert all(math.isclose(p, 1 / 720) for _, p in outcomes)
        assert state.to_text().endswith(f"{'rb'[side]} setup")
        state.apply_action(5)
    assert state.ply == 0  # chance outcomes are not player decisions
    assert state.phase_name == "roll" and state.side_to_act == RED
    assert state.current_player() == PLAYER_CHANCE


def test_random_setup_places_cubes_by_rank() -> None:
    state = set_up("einstein", red=123, blue=456)
    for k in range(1, 7):
        assert state.cube_cell(RED, k) == rank_to_cells(RED, 123)[k - 1]
        assert state.cube_cell(BLUE, k) == rank_to_cells(BLUE, 456)[k - 1]
        assert state.piece_at(state.cube_cell(BLUE, k)) == (BLUE, k)
    assert state.cubes_left(RED) == state.cubes_left(BLUE) == 6


@pytest.mark.parametrize("rank", [0, 1, 77, 500, 719])
def test_mirror_setup_is_the_point_reflection(rank: int) -> None:
    state = fresh("einstein(setup=mirror)")
    assert state.current_player() == RED
    assert state.legal_actions() == list(range(720))
    state.apply_action(rank)
    assert state.ply == 1
    assert state.phase_name == "roll"  # no node for Blue
    for k in range(1, 7):
        red = state.cube_cell(RED, k)
        r, c = divmod(red, 5)
        assert state.cube_cell(BLUE, k) == (4 - r) * 5 + (4 - c)
    # Blue's arrangement read as a Blue rank is the reversed cube sequence
    state.undo()
    assert state.snapshot() == make_game("einstein(setup=mirror)").new_initial_state().snapshot()


def test_free_setup_is_two_player_nodes() -> None:
    state = fresh("einstein(setup=free,first=blue)")
    assert state.current_player() == RED
    state.apply_move("b1 a1 c1 a2 b2 a3")
    assert state.cube_cell(RED, 1) == cell("b1")
    assert state.current_player() == BLUE
    assert state.legal_actions() == list(range(720))
    state.apply_move("e5,e4,e3,d5,d4,c5")
    assert state.cube_cell(BLUE, 1) == cell("e5") and state.cube_cell(BLUE, 6) == cell("c5")
    assert state.ply == 2
    assert state.phase_name == "roll" and state.side_to_act == BLUE  # first=blue


def test_setup_actions_spelled_as_cells_or_rank() -> None:
    state = make_game("einstein(setup=free)").new_initial_state()
    assert state.action_to_string(0) == "a1 b1 c1 a2 b2 a3"
    assert state.string_to_action("A1 B1 C1 A2 B2 A3") == 0
    assert state.string_to_action("a1b1c1a2a3b2") == 1
    assert state.string_to_action("  719 ") == 719
    state.apply_action(3)
    assert state.action_to_string(0) == "e3 d4 e4 c5 d5 e5"
    assert state.string_to_action("e3 d4 e4 c5 d5 e5") == 0


def test_first_player_option() -> None:
    assert set_up("einstein(first=red)").side_to_act == RED
    blue_first = set_up("einstein(first=blue)")
    blue_first.apply_action(4)
    assert blue_first.current_player() == BLUE
    assert blue_first.ply == 0


# ---- dice and moves ----

def test_die_selects_its_cube() -> None:
    state = set_up()
    state.apply_move("d5")
    assert state.current_player() == RED and state.pending_die == 5
    assert moves(state) == {"b2c2", "b2b3", "b2c3"}


def test_missing_cube_gives_next_lower_and_next_higher() -> None:
    # Red has cubes 1, 3, 6 (A C F); die 4 and 5 -> 3 or 6; die 2 -> 1 or 3
    state = position("A1C2/5/2F2/3ab/5 r d4")
    assert moves(state) == {"c1d1", "c1c2", "c1d2", "c3d3", "c3c4", "c3d4"}
    state = position("A1C2/5/2F2/3ab/5 r d2")
    assert moves(state) == {"a1b1", "a1a2", "a1b2", "c1d1", "c1c2", "c1d2"}
    state = position("A1C2/5/2F2/3ab/5 r d6")
    assert moves(state) == {"c3d3", "c3c4", "c3d4"}


def test_only_lower_or_only_higher_exists() -> None:
    # Red keeps cubes 2 and 3 only: die 6 -> 3 alone, die 1 -> 2 alone
    state = position("1BC2/5/5/3ab/5 r d6")
    assert moves(state) == {"c1d1", "c1c2", "c1d2"}
    state = position("1BC2/5/5/3ab/5 r d1")
    assert moves(state) == {"b1c1", "b1b2", "b1c2"}


def test_blue_directions_and_board_edges() -> None:
    # Blue cube 1 in the middle: left, up, diagonal up-left
    state = position("A4/5/2a2/5/3F1 b d1")
    assert moves(state) == {"c3b3", "c3c2", "c3b2"}
    # Blue cube on column a: only up; Red cube on column e: only down
    assert moves(position("A4/5/a4/5/3F1 b d1")) == {"a3a2"}
    assert moves(position("A3F/5/4b/5/5 r d6")) == {"e1e2"}
    assert moves(position("A4/5/5/5/F2a1 r d6")) == {"a5b5"}


def test_capture_of_enemy_cube() -> None:
    state = position("A4/1a3/5/3bc/5 r d1")
    before = state.snapshot()
    state.apply_move("a1b2")
    assert state.piece_at(cell("b2")) == (RED, 1)
    assert state.cube_cell(BLUE, 1) == -1 and state.cubes_left(BLUE) == 2
    assert not state.is_terminal()
    assert state.hash == state.recompute_hash()
    state.undo()
    assert state.snapshot() == before


def test_capture_of_own_cube() -> None:
    state = position("AB3/5/5/3bc/5 r d1")
    before = state.snapshot()
    state.apply_move("a1b1")
    assert state.piece_at(cell("b1")) == (RED, 1)
    assert state.cube_cell(RED, 2) == -1 and state.cubes_left(RED) == 1
    assert state.hash == state.recompute_hash()
    state.undo()
    assert state.snapshot() == before


def test_turn_sequence_roll_move_roll() -> None:
    state = set_up()
    h_roll = state.hash
    state.apply_move("d1")
    assert state.hash != h_roll  # the pending die is part of the key
    state.apply_move("a1b2")  # own capture: cube 5 stood on b2
    assert state.ply == 1 and state.phase_name == "roll" and state.side_to_act == BLUE
    assert state.current_player() == PLAYER_CHANCE
    assert state.cubes_left(RED) == 5


# ---- wins ----

def test_red_wins_on_e5() -> None:
    state = position("5/5/5/3Aa/5 r d1")
    state.apply_move("d4e5")
    assert state.is_terminal() and state.terminal_value() == 1.0
    assert state.winner_colour() == RED and state.legal_actions() == []
    assert state.to_text() == "5/5/5/4a/4A b over"


def test_blue_wins_on_a1() -> None:
    state = position("1A3/a4/5/5/3F1 b d4")  # Blue has only cube 1: die 4 moves it
    state.apply_move("a2a1")
    assert state.is_terminal() and state.terminal_value() == -1.0
    assert state.winner_colour() == BLUE


def test_capturing_the_last_enemy_cube_wins() -> None:
    state = position("5/1A3/2a2/5/5 r d3")
    state.apply_move("b2c3")
    assert state.is_terminal() and state.terminal_value() == 1.0
    state.undo()
    assert not state.is_terminal() and state.winner_colour() == -1
    state = position("5/1A3/2a2/5/5 b d6")
    state.apply_move("c3b2")
    assert state.is_terminal() and state.terminal_value() == -1.0


def test_over_position_text() -> None:
    state = position("5/5/5/4a/4A b over")
    assert state.is_terminal() and state.terminal_value() == 1.0
    assert state.current_player() < 0 and state.chance_outcomes() == []
    assert position("a4/5/5/5/A4 r over").terminal_value() == -1.0
    assert "Red wins" in str(state)


# ---- merged dice ----

def test_merged_dice_group_by_movable_cubes() -> None:
    # Red has cubes 1 and 6 only: die 1 -> {1}, dice 2..5 -> {1, 6}, die 6 -> {6}
    text = "A4/5/2F2/3ab/5 r roll"
    merged = position(text, "einstein(merge_dice=true)")
    outcomes = merged.chance_outcomes()
    assert [a for a, _ in outcomes] == [1, 2, 6]
    assert [p for _, p in outcomes] == pytest.approx([1 / 6, 4 / 6, 1 / 6])
    assert merged.string_to_action("d4") == 2  # the real die maps to its group
    assert merged.string_to_action("d6") == 6
    plain = position(text, "einstein(merge_dice=false)")
    assert [a for a, _ in plain.chance_outcomes()] == [1, 2, 3, 4, 5, 6]
    assert [p for _, p in plain.chance_outcomes()] == pytest.approx([1 / 6] * 6)
    assert plain.string_to_action("d4") == 4
    merged.apply_move("d5")
    assert merged.pending_die == 2
    plain.apply_move("d5")
    assert merged.legal_actions() == plain.legal_actions()


def test_merged_dice_full_set_has_six_outcomes() -> None:
    state = set_up("einstein(merge_dice=true)")
    assert [a for a, _ in state.chance_outcomes()] == [1, 2, 3, 4, 5, 6]


# ---- hashing, notation, encoding ----

def test_transposition_has_the_same_key() -> None:
    a = position("A4/5/2F2/3ab/5 r d1")
    b = position("A4/5/2F2/3ab/5 b d1")
    assert a.hash != b.hash
    # the same position reached after different moves
    x = position("A4/5/2F2/3ab/5 r d1")
    x.apply_move("a1b1")
    y = position("B4/5/2F2/3ab/5 r d1")  # cube 1 on b1 directly, Blue to roll
    y.set_position("1A3/5/2F2/3ab/5 b roll")
    assert x.hash == y.hash == x.recompute_hash()
    assert x.to_text() == y.to_text() == "1A3/5/2F2/3ab/5 b roll"


def test_position_text_round_trip_and_str() -> None:
    state = set_up()
    assert state.to_text() == "ABC2/DE3/F3a/3bc/2def r roll"
    again = position(state.to_text())
    assert again.hash == state.hash and again.to_text() == state.to_text()
    state.apply_move("d6")
    assert state.to_text().endswith(" r d6")
    text = str(state)
    assert "R1" in text and "B6" in text and "Red to move, die 6" in text
    assert position("5/5/5/5/5 r setup").hash == make_game("einstein").new_initial_state().hash
    free = make_game("einstein(setup=free)")
    blue_setup = free.new_initial_state()
    blue_setup.apply_action(7)
    assert free.state_from_text(blue_setup.to_text()).hash == blue_setup.hash


def test_encoding_planes() -> None:
    state = position("A4/5/2F2/3ab/5 r d4")
    planes = state.encode()
    assert planes.shape == (19, 5, 5)
    assert planes[0, 0, 0] == 1 and planes[5, 2, 2] == 1
    assert planes[6, 3, 3] == 1 and planes[7, 3, 4] == 1
    assert planes[12].all() and planes[16].all()
    assert planes.sum() == 4 + 25 + 25
    # point reflection: Red cube 1 on a1 becomes Blue cube 1 on e5, Blue to move
    image = state.encode(symmetry=2)
    assert image[6, 4, 4] == 1 and image[0, 1, 1] == 1 and not image[12].any()
    assert image[16].all()
    # transpose keeps colours: Blue cube 2 on e4 (3,4) -> (4,3)
    assert state.encode(symmetry=1)[7, 4, 3] == 1
    assert state.symmetry_swaps_colours(2) and state.symmetry_swaps_colours(3)
    assert not state.symmetry_swaps_colours(1)


def test_symmetry_action_maps_moves_and_ranks() -> None:
    state = position("5/5/2F2/3ab/A4 r d6")  # Red cube 6 on c3
    right = state.string_to_action("c3d3")
    assert state.action_to_string(state.symmetry_action(right, 1)) == "c3c4"
    # point reflection: the move of Blue's image cube, left from c3
    assert state.symmetry_action(right, 2) == right
    fresh = make_game("einstein(setup=free)").new_initial_state()
    transposed = fresh.symmetry_action(0, 1)  # cube 2 on b1 -> a2, cube 4 on a2 -> b1 ...
    assert fresh.action_to_string(transposed) == "a1 a2 a3 b1 b2 c1"
    assert fresh.symmetry_action(transposed, 1) == 0


def test_game_length_is_bounded() -> None:
    game = make_game("einstein")
    rng = random.Random(2)
    longest = 0
    for _ in range(300):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(random_action(state, rng))
        longest = max(longest, state.history_length)
        assert state.ply <= 96
    assert longest <= 2 + 2 * 96


# ---- bad input: clear errors, state unchanged ----

def _rejects(state: EinsteinState, error: type[Exception], text: str, *words: str) -> None:
    before = state.snapshot()
    with pytest.raises(error) as info:
        state.apply_move(text)
    for word in words:
        assert word in str(info.value), str(info.value)
    assert state.snapshot() == before


@pytest.mark.parametrize("text, error, words", [
    ("a1", NotationError, ("malformed move",)),
    ("a1b1c1", NotationError, ("malformed move",)),
    ("", NotationError, ("malformed move",)),
    ("zz99", NotationError, ("cell",)),
    ("a0a1", NotationError, ("off the 5x5 board",)),
    ("f1f2", NotationError, ("off the 5x5 board",)),
    ("a1c3", IllegalActionError, ("not a one-cell step", "Red")),
    ("b1a1", IllegalActionError, ("not a one-cell step",)),
    ("c3d3", IllegalActionError, ("not legal",)),        # cube 6, die is 1
    ("d4e5", IllegalActionError, ("not legal",)),        # no Red cube there
])
def test_bad_moves(text: str, error: type[Exception], words: tuple[str, ...]) -> None:
    _rejects(position("A4/5/2F2/3ab/5 r d1"), error, text, *words)


def test_bad_actions_by_id() -> None:
    state = position("A4/5/2F2/3ab/5 r d1")
    before = state.snapshot()
    for action in (-1, 75, 12, 720, 3 * 4 + 0):  # 12 = e1 right: off the board
        with pytest.raises(IllegalActionError):
            state.apply_action(action)
    assert state.snapshot() == before
    with pytest.raises(NotationError):
        state.action_to_string(12)


@pytest.mark.parametrize("text, words", [
    ("d7", ("d1..d6",)),
    ("d0", ("d1..d6",)),
    ("3", ("d1..d6",)),
    ("a1b2", ("d1..d6",)),
])
def test_bad_die_rolls(text: str, words: tuple[str, ...]) -> None:
    _rejects(set_up(), NotationError, text, *words)


def test_bad_chance_ids() -> None:
    state = set_up()
    before = state.snapshot()
    for outcome in (0, 7, -3):
        with pytest.raises(IllegalActionError):
            state.apply_action(outcome)
    merged = position("A4/5/2F2/3ab/5 r roll", "einstein(merge_dice=true)")
    with pytest.raises(IllegalActionError):
        merged.apply_action(4)  # 4 is merged into outcome 2
    assert state.snapshot() == before


@pytest.mark.parametrize("text, error, words", [
    ("a1 b1 c1 a2 b2", NotationError, ("six cells",)),
    ("a1 b1 c1 a2 b2 a3 a4", NotationError, ("six cells",)),
    ("a1 a1 c1 a2 b2 a3", NotationError, ("two cubes on one cell",)),
    ("a1 b1 c1 a2 b2 e5", NotationError, ("cube 6", "home cells")),
    ("a1 b1 c1 a2 b2 a9", NotationError, ("off the 5x5 board",)),
    ("720", NotationError, ("out of range 0..719",)),
    ("-1", NotationError, ("six cells",)),
    ("b2c3", NotationError, ("six cells",)),
])
def test_bad_arrangements(text: str, error: type[Exception], words: tuple[str, ...]) -> None:
    _rejects(fresh("einstein(setup=free)"), error, text, *words)


def test_bad_arrangement_for_blue_names_blue_home() -> None:
    state = fresh("einstein(setup=free)")
    state.apply_action(0)
    _rejects(state, NotationError, "a1 b1 c1 a2 b2 a3", "Blue", "home cells")
    with pytest.raises(IllegalActionError):
        state.apply_action(720)


def test_bad_ranks_and_cells_in_helpers() -> None:
    with pytest.raises(ValueError, match="out of range"):
        rank_to_cells(RED, 720)
    with pytest.raises(ValueError, match="neither"):
        rank_to_cells(2, 0)
    with pytest.raises(ValueError, match="6 cells"):
        cells_to_rank(RED, [0, 1, 2])
    with pytest.raises(ValueError, match="two cubes"):
        cells_to_rank(RED, [0, 0, 1, 2, 5, 6])
    with pytest.raises(ValueError, match="home cells"):
        cells_to_rank(BLUE, [0, 1, 2, 5, 6, 10])
    with pytest.raises(NotationError, match="malformed cell"):
        parse_cell("a")
    with pytest.raises(NotationError, match="off the 5x5 board"):
        parse_cell("a6")
    with pytest.raises(NotationError, match="off the 5x5 board"):
        cell_name(25)
    state = set_up()
    with pytest.raises(ValueError):
        state.cube_cell(RED, 7)
    with pytest.raises(NotationError):
        state.piece_at(-1)


@pytest.mark.parametrize("text, words", [
    ("ABC2/DE3/F3a/3bc/2def r", ("3 fields",)),
    ("ABC2/DE3/F3a/3bc/2def r roll extra", ("3 fields",)),
    ("ABC2/DE3/F3a/3bc r roll", ("5 rows",)),
    ("ABC2/DE3/F3a/3bc/2de r roll", ("row 5", "4 cells")),
    ("ABC3/DE3/F3a/3bc/2def r roll", ("row 1", "6 cells")),
    ("ABC2/DE3/F3a/3bc/2deg r roll", ("bad character",)),
    ("ABC2/DE3/F3a/3bc/2dea r roll", ("Blue cube 1", "twice")),
    ("ABC2/DE3/F3a/3bc/2def x roll", ("side",)),
    ("ABC2/DE3/F3a/3bc/2def r d7", ("phase",)),
    ("ABC2/DE3/F3a/3bc/2def r move", ("phase",)),
    ("ABC2/DE3/F3a/3bc/2def r setup", ("empty board",)),
    ("5/5/5/5/5 b setup", ("Blue's set-up",)),
    ("5/5/5/5/4A b roll", ("finished game",)),
    ("5/5/5/5/4A b d3", ("finished game",)),
    ("ABC2/DE3/F3a/3bc/2def r over", ("exactly one winner",)),
    ("a4/5/5/5/4A r over", ("exactly one winner",)),
])
def test_bad_position_text(text: str, words: tuple[str, ...]) -> None:
    game = make_game("einstein")
    with pytest.raises(NotationError) as info:
        game.state_from_text(text)
    for word in words:
        assert word in str(info.value), str(info.value)
    # set_position on a live state checks first and leaves it unchanged
    state = set_up()
    state.apply_move("d2")
    before = state.snapshot()
    with pytest.raises(NotationError):
        state.set_position(text)
    assert state.snapshot() == before


def test_blue_setup_text_rejected_with_mirror() -> None:
    with pytest.raises(NotationError, match="mirror"):
        position("ABC2/DE3/F4/5/5 b setup", "einstein(setup=mirror)")
    assert position("ABC2/DE3/F4/5/5 b setup", "einstein(setup=free)").current_player() == BLUE


def test_no_action_after_the_end() -> None:
    state = position("5/5/5/4a/4A b over")
    before = state.snapshot()
    with pytest.raises(IllegalActionError, match="over"):
        state.apply_move("e4d4")
    with pytest.raises(IllegalActionError, match="over"):
        state.apply_action(0)
    with pytest.raises(IndexError):
        state.undo()
    assert state.snapshot() == before


@pytest.mark.parametrize("spec", [
    "einstein(setup=secret)", "einstein(first=green)", "einstein(merge_dice=maybe)",
    "einstein(size=5)",
])
def test_bad_game_params(spec: str) -> None:
    with pytest.raises(GameSpecError):
        make_game(spec)


def test_constructor_checks_options() -> None:
    with pytest.raises(ValueError, match="setup"):
        EinsteinState(None, "secret", "red", False)
    with pytest.raises(ValueError, match="first"):
        EinsteinState(None, "random", "green", False)


def test_clone_keeps_history_and_undo() -> None:
    state = set_up()
    state.apply_move("d3")
    state.apply_move("c1d2")
    copy = state.clone()
    assert isinstance(copy, EinsteinState)
    assert copy.snapshot() == state.snapshot() and copy.history() == [0, 0, 3, 8]
    copy.undo()
    copy.undo()
    assert copy.to_text() == "ABC2/DE3/F3a/3bc/2def r roll"
    assert state.history() == [0, 0, 3, 8]
    np.testing.assert_array_equal(state.encode(), state.clone().encode())


def _image_text(state: EinsteinState, sym: int) -> str:
    """The position text of the state's image under a symmetry (built from scratch)."""
    images = {
        0: lambda r, c: (r, c), 1: lambda r, c: (c, r),
        2: lambda r, c: (4 - r, 4 - c), 3: lambda r, c: (4 - c, 4 - r),
    }
    swap = sym >= 2
    grid = [["1"] * 5 for _ in range(5)]
    for cell_id in range(25):
        piece = state.piece_at(cell_id)
        if piece is not None:
            side, k = piece
            r, c = images[sym](*divmod(cell_id, 5))
            grid[r][c] = chr((ord("a") if side != swap else ord("A")) + k - 1)
    board = "/".join("".join(row) for row in grid)
    for n in (5, 4, 3, 2):  # run-length encode the empty cells
        board = board.replace("1" * n, str(n))
    _, side_text, phase = state.to_text().split()
    if swap:
        side_text = "rb"[side_text == "r"]
    return f"{board} {side_text} {phase}"


@pytest.mark.parametrize("sym", [1, 2, 3])
def test_symmetry_images_match_the_mapped_positions(sym: int) -> None:
    game = make_game("einstein")
    rng = random.Random(sym)
    checked = 0
    for _ in range(60):
        state = game.new_initial_state()
        assert isinstance(state, EinsteinState)
        state.apply_action(rng.randrange(720))
        state.apply_action(rng.randrange(720))
        while not state.is_terminal():
            image = game.state_from_text(_image_text(state, sym))
            np.testing.assert_array_equal(image.encode(), state.encode(symmetry=sym))
            assert sorted(state.symmetry_action(a, sym) for a in state.legal_actions()) == \
                image.legal_actions()
            assert [a for a, _ in image.chance_outcomes()] == \
                [a for a, _ in state.chance_outcomes()]
            checked += 1
            state.apply_action(random_action(state, rng))
        image = game.state_from_text(_image_text(state, sym))
        flip = -1.0 if state.symmetry_swaps_colours(sym) else 1.0
        assert image.terminal_value() == flip * state.terminal_value()
    assert checked > 1000
