"""Hex GTP (protocols/gtp.py): golden transcripts against the real ``descent play``
process, games with MoHex's swap-pieces from both sides checked by an independent referee,
clocks, bad input, ``# interrupt`` during a long genmove and an analysis, and a hypothesis
fuzz of the protocol object in-process."""

from __future__ import annotations

import contextlib
import json
import random
import re
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from descent.engine.engine import Decision, Engine, Info
from descent.engine.limits import Limits
from descent.engine.settings import Settings
from descent.protocols.gtp import GtpProtocol
from tests.helpers.process import EngineProcess
from tests.helpers.regen_transcripts_gtp import (
    ENGINE_ARGS,
    TRANSCRIPTS,
    expects_reply,
    run_session,
)
from tests.helpers.transcripts import parse_transcript

REPLY_TIMEOUT = 60.0   # liveness bound only: a hung engine fails instead of hanging the suite


# -- golden transcripts --------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.txt")), ids=lambda p: p.stem)
def test_golden_transcript(path: Path) -> None:
    pairs = parse_transcript(path.read_text(encoding="utf-8"))
    commands = [command for command, _ in pairs]
    got = run_session(commands)
    for (command, expected), output in zip(pairs, got, strict=True):
        assert output == expected, (
            f"{path.name}: reply to {command!r} changed (regenerate with "
            f"`python -m tests.helpers.regen_transcripts_gtp` and review the diff)")


def test_transcript_format_round_trips() -> None:
    text = "> # note\n> boardsize 5\n= \n\n> showboard\n= \n  a\n\n"
    pairs = parse_transcript(text)
    assert pairs == [("# note", ""), ("boardsize 5", "= \n\n"), ("showboard", "= \n  a\n\n")]


# -- an interactive engine process ---------------------------------------------------------

class GtpProcess(EngineProcess):
    """A GTP engine subprocess; ``ask`` sends a line and returns its reply lines."""

    def line(self, timeout: float = REPLY_TIMEOUT) -> str:
        got = self.next_line(timeout)
        if got is None:
            raise EOFError("the engine closed its output")
        return got

    def reply(self, timeout: float = REPLY_TIMEOUT) -> list[str]:
        out = []
        while (got := self.line(timeout)) != "":
            out.append(got)
        return out

    def ask(self, line: str) -> str:
        self.send(line)
        return "\n".join(self.reply())

    def close(self) -> int:
        with contextlib.suppress(BrokenPipeError, OSError):
            self.send("quit")
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -9


def descent(*extra: str) -> GtpProcess:
    return GtpProcess([sys.executable, "-m", "descent", "play", *ENGINE_ARGS, *extra])


def test_version_names_search_and_evaluator() -> None:
    engine = descent()
    try:
        assert re.fullmatch(r"= \S+ search=rave evaluator=heuristic:vc strength=max",
                            engine.ask("version"))
        assert engine.ask("param_descent heuristic two_distance") == "= "
        assert "evaluator=heuristic:two_distance" in engine.ask("version")
        assert engine.ask("param_descent heuristic bogus").startswith(
            "? no heuristic 'bogus' for hex (known: vc, two_distance)")
        assert "evaluator=heuristic:two_distance" in engine.ask("version")
        assert engine.ask("descent-strength expert") == "= "
        assert engine.ask("version").endswith("strength=expert")
    finally:
        assert engine.close() == 0


def test_version_says_how_the_shipped_policy_is_read() -> None:
    engine = GtpProcess([sys.executable, "-m", "descent", "play", "--game", "hex(size=11)",
                         "--hash-mb", "16", "--minimax-weight", "0.3"])
    try:
        assert re.fullmatch(r"= \S+ search=rave evaluator=heuristic:vc policy=hex-size11.dnet "
                            r"action_visits=8 minimax_weight=0.3 strength=max",
                            engine.ask("version"))
        assert engine.ask("param_descent minimax_weight 0") == "= "
        assert "minimax_weight" not in engine.ask("version")
    finally:
        assert engine.close() == 0


# -- swap games from both sides, refereed on the GUI's board -------------------------------

