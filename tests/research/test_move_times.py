"""tools/move_times.py: mean seconds per chosen move from arena records."""

from __future__ import annotations

import json
from pathlib import Path

from descent.research.move_times import move_times


def test_move_times_split_decisions_and_skip_forced_openings(tmp_path: Path) -> None:
    games = [
        {"first": "a", "second": "b", "plies": 5, "seconds": [0.3, 0.2], "opening": []},
        {"first": "b", "second": "a", "plies": 4, "seconds": [0.1, 0.4], "opening": ["a1"]},
    ]
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in games) + "\n", encoding="utf-8")
    times = move_times(path)
    # a: 3 decisions as first mover + 2 as second; b: 2 + (2 - 1 forced opening move)
    assert times["a"][0] == 5 and abs(times["a"][1] - 0.7) < 1e-12
    assert times["b"][0] == 3 and abs(times["b"][1] - 0.3) < 1e-12
