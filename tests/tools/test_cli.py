"""The descent command line, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def descent(*args: str) -> subprocess.CompletedProcess[str]:
    # the timeout guards against a hang; it is no speed test (a loaded machine is slow)
    return subprocess.run([sys.executable, "-m", "descent", *args],
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


@pytest.mark.parametrize(("game", "protocol", "fits"), [
    ("einstein", "gtp", "ewn or ntu"), ("hex", "uci", "gtp"), ("dicechess", "ewn", "uci")])
def test_play_refuses_a_protocol_that_does_not_fit_the_game(game: str, protocol: str,
                                                            fits: str) -> None:
    result = subprocess.run([sys.executable, "-m", "descent", "play", "--game", game,
                             "--protocol", protocol], input="quit\n", capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"is played over {fits}" in lines[0], result.stderr


def test_python_m_descent_and_the_version_agree() -> None:
    import descent as package

    assert descent("--version").stdout.strip() == f"descent {package.__version__}"


def test_arena_players_start_the_installed_package_not_a_local_module(tmp_path: Path) -> None:
    """A folder holding ``engine.py``, ``tools/`` and ``descent.py`` shadows nothing: the
    arena's players start ``python -P -m descent``, which never imports from the folder."""
    (tmp_path / "engine.py").write_text("raise SystemExit('the user engine.py was imported')\n")
    (tmp_path / "descent.py").write_text("raise SystemExit('the user descent.py was imported')\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("raise SystemExit('user tools')\n")
    result = subprocess.run(
        [sys.executable, "-P", "-m", "descent", "arena", "--game", "hex(size=3)",
         "--games", "2", "--out", str(tmp_path / "out"),
         "descent:search=ubfms,time=0.05", "descent:search=mcts,time=0.05"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["games"] == 2 and set(results["reasons"]) == {"normal"}, results
    assert results["crashes"] == [], results


def test_play_refuses_a_table_larger_than_the_memory_in_one_line() -> None:
    result = subprocess.run([sys.executable, "-m", "descent", "play", "--game", "dicechess",
                             "--hash-mb", str(1 << 40)], input="quit\n", capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "MiB of memory available" in lines[0], result.stderr