class GuiBoard:
    """The board as HexGui and MoHex see it, written independently of the kernel:
    ``swap-pieces`` leaves the stones where they are and White moves again."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.cells: dict[tuple[int, int], int] = {}
        self.to_move = 0
        self.moves = 0

    def play(self, colour: int, move: str) -> None:
        assert colour == self.to_move, f"{move} by the side not to move"
        if move == "swap-pieces":
            assert self.moves == 1, "swap after the first move"
        else:
            cell = self.parse(move)
            assert cell not in self.cells, f"{move} is occupied"
            self.cells[cell] = colour
            self.to_move ^= 1
        self.moves += 1

    def parse(self, move: str) -> tuple[int, int]:
        row, col = int(move[1:]) - 1, ord(move[0]) - ord("a")
        assert 0 <= row < self.n and 0 <= col < self.n, f"{move} is off the board"
        return row, col

    def empty(self) -> list[str]:
        return [f"{chr(ord('a') + c)}{r + 1}" for r in range(self.n) for c in range(self.n)
                if (r, c) not in self.cells]

    def winner(self) -> int | None:
        for colour in (0, 1):
            start = [(0, c) if colour == 0 else (c, 0) for c in range(self.n)]
            seen = {p for p in start if self.cells.get(p) == colour}
            todo = list(seen)
            while todo:
                r, c = todo.pop()
                if (r if colour == 0 else c) == self.n - 1:
                    return colour
                for dr, dc in ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)):
                    q = (r + dr, c + dc)
                    if q not in seen and self.cells.get(q) == colour:
                        seen.add(q)
                        todo.append(q)
        return None

    def rows(self) -> list[str]:
        return ["  ".join(".BW"[self.cells.get((r, c), -1) + 1] for c in range(self.n))
                for r in range(self.n)]


def stones(reply: str) -> int:
    """Occupied cells of a ``showboard`` reply."""
    return sum(token != "." for row in showboard_rows(reply) for token in row.split())


def showboard_rows(reply: str) -> list[str]:
    return [re.sub(r"^\s*\d+\\(.*)\\\d+$", r"\1", line)
            for line in reply.splitlines() if re.match(r"^\s*\d+\\", line)]


@pytest.mark.parametrize("scenario", ["engine_swaps", "opponent_swaps"])
def test_swap_game_through_gtp(scenario: str) -> None:
    """A full 5x5 game with ``param_game allow_swap 1``: in ``engine_swaps`` the opponent
    opens in the centre as Black and the engine (White) swaps, so it plays Black from then
    on; in ``opponent_swaps`` the engine opens as Black, the opponent swaps and the engine
    continues as White. Every engine move must be legal on the GUI's board, and the final
    score and the board must agree with the referee's."""
    rng = random.Random(7)
    engine = descent()
    gui = GuiBoard(5)
    try:
        assert engine.ask("param_game allow_swap 1") == "= "
        assert engine.ask("param_descent move_time 0.2") == "= "
        if scenario == "engine_swaps":
            assert engine.ask("play b c3") == "= "
            gui.play(0, "c3")
            assert engine.ask("genmove w") == "= swap-pieces"
            gui.play(1, "swap-pieces")
            ours = 0              # the players exchanged colours: the engine owns c3
        else:
            move = engine.ask("genmove b")[2:]
            gui.play(0, move)
            assert engine.ask("play w swap-pieces") == "= "
            gui.play(1, "swap-pieces")
            ours = 1
        assert "white to move" in engine.ask("showboard")
        while gui.winner() is None:
            colour = gui.to_move
            letter = "bw"[colour]
            if colour == ours:
                reply = engine.ask(f"genmove {letter}")
                assert reply.startswith("= "), reply
                gui.play(colour, reply[2:])
            else:
                move = rng.choice(gui.empty())
                assert engine.ask(f"play {letter} {move}") == "= "
                gui.play(colour, move)
            assert showboard_rows(engine.ask("showboard")) == gui.rows()
        assert engine.ask("final_score") == f"= {'BW'[gui.winner() or 0]}+"
        assert gui.winner() == ours, "the engine lost to random moves on 5x5"
        # after the end, genmove answers resign as MoHex does (arbiters ask it)
        assert engine.ask(f"genmove {'bw'[gui.to_move]}") == "= resign"
    finally:
        assert engine.close() == 0


