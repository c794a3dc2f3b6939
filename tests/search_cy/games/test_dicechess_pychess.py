"""Differential tests of the dice chess kernel against python-chess.

The reference (tools/gen_dicechess_perft.py) is python-chess's pseudo-legal move
generator filtered by the rolled piece type, adjusted only where RULES.md differs
(castling ignores attacked squares, promotion to the rolled piece on rolls 2..5, never
to a king, castling on a 4 with castle=king-or-rook), plus the nomove options and the
end-of-game rules. Random games are played through our kernel with a seeded generator
while a python-chess board follows them move by move.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import chess  # noqa: E402
import numpy as np
import pytest

from descent.search_cy.games import dicechess
from descent.search_cy.games.dicechess import DiceChessState
from descent.search_cy.games.registry import make_game
from descent.tools import dicechess_reference as ref  # noqa: E402
from tests.conftest import random_action
from tests.helpers import gen_dicechess_perft as data  # noqa: E402

SPECS = [
    ("reroll", "king"),
    ("pass", "king"),
    ("free", "king"),
    ("reroll", "king-or-rook"),
    ("free", "king-or-rook"),
]
GAMES_PER_SPEC = 40
MAX_PLIES = 320  # player moves per game: long enough for the 100-ply and repetition draws


def _state(fen: str, nomove: str = "reroll", castle: str = "king") -> DiceChessState:
    s = make_game(f"dicechess(nomove={nomove},castle={castle})").state_from_text(fen)
    assert isinstance(s, DiceChessState)
    return s


def _ucis(state: DiceChessState, actions: list[int]) -> list[str]:
    return sorted(dicechess.move_to_uci(a) for a in actions)


def _fen_fields(board: Any) -> str:
    """python-chess's FEN with the en passant square written as the kernel writes it."""
    return str(board.fen(en_passant="xfen"))


def _check_symmetry(state: DiceChessState, board: Any) -> None:
    """Colour flip: the mirrored position has the mirrored moves and the flipped planes."""
    mirror = board.mirror()
    letter = "PNBRQK"[state.pending_die - 1]
    image = _state(_fen_fields(mirror) + " " + (letter.lower() if mirror.turn == chess.BLACK
                                                else letter), state.nomove, state.castle)
    assert sorted(state.symmetry_action(a, 1) for a in state.legal_actions()) == \
        image.legal_actions()
    assert np.array_equal(state.encode(symmetry=1), image.encode())


@pytest.mark.parametrize(("nomove", "castle"), SPECS)
def test_random_games_match_python_chess(nomove: str, castle: str) -> None:
    rng = random.Random(f"dicechess-{nomove}-{castle}")
    positions = 0
    for _ in range(GAMES_PER_SPEC):
        state = _state(dicechess.START_FEN, nomove, castle)
        board = chess.Board()
        keys = [ref.position_key(board)]
        while not state.is_terminal() and state.ply < MAX_PLIES:
            assert state.is_chance_node()
            assert state.to_text() == _fen_fields(board)
            by_die = ref.moves_by_die(board, castle)
            positions += 1
            # every die, whether it can be rolled or not: the piece-type filter
            for die in range(1, 7):
                assert _ucis(state, state.moves_for_die(die)) == \
                    sorted(m.uci() for m in by_die[die]), (board.fen(), die)
            counts = state.move_counts()
            assert counts[1:] == [len(by_die[d]) for d in range(1, 7)]
            assert counts[0] == len(by_die[0])
            outcomes = state.chance_outcomes()
            expected = ref.outcomes(by_die, nomove)
            assert [d for d, _ in outcomes] == expected
            assert all(p == pytest.approx(1 / len(expected)) for _, p in outcomes)
            die = random_action(state, rng)
            state.apply_action(die)
            legal = state.legal_actions()
            assert _ucis(state, legal) == sorted(
                ref.uci(m) for m in ref.player_moves(by_die, die, nomove)), (board.fen(), die)
            if positions % 9 == 0:
                _check_symmetry(state, board)
            action = rng.choice(legal)
            state.apply_action(action)
            board.push(chess.Move.from_uci(dicechess.move_to_uci(action)) if action
                       else chess.Move.null())
            keys.append(ref.position_key(board))
            assert state.is_terminal() == ref.is_over(board, keys), board.fen()
            assert state.hash == state.recompute_hash()
        if state.is_terminal():
            if board.king(chess.WHITE) is None:
                assert state.terminal_value() == -1.0
            elif board.king(chess.BLACK) is None:
                assert state.terminal_value() == 1.0
            else:
                assert state.terminal_value() == 0.0
    assert positions >= 2500


