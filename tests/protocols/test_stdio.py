"""The stdio transport as a real process: bytes that are not UTF-8, SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

PLAY = [sys.executable, "-m", "descent", "play", "--game", "hex(size=5)", "--model", "none",
        "--hash-mb", "16", "--log-level", "warning"]
# a board the search cannot solve in the time a test waits for it
LONG = [*PLAY[:5], "hex(size=11)", *PLAY[6:]]


def test_a_byte_that_is_not_utf8_is_answered_and_the_engine_goes_on() -> None:
    """Under a strict UTF-8 stdin the reader thread died on such a byte and the engine
    never answered again, nor exited on quit or end of input."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "LC_ALL": "C.UTF-8"}
    result = subprocess.run(PLAY, input=b"name\n\xe9\xff\nname\nquit\n", capture_output=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    replies = result.stdout.decode("utf-8").split("\n\n")
    assert replies[0] == "= descent" and replies[2] == "= descent", replies
    assert replies[1].startswith("? unknown command"), replies


def test_sigterm_stops_a_long_genmove_and_exits_cleanly() -> None:
    proc = subprocess.Popen(LONG, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("param_descent move_time 600\ngenmove b\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == "= \n"       # the param_descent reply
    proc.stdout.readline()
    time.sleep(1.0)                               # genmove is thinking (600 s)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.startswith("= ") and len(out.split()[1]) >= 2, out   # the move so far


def _lines_until(proc: subprocess.Popen[str], predicate: object, limit: int = 200) -> list[str]:
    assert proc.stdout is not None
    seen = []
    for _ in range(limit):
        line = proc.stdout.readline()
        seen.append(line)
        if callable(predicate) and predicate(line):
            return seen
    raise AssertionError(f"no such line in {seen}")


def test_uci_go_with_out_of_range_numbers_gets_exactly_one_bestmove() -> None:
    """``nodes 9223372036854775808`` or a movetime of hundreds of digits printed an
    internal OverflowError and never a bestmove."""
    proc = subprocess.Popen([sys.executable, "-m", "descent", "play", "--game", "dicechess",
                             "--hash-mb", "16", "--log-level", "warning"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    try:
        for go in ("go dice 1 nodes 9223372036854775808", "go dice 2 movetime " + "9" * 300,
                   "go dice 1 wtime " + "9" * 40 + " btime 1000", "go dice 2 depth 99999999999"):
            proc.stdin.write(f"position startpos\n{go}\n")
            proc.stdin.flush()
            time.sleep(0.5)
            proc.stdin.write("stop\n")
            proc.stdin.flush()
            lines = _lines_until(proc, lambda line: line.startswith("bestmove"))
            proc.stdin.write("isready\n")    # any second bestmove would come before this
            proc.stdin.flush()
            lines += _lines_until(proc, lambda line: line.strip() == "readyok")
            bestmoves = [line for line in lines if line.startswith("bestmove")]
            assert len(bestmoves) == 1, (go, lines)
            assert bestmoves[0].split()[1] != "0000", (go, lines)
            assert not any("error" in line for line in lines), (go, lines)
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_gtp_clock_of_1e300_seconds_under_nodes_as_time_still_moves() -> None:
    proc = subprocess.Popen([*PLAY, "--nodes-per-second", "20000"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    try:
        proc.stdin.write("time_left b 1e300 0\ngenmove b\n")
        proc.stdin.flush()
        time.sleep(1.0)
        proc.stdin.write("# interrupt\nparam_descent move_time 1e300\nquit\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=120)
        replies = out.split("\n\n")
        assert replies[0] == "= " and replies[1].startswith("= ") and \
            len(replies[1]) > 3, replies
        assert replies[2] == "= " and replies[3] == "= ", replies
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def _long_genmove(protocol_lines: list[str], args: list[str], then: str | None) -> str:
    """Starts a 600 s genmove, then sends ``then`` (or closes the input); the engine must
    answer with a move and exit 0 long before the search's time is up."""
    proc = subprocess.Popen([sys.executable, "-m", "descent", "play", "--hash-mb", "16",
                             "--log-level", "warning", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    try:
        proc.stdin.write("".join(line + "\n" for line in protocol_lines))
        proc.stdin.flush()
        time.sleep(1.0)                          # the genmove is thinking
        out, err = proc.communicate(input=None if then is None else then + "\n",
                                    timeout=120)
        assert proc.returncode == 0, err
        return out
    finally:
        if proc.poll() is None:
            proc.kill()


NPS = 20000   # nodes-as-time: a move's budget is a node count, whatever the machine's load


def _piped(args: list[str], script: list[str], ending: str | None) -> tuple[str, list[dict]]:
    """Writes a whole script at once, then ``ending`` (a quit line) or nothing, and closes
    the input, as a game server or a shell pipe does; returns stdout and the engine's
    logged moves."""
    text = "".join(line + "\n" for line in script) + ("" if ending is None else ending + "\n")
    result = subprocess.run([sys.executable, "-m", "descent", "play", "--hash-mb", "16",
                             "--log-level", "info", "--nodes-per-second", str(NPS), *args],
                            input=text, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    return result.stdout, [e for e in events if e.get("event") == "move"]


def _at_full_strength(moves: list[dict], count: int) -> None:
    """Every logged move spent its budget: neither cut by the quit or the end of input
    behind it nor answered before a search."""
    assert len(moves) == count, moves
    for move in moves:
        assert move["stop"] != "stopped", move
        assert move["resolved"] or move["nodes"] >= 0.95 * move["budget"][1] * NPS, move


@pytest.mark.parametrize("ending", ["quit", None])
def test_gtp_script_piped_whole_is_answered_in_order_at_full_strength(
        ending: str | None) -> None:
    """``printf 'boardsize 11\\ngenmove b\\n' | descent play`` answered a1 after 0 nodes:
    the end of input (or a quit) behind the genmove stopped it before it began."""
    script = ["boardsize 7", "param_descent move_time 0.5", "genmove b", "genmove w", "name"]
    out, moves = _piped(["--game", "hex(size=7)", "--model", "none"], script, ending)
    replies = out.split("\n\n")
    assert replies[:2] == ["= ", "= "] and replies[4] == "= descent", replies
    assert replies[2] != "= a1" and replies[2].startswith("= "), replies
    if ending == "quit":
        assert replies[5] == "= ", replies
    _at_full_strength(moves, 2)


@pytest.mark.parametrize("ending", ["quit", None])
def test_ewn_script_piped_whole_is_answered_at_full_strength(ending: str | None) -> None:
    script = ["setup red A1 B1 C1 A2 B2 A3", "setup blue E5 D5 C5 E4 D4 E3", "genmove red 3",
              "genmove blue 5"]
    out, moves = _piped(["--game", "einstein", "--model", "none"], script, ending)
    replies = out.split("\n\n")
    assert all(r.startswith("= ") and len(r) > 3 for r in replies[2:4]), replies
    _at_full_strength(moves, 2)


@pytest.mark.parametrize("ending", ["exit", None])
def test_ntu_script_piped_whole_is_answered_at_full_strength(ending: str | None) -> None:
    script = ["time_setting 100", "ini R", "get R 3 A1 B1 C1 A2 B2 A3 E5 E4 D5 D4 C5 E3",
              "get R 6 A1 B1 C1 A2 B2 A3 E5 E4 D5 D4 C5 E3"]
    out, moves = _piped(["--game", "einstein", "--protocol", "ntu", "--model", "none"],
                        script, ending)
    answers = out.splitlines()
    assert answers[0] == "ok" and len(answers) == 4, answers
    assert all(len(a.split()) == 2 for a in answers[2:]), answers
    _at_full_strength(moves, 2)


def test_sigint_cuts_the_search_and_the_session_goes_on() -> None:
    """SIGINT is GoGui's other interrupt: the running genmove answers at once with its move
    so far and the engine reads on; a SIGINT with no search running ends the session."""
    proc = subprocess.Popen(LONG, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("param_descent move_time 600\ngenmove b\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "= \n"
        proc.stdout.readline()
        time.sleep(1.0)                               # genmove is thinking (600 s)
        proc.send_signal(signal.SIGINT)
        move = proc.stdout.readline()
        assert move.startswith("= ") and len(move.split()[1]) >= 2, move
        assert proc.stdout.readline() == "\n"
        proc.stdin.write("name\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "= descent\n"
        proc.stdout.readline()
        proc.send_signal(signal.SIGINT)               # idle: the session ends
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigterm_drops_the_queued_commands() -> None:
    """SIGTERM during a 600 s genmove with another queued behind it: the first answers with
    its move so far, the queued one never runs, the process exits 0 at once."""
    proc = subprocess.Popen(LONG, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("param_descent move_time 600\ngenmove b\ngenmove w\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == "= \n"
    proc.stdout.readline()
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.startswith("= ") and out.count("= ") == 1, out


def _depth1_values(fen: str, roll: int) -> dict[str, float]:
    """Each move's value after a one-iteration expectiminimax search (depth 1 with the C
    heuristic), in White's view, by UCI name."""
    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.games.registry import make_game
    from descent.search_cy.search.api import SearchParams, make_search
    from descent.search_cy.search.stopper import Stopper

    state = make_game("dicechess").state_from_text(f"{fen} {'PNBRQK'[roll - 1]}")
    search = make_search("expectiminimax", heuristic_for(state), SearchParams(hash_mb=16))
    result = search.run(state, Stopper(iterations=1))
    return {state.action_to_string(c.action): c.value for c in result.children}


@pytest.mark.parametrize("ending", ["stop", "quit", None])
def test_uci_go_cut_at_once_answers_at_least_a_depth_1_move(ending: str | None) -> None:
    """UCI's go runs in the background: ``stop``, ``quit`` and the end of input read at once
    after it cut the search, as Stockfish's do; the bestmove must still be a searched one
    (it was b1a3, the first move in move order, after 0 nodes)."""
    fen = "r3k2r/ppp2ppp/2n5/3qp3/8/2N5/PPPP1PPP/R1BQK2R w KQkq - 0 1"
    script = f"position fen {fen}\ngo dice 2 movetime 600000\n" + \
        ("" if ending is None else ending + "\n")
    result = subprocess.run([sys.executable, "-m", "descent", "play", "--game", "dicechess",
                             "--model", "none", "--hash-mb", "16", "--log-level", "warning"],
                            input=script, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    moves = [line.split()[1] for line in result.stdout.splitlines()
             if line.startswith("bestmove")]
    assert len(moves) == 1, result.stdout
    values = _depth1_values(fen, 2)
    assert values[moves[0]] >= max(values.values()) - 1e-9, (moves, values)
