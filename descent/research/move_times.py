"""Mean thinking time per move of each player, from ``descent arena --out`` records.

How equal "equal time" was: a player on a clock (our engine) spends about its time per
move, while a bot given a number of simulations (OpenSpiel's MCTS) spends what they cost;
this prints both, per file, from the referee's measured seconds (request sent to reply
read: the think time plus the protocol's round trip).

    python -m descent.research.move_times runs/eval/*/games.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def move_times(path: Path) -> dict[str, tuple[int, float]]:
    """player name -> (moves it chose, seconds it took), over the games of one file.
    A game's decisions alternate from the first player; forced opening moves are not
    the first player's choices and are not counted."""
    out: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        game = json.loads(line)
        plies = int(game["plies"])
        chosen = ((plies + 1) // 2 - len(game.get("opening", [])), plies // 2)
        for side, name in enumerate((game["first"], game["second"])):
            out[name][0] += max(chosen[side], 0)
            out[name][1] += float(game["seconds"][side])
    return {name: (int(m), s) for name, (m, s) in out.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="games.jsonl files")
    args = parser.parse_args(argv)
    for path in args.files:
        times = move_times(path)
        shown = ", ".join(f"{name} {1000 * s / max(m, 1):.0f} ms over {m} moves"
                          for name, (m, s) in sorted(times.items()))
        print(f"{path.parent.name}: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
