"""The search benchmark: deterministic node counts (the signature) and its CLI."""

from __future__ import annotations

import json
import subprocess
import sys

from descent.tools import bench_search


def test_node_counts_are_deterministic() -> None:
    first = bench_search.bench_game("einstein", ["ubfms", "descent", "mcts"])
    second = bench_search.bench_game("einstein", ["ubfms", "descent", "mcts"])
    assert [r.nodes for r in first] == [r.nodes for r in second]
    assert all(r.nodes > 0 and r.positions == 4 for r in first)


def test_positions_are_fixed_player_nodes() -> None:
    for game in bench_search.GAMES:
        texts = [s.to_text() for s in bench_search.positions(game)]
        assert texts == [s.to_text() for s in bench_search.positions(game)]
        assert all(not s.is_chance_node() and not s.is_terminal()
                   for s in bench_search.positions(game))


def test_cli_prints_one_json_object_with_a_signature() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "descent", "bench", "search", "--game", "dicechess", "--json",
         "--seconds", "0.05"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["suite"] == "search"
    assert report["signature"] == sum(row["nodes"] for row in report["rows"])
    assert {row["search"] for row in report["rows"]} >= {"ubfm", "ubfms", "descent", "mcts"}
    batches = report["expectiminimax_batches"]["dicechess"]
    assert batches["positions"] >= batches["calls"] > 0
    assert batches["largest_call"] >= batches["positions_per_call"] >= 1


def test_expectiminimax_batches_are_deterministic() -> None:
    first = bench_search.emm_batches("einstein")
    second = bench_search.emm_batches("einstein")
    assert first is not None and second is not None
    assert (first["calls"], first["positions"]) == (second["calls"], second["positions"])
    assert bench_search.emm_batches("hex") is None
