"""The EinStein HTP-like dialect (protocols/ewn.py): golden transcripts and a full game
against the real ``descent play`` subprocess; bad input, undo, merged dice, interrupts and a
hypothesis fuzz in-process."""

from __future__ import annotations

import random
import re
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from descent.protocols.base import clean
from descent.protocols.ewn import STRONG_SETUP, EwnProtocol, strong_setup_cells
from descent.search_cy.games.einstein import EinsteinState, cell_name
from descent.search_cy.games.registry import make_game
from tests.helpers import protocols as helpers
from tests.helpers.process import EngineProcess
from tests.helpers.regen_transcripts_ewn import (
    FIXED_ARGS,
    TRANSCRIPTS,
    run_session,
)
from tests.helpers.transcripts import parse_transcript

EWN_FILES = sorted((TRANSCRIPTS / "ewn").glob("*.txt"))
REPLY = re.compile(r"\A[=?](\d*) [^\n]*(\n[^\n]+)*\n\n\Z")


# -- subprocess helpers (also used by the NTU and OpenSpiel-bot tests) ---------------

class Session(EngineProcess):
    """A ``descent play`` (or any) subprocess driven line by line."""

    def readline(self, timeout: float = 60.0) -> str:
        line = self.next_line(timeout)
        assert line is not None, "the process ended"
        return line

    def gtp(self, line: str) -> str:
        """Sends a GTP-framed command; returns the reply without its blank line."""
        self.send(line)
        out = [self.readline()]
        while True:
            nxt = self.readline()
            if nxt == "":
                return "\n".join(out)
            out.append(nxt)

    def close(self) -> int:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def engine_command(protocol: str, game: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "descent", "play", "--protocol", protocol, "--game", game,
            *FIXED_ARGS, *extra]


# -- golden transcripts -------------------------------------------------------------

@pytest.mark.parametrize("path", EWN_FILES, ids=[p.name for p in EWN_FILES])
def test_transcript(path: Path) -> None:
    pairs = parse_transcript(path.read_text(encoding="utf-8"))
    stdout = run_session("ewn", [command for command, _ in pairs])
    assert stdout == "".join(output for _, output in pairs), (
        f"{path.name} differs: run `python -m tests.helpers.regen_transcripts_ewn --check`")


def test_transcripts_exist() -> None:
    assert {p.name for p in EWN_FILES} >= {"basics.txt", "errors.txt", "merged.txt",
                                            "clock.txt", "fullgame.txt"}


# -- a full game through the protocol ------------------------------------------------

def test_full_game_to_final_score() -> None:
    game = "einstein(setup=free)"
    kernel = make_game(game).new_initial_state()
    assert isinstance(kernel, EinsteinState)
    session = Session(engine_command("ewn", game))
    rng = random.Random(5)
    try:
        assert session.gtp("clear_board") == "= "
        for colour in ("red", "blue"):
            reply = session.gtp(f"gensetup {colour}")
            assert reply.startswith("= ")
            kernel.apply_move(reply[2:])
        moves = 0
        while not kernel.is_terminal():
            colour = ("red", "blue")[kernel.side_to_act]
            die = rng.randint(1, 6)
            if moves % 3 == 2:
                # every third move the manager plays it itself: a random legal move
                kernel.apply_move(f"d{die}")
                move = kernel.action_to_string(rng.choice(kernel.legal_actions()))
                assert session.gtp(f"play {colour} {die} {move}") == "= "
            else:
                reply = session.gtp(f"{moves} genmove {colour} {die}")
                assert reply.startswith(f"={moves} "), reply
                move = reply.split(" ", 1)[1]
                kernel.apply_move(f"d{die}")
                assert kernel.string_to_action(move) in kernel.legal_actions(), move
            kernel.apply_move(move)
            moves += 1
            assert moves < 200
        board = session.gtp("showboard")
        assert board.endswith(f"position: {kernel.to_text()}")
        winner = kernel.winner_colour()
        assert session.gtp("final_score") == ("= R+" if winner == 0 else "= B+")
        assert session.gtp("genmove red 3").startswith("? the game is over")
        assert session.gtp("undo") == "= "
        assert session.gtp("final_score") == "= cannot score"
        assert session.gtp("quit") == "= "
        assert session.close() == 0
    finally:
        if session.proc.poll() is None:
            session.proc.kill()


