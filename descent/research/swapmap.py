"""``descent swapmap``: which first stones of Hex to swap, measured by self-play.

Under the swap rule the second player takes Black's first stone when it is worth more
than a move: when Black wins more than half the games from it. A search at one second
a move cannot tell (every first stone looks close to even to it, and it never swapped
the edge openings MoHex 2.0 swaps), so the decision comes from a table: for each first
stone, up to the half-turn symmetry (which keeps the colours), ``selfplay`` plays games
of ``rave`` against itself at a fixed number of simulations a move from the position
after it and writes one JSON line a game; ``build`` counts Black's wins per stone into
the map the engine ships (``descent/search_cy/games/hex_swap.json``)::

    descent swapmap selfplay hex11-first-stones.jsonl --size 11 --games 48 \
        --sims 2000 --seed 1 -j 2        # then xz it into data/swap/
    descent swapmap build data/swap/hex11-first-stones.jsonl.xz \
        data/swap/hex9-first-stones.jsonl.xz descent/search_cy/games/hex_swap.json

The engine swaps a first stone whose Black score is above one half, and under the swap
rule opens with the stone whose score is nearest one half (the one that leaves the
opponent the least, whichever it chooses). Self-play measures practical value between
equal players, not the game-theoretic value: it is the value that matters to a player
who cannot solve the position either.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from descent.research.patterns import (
    append_games,
    check_selfplay_arguments,
    read_jsonl,
    selfplay_arguments,
)


def first_stones(size: int) -> list[int]:
    """One cell of each class of first stones under the half turn (the smaller index)."""
    n2 = size * size
    return [c for c in range(n2) if c <= n2 - 1 - c]


def play_game(size: int, first: int, sims: int, seed: int) -> dict[str, Any]:
    """One game of ``rave`` against itself from Black's stone on ``first``."""
    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.games.registry import make_game
    from descent.search_cy.search.api import SearchParams, make_search
    from descent.search_cy.search.stopper import Stopper

    state = make_game(f"hex(size={size})").new_initial_state()
    state.apply_action(first)
    search = make_search("rave", heuristic_for(state), SearchParams(seed=seed, hash_mb=64))
    plies = 1
    while not state.is_terminal():
        state.apply_action(search.run(state, Stopper(iterations=sims)).action)
        plies += 1
    winner = 0 if state.terminal_value() > 0 else 1      # Hex has no draw
    return {"size": size, "first": first, "sims": sims, "seed": seed,
            "winner": winner, "plies": plies}


def _play(job: tuple[int, int, int, int]) -> dict[str, Any]:
    return play_game(*job)


def tasks(size: int, games: int, sims: int, seed: int) -> list[tuple[int, int, int, int]]:
    """Game g of stone c has seed ``seed * 10**7 + g * 1000 + c`` (no two alike for
    sizes up to 31), games ordered round by round so that a cut run is balanced."""
    return [(size, c, sims, seed * 10**7 + g * 1000 + c)
            for g in range(games) for c in first_stones(size)]


def selfplay(out: Path, size: int, games: int, sims: int, seed: int, jobs: int = 1) -> None:
    """Appends ``games`` games for every first stone of ``size`` to ``out``, each line
    written when its game ends (the records do not depend on ``jobs``)."""
    append_games(out, _play, tasks(size, games, sims, seed), jobs, chunksize=4)


def _records(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    for path, number, record in read_jsonl(paths):
        try:
            int(record["size"]), int(record["first"]), int(record["winner"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path}:{number}: not a first-stone record ({e})") from None
        yield record


def build(paths: Iterable[Path]) -> dict[str, Any]:
    """The swap map of the records: per size, Black's wins and the games of each first
    stone (under its class's smaller index), and the simulations they were played at."""
    sizes: dict[int, dict[str, Any]] = {}
    for r in _records(paths):
        size, first = int(r["size"]), int(r["first"])
        if not 0 <= first < size * size:
            raise ValueError(f"first stone {first} is off a {size}x{size} board")
        first = min(first, size * size - 1 - first)
        entry = sizes.setdefault(size, {"sims": set(), "black_wins": {}, "games": {}})
        entry["sims"].add(int(r["sims"]))
        key = str(first)
        entry["games"][key] = entry["games"].get(key, 0) + 1
        entry["black_wins"][key] = entry["black_wins"].get(key, 0) + (r["winner"] == 0)
    out: dict[str, Any] = {}
    for size in sorted(sizes):
        e = sizes[size]
        keys = sorted(e["games"], key=int)
        out[str(size)] = {"sims": sorted(e["sims"]),
                          "black_wins": {k: e["black_wins"][k] for k in keys},
                          "games": {k: e["games"][k] for k in keys}}
    return out


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    selfplay_arguments(sub, "rave self-play games from every first stone (JSONL)", 48, 2000,
                       "games for every first stone")
    b = sub.add_parser("build", help="the swap map (JSON) of first-stone records")
    b.add_argument("records", type=Path, nargs="+", help="JSONL files of selfplay")
    b.add_argument("out", type=Path, help="swap map to write (.json)")


def run(args: argparse.Namespace) -> int:
    if args.action == "selfplay":
        check_selfplay_arguments(args)
        selfplay(args.out, args.size, args.games, args.sims, args.seed, args.jobs)
        return 0
    swap_map = build(args.records)
    args.out.write_text(json.dumps(swap_map, indent=1, sort_keys=True) + "\n")
    for size, e in swap_map.items():
        swapped = sum(2 * e["black_wins"][k] > e["games"][k] for k in e["games"])
        print(f"{size}x{size}: {len(e['games'])} first stones, {sum(e['games'].values())} "
              f"games, {swapped} swapped")
    sys.stdout.flush()
    return 0
