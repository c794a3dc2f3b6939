"""Dice chess over UCI (protocols/uci.py): golden transcripts against the real process,
urgent lines during a search, python-chess's engine client driving it, the helpers that
put the dice back into UCI move lists, a hypothesis fuzz, and the independent random bot."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import chess.engine
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from descent.engine.engine import Engine
from descent.engine.settings import Settings
from descent.protocols.base import ProtocolError
from descent.protocols.uci import (
    SCORE_SCALE,
    UciProtocol,
    expand_moves,
    moves_only,
    parse_go,
    roll_for_move,
    score_cp,
)
from descent.search_cy.games.dicechess import DiceChessState
from descent.search_cy.games.registry import make_game
from descent.tools.dicechess_reference import moves_by_die
from tests.helpers.bots.dicechess_random_uci import RandomDiceChessBot
from tests.helpers.regen_transcripts_uci import (
    BASE_ARGS,
    ROOT,
    TRANSCRIPT_DIR,
    UciSession,
    parse,
    run_transcript,
)

ENGINE_CMD = [sys.executable, *BASE_ARGS]
MOVE = r"(?:[a-h][1-8][a-h][1-8][nbrq]?|0000)"
UCI_LINE = re.compile(
    r"^(?:id (?:name|author) .+|option name .+ type (?:spin|combo) default .+|uciok|readyok"
    r"|info string .*"
    rf"|info depth \d+ nodes \d+ nps \d+ time \d+ score cp -?\d+(?: pv(?: {MOVE})+)?"
    rf"|bestmove {MOVE})$")


def dice_state(spec: str = "dicechess", fen: str | None = None) -> DiceChessState:
    game = make_game(spec)
    state = game.new_initial_state() if fen is None else game.state_from_text(fen)
    assert isinstance(state, DiceChessState)
    return state


# -- golden transcripts ------------------------------------------------------------------

TRANSCRIPTS = sorted(TRANSCRIPT_DIR.glob("*.txt"))


def test_transcripts_exist() -> None:
    assert {p.name for p in TRANSCRIPTS} >= {"handshake.txt", "game.txt", "errors.txt",
                                              "nomove_pass.txt"}


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_golden_transcript(path: Path) -> None:
    args, expected = parse(path.read_text(encoding="utf-8"))
    actual = run_transcript(args, [sent for sent, _ in expected])
    for (sent, want), (_, got) in zip(expected, actual, strict=True):
        assert got == want, f"{path.name}: after {sent!r}"
        assert all(UCI_LINE.match(line) for line in got), got


# -- the real process: urgent lines, stop, bestmove exactly once ---------------------------

@pytest.fixture
def session() -> Iterator[UciSession]:
    s = UciSession()
    try:
        yield s
    finally:
        s.close()


def drain(s: UciSession, until: str) -> list[str]:
    return s.read_until(until, timeout=30)


def legal_bestmove(line: str, state: DiceChessState) -> None:
    move = line.split()[1]
    assert state.string_to_action(move) in state.legal_actions(), (line, state.to_text())


def test_isready_during_a_long_search_is_answered_at_once(session: UciSession) -> None:
    session.send("position startpos moves e2e4")
    session.send("go dice 2 nodes 2000000000")
    session.send("isready")
    assert session.read_line(timeout=30) == "readyok"   # no info line comes before the end
    session.send("stop")
    out = drain(session, "bestmove")
    assert len(out) == 2 and out[0].startswith("info depth ")
    state = dice_state()
    for token in ("d1", "e2e4", "d2"):
        state.apply_move(token)
    legal_bestmove(out[1], state)
    session.send("isready")
    assert drain(session, "readyok") == ["readyok"]    # the bestmove came once
    session.send("quit")
    assert drain(session, "") == []


def test_go_infinite_then_stop_at_once_gives_one_bestmove(session: UciSession) -> None:
    # stop right behind go: it must wait for the go to start, not overtake it
    session.send("position startpos\ngo dice 1 infinite\nstop")
    out = drain(session, "bestmove")
    assert all(line.startswith("info depth ") for line in out[:-1])
    session.send("isready")
    assert drain(session, "readyok") == ["readyok"]


def test_go_infinite_holds_its_bestmove_until_stop(session: UciSession) -> None:
    # the queen takes the king: the search is resolved at once, but UCI wants the bestmove
    # only after stop
    session.send("position fen 7k/6Q1/8/8/8/8/8/K7 w - - 0 1")
    session.send("go dice 5 infinite")
    session.send("isready")
    first = drain(session, "readyok")
    time.sleep(0.3)
    session.send("isready")
    second = drain(session, "readyok")
    assert not any(line.startswith("bestmove") for line in first + second)
    session.send("stop")
    assert drain(session, "bestmove") == ["bestmove g7h8"]
    session.send("isready")
    assert drain(session, "readyok") == ["readyok"]


def test_position_during_a_search_stops_it_and_keeps_its_bestmove(session: UciSession) -> None:
    session.send("position startpos")
    session.send("go dice 1 infinite")
    session.send("position startpos moves e2e4")
    out = drain(session, "bestmove")
    assert out[-1].startswith("bestmove ")
    session.send("go dice 1 nodes 300")
    assert drain(session, "bestmove")[-1].startswith("bestmove ")


def test_eof_ends_the_process() -> None:
    s = UciSession()
    try:
        assert s.proc.stdin is not None
        s.send("position startpos")
        s.send("go dice 1 infinite")
        s.proc.stdin.close()
        out = s.read_until("")
        assert [line for line in out if line.startswith("bestmove")] == [out[-1]]
        assert s.proc.wait(30) == 0
    finally:
        s.close()


# -- python-chess's engine client ----------------------------------------------------------

class DiceBoard(chess.Board):
    """python-chess board with dice-chess legality (every pseudo-legal move of any roll,
    castling without the attacked-square test), so that the client accepts the moves."""

    uci_variant = "dicechess"

    def is_legal(self, move: chess.Move) -> bool:
        return move in moves_by_die(self)[0]


class DiceUciProtocol(chess.engine.UciProtocol):
    """python-chess's UCI client, with the roll added to every ``go``."""

    die = 1

    def send_line(self, line: str) -> None:
        if line.startswith("go"):
            line = f"go dice {self.die}{line[2:]}"
        super().send_line(line)