@pytest.mark.parametrize(("extra", "evaluator"), [
    ((), r"network:\S+/nets/shipped/einstein-setuprandom-firstred-merge_dicefalse\.dnet"),
    (("--model", "none"), "heuristic:distance")])
def test_version_names_search_and_evaluator(extra: tuple[str, ...], evaluator: str) -> None:
    """The shipped network is the default evaluator of the default EinStein game."""
    session = Session(engine_command("ewn", "einstein", *extra))
    try:
        reply = session.gtp("version")
        assert re.fullmatch(rf"= \S+ \(expectiminimax, {evaluator}\)", reply), reply
        session.send("quit")
        assert session.close() == 0
    finally:
        if session.proc.poll() is None:
            session.proc.kill()


# -- in-process ---------------------------------------------------------------------

def make_protocol(game: str = "einstein(setup=free)", **changes: object) -> tuple[
        EwnProtocol, list[str]]:
    return helpers.make_protocol(EwnProtocol, game, options=changes)


def ask(protocol: EwnProtocol, out: list[str], line: str) -> str:
    reply = helpers.ask(protocol, out, line)
    assert REPLY.match(reply), reply
    return reply


def board(protocol: EwnProtocol, out: list[str]) -> str:
    return ask(protocol, out, "showboard")


SET_UP = ["setup red a1 b1 c1 a2 b2 a3", "setup blue 0"]   # Blue: e3 d4 e4 c5 d5 e5

BAD_INPUT = [
    # (commands before, bad line, what the message says)
    ([], "play red 3 c1c2", "set-up is not finished"),
    ([], "genmove blue 2", "set-up is not finished"),
    ([], "undo", "nothing to undo"),
    ([], "setup red a1 b1", "malformed arrangement"),
    ([], "setup red a1 b1 c1 a2 b2 c3", "not one of Red's home cells"),
    ([], "setup blue a1 b1 c1 a2 b2 a3", "not one of Blue's home cells"),
    ([], "setup red b1 a1 a1 a2 b2 a3", "two cubes on one cell"),
    ([], "setup red 9999", "out of range"),
    ([], "setup teal 3", "unknown colour"),
    ([], "gensetup", "wrong number of arguments"),
    (SET_UP, "setup red 5", "set-up is over"),
    (SET_UP, "gensetup blue", "set-up is over"),
    (SET_UP, "play red 0 c1c2", "bad die"),
    (SET_UP, "play red 33 c1c2", "bad die"),
    (SET_UP, "play red 3 a2b3", "illegal move a2b3 for red with die 3; legal: c1d1"),
    (SET_UP, "play red 3 c1b1", "not a one-cell step"),
    (SET_UP, "play red 3 c1", "malformed move"),
    (SET_UP, "play blue 3 d5c4", "it is red's turn"),
    (SET_UP, "genmove blue 3", "it is red's turn"),
    (SET_UP, "play red 3", "wrong number of arguments"),
    (SET_UP, "time_settings 1 2", "wrong number of arguments"),
    (SET_UP, "time_settings 1 nan 0", "expected seconds >= 0"),
    (SET_UP, "time_left red 1 2 3 4", "wrong number of arguments"),
    (SET_UP, "descent-strength superhuman", "unknown strength level"),
    (SET_UP, "frobnicate", "unknown command: frobnicate"),
    (SET_UP, "known_command", "wrong number of arguments"),
]


@pytest.mark.parametrize(("before", "line", "message"), BAD_INPUT,
                         ids=[line for _, line, _ in BAD_INPUT])
def test_bad_input_changes_nothing(before: list[str], line: str, message: str) -> None:
    protocol, out = make_protocol()
    for command in before:
        assert ask(protocol, out, command).startswith("= ")
    shown = board(protocol, out)
    history = protocol.state.history()
    reply = ask(protocol, out, line)
    assert reply.startswith("? ") and message in reply, reply
    assert board(protocol, out) == shown
    assert protocol.state.history() == history
    assert protocol.running


def test_ids_are_echoed_on_success_and_error() -> None:
    protocol, out = make_protocol()
    assert ask(protocol, out, "17 name") == "=17 descent\n\n"
    assert ask(protocol, out, "18 frobnicate") == "?18 unknown command: frobnicate\n\n"
    assert ask(protocol, out, "019 protocol_version") == "=19 2\n\n"


