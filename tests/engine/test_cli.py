"""The descent command line, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def descent(*args: str) -> subprocess.CompletedProcess[str]:
    # the timeout guards against a hang; it is no speed test (a loaded machine is slow)
    return subprocess.run([sys.executable, "-m", "engine", *args],
                          capture_output=True, text=True, timeout=600)


def test_version() -> None:
    result = descent("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("descent ")


def test_rules_prints_default_hex_position() -> None:
    result = descent("rules")
    assert result.returncode == 0, result.stderr
    assert "game: hex(size=11,swap=false)" in result.stdout
    assert "121 moves" in result.stdout


def test_rules_with_moves_and_swap() -> None:
    result = descent("rules", "hex(size=5,swap=true)", "--moves", "c2 swap")
    assert result.returncode == 0, result.stderr
    assert "position: c2 swap" in result.stdout
    assert "24 moves" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [(["rules", "hex(size=30)"], "out of range"),
     (["rules", "chess"], "unknown game"),
     (["rules", "hex(size=5)", "--moves", "a1 a1"], "not legal")],
)
def test_rules_bad_input_is_one_clear_line(args: list[str], message: str) -> None:
    result = descent(*args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_bench_rules_json_for_hex() -> None:
    result = descent("bench", "rules", "--game", "hex", "--json", "--seconds", "0.05")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (row,) = report["rows"]
    assert row["game"] == "hex" and row["ours_c"] > 0 and row["ours_python"] > 0


def test_bench_all_json_is_one_object_with_the_search_signature() -> None:
    result = descent("bench", "all", "--game", "einstein", "--json", "--seconds", "0.05")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report["suites"]) == {"rules", "search", "nets"}
    assert report["signature"] == report["suites"]["search"]["signature"] > 0