def test_the_swap_map_answers_at_once_on_eleven() -> None:
    """On 11x11 under the swap rule the engine swaps the first stones the shipped map
    swaps, searches after the others (never swapping them), and opens with the map's
    most even stone."""
    from descent.search_cy.games.hex_swap import shipped_swap_map

    m = shipped_swap_map()
    cells = [f"{'abcdefghijk'[c % 11]}{c // 11 + 1}" for c in range(121)]
    swapped = next(cells[c] for c in range(121) if m.swaps(11, c))
    kept = next(cells[c] for c in range(121) if m.swaps(11, c) is False)
    opening = m.opening(11)
    assert opening is not None
    engine = descent()
    try:
        for line in ("boardsize 11", "param_game allow_swap 1",
                     "param_descent move_time 0.2"):
            assert engine.ask(line) == "= "
        assert engine.ask("genmove b") == f"= {cells[opening]}"
        assert engine.ask("clear_board") == "= "
        assert engine.ask(f"play b {swapped}") == "= "
        assert engine.ask("genmove w") == "= swap-pieces"
        assert engine.ask("clear_board") == "= "
        assert engine.ask(f"play b {kept}") == "= "
        assert re.fullmatch(r"= [a-k]([1-9]|1[01])", engine.ask("genmove w"))
    finally:
        assert engine.close() == 0


def test_undo_of_the_swap_restores_the_orientation() -> None:
    engine = descent()
    try:
        for line in ("param_game allow_swap 1", "play b a2", "play w swap-pieces",
                     "play w b4", "undo", "undo"):
            assert engine.ask(line) == "= ", line
        assert showboard_rows(engine.ask("showboard"))[1] == "B  .  .  .  ."
        assert engine.ask("play w b4") == "= "
        assert showboard_rows(engine.ask("showboard"))[3] == ".  W  .  .  ."
        assert engine.ask("play b a2").startswith("? illegal move: b a2 (occupied")
    finally:
        assert engine.close() == 0


# -- interrupts ----------------------------------------------------------------------------

def test_interrupt_ends_a_long_genmove_with_a_legal_move(tmp_path: Path) -> None:
    """A genmove with a budget of hours (11x11, huge main time) answers once `# interrupt`
    arrives. The interrupt is repeated until the reply comes, because the first one may
    reach the engine before its search has started; the log shows the search was stopped
    rather than finished."""
    log = tmp_path / "engine.log"
    engine = descent("--log-level", "info", "--log-file", str(log), "--hash-mb", "64")
    try:
        for line in ("boardsize 11", "time_settings 100000 0 0"):
            assert engine.ask(line) == "= "
        engine.send("genmove b")
        reply: list[str] = []
        deadline = time.monotonic() + REPLY_TIMEOUT
        while not reply and time.monotonic() < deadline:
            time.sleep(0.3)
            engine.send("# interrupt")
            try:
                reply = [engine.line(timeout=0.2)]
            except TimeoutError:
                continue
        assert reply, "no reply to genmove after # interrupt"
        assert engine.line() == ""
        assert re.fullmatch(r"= [a-k]([1-9]|1[01])", reply[0]), reply
        assert engine.ask("name") == "= descent"
        assert showboard_rows(engine.ask("showboard"))[0].count("B") <= 1
    finally:
        assert engine.close() == 0
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    moves = [e for e in events if e.get("event") == "move"]
    assert moves and moves[0]["stop"] == "stopped"


INFO = re.compile(r"info value -?\d\.\d{4} nodes \d+ nps \d+ time \d+\.\d\d depth \d+ pv"
                  r"( [a-k]([1-9]|1[01])| swap-pieces)*")


def test_descent_analyze_streams_until_the_next_command() -> None:
    engine = descent()
    try:
        assert engine.ask("boardsize 11") == "= "
        engine.send("7 descent-analyze")
        assert engine.line() == "=7 "
        assert INFO.fullmatch(engine.line()), "no info line"
        engine.send("name")
        lines = []
        while (got := engine.line()) != "= descent":
            lines.append(got)
        assert lines[-1] == "", "the analysis reply must end with a blank line"
        assert all(INFO.fullmatch(line) for line in lines[:-1]), lines
        assert engine.line() == ""
        # an interrupt ends it too, and the next command finds the engine idle
        engine.send("descent-analyze 10")
        assert engine.line() == "= "
        assert INFO.fullmatch(engine.line())
        engine.send("# interrupt")
        while (got := engine.line()) != "":
            assert INFO.fullmatch(got), got
        assert engine.ask("play b f6") == "= "
    finally:
        assert engine.close() == 0


