"""The project's text speaks of the project, never of how or when its authors worked.

Scans the repository's text files (docs, README, code with its comments and docstrings,
configs, tests) for the phrases of a work diary (PHRASES: chapters of work named by their
order or number, the sitting before or after, machines borrowed for a while, and
citations of the old diary file). Results are filed by topic (docs/results/), not by when
they were measured.

"Session" alone is a product word here (an MQTT session, the session that ends on
``quit``, ``Engine.end_session``), so the bare word is never banned.
"""

from __future__ import annotations

import bisect
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# text files by suffix, and the few without one
SUFFIXES = {
    ".md", ".rst", ".txt", ".py", ".pyx", ".pxd", ".pyi", ".toml", ".cfg", ".ini", ".sh",
    ".h", ".c", ".cpp", ".yml", ".yaml", ".htp",
}
NAMES = {"Dockerfile", ".gitignore", ".dockerignore", ".importlinter", "run"}

_ORDINAL = (
    r"(?:(?:twenty|thirty|forty)-)?(?:first|second|third|fourth|fifth|sixth|seventh|eighth"
    r"|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth"
    r"|eighteenth|nineteenth|twentieth|thirtieth|fortieth)"
)
PHRASES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"\b{_ORDINAL}\s+sessions?\b",
        r"\b\d+(?:st|nd|rd|th)\s+sessions?\b",
        r"\bsessions?\s+\d+\b",
        r"\b(?:this|last|next|earlier|previous|later)\s+sessions?\b",
        r"\b(?:this|last)\s+turn\b",
        r"\ba\s+turn\s+ago\b",
        r"\bmachines?\s+(?:was\s+|were\s+)?lent\b",
        r"\blent\s+(?:a|an|the|no)\s+(?:GPU|device|machine)\b",
        r"\bnot\s+lent\b",
        r"\bdevice[ -]time\b",
        r"\bRESULTS\.md\b",                        # the diary: results are filed by topic
    )
]

SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()


def text_files() -> list[str]:
    """Tracked files and new ones git does not ignore, that are text by their name."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = []
    for name in sorted(set(out.split("\0")) - {""}):
        path = Path(name)
        if name == SELF or not (ROOT / path).is_file():
            continue
        if path.suffix in SUFFIXES or path.name in NAMES:
            files.append(name)
    return files


_LEADER = re.compile(r"^\s*(?:#+|//+|\*+)?\s*")


def hits_in(name: str, text: str) -> list[str]:
    """``file:line: phrase`` for each phrase about the building process in ``text``.

    The lines are joined without their indentation and comment leaders first, so that a
    phrase broken across two lines of a comment or a paragraph is found too."""
    lines = text.splitlines()
    starts, parts, offset = [], [], 0
    for line in lines:
        part = _LEADER.sub("", line)
        starts.append(offset)
        parts.append(part)
        offset += len(part) + 1
    flat = " ".join(parts)
    found = []
    for pattern in PHRASES:
        for match in pattern.finditer(flat):
            number = bisect.bisect_right(starts, match.start())
            found.append(f"{name}:{number}: {match.group(0)!r}: {lines[number - 1].strip()}")
    return sorted(found, key=lambda hit: int(hit.split(":")[1]))


def test_the_patterns_catch_the_building_process_and_spare_the_product() -> None:
    caught = [
        "RESULTS.md, nineteenth session, has its matches.",
        "as in the Twenty-fifth session",
        "over the 18th session's matches",
        "sessions 18, 20, 21",
        "This session adds a network leaf",
        "what the next session should try",
        "in an earlier session",
        "measured this turn",
        "(RESULTS.md, eleventh\n    # session)",
        "fixed a turn ago",
        "this task was lent a GPU machine",
        "no machine lent",
        "15 minutes of device time",
    ]
    for line in caught:
        assert hits_in("x.md", line), line
    spared = [
        "the session ends on quit",
        "Engine.end_session is sticky",
        "an MQTT session that outlives a dropped connection",
        "the player to move this time",
        "a session expiry longer than an outage",
    ]
    for line in spared:
        assert not hits_in("x.md", line), line


def test_no_text_speaks_of_the_building_process() -> None:
    found = []
    for name in text_files():
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += hits_in(name, text)
    assert not found, "words about how the project was built:\n" + "\n".join(found)
