"""The NTU referee dialect (protocols/ntu.py): golden transcripts and a full game refereed
by this test over the real ``descent play`` subprocess; positions, bad input, merged dice
and a hypothesis fuzz in-process."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from descent.protocols.ntu import NtuProtocol, position_text
from descent.search_cy.games.einstein import EinsteinState, cell_name, parse_arrangement
from descent.search_cy.games.registry import make_game
from tests.helpers import protocols as helpers
from tests.helpers.regen_transcripts_ewn import (
    TRANSCRIPTS,
    run_session,
)
from tests.helpers.transcripts import parse_transcript
from tests.protocols.test_ewn import Session, engine_command

NTU_FILES = sorted((TRANSCRIPTS / "ntu").glob("*.txt"))
MOVE = re.compile(r"[A-E][1-5] [A-E][1-5]")


def tokens(state: EinsteinState) -> str:
    """The 12 cube tokens of ``get`` for a kernel state (0 for a captured cube)."""
    cells = [state.cube_cell(side, cube) for side in (0, 1) for cube in range(1, 7)]
    return " ".join(cell_name(c).upper() if c >= 0 else "0" for c in cells)


@pytest.mark.parametrize("path", NTU_FILES, ids=[p.name for p in NTU_FILES])
def test_transcript(path: Path) -> None:
    pairs = parse_transcript(path.read_text(encoding="utf-8"))
    stdout = run_session("ntu", [command for command, _ in pairs])
    assert stdout == "".join(output for _, output in pairs), (
        f"{path.name} differs: run `python -m tests.helpers.regen_transcripts_ewn --check`")


def test_transcripts_exist() -> None:
    assert {p.name for p in NTU_FILES} >= {"basics.txt", "errors.txt"}


def test_full_game_refereed_through_the_ntu_format() -> None:
    game = "einstein(setup=free)"
    kernel = make_game(game).new_initial_state()
    assert isinstance(kernel, EinsteinState)
    session = Session(engine_command("ntu", game))
    rng = random.Random(11)
    try:
        session.send("name")
        assert session.readline() == "descent"
        session.send("time_setting 20")
        assert session.readline() == "ok"
        for side, letter in enumerate("RB"):
            session.send(f"ini {letter}")
            answer = session.readline()
            kernel.apply_action(parse_arrangement(side, answer.lower()))
        moves = 0
        while not kernel.is_terminal():
            side, die = kernel.side_to_act, rng.randint(1, 6)
            session.send(f"get {'RB'[side]} {die} {tokens(kernel)}")
            answer = session.readline()
            assert MOVE.fullmatch(answer), answer
            kernel.apply_move(f"d{die}")
            move = answer.replace(" ", "").lower()
            assert kernel.string_to_action(move) in kernel.legal_actions(), (answer, die)
            kernel.apply_move(move)
            moves += 1
            assert moves < 200
        session.send("exit")
        assert session.close() == 0
    finally:
        if session.proc.poll() is None:
            session.proc.kill()


# -- in-process ---------------------------------------------------------------------

def make_protocol(game: str = "einstein") -> tuple[NtuProtocol, list[str]]:
    return helpers.make_protocol(NtuProtocol, game)


def ask(protocol: NtuProtocol, out: list[str], line: str) -> str:
    reply = helpers.ask(protocol, out, line)
    assert reply.endswith("\n") and reply.count("\n") == 1, reply
    return reply[:-1]


def test_position_text_reads_cells_and_captures() -> None:
    start = ["A1", "B1", "C1", "A2", "B2", "A3", "E5", "E4", "D5", "D4", "C5", "E3"]
    assert position_text(0, 3, start) == "ABC2/DE3/F3f/3db/2eca r d3"
    captured = ["0", "b1", "-", "A2", "xx", "A3", "e5", "-1", "D5", "--", "C4", "00"]
    assert position_text(1, 6, captured) == "1B3/D4/F4/2e2/3ca b d6"


def test_get_answers_a_legal_move_for_the_die() -> None:
    protocol, out = make_protocol()
    answer = ask(protocol, out, "get R 5 A1 B1 C1 A2 B2 A3 E5 E4 D5 D4 C5 E3")
    assert answer in ("B2 C2", "B2 B3", "B2 C3")
    answer = ask(protocol, out, "get b 1 A1 B1 C1 A2 B2 A3 E5 E4 D5 D4 C5 E3")
    assert answer in ("E5 D5", "E5 E4", "E5 D4")


def test_merged_die_moves_the_right_cube() -> None:
    protocol, out = make_protocol("einstein(merge_dice=true)")
    # Red's cubes 1 and 2 are gone: the dice 1, 2 and 3 all move cube 3 (on C2)
    for die in (1, 2, 3):
        answer = ask(protocol, out, f"get R {die} 0 0 C2 A2 B2 A3 E5 E4 D5 D4 C5 E3")
        assert answer.startswith("C2 "), (die, answer)


def test_ini_answers_the_arrangement_for_the_side() -> None:
    protocol, out = make_protocol()
    assert ask(protocol, out, "ini R") == "A1 A2 B1 B2 C1 A3"
    assert ask(protocol, out, "ini b") == "E5 E4 D5 D4 C5 E3"


BAD_INPUT = [
    ("nonsense", "unknown command"),
    ("ini", "wrong number of arguments"),
    ("ini Q", "unknown side"),
    ("time_setting fast", "time: expected a number of seconds"),
    ("time_setting inf", "expected seconds >= 0"),
    ("board_setting 7", "not supported"),
    ("get R 3", "14 in all, not 2"),
    ("get R 9 A1 B1 C1 A2 B2 A3 E5 E4 D5 D4 C5 E3", "bad die"),
    ("get R 3 A1 B1 C1 A2 B2 A3 E5 E4 D5 D4 C5 Q3", "off the 5x5 board"),
    ("get R 3 A1 B1 C1 A2 B2 A3 E5 E4 D5 D4 C5 C5", "two cubes on C5"),
    ("get R 3 A1 B1 C1 A2 B2 A3 A1x E4 D5 D4 C5 E3", "malformed cell"),
    ("get R 3 0 0 0 0 0 0 E5 E4 D5 D4 C5 E3", "finished game"),
    ("get B 3 A1 B1 C1 A2 B2 A3 A1 0 0 0 0 0", "two cubes on A1"),
    ("descent-strength 99", "unknown strength level"),
]


@pytest.mark.parametrize(("line", "message"), BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_bad_input_is_one_error_line(line: str, message: str) -> None:
    protocol, out = make_protocol()
    answer = ask(protocol, out, line)
    assert answer.startswith("? ") and message in answer, answer
    assert protocol.running


def test_exit_ends_without_an_answer() -> None:
    protocol, out = make_protocol()
    assert protocol.handle("") and protocol.handle("# note")
    assert protocol.handle("exit") is False
    assert out == []


def test_strength_is_an_option() -> None:
    protocol, out = make_protocol()
    assert ask(protocol, out, "descent-strength novice") == "ok"
    assert protocol.engine.settings.strength == "novice"
    assert ask(protocol, out, "descent-strength") == "novice"
    assert MOVE.fullmatch(ask(protocol, out, "get R 4 A1 B1 C1 A2 B2 A3 E5 E4 D5 D4 C5 E3"))


CELLS = [f"{c}{r}" for c in "ABCDE" for r in "12345"] + ["0", "x", "F6", "a0", "²", "Ⅻ"]
line_strategy = st.one_of(
    st.builds(lambda c, side, die, cells: " ".join([c, side, die, *cells]),
              st.sampled_from(["get", "GET", "ini", "time_setting", "board_setting", "name"]),
              st.sampled_from(["R", "B", "r", "x", "5"]),
              st.sampled_from(["1", "3", "6", "0", "9", "R", "²", "inf"]),
              st.lists(st.sampled_from(CELLS), max_size=13)),
    st.text(max_size=30),
)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(line_strategy, min_size=1, max_size=10))
def test_fuzz_every_line_gets_one_answer(lines: list[str]) -> None:
    protocol, out = make_protocol()
    for line in lines:
        if "\n" in line or "\r" in line:
            continue   # a transport never hands over a line break
        before = len(out)
        protocol.handle(line)
        text = line.strip()
        silent = not text or text.startswith("#") or \
            text.split()[0].lower() in ("exit", "quit")
        assert len(out) == before + (0 if silent else 1), (line, out[before:])
        if not silent:
            answer = out[-1]
            assert answer.endswith("\n") and answer.count("\n") == 1, answer
            assert not answer.startswith("? internal error"), (line, answer)