def test_python_chess_handshake_configure_and_ping() -> None:
    with chess.engine.SimpleEngine.popen_uci(ENGINE_CMD, cwd=ROOT, timeout=30) as engine:
        assert engine.id["name"].startswith("descent ")
        options = engine.options
        assert options["UCI_Variant"].var == ["dicechess", "chess"]
        assert options["NoMoveRule"].var == ["reroll", "pass", "free"]
        assert options["CastleRule"].var == ["king", "king-or-rook"]
        assert options["Strength"].default == "maximum"
        assert "expert" in (options["Strength"].var or [])
        assert options["SearchAlgorithm"].var == ["expectiminimax", "descent", "ubfms", "mcts"]
        assert options["Hash"].type == "spin" and options["Move Overhead"].type == "spin"
        engine.configure({"NoMoveRule": "pass", "CastleRule": "king-or-rook", "Hash": 8,
                          "Strength": "expert", "Seed": 3, "Move Overhead": 10,
                          "SearchAlgorithm": "expectiminimax", "Threads": 1})
        engine.ping()     # isready -> readyok after the options
        with pytest.raises(chess.engine.EngineError):
            engine.configure({"NoMoveRule": "sometimes"})   # python-chess checks the combo


def test_python_chess_plays_a_few_moves_with_dice() -> None:
    transport = chess.engine.SimpleEngine.popen(DiceUciProtocol, ENGINE_CMD, cwd=ROOT,
                                                timeout=30)
    protocol = transport.protocol
    assert isinstance(protocol, DiceUciProtocol)
    board = DiceBoard()
    kernel = dice_state()
    rng = random.Random(5)
    try:
        transport.configure({"Hash": 8})
        for _ in range(8):
            outcomes = [d for d, _ in kernel.chance_outcomes()]
            die = rng.choice(outcomes)
            kernel.apply_action(die)
            protocol.die = die
            result = transport.play(board, chess.engine.Limit(time=0.05, nodes=300),
                                    info=chess.engine.INFO_ALL)
            move = result.move.uci() if result.move else "0000"
            assert kernel.string_to_action(move) in kernel.legal_actions()
            assert "score" in result.info and "pv" in result.info
            kernel.apply_move(move)
            board.push(result.move or chess.Move.null())
            if kernel.is_terminal():
                break
    finally:
        transport.quit()


