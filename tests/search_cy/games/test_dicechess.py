"""Dice chess rules kernel: unit tests of RULES.md ("Dice chess"), options included,
notation both ways and bad input (clear errors, state unchanged)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from descent.search_cy.games import dicechess
from descent.search_cy.games.dicechess import DiceChessState, parse_uci
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import IllegalActionError, NotationError

START = dicechess.START_FEN
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
# White can move nothing at all: every roll leads to the pass.
FROZEN = "7k/8/8/8/1p6/pPp5/PRP5/KB6 w - - 0 1"


def state(fen: str = START, nomove: str = "reroll", castle: str = "king") -> DiceChessState:
    s = make_game(f"dicechess(nomove={nomove},castle={castle})").state_from_text(fen)
    assert isinstance(s, DiceChessState)
    return s


def moves(s: DiceChessState) -> list[str]:
    return sorted(s.action_to_string(a) for a in s.legal_actions())


def rolled(fen: str, die: int, nomove: str = "reroll", castle: str = "king") -> list[str]:
    """UCI moves at the player node after rolling die (the roll must be possible)."""
    s = state(fen, nomove, castle)
    s.apply_action(die)
    return moves(s)


def play(s: DiceChessState, *steps: str) -> None:
    """Alternate rolls and moves: ``play(s, "d1", "e2e4", "d2", "g8f6")``."""
    for step in steps:
        s.apply_move(step)


# ---- each die ----
def test_start_position_rolls() -> None:
    s = state()
    assert s.current_player() == -1 and s.is_chance_node()
    assert s.chance_outcomes() == [(1, 0.5), (2, 0.5)]  # only pawns and knights can move
    assert rolled(START, 1) == sorted(
        f"{f}2{f}{r}" for f in "abcdefgh" for r in "34")
    assert rolled(START, 2) == ["b1a3", "b1c3", "g1f3", "g1h3"]
    assert s.move_counts() == [20, 16, 4, 0, 0, 0, 0]


@pytest.mark.parametrize(("die", "expected"), [
    (1, ["e4e5"]),
    (2, ["b1a3", "b1c3", "b1d2"]),
    (3, ["c1a3", "c1b2", "c1d2", "c1e3", "c1f4", "c1g5", "c1h6"]),
    (4, ["h1f1", "h1g1"] + [f"h1h{r}" for r in range(2, 9)]),
    (5, ["d1a4", "d1b3", "d1c2", "d1e2", "d1f3", "d1g4", "d1h5"]
        + [f"d1d{r}" for r in range(2, 9)]),
    (6, ["e1d2", "e1e2", "e1f1", "e1f2"]),
])
def test_each_die_moves_its_piece_type(die: int, expected: list[str]) -> None:
    fen = "3k4/8/8/8/4P3/8/8/1NBQK2R w - - 0 1"
    assert rolled(fen, die) == sorted(expected)


def test_moves_for_die_matches_the_player_node() -> None:
    s = state(KIWIPETE)
    for die in range(1, 7):
        child = s.clone()
        child.apply_action(die)
        assert child.legal_actions() == s.moves_for_die(die)
        assert len(s.moves_for_die(die)) == s.move_counts()[die]
    with pytest.raises(ValueError):
        s.moves_for_die(7)


# ---- promotions ----
PROMO = "r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1"


def test_promotion_on_a_one_offers_every_piece() -> None:
    assert rolled(PROMO, 1) == sorted(
        f"b7{t}{p}" for t in ("a8", "b8") for p in "nbrq")


@pytest.mark.parametrize(("die", "letter"), [(2, "n"), (3, "b"), (4, "r"), (5, "q")])
def test_promotion_on_two_to_five_gives_the_rolled_piece(die: int, letter: str) -> None:
    got = rolled(PROMO, die)
    assert f"b7b8{letter}" in got and f"b7a8{letter}" in got
    assert [m for m in got if m.startswith("b7")] == [f"b7a8{letter}", f"b7b8{letter}"]


def test_promotion_applies_the_rolled_piece() -> None:
    s = state(PROMO)
    play(s, "d2", "b7a8n")
    assert s.piece_at(56) == "N" and s.piece_at(49) == "."
    s.undo()
    assert s.piece_at(49) == "P" and s.piece_at(56) == "r"


def test_no_promotion_to_a_king() -> None:
    got = rolled(PROMO, 6)
    assert all(not m.startswith("b7") for m in got)
    assert got == ["e1d1", "e1d2", "e1e2", "e1f1", "e1f2"]
    with pytest.raises(NotationError, match="king"):
        parse_uci("b7b8k")


def test_blocked_pawn_does_not_promote_on_any_roll() -> None:
    fen = "1r2k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
    for die in range(1, 6):
        s = state(fen, nomove="pass")
        s.apply_action(die)
        assert moves(s) == ["0000"]


# ---- castling ----
CASTLE = "r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1"  # f2 rook hits f1, e1 (check) and e2


def test_castling_on_a_six_ignores_attacked_squares() -> None:
    got = rolled(CASTLE, 6)
    assert "e1g1" in got and "e1c1" in got
    s = state(CASTLE)
    play(s, "d6", "e1g1")
    assert s.piece_at(6) == "K" and s.piece_at(5) == "R" and s.piece_at(7) == "."
    assert s.to_text().split()[2] == "kq"
    s.undo()
    assert s.piece_at(4) == "K" and s.piece_at(7) == "R"
    play(s, "e1c1")
    assert s.piece_at(2) == "K" and s.piece_at(3) == "R" and s.piece_at(0) == "."


def test_castle_option_king_or_rook() -> None:
    assert "e1g1" not in rolled(CASTLE, 4)
    got = rolled(CASTLE, 4, castle="king-or-rook")
    assert "e1g1" in got and "e1c1" in got and "a1a2" in got
    assert "e1g1" in rolled(CASTLE, 6, castle="king-or-rook")


def test_castling_needs_empty_squares_and_rights() -> None:
    assert [m for m in rolled("r3k2r/8/8/8/8/8/8/RN2K1NR w KQkq - 0 1", 6)
            if m in ("e1g1", "e1c1")] == []
    assert [m for m in rolled("r3k2r/8/8/8/8/8/8/R3K2R w Kkq - 0 1", 6)
            if m in ("e1g1", "e1c1")] == ["e1g1"]


def test_castling_rights_are_lost_by_king_and_rook_moves_and_captures() -> None:
    s = state(CASTLE)
    play(s, "d4", "h1h8")  # takes the h8 rook: White loses K, Black loses k
    assert s.to_text().split()[2] == "Qq"
    s.undo()
    s.undo()
    play(s, "d6", "e1d1")
    assert s.to_text().split()[2] == "kq"
    s.undo()
    s.undo()
    play(s, "d4", "a1b1")
    assert s.to_text().split()[2] == "Kkq"


# ---- en passant ----
EP = "4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1"


def test_en_passant_only_on_a_one_the_very_next_turn() -> None:
    s = state(EP)
    play(s, "d1", "d7d5")
    assert s.to_text() == "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2"
    s.apply_action(1)
    assert moves(s) == ["e5d6", "e5e6"]
    play(s, "e5d6")
    assert s.piece_at(35) == "." and s.piece_at(43) == "P"
    s.undo()
    assert s.piece_at(35) == "p" and s.piece_at(36) == "P" and s.piece_at(43) == "."
    s.undo()  # the roll
    play(s, "d6", "e1e2", "d6", "e8e7", "d1")
    assert moves(s) == ["e5e6"]  # one turn later the chance is gone


def test_en_passant_square_only_when_a_pawn_can_take() -> None:
    s = state()
    play(s, "d1", "e2e4")
    assert s.to_text().split()[3] == "-"
    assert s.ep_square == -1
    # input FEN is normalised the same way
    assert state("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1").to_text().split()[3] == "-"
    assert state("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1").to_text().split()[3] == "e3"


def test_pass_forfeits_en_passant() -> None:
    s = state("4k3/8/8/3pP3/8/8/8/7K w - d6 0 2", nomove="pass")
    s.apply_action(2)  # no knight: the turn passes
    assert moves(s) == ["0000"]
    play(s, "0000")
    assert s.to_text() == "4k3/8/8/3pP3/8/8/8/7K b - - 1 2"


# ---- end of the game ----
def test_king_capture_wins() -> None:
    s = state("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1")
    play(s, "d4", "e7e8")
    assert s.is_terminal() and s.terminal_value() == 1.0
    assert s.legal_actions() == [] and s.chance_outcomes() == []
    with pytest.raises(IllegalActionError, match="over"):
        s.apply_action(1)
    s.undo()
    assert not s.is_terminal()
    b = state("4k3/8/8/8/8/8/4r3/4K3 b - - 0 1")
    play(b, "d4", "e2e1")
    assert b.terminal_value() == -1.0 and b.winner_colour() == 1


def test_promoting_capture_of_the_king_wins() -> None:
    for die, move in ((1, "e7d8q"), (2, "e7d8n"), (5, "e7d8q")):
        s = state("3k4/4P3/8/8/8/8/8/4K3 w - - 0 1")
        s.apply_action(die)
        play(s, move)
        assert s.terminal_value() == 1.0


def test_finished_game_reads_back_as_finished() -> None:
    s = state("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1")
    play(s, "d4", "e7e8")
    again = state(s.to_text())
    assert again.is_terminal() and again.terminal_value() == 1.0
    assert again.to_text() == s.to_text()


def test_draw_by_hundred_plies() -> None:
    s = state("4k3/8/8/8/8/8/8/R3K3 w - - 99 80")
    play(s, "d4", "a1a2")
    assert s.is_terminal() and s.terminal_value() == 0.0 and s.winner_colour() == 2
    s.undo()
    s.undo()
    s.set_fen("4k3/8/8/8/8/8/P7/R3K3 w - - 99 80")
    play(s, "d1", "a2a3")  # a pawn move resets the clock
    assert not s.is_terminal() and s.halfmove_clock == 0
    assert state("4k3/8/8/8/8/8/8/R3K3 w - - 100 80").terminal_value() == 0.0


def test_draw_by_threefold_repetition() -> None:
    s = state("4k1n1/8/8/8/8/8/8/4K1N1 w - - 0 1")
    cycle = ["d2", "g1f3", "d2", "g8f6", "d2", "f3g1", "d2", "f6g8"]
    play(s, *cycle)  # second occurrence
    assert not s.is_terminal()
    play(s, *cycle[:-1])
    assert not s.is_terminal()
    play(s, cycle[-1])  # third occurrence of the start position
    assert s.is_terminal() and s.terminal_value() == 0.0
    s.undo()
    assert not s.is_terminal()


def test_repetition_does_not_count_the_die_but_counts_the_side() -> None:
    s = state("4k1n1/8/8/8/8/8/8/4K1N1 w - - 0 1", nomove="pass")
    # passes repeat the position every two plies: third occurrence after four passes
    play(s, "d3", "0000", "d3", "0000", "d4", "0000")
    assert not s.is_terminal()
    play(s, "d5", "0000")
    assert s.is_terminal() and s.terminal_value() == 0.0


def test_draw_by_bare_kings() -> None:
    s = state("4k3/8/8/8/8/8/3r4/4K3 w - - 0 1")
    play(s, "d6", "e1d2")
    assert s.is_terminal() and s.terminal_value() == 0.0
    assert state("4k3/8/8/8/8/8/8/4K3 w - - 0 1").is_terminal()


# ---- the nomove options ----
def test_reroll_is_uniform_over_rollable_pieces() -> None:
    s = state("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    assert s.chance_outcomes() == [(1, 0.5), (6, 0.5)]
    with pytest.raises(IllegalActionError):
        s.apply_action(2)
    s = state("4k3/1P6/8/8/8/8/PP6/KN6 w - - 0 1")  # the king is boxed in
    assert [d for d, _ in s.chance_outcomes()] == [1, 2, 3, 4, 5]
    assert math.isclose(sum(p for _, p in s.chance_outcomes()), 1.0)


def test_reroll_with_nothing_movable_passes() -> None:
    s = state(FROZEN)
    assert s.move_counts() == [0] * 7
    assert s.chance_outcomes() == [(d, 1 / 6) for d in range(1, 7)]
    s.apply_action(4)
    assert s.legal_actions() == [0]
    play(s, "0000")
    assert s.to_text() == "7k/8/8/8/1p6/pPp5/PRP5/KB6 b - - 1 1"
    assert s.ply == 1


@pytest.mark.parametrize("nomove", ["pass", "free"])
def test_pass_and_free_roll_every_die(nomove: str) -> None:
    s = state("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", nomove=nomove)
    assert s.chance_outcomes() == [(d, 1 / 6) for d in range(1, 7)]


def test_pass_option() -> None:
    s = state("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", nomove="pass")
    s.apply_action(3)
    assert s.legal_actions() == [0] and s.action_to_string(0) == "0000"
    play(s, "0000")
    assert s.current_player() == -1 and s.side_to_move == 1 and s.ply == 1
    assert s.history() == [3, 0]
    assert s.to_text() == "4k3/8/8/8/8/8/4P3/4K3 b - - 1 1"


def test_free_option_allows_any_piece() -> None:
    s = state("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", nomove="free")
    s.apply_action(3)
    assert moves(s) == ["e1d1", "e1d2", "e1f1", "e1f2", "e2e3", "e2e4"]
    s = state("4k3/1P6/8/8/8/8/PP6/KN6 w - - 0 1", nomove="free")
    s.apply_action(6)  # the boxed king cannot move: every piece may, promotions q r b n
    got = moves(s)
    assert {"b7b8q", "b7b8r", "b7b8b", "b7b8n", "b1c3", "a2a3"} <= set(got)
    assert len(got) == s.move_counts()[0]
    s = state(FROZEN, nomove="free")
    s.apply_action(1)
    assert s.legal_actions() == [0]


# ---- counters, history, hash ----
def test_counters_history_and_ply() -> None:
    s = state()
    play(s, "d2", "g1f3", "d1", "e7e5")
    assert s.ply == 2 and s.history_length == 4
    assert s.to_text() == "rnbqkbnr/pppp1ppp/8/4p3/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 0 2"
    assert s.hash == s.recompute_hash()
    assert s.fullmove_number == 2
    s.apply_action(2)
    assert s.pending_die == 2 and s.current_player() == 0
    assert s.to_text().endswith(" w KQkq - 0 2 N")


def test_hash_covers_the_die() -> None:
    s = state()
    h = s.hash
    s.apply_action(1)
    h1 = s.hash
    s.undo()
    s.apply_action(2)
    assert len({h, h1, s.hash}) == 3
    assert s.hash == s.recompute_hash()


# ---- notation ----
@pytest.mark.parametrize("text", [
    START,
    KIWIPETE,
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    KIWIPETE[:-4] + " 0 1 Q",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 12 40 p",
])
def test_fen_and_dfen_round_trip(text: str) -> None:
    s = state(text)
    assert s.to_text() == text
    assert state(s.to_text()).snapshot() == s.snapshot()


def test_dfen_dash_is_a_chance_node() -> None:
    s = state(START + " -")
    assert s.is_chance_node() and s.to_text() == START


def test_dfen_die_gives_a_player_node() -> None:
    s = state(START + " N")
    assert s.current_player() == 0 and s.pending_die == 2
    assert moves(s) == ["b1a3", "b1c3", "g1f3", "g1h3"]


def test_die_notation() -> None:
    s = state()
    assert s.action_to_string(3) == "d3"
    for text in ("d1", "1", "p", "P", " D1 "):
        assert s.string_to_action(text) == 1
    assert s.string_to_action("k") == 6
    for bad in ("d7", "0", "x", "dd", "", "e2e4"):
        with pytest.raises(NotationError):
            s.string_to_action(bad)
    with pytest.raises(NotationError):
        s.action_to_string(7)


def test_move_notation_round_trip() -> None:
    assert parse_uci("e2e4") == 12 | (28 << 6)
    assert parse_uci("e7e8q") == 52 | (60 << 6) | (4 << 12)
    assert parse_uci("a2a1n") == 8 | (0 << 6) | (1 << 12)
    assert parse_uci("0000") == 0
    for a in range(1, 5 << 12):
        try:
            text = dicechess.move_to_uci(a)
        except NotationError:
            continue
        assert parse_uci(text) == a


@pytest.mark.parametrize("bad", [
    "e2", "e2e4e", "e2e9", "i2i4", "e2e2", "e7e8k", "e7e8p", "e7e8x", "0-0", "", "00000",
])
def test_malformed_moves(bad: str) -> None:
    s = state(START + " P")
    before = s.snapshot()
    with pytest.raises(NotationError):
        s.apply_move(bad)
    assert s.snapshot() == before


@pytest.mark.parametrize("bad", ["e2e5", "g1f3", "e1g1", "0000", "e7e5", "d2d4q"])
def test_illegal_moves(bad: str) -> None:
    s = state(START + " P")
    before = s.snapshot()
    with pytest.raises(IllegalActionError):
        s.apply_move(bad)
    assert s.snapshot() == before


def test_illegal_actions_and_outcomes() -> None:
    s = state()
    before = s.snapshot()
    for bad in (0, 3, 6, 7, -1, 12 | (28 << 6)):
        with pytest.raises(IllegalActionError):
            s.apply_action(bad)
        assert s.snapshot() == before
    s.apply_action(1)
    before = s.snapshot()
    for bad in (0, 1, 2, 1 | (18 << 6), 99999):
        with pytest.raises(IllegalActionError):
            s.apply_action(bad)
        assert s.snapshot() == before
    with pytest.raises(NotationError):
        s.action_to_string(12 | (12 << 6))


@pytest.mark.parametrize(("bad", "problem"), [
    ("", "fields"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0", "fields"),
    (START + " P extra", "fields"),
    ("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "7 ranks"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/8 w KQkq - 0 1", "9 ranks"),
    ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "bad piece letter '9'"),
    ("rnbqkbnr/pppppppp/53/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "two digits in a row"),
    ("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "covers 7"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNRR w KQkq - 0 1", "covers 9"),
    ("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "bad piece letter 'x'"),
    ("rnbqkbnr/pppp0ppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "bad piece letter '0'"),
    ("rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w - - 0 1", "both kings"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKKBNR w kq - 0 1", "2 kings"),
    ("rnbqkbnr/pppppppp/8/8/8/P7/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "pieces"),
    ("4k3/8/8/8/8/QQ6/PPPP4/QQQQKQQQ w - - 0 1", "promoted"),
    ("Pnbqkbnr/pppppppp/8/8/8/8/1PPPPPPP/RNBQKBNR w KQk - 0 1", "pawn on a8"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1", "side to move"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQxq - 0 1", "bad letter 'x'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKkq - 0 1", "twice"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w kqKQ - 0 1", "order"),
    ("rnbqkbn1/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "castling right 'k'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w KQkq - 0 1", "castling right 'K'"),
    (START.replace(" - 0 1", " e9 0 1"), "en passant field"),
    (START.replace(" - 0 1", " e4 0 1"), "rank 6"),
    (START.replace(" - 0 1", " e6 0 1"), "no pawn just made a double step"),
    (START.replace(" 0 1", " x 1"), "counters"),
    (START.replace(" 0 1", " -1 1"), "halfmove"),
    (START.replace(" 0 1", " 0 0"), "fullmove"),
    (START.replace(" 0 1", " 0 1.5"), "counters"),
    (START + " p", "upper"),
    (START + " X", "die field"),
    (START + " Pn", "die field"),
    (START + " Q", "cannot move is never rolled"),
    ("4k3/4R3/8/8/8/8/8/4K3 b - - 0 1 p", "never rolled"),
    ("8/4R3/8/8/8/8/8/4K3 b - - 0 1 p", "king is missing"),
])
def test_bad_fen_is_rejected_clearly(bad: str, problem: str) -> None:
    s = state(KIWIPETE)
    s.apply_action(2)
    before = s.snapshot()
    with pytest.raises(NotationError, match=problem):
        s.set_fen(bad)
    assert s.snapshot() == before
    with pytest.raises(NotationError, match=problem):
        make_game("dicechess").state_from_text(bad)


def test_bad_die_for_the_options() -> None:
    # a die with no move is a legal DFEN under pass and free, and leads to the pass / any move
    assert state(START + " Q", nomove="pass").legal_actions() == [0]
    assert len(state(START + " Q", nomove="free").legal_actions()) == 20


def test_bad_constructor_arguments() -> None:
    with pytest.raises(ValueError, match="nomove"):
        DiceChessState(None, "sometimes")
    with pytest.raises(ValueError, match="castle"):
        DiceChessState(None, "reroll", "queen")


# ---- rendering, encoding, symmetry ----
def test_str_renders_the_board() -> None:
    text = str(state(START + " N"))
    assert text.splitlines()[0] == "8 r n b q k b n r"
    assert "White to move a knight (rolled 2)" in text
    s = state("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1")
    play(s, "d4", "e7e8")
    assert "White wins" in str(s)


def test_encoding_planes() -> None:
    s = state(KIWIPETE)
    s.apply_action(5)
    planes = s.encode()
    assert planes.shape == (24, 8, 8)
    assert planes[5, 0, 4] == 1.0 and planes[11, 7, 4] == 1.0   # kings e1, e8
    assert planes[0, 1].tolist() == [1, 1, 1, 0, 0, 1, 1, 1]     # White pawns, rank 2
    assert planes[12].all() and planes[13:17].all()
    assert not planes[17].any()
    assert planes[22].all() and planes[18:22].sum() == 0 and not planes[23].any()
    flipped = s.encode(symmetry=1)
    assert np.array_equal(flipped[6:12], planes[0:6, ::-1])
    assert np.array_equal(flipped[0:6], planes[6:12, ::-1])
    assert not flipped[12].any()
    assert np.array_equal(flipped[18:24], planes[18:24])


def test_colour_flip_symmetry_maps_moves_to_the_mirrored_position() -> None:
    fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w Kq - 0 1"
    mirrored = "r3k2r/pppbbppp/2n2q1P/1P2p3/3pn3/BN2PNP1/P1PPQPB1/R3K2R b Qk - 0 1"
    for die in range(1, 7):
        s = state(fen + " " + "PNBRQK"[die - 1])
        m = state(mirrored + " " + "pnbrqk"[die - 1])
        assert sorted(s.symmetry_action(a, 1) for a in s.legal_actions()) == m.legal_actions()
        assert np.array_equal(s.encode(symmetry=1), m.encode())
    assert state().symmetry_action(3, 1) == 3  # a die outcome is its own image


# ---- perft helpers ----
def test_perft_basics() -> None:
    s = state()
    assert dicechess.perft(s, 0) == 1
    assert dicechess.perft(s, 1) == 20
    assert dicechess.perft_per_die(s, 2) == {1: 320, 2: 80}
    s.apply_action(2)
    assert dicechess.perft(s, 1) == 4
    with pytest.raises(ValueError):
        dicechess.perft_per_die(s, 1)
    with pytest.raises(ValueError):
        dicechess.perft(s, -1)


def test_perft_leaves_the_state_unchanged() -> None:
    s = state(KIWIPETE)
    before = s.snapshot()
    dicechess.perft(s, 3)
    assert s.snapshot() == before