def test_comments_blank_lines_and_interrupt_get_no_reply() -> None:
    protocol, out = make_protocol()
    for line in ("", "   ", "# a comment", "# interrupt", "#interrupt"):
        assert protocol.handle(line)
    assert out == []
    assert protocol.is_urgent("# interrupt") and not protocol.is_urgent("genmove red 3")
    assert ask(protocol, out, "name # trailing comment") == "= descent\n\n"


def test_quit_ends_the_session() -> None:
    protocol, out = make_protocol()
    assert protocol.handle("quit") is False
    assert out == ["= \n\n"]


def test_undo_takes_back_move_and_die() -> None:
    protocol, out = make_protocol()
    for command in SET_UP:
        ask(protocol, out, command)
    start = protocol.state.to_text()
    assert ask(protocol, out, "play red 3 c1d2") == "= \n\n"
    assert ask(protocol, out, "genmove blue 4").startswith("= ")
    assert len(protocol.state.history()) == 6   # two set-ups, two (die, move) pairs
    ask(protocol, out, "undo")
    assert protocol.state.phase_name == "roll" and protocol.state.side_to_act == 1
    ask(protocol, out, "undo")
    assert protocol.state.to_text() == start
    ask(protocol, out, "undo")
    ask(protocol, out, "undo")
    assert protocol.state.to_text() == "5/5/5/5/5 r setup"
    assert ask(protocol, out, "undo").startswith("? nothing to undo")


def test_blue_may_set_up_first_and_undo_restores_it() -> None:
    for game in ("einstein(setup=free)", "einstein(setup=random)"):
        protocol, out = make_protocol(game)
        reply = ask(protocol, out, "gensetup blue")
        assert reply == "= e5 e4 d5 d4 c5 e3\n\n"
        assert "held until red sets up" in board(protocol, out)
        ask(protocol, out, "setup red 0")
        state = protocol.state
        assert state.phase_name == "roll"
        assert [cell_name(state.cube_cell(1, k)) for k in range(1, 7)] == \
            ["e5", "e4", "d5", "d4", "c5", "e3"]
        ask(protocol, out, "undo")                    # Red's set-up; Blue's is held again
        assert "held until red sets up" in board(protocol, out)
        assert protocol.state.to_text() == "5/5/5/5/5 r setup"
        ask(protocol, out, "undo")                    # Blue's arrangement
        assert "held" not in board(protocol, out)


def test_resending_an_arrangement_is_a_no_op() -> None:
    protocol, out = make_protocol()
    for command in SET_UP:
        ask(protocol, out, command)
    history = protocol.state.history()
    assert ask(protocol, out, "setup red a1 b1 c1 a2 b2 a3") == "= \n\n"
    assert ask(protocol, out, "setup blue e3 d4 e4 c5 d5 e5") == "= \n\n"
    assert ask(protocol, out, "setup blue 0") == "= \n\n"
    assert protocol.state.history() == history


def test_mirror_setup_places_both_sides() -> None:
    protocol, out = make_protocol("einstein(setup=mirror)")
    assert ask(protocol, out, "setup blue 0").startswith("? with setup=mirror")
    assert ask(protocol, out, "gensetup red") == "= a1 a2 b1 b2 c1 a3\n\n"
    # Blue's arrangement is Red's point mirror, which is also what gensetup answers
    assert ask(protocol, out, "gensetup blue") == "= e5 e4 d5 d4 c5 e3\n\n"
    assert ask(protocol, out, "setup blue e5 e4 d5 d4 c5 e3") == "= \n\n"
    assert ask(protocol, out, "setup blue 0").startswith("? with setup=mirror")
    assert protocol.state.phase_name == "roll"


def test_strong_setup_is_a_home_arrangement() -> None:
    assert len(set(STRONG_SETUP)) == 6
    red, blue = strong_setup_cells(0), strong_setup_cells(1)
    assert sorted(red) == [0, 1, 2, 5, 6, 10]
    assert sorted(blue) == [14, 18, 19, 22, 23, 24]
    assert all(b == 24 - r for r, b in zip(red, blue, strict=True))


