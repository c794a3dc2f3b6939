"""Regenerates (or checks) the Hex GTP golden transcripts in tests/data/transcripts/gtp/.

A transcript is a readable file: a line starting with ``> `` is an input line, the lines
after it up to the next ``> `` are the exact output it gets (for GTP: the reply and its
blank line; nothing for a comment). This script keeps the input lines of each file, runs
them through a real ``descent play`` subprocess (fixed seed, nodes-as-time) and writes the
outputs back, so a person reviews the change with ``git diff``.

    python -m tests.helpers.regen_transcripts_gtp            # rewrite every transcript
    python -m tests.helpers.regen_transcripts_gtp --check    # exit 1 and show what differs
    python -m tests.helpers.regen_transcripts_gtp swap_engine_white.txt
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from descent.protocols.base import clean
from tests.helpers.transcripts import converse, parse_transcript, render

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "tests" / "data" / "transcripts" / "gtp"
ENGINE_ARGS = ("--game", "hex(size=5)", "--protocol", "gtp", "--seed", "1",
               "--nodes-per-second", "20000", "--hash-mb", "16", "--log-level", "warning")


def expects_reply(line: str) -> bool:
    """Whether a GTP line gets a reply: comments and blank lines do not."""
    return not line.lstrip().startswith("#") and bool(clean(line).split())


def split_replies(stdout: str, commands: list[str]) -> list[str]:
    """Cuts the engine's output into one reply per input line (each ends with a blank
    line); whatever is left over goes with the last line so a diff shows it."""
    outputs = []
    rest = stdout
    for command in commands:
        if not expects_reply(command):
            outputs.append("")
            continue
        end = rest.find("\n\n")
        if end < 0:
            outputs.append(rest)
            rest = ""
            continue
        outputs.append(rest[:end + 2])
        rest = rest[end + 2:]
    if rest and outputs:
        outputs[-1] += rest
    return outputs


def run_session(commands: list[str], timeout: float = 120.0,
                extra_args: tuple[str, ...] = ()) -> list[str]:
    """Plays the lines with a fresh engine process, one reply at a time; returns each
    line's output."""
    stdout = converse([sys.executable, "-m", "descent", "play", *ENGINE_ARGS, *extra_args],
                      commands, expects_reply, blank_line_ends=True, timeout=timeout, cwd=ROOT)
    return split_replies(stdout, commands)


def regenerate(path: Path) -> tuple[str, str]:
    """(old text, new text) of one transcript."""
    old = path.read_text(encoding="utf-8")
    commands = [command for command, _ in parse_transcript(old)]
    return old, render(list(zip(commands, run_session(commands), strict=True)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="transcript files (default: all)")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on change")
    args = parser.parse_args(argv)
    paths = [TRANSCRIPTS / name for name in args.names] or sorted(TRANSCRIPTS.glob("*.txt"))
    changed = 0
    for path in paths:
        old, new = regenerate(path)
        if old == new:
            print(f"{path.name}: unchanged")
            continue
        changed += 1
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                f"{path.name} (stored)", f"{path.name} (engine)"))
        else:
            path.write_text(new, encoding="utf-8")
            print(f"{path.name}: rewritten")
    return 1 if changed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
