"""Regenerates (or checks) the EinStein golden transcripts: the HTP-like dialect in
tests/data/transcripts/ewn/ and the NTU referee dialect in tests/data/transcripts/ntu/.

A transcript is a readable file: a line starting with ``> `` is an input line, the lines
after it up to the next ``> `` are the exact output it gets (ewn: the reply and its blank
line; ntu: one answer line; nothing for a comment, a blank line or ntu's ``exit``). The
first input line of a file may be a comment ``# descent play ARGS`` giving the game and
options of that session (the protocol, seed, node rate and hash size are fixed here). This
script keeps the input lines of each file, runs them through a real ``descent play``
subprocess and writes the outputs back, so a person reviews the change with ``git diff``.

    python -m tests.helpers.regen_transcripts_ewn          # rewrite every ewn and ntu transcript
    python -m tests.helpers.regen_transcripts_ewn --check  # exit 1 and show what differs
    python -m tests.helpers.regen_transcripts_ewn ewn/merged.txt
"""

from __future__ import annotations

import argparse
import difflib
import shlex
import sys
from pathlib import Path

from tests.helpers.transcripts import converse, parse_transcript, render

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "tests" / "data" / "transcripts"
PROTOCOLS = ("ewn", "ntu")
FIXED_ARGS = ("--seed", "1", "--nodes-per-second", "20000", "--hash-mb", "16",
              "--log-level", "warning")
DEFAULT_GAME = ("--game", "einstein(setup=free)")
ARGS_PREFIX = "# descent play "


def session_args(protocol: str, commands: list[str]) -> list[str]:
    """The ``descent play`` arguments of a transcript (its ``# descent play`` line)."""
    extra: list[str] = list(DEFAULT_GAME)
    if commands and commands[0].startswith(ARGS_PREFIX):
        extra = shlex.split(commands[0][len(ARGS_PREFIX):])
    return ["--protocol", protocol, *FIXED_ARGS, *extra]


def expects_reply(protocol: str, line: str) -> bool:
    """Whether an input line gets output: comments, blank lines and ntu's exit do not."""
    text = line.strip()
    if not text or text.startswith("#"):
        return False
    if protocol == "ewn":
        return bool(text.split("#", 1)[0].strip())
    return text.split()[0].lower() not in ("exit", "quit")


def split_replies(protocol: str, stdout: str, commands: list[str]) -> list[str]:
    """Cuts the engine's output into each input line's output (ewn replies end with a
    blank line, ntu answers are one line); leftovers go with the last line for the diff."""
    outputs = []
    rest = stdout
    end_mark = "\n\n" if protocol == "ewn" else "\n"
    for command in commands:
        if not expects_reply(protocol, command):
            outputs.append("")
            continue
        end = rest.find(end_mark)
        if end < 0:
            outputs.append(rest)
            rest = ""
            continue
        outputs.append(rest[:end + len(end_mark)])
        rest = rest[end + len(end_mark):]
    if rest and outputs:
        outputs[-1] += rest
    return outputs


def run_session(protocol: str, commands: list[str], timeout: float = 120.0) -> str:
    """Plays the lines with a fresh engine process, one reply at a time; returns its
    whole stdout."""
    return converse([sys.executable, "-m", "descent", "play", *session_args(protocol, commands)],
                    commands, lambda line: expects_reply(protocol, line),
                    blank_line_ends=protocol == "ewn", timeout=timeout, cwd=ROOT)


def regenerate(path: Path) -> tuple[str, str]:
    """(current text, regenerated text) of one transcript."""
    protocol = path.parent.name
    old = path.read_text(encoding="utf-8")
    commands = [command for command, _ in parse_transcript(old)]
    outputs = split_replies(protocol, run_session(protocol, commands), commands)
    return old, render(list(zip(commands, outputs, strict=True)))


def transcript_files(names: list[str]) -> list[Path]:
    if names:
        return [TRANSCRIPTS / name for name in names]
    return sorted(p for protocol in PROTOCOLS for p in (TRANSCRIPTS / protocol).glob("*.txt"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="transcripts under tests/data/transcripts "
                                                 "(e.g. ewn/basics.txt); default: all")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a transcript differs")
    args = parser.parse_args(argv)
    status = 0
    for path in transcript_files(args.files):
        old, new = regenerate(path)
        if old == new:
            print(f"unchanged {path.relative_to(ROOT)}")
            continue
        if args.check:
            status = 1
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                str(path), "regenerated"))
        else:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