def test_merged_die_maps_to_its_group_outcome() -> None:
    protocol, out = make_protocol("einstein(setup=free,merge_dice=true)")
    for line in ("setup red c1 b1 a1 a2 b2 a3", "setup blue e5 e4 d5 d4 c5 e3",
                 "play red 3 a1b1", "play blue 6 e3d3", "play red 3 b1c1", "play blue 6 d3c3"):
        assert ask(protocol, out, line) == "= \n\n", line
    state = protocol.state
    assert state.cube_cell(0, 1) == -1 and state.cube_cell(0, 2) == -1
    before = state.history()
    # the real die 2 moves cube 3; the kernel records the merged outcome 1
    assert ask(protocol, out, "play red 2 c1c2") == "= \n\n"
    assert protocol.state.history()[:-2] == before
    assert protocol.state.history()[-2] == 1
    ask(protocol, out, "undo")
    assert protocol.state.history() == before
    reply = ask(protocol, out, "genmove red 3")
    assert reply in ("= c1d1\n\n", "= c1c2\n\n", "= c1d2\n\n")
    assert protocol.state.history()[-2] == 1
    ask(protocol, out, "undo")
    # without merging, the same dice are separate outcomes
    plain, plain_out = make_protocol("einstein(setup=free)")
    for line in ("setup red c1 b1 a1 a2 b2 a3", "setup blue e5 e4 d5 d4 c5 e3",
                 "play red 3 a1b1", "play blue 6 e3d3", "play red 3 b1c1", "play blue 6 d3c3",
                 "play red 2 c1c2"):
        ask(plain, plain_out, line)
    assert plain.state.history()[-2] == 2


def test_strength_is_an_option() -> None:
    protocol, out = make_protocol()
    assert ask(protocol, out, "descent-strength casual") == "= \n\n"
    assert protocol.engine.settings.strength == "casual"
    assert ask(protocol, out, "descent-strength") == "= casual\n\n"
    assert ask(protocol, out, "param_descent strength 7") == "= \n\n"
    shown = ask(protocol, out, "param_descent")[2:].splitlines()
    assert "strength 7" in shown and "hash_mb 8" in shown and "search expectiminimax" in shown
    assert ask(protocol, out, "param_descent hash_mb 4") == "= \n\n"
    assert protocol.engine.settings.hash_mb == 4
    assert ask(protocol, out, "param_descent hash_mb 0").startswith("? hash_mb must be in")
    assert protocol.engine.settings.hash_mb == 4
    for line in SET_UP:
        ask(protocol, out, line)
    assert ask(protocol, out, "genmove red 4").startswith("= ")


def test_interrupt_stops_a_long_genmove() -> None:
    protocol, out = make_protocol()
    protocol.engine.set_option("nodes_per_second", 0.0)
    for line in SET_UP:
        ask(protocol, out, line)
    ask(protocol, out, "time_settings 3600 0 0")   # a budget of minutes for this move
    worker = threading.Thread(target=protocol.handle, args=("genmove red 4",))
    worker.start()
    while not protocol.engine.searching and worker.is_alive():
        threading.Event().wait(0.01)
    protocol.handle_urgent("# interrupt")
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert re.fullmatch(r"= [a-e][1-5][a-e][1-5]\n\n", out[-1]), out[-1]


# -- fuzz ---------------------------------------------------------------------------

WORDS = ["red", "blue", "r", "b", "R", "x", "0", "3", "6", "7", "-1", "719", "720", "a1",
         "b2c3", "c1c2", "e5d4", "a3b4", "d5c4", "a1 b1 c1 a2 b2 a3", "e5 e4 d5 d4 c5 e3",
         "1.5", "nan", "strength", "max", "random", "#", "é", "\t", "''", '"', "²", "٣",
         "\x00", "\u200b"]
COMMANDS = [*EwnProtocol.commands, "boardsize", "play", "genmove", "setup", "12", "²"]
line_strategy = st.one_of(
    st.builds(lambda c, a: " ".join([c, *a]), st.sampled_from(COMMANDS),
              st.lists(st.sampled_from(WORDS), max_size=7)),
    st.text(max_size=30),
)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(line_strategy, min_size=1, max_size=12))
def test_fuzz_every_line_gets_one_well_formed_reply(lines: list[str]) -> None:
    protocol, out = make_protocol("einstein(setup=random,merge_dice=true)")
    for line in lines:
        if "\n" in line or "\r" in line:
            continue   # a transport never hands over a line break
        before = len(out)
        protocol.handle(line)
        if not clean(line):
            assert len(out) == before, (line, out[before:])
            continue
        assert len(out) == before + 1, (line, out[before:])
        assert REPLY.match(out[-1]), (line, out[-1])
        assert not out[-1].startswith("? internal error"), (line, out[-1])