@pytest.mark.parametrize("how", ["next command", "interrupt"])
def test_analysis_stops_even_when_the_stop_falls_between_two_slices(how: str) -> None:
    """Engine.stop() used to be lost when it came while the analysis printed a slice's
    report (between two slices): the reply never ended. A slow output widens that window,
    and the stop is sent right inside it."""
    engine = Engine(Settings(game="hex(size=11)", seed=1, hash_mb=4))
    out: list[str] = []
    printing = threading.Event()

    def slow_send(text: str) -> None:
        if text.startswith("info"):
            printing.set()
            time.sleep(0.3)
        out.append(text)

    gtp = GtpProtocol(engine, slow_send)
    try:
        gtp.handle("descent-analyze")
        assert printing.wait(REPLY_TIMEOUT)
        done = threading.Event()
        if how == "interrupt":
            assert gtp.is_urgent("# interrupt")
            gtp.handle_urgent("# interrupt")
            threading.Thread(target=lambda: (engine.wait(), done.set()), daemon=True).start()
        else:
            threading.Thread(target=lambda: (gtp.handle("name"), done.set()),
                             daemon=True).start()
        assert done.wait(REPLY_TIMEOUT), "the analysis did not stop"
        time.sleep(0.1)
        text = "".join(out)
        assert text.startswith("= \ninfo ") and "\n\n" in text
        assert text.endswith("\n\n= descent\n\n" if how == "next command" else "\n\n")
    finally:
        gtp.close()


# -- in-process: strength, resignation, the swap switch keeps the game ---------------------

def protocol(**overrides: Any) -> tuple[GtpProtocol, list[str]]:
    base = {"game": "hex(size=5)", "seed": 1, "nodes_per_second": 20000.0, "hash_mb": 4}
    engine = Engine(Settings(**{**base, **overrides}))
    out: list[str] = []
    return GtpProtocol(engine, out.append), out


def ask(gtp: GtpProtocol, line: str, out: list[str]) -> str:
    out.clear()
    gtp.handle(line)
    return "".join(out)


def test_strength_levels_reach_the_engine() -> None:
    gtp, out = protocol()
    assert ask(gtp, "param_descent strength Expert", out) == "= \n\n"
    assert gtp.engine.settings.strength == "expert"
    assert ask(gtp, "descent-strength", out) == "= expert\n\n"
    assert ask(gtp, "descent-strength 7", out) == "= \n\n"
    assert "[string] strength 7" in ask(gtp, "param_descent", out)
    assert ask(gtp, "descent-strength nope", out).startswith("? unknown strength level")
    assert gtp.engine.settings.strength == "7"


def test_genmove_resigns_a_lost_position_when_asked() -> None:
    gtp, out = protocol()
    for line in ("boardsize 3", "param_descent resign_threshold 0.5", "play b b2"):
        assert ask(gtp, line, out) == "= \n\n", line
    assert ask(gtp, "genmove w", out) == "= resign\n\n"
    assert ask(gtp, "final_score", out) == "= B+\n\n"


def test_allow_swap_switch_keeps_the_moves_played() -> None:
    gtp, out = protocol()
    assert ask(gtp, "play b b2", out) == "= \n\n"
    assert ask(gtp, "param_game allow_swap 1", out) == "= \n\n"
    assert gtp.engine.game.spec == "hex(size=5,swap=true)"
    assert gtp.engine.state.to_text() == "b2"
    assert ask(gtp, "play w swap-sides", out) == "= \n\n"
    assert gtp.transposed
    assert ask(gtp, "play w a1", out) == "= \n\n"
    assert gtp.engine.state.to_text() == "b2 swap a1"


# -- fuzz ----------------------------------------------------------------------------------

class CheapEngine(Engine):
    """Every timed search becomes a 300-node one, so fuzzed clocks cannot make it slow."""

    def go(self, limits: Limits, on_info: Any = None, on_done: Any = None,
           on_error: Any = None) -> None:
        if not limits.infinite:
            limits = replace(limits, nodes=300)
        super().go(limits, on_info, on_done, on_error)


