"""Game records: SGF (Hex, HexGui's notation and swap convention), PGN with roll comments
(dice chess, SAN from our kernel), the EinStein text record; every writer's output read
back and replayed through the kernels."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from descent.search_cy.games.registry import make_game
from descent.tools import records
from descent.tools.referee import GameRecord
from tests.conftest import random_action

SPECS = ["hex(size=2,swap=true)", "hex(size=5,swap=true)", "hex(size=11,swap=false)",
         "einstein(setup=random,first=red,merge_dice=false)",
         "einstein(setup=mirror,first=blue,merge_dice=false)",
         "einstein(setup=free,first=red,merge_dice=false)",
         "dicechess(nomove=reroll,castle=king)", "dicechess(nomove=pass,castle=king)",
         "dicechess(nomove=free,castle=king-or-rook)"]


def random_record(spec: str, seed: int, max_steps: int = 600) -> GameRecord:
    game = make_game(spec)
    state = game.new_initial_state()
    rng = random.Random(seed)
    moves: list[str] = []
    while not state.is_terminal() and len(moves) < max_steps:
        action = random_action(state, rng)
        moves.append(state.action_to_string(action))
        state.apply_action(action)
    winner = None
    if state.is_terminal():
        value = state.terminal_value()
        winner = 0 if value > 0 else (1 if value < 0 else None)
    return GameRecord(game.spec, "Alpha [1]", 'Beta "2"', winner,
                      "normal" if state.is_terminal() else "ply cap", moves, seed=seed)


@pytest.mark.parametrize("spec", SPECS)
def test_every_record_reads_back_to_the_same_moves_and_result(spec: str) -> None:
    for seed in range(12):
        record = random_record(spec, seed)
        ext, text = records.record_text(record)
        parsed = records.READERS[ext](text)
        assert parsed.game == record.game
        assert parsed.moves == record.moves
        assert (parsed.first, parsed.second) == (record.first, record.second)
        assert parsed.winner == record.winner
        final = records.replay(parsed.game, parsed.moves)
        assert final.is_terminal() == (record.reason == "normal")


def test_write_and_read_record_files(tmp_path: Path) -> None:
    for spec, ext in (("hex(size=4)", "sgf"), ("einstein", "txt"), ("dicechess", "pgn")):
        record = random_record(spec, 1)
        path = records.write_record(record, tmp_path / "sub" / f"game-{spec[:3]}")
        assert path.suffix == "." + ext and path.is_file()
        assert records.read_record(path).moves == record.moves
    with pytest.raises(ValueError, match="unknown record type"):
        records.read_record(tmp_path / "game.xyz")


# -- Hex SGF ---------------------------------------------------------------------------------

def test_hex_sgf_is_written_as_hexgui_writes_it() -> None:
    record = GameRecord("hex(size=3,swap=false)", "me", "you", 0, "normal",
                        ["b2", "a1", "b1", "c1", "b3"])
    sgf = records.hex_sgf(record, date="2024.05.01")
    assert sgf.startswith("(;FF[4]AP[descent]GM[11]SZ[3]")
    assert "PB[me]PW[you]RE[B+]" in sgf
    assert sgf.rstrip().endswith(";B[b2];W[a1];B[b1];W[c1];B[b3])")


def test_swap_is_written_in_the_mohex_convention() -> None:
    """The kernel's canonical swap (Black's c2 -> White's b3, Black moves) is HexGui's
    swap-pieces (the board stays, the first mover continues as White), so every later move
    is written with the other colour and the transposed cell."""
    record = GameRecord("hex(size=3,swap=true)", "first", "second", 0, "resign",
                        ["c2", "swap", "b1"])
    sgf = records.hex_sgf(record)
    assert ";B[c2];W[swap-pieces];W[a2];B[resign])" in sgf
    # after the swap the first mover holds White: the names and the result say so
    assert "PB[second]PW[first]RE[W+R]" in sgf
    parsed = records.read_hex_sgf(sgf)
    assert parsed.moves == ["c2", "swap", "b1"]
    assert (parsed.first, parsed.second, parsed.winner) == ("first", "second", 0)
    assert parsed.reason == "resign"


def test_reads_an_sgf_as_hexgui_saves_it() -> None:
    text = ("(;FF[4]AP[HexGui:0.10.GIT]GM[11]SZ[4]\n"
            ";B[b2];W[swap-pieces];W[d3]C[a comment \\] with a bracket]\n"
            "(;B[a2];W[d4])(;B[d1]))\n")
    parsed = records.read_hex_sgf(text)
    assert parsed.game == "hex(size=4,swap=true)"
    # the main line runs through the first variation; after swap-pieces each move is the
    # kernel's move of the other colour on the transposed cell (d3 -> c4, a2 -> b1)
    assert parsed.moves == ["b2", "swap", "c4", "b1", "d4"]
    assert not parsed.finished


def test_sgf_reader_rejects_bad_games() -> None:
    with pytest.raises(ValueError, match="not Hex"):
        records.read_hex_sgf("(;FF[4]GM[1]SZ[19];B[dd])")
    with pytest.raises(ValueError, match="out of turn"):
        records.read_hex_sgf("(;FF[4]GM[11]SZ[3];B[a1];B[b1])")
    with pytest.raises(ValueError, match="not legal"):
        records.read_hex_sgf("(;FF[4]GM[11]SZ[3];B[a1];W[a1])")
    with pytest.raises(ValueError, match="no game tree"):
        records.read_hex_sgf("nothing here")


# -- dice chess PGN ---------------------------------------------------------------------------

@pytest.mark.parametrize(("fen", "uci", "expected"), [
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 K", "e1g1", "O-O"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 K", "e1c1", "O-O-O"),
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1 N", "b7b8n", "b8=N"),
    ("2n1k3/1P6/8/8/8/8/8/4K3 w - - 0 1 P", "b7c8q", "bxc8=Q"),
    ("k7/8/8/8/8/8/8/1N1K1N2 w - - 0 1 N", "b1d2", "Nbd2"),
    ("k7/8/8/8/8/8/8/1N1K1N2 w - - 0 1 N", "f1d2", "Nfd2"),
    ("k7/R7/8/8/8/8/8/R3K3 w - - 0 1 R", "a1a4", "R1a4"),
    ("k7/R7/8/8/8/8/8/R3K3 w - - 0 1 R", "a7a4", "R7a4"),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1 P", "e5d6", "exd6"),
    ("4k3/8/8/4p3/8/5N2/8/4K3 w - - 0 1 N", "f3e5", "Nxe5"),
    ("4k3/8/8/8/8/8/8/4K2q w - - 0 1 K", "e1f1", "Kf1"),
])
def test_san_from_the_kernel(fen: str, uci: str, expected: str) -> None:
    state = make_game("dicechess").state_from_text(fen)
    action = state.string_to_action(uci)
    assert action in state.legal_actions()
    assert records.san(state, action) == expected


def test_pass_is_written_as_a_null_move() -> None:
    state = make_game("dicechess(nomove=pass)").state_from_text(
        "k7/8/8/8/8/8/P7/K7 w - - 0 1 N")
    [action] = state.legal_actions()
    assert records.san(state, action) == "--"


def test_pgn_has_roll_comments_and_reads_back() -> None:
    record = GameRecord("dicechess", "White engine", "Black engine", None, "ply cap",
                        ["d1", "e2e4", "d2", "g8f6", "d5", "d1h5", "d2", "f6h5"], seed=7)
    pgn = records.dicechess_pgn(record, date="2024.05.01", round_="3")
    assert '[Variant "Dice Chess"]' in pgn and '[Result "1/2-1/2"]' in pgn
    assert '[White "White engine"]' in pgn and '[Round "3"]' in pgn
    assert ("1. {[%roll 1]} e4 {[%roll 2]} 1... Nf6 2. {[%roll 5]} Qh5 {[%roll 2]} "
            "2... Nxh5 1/2-1/2") in " ".join(pgn.split())
    assert records.read_dicechess_pgn(pgn).moves == record.moves


def test_pgn_reader_takes_uci_moves_and_rejects_wrong_rolls() -> None:
    text = '[Variant "Dice Chess"]\n\n1. {[%roll 1]} e2e4 {[%roll 2]} g8f6 *\n'
    parsed = records.read_dicechess_pgn(text)
    assert parsed.moves == ["d1", "e2e4", "d2", "g8f6"] and not parsed.finished
    with pytest.raises(ValueError, match="not legal"):
        records.read_dicechess_pgn("1. {[%roll 2]} e4 *")
    with pytest.raises(ValueError, match="without a roll"):
        records.read_dicechess_pgn("1. e4 *")


# -- EinStein text ----------------------------------------------------------------------------

def test_einstein_text_record_lines() -> None:
    record = GameRecord("einstein", "R", "B", None, "crash",
                        ["a1 c1 a2 b2 a3 b1", "d4 d5 e4 e5 c5 e3", "d5", "a3a4", "d1", "d4d3"],
                        detail="B exited")
    text = records.einstein_text(record, date="2024.05.01")
    body = [line for line in text.splitlines() if line and not line.startswith("[")]
    assert body == ["setup red a1 c1 a2 b2 a3 b1", "setup blue d4 d5 e4 e5 c5 e3",
                    "d5 red a3a4", "d1 blue d4d3"]
    assert '[Termination "crash"]' in text and '[Detail "B exited"]' in text
    parsed = records.read_einstein_text(text)
    assert parsed.moves == record.moves and not parsed.finished


def test_einstein_reader_checks_turns_and_moves() -> None:
    head = '[Game "einstein"]\nsetup red a1 c1 a2 b2 a3 b1\nsetup blue d4 d5 e4 e5 c5 e3\n'
    with pytest.raises(ValueError, match="not blue's turn"):
        records.read_einstein_text(head + "d5 blue a3a4\n")
    with pytest.raises(ValueError, match="not legal"):
        records.read_einstein_text(head + "d5 red a1a2\n")
    with pytest.raises(ValueError, match="malformed"):
        records.read_einstein_text(head + "d5 red\n")


def test_replay_names_the_first_bad_move() -> None:
    with pytest.raises(ValueError, match="move 2 'a1'"):
        records.replay("hex(size=3)", ["a1", "a1"])


def test_python_chess_reads_the_dice_chess_pgn_back() -> None:
    """``chess.pgn.read_game`` failed on them ("unsupported variant: Dice Chess", then
    moves that standard chess forbids); with the package's board registered it reads
    every move and ends on the kernel's position."""
    import io
    import random

    import chess.pgn

    import descent.tools.dicechess_client  # noqa: F401  (registers the variant)
    from descent.search_cy.games.registry import make_game

    for seed in range(6):
        rng = random.Random(seed)
        state = make_game("dicechess").new_initial_state()
        moves, player_moves = [], 0
        while not state.is_terminal() and player_moves < 400:
            if state.is_chance_node():
                outcomes = [a for a, _ in state.chance_outcomes()]
                action = rng.choice(outcomes)
            else:
                action = rng.choice(state.legal_actions())
                player_moves += 1
            moves.append(state.action_to_string(action))
            state.apply_action(action)
        value = state.terminal_value() if state.is_terminal() else 0.0
        record = {"game": "dicechess", "first": "a", "second": "b", "seed": seed,
                  "winner": None if value == 0 else (0 if value > 0 else 1),
                  "reason": "normal" if state.is_terminal() else "ply cap", "moves": moves}
        game = chess.pgn.read_game(io.StringIO(records.dicechess_pgn(record)))
        assert game is not None and not game.errors, (seed, game.errors if game else None)
        assert len(list(game.mainline_moves())) == player_moves
        final = game.end().board()
        assert final.board_fen() == state.to_text().split()[0], seed