def test_python_chess_plays_with_the_package_helper_and_no_subclass() -> None:
    """A plain python-chess client: the roll goes in the ``Roll`` option (no protocol
    subclass), the board is the package's DiceBoard."""
    from descent.tools.dicechess_client import DiceBoard as PackagedBoard
    from descent.tools.dicechess_client import analyse, play

    kernel = dice_state()
    board = PackagedBoard()
    rng = random.Random(11)
    with chess.engine.SimpleEngine.popen_uci(ENGINE_CMD, cwd=ROOT, timeout=30) as engine:
        engine.configure({"Hash": 8})
        for _ in range(10):
            roll = rng.choice([d for d, _ in kernel.chance_outcomes()])
            kernel.apply_action(roll)
            result = play(engine, board, roll, chess.engine.Limit(nodes=300))
            move = result.move.uci() if result.move else "0000"
            assert kernel.string_to_action(move) in kernel.legal_actions(), (roll, move)
            kernel.apply_move(move)
            board.push(result.move or chess.Move.null())
            if kernel.is_terminal():
                break
        if not kernel.is_terminal():
            roll = next(d for d, _ in kernel.chance_outcomes())
            info = analyse(engine, board, roll, chess.engine.Limit(nodes=200))
            assert "score" in info


def test_python_chess_with_a_plain_board_sends_the_chess_variant() -> None:
    """``chess.Board()`` makes python-chess send ``UCI_Variant chess``: it was refused."""
    with chess.engine.SimpleEngine.popen_uci(ENGINE_CMD, cwd=ROOT, timeout=30) as engine:
        assert "chess" in (engine.options["UCI_Variant"].var or [])
        board = chess.Board()
        result = engine.play(board, chess.engine.Limit(nodes=200), options={"Roll": 1})
        assert result.move is not None and board.piece_type_at(
            result.move.from_square) == chess.PAWN