WORDS = [*GtpProtocol.commands, "frobnicate", "kgs-time_settings", "b", "w", "black",
         "WHITE", "x", "a1", "c3", "e5", "f6", "z9", "swap", "swap-pieces", "swap-sides",
         "resign", "allow_swap", "strength", "move_time", "resign_threshold", "expert",
         "none", "absolute", "byoyomi", "canadian", "0", "1", "2", "3", "5", "7", "30", "-1",
         "1.5", "nan", "inf", "12", "#", "# interrupt", "\t", "é", "\u2028", "\x00", ""]
LINES = [
    "boardsize 5", "boardsize 4 4", "clear_board", "play b c3", "play w swap-pieces",
    "genmove b", "genmove w", "reg_genmove b", "undo", "showboard", "final_score",
    "time_settings 30 5 3", "kgs-time_settings byoyomi 5 2 3", "time_left b 3 1",
    "time_left", "param_game allow_swap 1", "param_game", "param_descent",
    "descent-analyze", "known_command play", "list_commands", "3 name", "# interrupt",
]

word_lines = st.lists(st.sampled_from(WORDS), min_size=0, max_size=5).map(" ".join)


@st.composite
def mutated_lines(draw: st.DrawFn) -> str:
    chars = list(draw(st.sampled_from(LINES)))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(chars)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        char = draw(st.characters(codec="utf-8", exclude_characters="\n\r"))
        if op == "insert":
            chars.insert(at, char)
        elif chars and at < len(chars):
            if op == "delete":
                del chars[at]
            else:
                chars[at] = char
    return "".join(chars)


any_line = st.one_of(st.sampled_from(LINES), word_lines, mutated_lines(),
                     st.text(st.characters(codec="utf-8", exclude_characters="\n\r"),
                             max_size=30))

REPLY_HEAD = re.compile(r"([=?])([0-9]*) ")


def check_replies(output: str, lines: list[str]) -> None:
    """The output is exactly one well-formed reply per line that expects one, in order,
    with the line's id."""
    assert output == "" or output.endswith("\n\n"), repr(output[-40:])
    replies = output[:-2].split("\n\n") if output else []
    wanted = [line for line in lines if expects_reply(line)]
    assert len(replies) == len(wanted), (replies, wanted)
    for reply, line in zip(replies, wanted, strict=True):
        head = REPLY_HEAD.match(reply)
        assert head, reply
        # GTP drops control characters (but tabs) before it reads the id
        first = re.sub(r"[\x00-\x08\x0a-\x1f\x7f]", "", line.replace("\t", " "))
        first = first.split("#", 1)[0].split()
        ident = first[0] if first and re.fullmatch(r"[0-9]+", first[0]) else ""
        assert head.group(2) == ident, (reply, line)
        assert all(part for part in reply.split("\n")[1:]), "an empty line inside a reply"


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(any_line, min_size=1, max_size=8))
def test_fuzz_every_line_gets_one_well_formed_reply(lines: list[str]) -> None:
    engine = CheapEngine(Settings(game="hex(size=5)", seed=1, nodes_per_second=1000.0,
                                  hash_mb=1))
    out: list[str] = []
    lock = threading.Lock()

    def send(text: str) -> None:
        with lock:
            out.append(text)

    gtp = GtpProtocol(engine, send)
    fed: list[str] = []
    try:
        for line in lines:
            before_text, before_spec = engine.state.to_text(), engine.game.spec
            with lock:
                start = len(out)
            fed.append(line)
            going = gtp.handle(line)
            with lock:
                produced = [chunk for chunk in out[start:] if chunk[:1] in "=?"]
            if produced and produced[-1].startswith("?"):
                assert engine.state.to_text() == before_text, (line, produced[-1])
                assert engine.game.spec == before_spec, (line, produced[-1])
            if not going:
                break
    finally:
        gtp.close()
    check_replies("".join(out), fed)


def test_fuzz_helpers_accept_a_streamed_analysis() -> None:
    # an analysis reply is `= ` plus info lines, closed by a blank line
    check_replies("=4 \ninfo value 0.1 nodes 1\n\n= \n\n", ["4 descent-analyze", "name"])


