"""Golden UCI transcripts: run them against the real engine process, or regenerate them.

A transcript (``tests/data/transcripts/uci/*.txt``) is a readable file::

    # args: --game dicechess(nomove=pass)      (optional header: extra ``descent play`` flags)
    > uci                                      (an input line)
    id name descent <version>                  (its exact output, up to the next ``> ``)
    ...

Every session runs ``python -m descent play`` with ``BASE_ARGS`` (seed 1, nodes-as-time, a
small table) plus the header's flags, so searches are reproducible. Lines are sent one at a
time and each one's output is read completely before the next goes out: ``uci`` up to
``uciok``, ``isready`` up to ``readyok``, ``go`` up to its ``bestmove``, ``quit`` up to the
end of the output; any other line is followed by an ``isready`` barrier whose ``readyok``
is not recorded. ``go infinite`` does not belong in a golden file (its info lines come on
the clock). The engine version is written as ``<version>``.

To add a case, write ``> `` lines into a file (new or existing) and regenerate::

    python -m tests.helpers.regen_transcripts_uci            # rewrites every transcript
    python -m tests.helpers.regen_transcripts_uci game.txt   # only these
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from tests.helpers.process import EngineProcess
from tests.helpers.transcripts import parse_file, render_file

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT_DIR = ROOT / "tests" / "data" / "transcripts" / "uci"
BASE_ARGS = ("-m", "descent", "play", "--game", "dicechess", "--seed", "1", "--hash-mb", "16",
             "--nodes-per-second", "100000", "--log-level", "error")
VERSION_RE = re.compile(r"^id name descent \S+$")
VERSION_LINE = "id name descent <version>"
# the Hash maximum is the machine's available memory: the transcripts keep a placeholder
HASH_RE = re.compile(r"^(option name Hash type spin default \d+ min 1 max )\d+$")
HASH_MAX = r"\1<memory MiB>"
TIMEOUT = 30.0

Exchange = tuple[str, list[str]]


class UciSession(EngineProcess):
    """The engine as a subprocess, with line reads under a deadline."""

    def __init__(self, extra_args: list[str] | tuple[str, ...] = (),
                 command: list[str] | None = None) -> None:
        super().__init__(command or [sys.executable, *BASE_ARGS, *extra_args])

    def read_line(self, timeout: float = TIMEOUT) -> str | None:
        """The next output line; None at the end of the output; TimeoutError."""
        return self.next_line(timeout)

    def read_until(self, done: str, timeout: float = TIMEOUT) -> list[str]:
        """Lines up to and including the first that starts with ``done`` ("" = the end)."""
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.read_line(max(0.01, deadline - time.monotonic()))
            if line is None:
                if done:
                    raise EOFError(f"output ended before {done!r}; got {out}")
                return out
            out.append(line)
            if done and line.split(" ", 1)[0] == done:
                return out

    def exchange(self, line: str) -> list[str]:
        """Sends one line and returns all of its output (module docstring)."""
        self.send(line)
        words = line.split()
        key = words[0].lower() if words else ""
        if words == ["uci"]:
            out = self.read_until("uciok")
        elif words == ["isready"]:
            out = self.read_until("readyok")
        elif key == "go":
            out = self.read_until("bestmove")
        elif key == "quit":
            out = self.read_until("")
            self.proc.wait(TIMEOUT)
        else:
            self.send("isready")
            out = self.read_until("readyok")[:-1]
        return [VERSION_LINE if VERSION_RE.match(o) else HASH_RE.sub(HASH_MAX, o) for o in out]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(TIMEOUT)


def parse(text: str) -> tuple[list[str], list[Exchange]]:
    """A transcript -> (extra engine flags, [(input line, expected output lines)])."""
    args, pairs = parse_file(text)
    return args, [(sent, output.splitlines()) for sent, output in pairs]


def render(args: list[str], exchanges: list[Exchange]) -> str:
    return render_file(args, [(sent, "".join(f"{line}\n" for line in output))
                              for sent, output in exchanges])


def run_transcript(args: list[str], inputs: list[str]) -> list[Exchange]:
    """Plays the inputs against a fresh engine; the actual exchanges."""
    session = UciSession(args)
    try:
        return [(line, session.exchange(line)) for line in inputs]
    finally:
        session.close()


def regenerate(path: Path) -> None:
    args, exchanges = parse(path.read_text(encoding="utf-8"))
    actual = run_transcript(args, [sent for sent, _ in exchanges])
    path.write_text(render(args, actual), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="transcript names (default: all)")
    ns = parser.parse_args(argv)
    paths = [TRANSCRIPT_DIR / name for name in ns.files] if ns.files \
        else sorted(TRANSCRIPT_DIR.glob("*.txt"))
    for path in paths:
        regenerate(path)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