def test_random_games_end_in_every_way() -> None:
    """Random games reach king captures, repetitions and the 100-ply rule (bare kings
    are rarer: test_dicechess.py builds them)."""
    ends: dict[str, int] = defaultdict(int)
    rng = random.Random(99)
    starts = [(dicechess.START_FEN, "reroll"), (dicechess.START_FEN, "pass"),
              ("r3k3/8/8/8/8/8/8/R3K3 w Qq - 0 1", "reroll")]
    for fen, nomove in starts:
        for _ in range(80):
            state = _state(fen, nomove)
            while not state.is_terminal():
                state.apply_action(random_action(state, rng))
            fields = state.to_text().split()
            if state.terminal_value() != 0.0:
                ends["king captured"] += 1
            elif int(fields[4]) >= 100:
                ends["100 plies"] += 1
            elif fields[0].lower().replace("k", "").strip("/12345678") == "":
                ends["bare kings"] += 1
            else:
                ends["repetition"] += 1
    assert {"king captured", "100 plies", "repetition"} <= set(ends), dict(ends)


def _data_groups() -> dict[tuple[str, str, int, str], dict[int, int]]:
    groups: dict[tuple[str, str, int, str], dict[int, int]] = defaultdict(dict)
    for nomove, castle, depth, die, leaves, fen in data.read_data():
        groups[(nomove, castle, depth, fen)][die] = leaves
    return groups


def test_perft_data_file_covers_options_and_positions() -> None:
    groups = _data_groups()
    assert {(n, c) for n, c, _, _ in groups} == {
        (n, c) for n in ref.NOMOVE_MODES for c in ref.CASTLE_MODES}
    assert {fen for *_, fen in groups} == {fen for _, fen in data.POSITIONS}
    assert max(d for _, _, d, _ in groups) >= 5


def test_perft_per_die_matches_data_file() -> None:
    for (nomove, castle, depth, fen), per_die in _data_groups().items():
        state = _state(fen, nomove, castle)
        assert dicechess.perft_per_die(state, depth) == per_die, (nomove, castle, depth, fen)
        assert dicechess.perft(state, depth) == sum(per_die.values())


def test_data_file_matches_live_reference_at_small_depths() -> None:
    for (nomove, castle, depth, fen), per_die in _data_groups().items():
        if depth <= 2:
            assert ref.reference_perft_per_die(fen, depth, nomove, castle) == per_die


@pytest.mark.parametrize("fen", [fen for _, fen in data.POSITIONS])
def test_perft_from_player_nodes_matches_reference(fen: str) -> None:
    """perft from each die's player node (the die pending) = the reference's entry."""
    state = _state(fen)
    expected = ref.reference_perft_per_die(fen, 2)
    for die, leaves in expected.items():
        state.apply_action(die)
        assert dicechess.perft(state, 2) == leaves
        state.undo()


def test_tricky_positions_moves_per_die() -> None:
    """Kiwipete, en passant and promotion positions: every die, both castle options."""
    for _, fen in data.POSITIONS:
        board = chess.Board(fen)
        for castle in ref.CASTLE_MODES:
            by_die = ref.moves_by_die(board, castle)
            state = _state(fen, castle=castle)
            for die in range(1, 7):
                assert _ucis(state, state.moves_for_die(die)) == \
                    sorted(m.uci() for m in by_die[die]), (fen, castle, die)
