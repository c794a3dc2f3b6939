"""The golden-transcript file format shared by the protocol transcript scripts: lines
starting with ``> `` are input, the lines after one (up to the next) its exact output.
A file may open with ``# args: FLAGS`` header lines: extra ``descent play`` flags for the
session that plays it."""

from __future__ import annotations

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
