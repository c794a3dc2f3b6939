"""The stdio transport as a real process: bytes that are not UTF-8, SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

PLAY = [sys.executable, "-m", "descent", "play", "--game", "hex(size=5)", "--model", "none",
        "--hash-mb", "16", "--log-level", "warning"]


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
    proc = subprocess.Popen(PLAY, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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


def test_gtp_quit_and_end_of_input_stop_a_running_genmove() -> None:
    """Both waited for the search (17 s with a 20 s move time; forever with a huge clock)."""
    lines = ["param_descent move_time 600", "genmove b"]
    for then in ("quit", None):
        replies = _long_genmove(lines, ["--game", "hex(size=7)", "--model", "none"],
                                then).split("\n\n")
        assert replies[0] == "= " and replies[1].startswith("= ") and len(replies[1]) > 3
        if then == "quit":
            assert replies[2] == "= "


def test_a_quit_read_before_the_genmove_starts_still_ends_it() -> None:
    """The reader may see the quit before the main thread starts the genmove queued ahead
    of it (a slow start-up): the genmove must still answer at once, not after 600 s."""
    proc = subprocess.run([sys.executable, "-m", "descent", "play", "--hash-mb", "16",
                           "--log-level", "warning", "--game", "hex(size=7)", "--model",
                           "none"], input="param_descent move_time 600\ngenmove b\nquit\n",
                          capture_output=True, text=True, timeout=120)
    replies = proc.stdout.split("\n\n")
    assert proc.returncode == 0, proc.stderr
    assert replies[0] == "= " and replies[1].startswith("= ") and replies[2] == "= "


def test_ewn_quit_stops_a_running_genmove() -> None:
    lines = ["time_settings 100000 0 0", "setup red A1 B1 C1 A2 B2 A3",
             "setup blue E5 D5 C5 E4 D4 E3", "genmove red 3"]
    replies = _long_genmove(lines, ["--game", "einstein", "--model", "none"],
                            "quit").split("\n\n")
    assert replies[3].startswith("= ") and replies[4] == "= ", replies