def test_an_impossible_roll_is_an_error_on_stderr_too(tmp_path: Path) -> None:
    """python-chess shows the engine's stderr, not its info strings: a refused go (a
    bishop roll at the start, where no bishop can move) said only ``bestmove 0000``."""
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen([*ENGINE_CMD, "--log-level", "warning"], cwd=ROOT,
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        out, _ = proc.communicate("position startpos\ngo dice 3 nodes 100\nquit\n",
                                  timeout=120)
    assert "bestmove 0000" in out
    assert "go_refused" in log.read_text() and "not possible" in log.read_text()


# -- helpers in-process --------------------------------------------------------------------

def test_roll_for_move_reads_the_piece_type() -> None:
    state = dice_state()
    assert roll_for_move(state, "e2e4") == 1
    assert roll_for_move(state, "g1f3") == 2
    assert roll_for_move(state, "e2e5") is None
    assert roll_for_move(state, "0000") is None          # reroll: something can always move
    assert state.is_chance_node() and state.history() == []
    promo = dice_state(fen="4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    assert roll_for_move(promo, "a7a8q") == 1             # a pawn roll first
    castle = dice_state("dicechess(castle=king-or-rook)", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert roll_for_move(castle, "e1g1") in (4, 6)


def test_roll_for_move_under_pass_and_free() -> None:
    passing = dice_state("dicechess(nomove=pass)")
    assert roll_for_move(passing, "0000") == 3            # no bishop can move at the start
    free = dice_state("dicechess(nomove=free)")
    assert roll_for_move(free, "g1f3") == 2               # its own roll, not a free one
    assert roll_for_move(free, "0000") is None


def test_expand_moves_inserts_the_rolls_and_names_bad_moves() -> None:
    assert expand_moves(dice_state(), ["e2e4", "G8F6"]) == ["d1", "e2e4", "d2", "g8f6"]
    dfen = dice_state(fen="rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 n")
    assert expand_moves(dfen, ["b8c6", "d2d4"]) == ["b8c6", "d1", "d2d4"]
    with pytest.raises(ProtocolError, match="move 2 'e2e4'"):
        expand_moves(dice_state(), ["e2e4", "e2e4"])
    with pytest.raises(ProtocolError, match="malformed"):
        expand_moves(dice_state(), ["e2"])


def test_moves_only_drops_the_rolls() -> None:
    state = dice_state()
    state.apply_move("d1")
    assert moves_only(state, ["e2e4", "d1", "e7e5", "d2", "g1f3"]) == ["e2e4", "e7e5", "g1f3"]
    assert moves_only(state, ["e2e4", "d1", "zz", "d2"]) == ["e2e4"]


def test_parse_go_and_score() -> None:
    assert parse_go(["dice", "3", "wtime", "100", "btime", "-5", "infinite"]) == {
        "dice": 3, "wtime": 100, "btime": -5, "infinite": 1}
    for bad in ("dice 7", "dice", "nodes 0", "ponder", "dice 1 dice 2", "movetime x"):
        with pytest.raises(ProtocolError):
            parse_go(bad.split())
    assert score_cp(1.0) == SCORE_SCALE and score_cp(-2.0) == -SCORE_SCALE
    assert score_cp(0.0123) == 12


# -- fuzz: every line gets one well-formed reply, nothing raises ----------------------------

TOKENS = ["startpos", "fen", "moves", "e2e4", "e7e5", "g1f3", "b8c6", "0000", "d2d4", "e2e5",
          "a7a8q", "dice", "0", "1", "2", "3", "6", "7", "-1", "x", "nodes", "depth", "5",
          "movetime", "wtime", "btime", "winc", "movestogo", "infinite", "ponder", "name",
          "value", "Hash", "8", "NoMoveRule", "pass", "free", "reroll", "CastleRule",
          "king-or-rook", "Strength", "expert", "maximum", "Seed", "SearchAlgorithm", "mcts",
          "ubfms", "Move", "Overhead", "UCI_Variant", "dicechess", "chess", "Threads",
          "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR", "b", "w", "KQkq", "-", "n", "N"]
COMMANDS = ["uci", "isready", "ucinewgame", "position", "go", "stop", "setoption", "d",
            "debug", "quit", "# interrupt", "#", "", "xyzzy", "GO", "Position"]
GOOD = ["position startpos moves e2e4 e7e5", "go dice 1 nodes 200", "go dice 2 movetime 30",
        "setoption name NoMoveRule value pass", "setoption name Hash value 8",
        "position fen rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 n",
        "go nodes 100", "setoption name Strength value casual", "ucinewgame", "uci", "isready",
        "go dice 6 depth 2", "go dice 1 infinite", "position startpos moves 0000"]


@st.composite
def command_lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from((0, 1, 2, 2, 2)))     # mostly near-valid lines
    if kind == 0:
        return draw(st.text(st.characters(min_codepoint=9, max_codepoint=0x2FF,
                                          exclude_characters="\n\r"), max_size=40))
    if kind == 1:
        words = draw(st.lists(st.sampled_from(TOKENS), max_size=8))
        return " ".join([draw(st.sampled_from(COMMANDS)), *words])
    words = draw(st.sampled_from(GOOD)).split()
    for _ in range(draw(st.sampled_from((0, 0, 1, 2)))):
        i = draw(st.integers(0, len(words)))
        op = draw(st.integers(0, 2))
        if op == 0 and words and i < len(words):
            del words[i]
        elif op == 1:
            words.insert(i, draw(st.sampled_from(TOKENS)))
        elif words and i < len(words):
            words[i] = draw(st.sampled_from(TOKENS))
    return " ".join(words)


class Harness:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.lock = threading.Lock()
        engine = Engine(Settings(game="dicechess", seed=1, hash_mb=8, nodes_per_second=50000,
                                 move_overhead_ms=0))
        self.proto = UciProtocol(engine, self.send)

    def send(self, text: str) -> None:
        with self.lock:
            self.out.extend(text.rstrip("\n").split("\n"))

    def bestmoves(self, start: int) -> int:
        with self.lock:
            return sum(line.startswith("bestmove") for line in self.out[start:])

    def run(self, line: str) -> list[str]:
        start = len(self.out)
        keep = self.proto.handle(line)
        words = line.split()
        is_go = bool(words) and words[0].lower() == "go"
        if is_go:
            deadline = time.monotonic() + 0.3
            while self.bestmoves(start) == 0 and time.monotonic() < deadline:
                time.sleep(0.005)
        self.proto.handle_urgent("stop")     # long fuzzed limits end here
        self.proto.close()                   # waits for the search and its bestmove
        with self.lock:
            reply = self.out[start:]
        assert keep is not (bool(words) and words[0].lower() == "quit"), line
        assert all(UCI_LINE.match(r) for r in reply), (line, reply)
        assert sum(r.startswith("info string error") for r in reply) <= 1, (line, reply)
        assert self.bestmoves(start) == (1 if is_go else 0), (line, reply)
        if words == ["uci"]:
            assert reply[-1] == "uciok"
        if words == ["isready"]:
            assert reply == ["readyok"]
        return reply


@pytest.fixture(scope="module")
def harness() -> Harness:
    return Harness()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(lines=st.lists(command_lines(), min_size=1, max_size=6))
def test_fuzz_every_line_gets_one_well_formed_reply(harness: Harness, lines: list[str]) -> None:
    for line in lines:
        harness.run(line)


def test_fuzz_harness_sees_errors_and_bestmoves(harness: Harness) -> None:
    assert harness.run("position startpos") == []
    assert harness.run("bogus")[0].startswith("info string error: unknown command")
    reply = harness.run("go dice 1 nodes 100")
    assert reply[-1].startswith("bestmove ")


def test_urgent_lines_wait_behind_queued_lines(harness: Harness) -> None:
    proto = harness.proto
    assert proto.is_urgent("isready") and proto.is_urgent("stop")
    assert proto.is_urgent("#  interrupt")
    assert not proto.is_urgent("position startpos")           # queued: counted
    assert not proto.is_urgent("stop")                        # must not overtake it
    assert harness.run("position startpos") == []
    assert harness.run("stop") == []
    assert proto.is_urgent("isready")


def test_a_failed_search_still_answers_one_bestmove(harness: Harness,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    proto = harness.proto
    harness.run("ucinewgame")

    def broken(*args: object) -> None:
        raise RuntimeError("boom")

    with monkeypatch.context() as patch:
        patch.setattr(proto.engine.search, "run", broken)
        reply = harness.run("go dice 2 nodes 100")
    assert reply == ["info string error: search failed: boom", "bestmove b1a3"]
    assert harness.run("go dice 2 nodes 100")[-1].startswith("bestmove ")


# -- the independent random bot ---------------------------------------------------------------

class Collect:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines += text.splitlines()
        return len(text)

    def flush(self) -> None:
        pass


def test_bot_in_process_moves_are_legal_for_the_roll() -> None:
    rng = random.Random(2)
    for nomove in ("reroll", "pass", "free"):
        out: Any = Collect()
        bot = RandomDiceChessBot(seed=4, out=out)
        bot.handle(f"setoption name NoMoveRule value {nomove}")
        state = dice_state(f"dicechess(nomove={nomove})")
        moves: list[str] = []
        for _ in range(30):
            if state.is_terminal():
                break
            die = rng.choice([d for d, _ in state.chance_outcomes()])
            state.apply_action(die)
            bot.handle("position startpos" + (" moves " + " ".join(moves) if moves else ""))
            bot.handle(f"go dice {die}")
            move = out.lines[-1].split()[1]
            assert state.string_to_action(move) in state.legal_actions(), (nomove, move)
            state.apply_move(move)
            moves.append(move)


def test_bot_takes_the_king_when_it_can() -> None:
    out: Any = Collect()
    bot = RandomDiceChessBot(seed=1, out=out)
    bot.handle("position fen 4k3/8/8/8/8/8/8/4QK2 w - - 0 1")
    bot.handle("go dice 5")
    assert out.lines[-1] == "bestmove e1e8"
    bot.handle("go")
    assert out.lines[-2].startswith("info string error") and out.lines[-1] == "bestmove 0000"


def referee_plies(players: list[UciSession], plies: int, seed: int) -> list[str]:
    """Our own small referee: rolls, asks the side to move, checks with the kernel."""
    state = dice_state()
    rng = random.Random(seed)
    moves: list[str] = []
    for p in players:
        assert p.exchange("uci")[-1] == "uciok"
        p.exchange("ucinewgame")
    while len(moves) < plies and not state.is_terminal():
        outcomes = state.chance_outcomes()
        die = rng.choices([d for d, _ in outcomes], [w for _, w in outcomes])[0]
        state.apply_action(die)
        player = players[state.current_player()]
        player.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        line = player.exchange(f"go dice {die} nodes 300 movetime 50")[-1]
        move = line.split()[1]
        assert state.string_to_action(move) in state.legal_actions(), (moves, die, line)
        state.apply_move(move)
        moves.append(move)
    return moves


def test_our_engine_plays_the_random_bot() -> None:
    ours = UciSession()
    bot = UciSession(command=[sys.executable, "-m", "tests.helpers.bots.dicechess_random_uci",
                              "--seed", "2"])
    try:
        moves = referee_plies([ours, bot], plies=16, seed=3)
        assert len(moves) >= 4
    finally:
        ours.close()
        bot.close()