# -- the engine object is the public seam --------------------------------------------------

def test_info_and_decision_types_are_what_the_protocol_reads() -> None:
    # guards the protocol against silent renames in the Engine facade
    assert {"nodes", "nps", "time", "mover_value", "depth", "pv"} <= set(Info.__annotations__)
    assert {"action", "resign", "nodes", "time"} <= set(Decision.__annotations__)


def test_set_up_stones_out_of_turn_and_their_undo() -> None:
    gtp, out = protocol()
    assert ask(gtp, "play b a1", out).startswith("=")
    assert ask(gtp, "play b b1", out).startswith("=")     # two Black stones in a row
    assert ask(gtp, "play w c3", out).startswith("=")
    assert gtp.engine.state.to_text() == "a1 pass b1 c3"
    board = ask(gtp, "showboard", out)
    assert "black to move" in board.lower()
    assert ask(gtp, "play w c3", out).startswith("? illegal move")   # occupied: no pass left
    assert gtp.engine.state.to_text() == "a1 pass b1 c3"
    assert ask(gtp, "undo", out).startswith("=")
    assert ask(gtp, "undo", out).startswith("=")          # b1 goes back with its pass
    assert gtp.engine.state.to_text() == "a1"
    move = ask(gtp, "genmove b", out)                     # Black again, out of turn
    assert move.startswith("= ") and gtp.engine.state.to_text().startswith("a1 pass ")


def test_hexgui_board_analysis_commands() -> None:
    """pspairs, var and gfx analyze commands (time-limited, not streaming), and the MoHex
    commands all_legal_moves and board_id."""
    engine = descent()
    try:
        assert engine.ask("play b c3") == "= "
        before = engine.ask("board_id")
        assert re.fullmatch(r"= [0-9a-f]{16}", before)
        legal = engine.ask("all_legal_moves")[2:].split()
        assert len(legal) == 24 and "c3" not in legal
        pairs = engine.ask("descent-values 0.2")[2:].split()
        cells, values = pairs[0::2], [float(v) for v in pairs[1::2]]
        assert cells and set(cells) <= set(legal)
        assert values == sorted(values, reverse=True) and all(-1 <= v <= 1 for v in values)
        pv = engine.ask("descent-pv 0.2")[2:].split()
        assert pv[0::2] == ["w", "b"] * (len(pv) // 4) + ["w"] * (len(pv) // 2 % 2)
        assert set(pv[1::2]) <= set(legal)
        gfx = engine.ask("descent-gfx 0.2")
        assert gfx.startswith("= ") and "\nVAR w " in gfx and "\nTEXT value " in gfx
        assert engine.ask("board_id") == before               # analysis plays nothing
        assert engine.ask("play w d4") == "= " and engine.ask("board_id") != before
        assert engine.ask("undo") == "= " and engine.ask("board_id") == before
        assert engine.ask("descent-values 0").startswith("? ")
        menu = engine.ask("hexgui-analyze_commands")
        assert "pspairs/Move Values/descent-values" in menu
    finally:
        assert engine.close() == 0


def test_loadsgf_sets_up_a_hexgui_record_and_keeps_the_position_on_errors(
        tmp_path: Path) -> None:
    record = tmp_path / "game.sgf"
    record.write_text("(;FF[4]GM[11]SZ[5]PB[a]PW[b];B[c3];W[b2];B[d2];W[resign])")
    engine = descent()
    try:
        assert engine.ask("play b e5") == "= "
        assert engine.ask(f"loadsgf {record}") == "= "
        assert stones(engine.ask("showboard")) == 3
        assert "white to move" in engine.ask("showboard")
        assert engine.ask(f"loadsgf {record} 2") == "= "          # before move 2
        assert stones(engine.ask("showboard")) == 1
        board = engine.ask("showboard")
        for bad in ("(;FF[4]GM[1]SZ[19];B[dd])", "(;FF[4]GM[11]SZ[5];B[c3];W[c3])"):
            record.write_text(bad)
            assert engine.ask(f"loadsgf {record}").startswith("? loadsgf: ")
            assert engine.ask("showboard") == board
        assert engine.ask(f"loadsgf {tmp_path / 'missing.sgf'}").startswith("? loadsgf: ")
    finally:
        assert engine.close() == 0
