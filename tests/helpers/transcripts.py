"""The golden-transcript file format shared by the protocol transcript scripts: lines
starting with ``> `` are input, the lines after one (up to the next) its exact output.
A file may open with ``# args: FLAGS`` header lines: extra ``descent play`` flags for the
session that plays it."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from collections.abc import Callable

PROMPT = "> "
ARGS = "# args:"


def parse_transcript(text: str) -> list[tuple[str, str]]:
    """(input line, expected output) pairs of a transcript file."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pairs: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith(PROMPT):
            pairs.append((line[len(PROMPT):], []))
        elif pairs:
            pairs[-1][1].append(line)
        else:
            raise ValueError(f"transcript output before the first input line: {line!r}")
    return [(command, "".join(out + "\n" for out in output)) for command, output in pairs]


def render(pairs: list[tuple[str, str]]) -> str:
    """The transcript text of (input line, output) pairs; parse_transcript's inverse."""
    return "".join(f"{PROMPT}{command}\n{output}" for command, output in pairs)


def parse_file(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(the header's extra engine flags, the (input line, expected output) pairs)."""
    lines = text.split("\n")
    args: list[str] = []
    while lines and lines[0].startswith(ARGS):
        args += lines.pop(0)[len(ARGS):].split()
    return args, parse_transcript("\n".join(lines))


def render_file(args: list[str], pairs: list[tuple[str, str]]) -> str:
    """parse_file's inverse."""
    header = f"{ARGS} {' '.join(args)}\n" if args else ""
    return header + render(pairs)


def converse(argv: list[str], commands: list[str], expects_reply: Callable[[str], bool],
             blank_line_ends: bool, timeout: float = 120.0,
             cwd: str | os.PathLike[str] | None = None) -> str:
    """Talks to an engine process as a strict client: each line is sent only once the
    reply to the line before has arrived (a reply ends with a blank line when
    ``blank_line_ends``, else it is one line), as GTP controllers and referees do; then
    input ends. Returns everything the engine printed. RuntimeError on a non-zero exit.

    (A UCI engine reads a ``quit`` or the end of input sent while it searches as a
    stop; the synchronous protocols would answer a whole script at once the same way,
    but a strict client is what controllers are.)"""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, text=True, cwd=cwd)
        assert proc.stdin is not None and proc.stdout is not None
        watchdog = threading.Timer(timeout, proc.kill)
        watchdog.start()
        out: list[str] = []
        try:
            for command in commands:
                proc.stdin.write(command + "\n")
                proc.stdin.flush()
                if not expects_reply(command):
                    continue
                while True:
                    line = proc.stdout.readline()
                    out.append(line)
                    if not line or not blank_line_ends or line == "\n":
                        break
            proc.stdin.close()
            out.append(proc.stdout.read())
            code = proc.wait()
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
        if code != 0:
            err.seek(0)
            raise RuntimeError(f"engine exited with {code}: {err.read()[-2000:]}")
    return "".join(out)
