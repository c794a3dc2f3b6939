"""How well Hex playout policies and static evaluators predict self-play outcomes.

A playout policy is worth what its playouts say about who wins. This reads Hex game
records (``descent patterns selfplay`` JSONL: ``size`` and ``moves``; the last stone
connected, so the last mover won), takes the positions every ``--step`` plies from
``--first`` on (not the last few plies of a game, which are decided), and values each one
by every predictor:

- ``uniform``: Black's share of wins in ``--playouts`` playouts of ``rave``'s own policy
  (random fill, a bridge or edge template intruded is answered);
- ``fill``: the same from the inferior-cell fill-in (``RaveSearch(playout_fill_in=True)``);
- ``capG``: pattern playouts, each cell drawn in proportion to its prior gamma capped at G
  (``RaveSearch(playout_gamma_cap=G)``, MoHex's playout policy in kind);
- ``two_distance`` and ``vc``: the C heuristics' static values.

Each predictor's value goes through a logistic fit (its logit, or the heuristic's value,
with a slope and an intercept fitted by Newton's method) against the outcome, so that no
predictor is penalised for its scale; the table gives the fitted log-loss (lower is
better; the outcome's base rate alone is the last row), the correlation and the cost a
position. A static measure of the leaves: it says what a policy's playouts know, not how
a search plays with them.

    python -m descent.research.playout_fit data/patterns/hex11-rave-selfplay-round4.jsonl.xz \\
        --caps 0.4,1,4,16
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from descent.search_cy.games.hex import HexState

Array = npt.NDArray[np.float64]
Predictor = Callable[["HexState", int], float]


def read_records(path: Path) -> Iterator[tuple[int, list[int]]]:
    """(board size, moves as cells) of each game in a JSONL file (``.xz`` read as such)."""
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                yield int(record["size"]), [int(m) for m in record["moves"]]


def sample_positions(records: list[tuple[int, list[int]]], first: int, step: int,
                     margin: int) -> list[tuple[int, list[int], float]]:
    """(size, moves so far, 1.0 when Black won) every ``step`` plies from ``first``,
    stopping ``margin`` plies before each game's end."""
    out = []
    for size, moves in records:
        black_won = 1.0 if (len(moves) - 1) % 2 == 0 else 0.0
        for k in range(first, len(moves) - margin, step):
            out.append((size, moves[:k], black_won))
    return out


def logistic_fit(x: Array, y: Array) -> tuple[float, float, float]:
    """(log-loss, slope, intercept) of the best logistic model of y on x."""
    a, b = 0.0, 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(a * x + b)))
        grad = np.array([np.sum((p - y) * x), np.sum(p - y)])
        w = p * (1.0 - p)
        hess = np.array([[np.sum(w * x * x), np.sum(w * x)], [np.sum(w * x), np.sum(w)]])
        step = np.linalg.solve(hess + 1e-9 * np.eye(2), grad)
        a, b = a - float(step[0]), b - float(step[1])
        if float(np.max(np.abs(step))) < 1e-10:
            break
    p = np.clip(1.0 / (1.0 + np.exp(-(a * x + b))), 1e-12, 1.0 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))), a, b


def logit(share: Array, n: int) -> Array:
    """The logit of a share of n playouts, kept off 0 and 1 by half a playout."""
    p = np.clip(share, 0.5 / n, 1.0 - 0.5 / n)
    return np.asarray(np.log(p / (1.0 - p)), dtype=np.float64)


def predictors(playouts: int, caps: list[float]) -> dict[str, Predictor]:
    """name -> f(state, seed): Black's value of the position by that predictor."""
    from descent.search_cy.eval.hex_eval import HexEvaluator, HexVCEvaluator
    from descent.search_cy.games.hex_patterns import shipped_weights
    from descent.search_cy.games.hex_playout import playout_value

    weights = shipped_weights()
    two, vc = HexEvaluator(), HexVCEvaluator()

    def capped(cap: float) -> Predictor:
        return lambda s, seed: playout_value(s, playouts, seed, weights, cap)

    table: dict[str, Predictor] = {
        "uniform": lambda s, seed: playout_value(s, playouts, seed),
        "fill": lambda s, seed: playout_value(s, playouts, seed, fill_in=True),
    }
    for cap in caps:
        table[f"cap{cap:g}"] = capped(cap)
    table["two_distance"] = lambda s, seed: float(two.evaluate([s])[0])
    table["vc"] = lambda s, seed: float(vc.evaluate([s])[0])
    return table


def measure(positions: list[tuple[int, list[int], float]], playouts: int,
            caps: list[float], seed: int) -> list[tuple[str, float, float, float]]:
    """(name, fitted log-loss, correlation, microseconds a position) for each predictor,
    then ("base rate", its log-loss, 0, 0)."""
    from descent.search_cy.games.registry import Game, make_game

    table = predictors(playouts, caps)
    values: dict[str, list[float]] = {name: [] for name in table}
    spent = dict.fromkeys(table, 0.0)
    games: dict[int, Game] = {}
    for i, (size, moves, _) in enumerate(positions):
        if size not in games:
            games[size] = make_game(f"hex(size={size})")
        state = cast("HexState", games[size].new_initial_state())
        for m in moves:
            state.apply_action(m)
        for name, f in table.items():
            t = time.perf_counter()
            values[name].append(f(state, seed + i))
            spent[name] += time.perf_counter() - t
    y = np.array([outcome for _, _, outcome in positions], dtype=np.float64)
    rows = []
    for name, vals in values.items():
        raw = np.array(vals, dtype=np.float64)
        x = raw if name in ("two_distance", "vc") else logit(raw, playouts)
        loss, _, _ = logistic_fit(x, y)
        corr = float(np.corrcoef(x, y)[0, 1]) if np.std(x) > 0 else 0.0
        rows.append((name, loss, corr, 1e6 * spent[name] / max(len(positions), 1)))
    base = float(np.clip(y.mean(), 1e-12, 1 - 1e-12))
    rows.append(("base rate", -(base * np.log(base) + (1 - base) * np.log(1 - base)), 0.0, 0.0))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="+", type=Path, help="Hex game records (JSONL[.xz])")
    parser.add_argument("--games", type=int, default=0, help="the first N games (0: all)")
    parser.add_argument("--playouts", type=int, default=64, help="playouts a position")
    parser.add_argument("--caps", default="", help="pattern-playout gamma caps, e.g. 0.4,4")
    parser.add_argument("--first", type=int, default=6, help="first ply sampled")
    parser.add_argument("--step", type=int, default=3, help="plies between samples")
    parser.add_argument("--margin", type=int, default=4, help="plies left out at the end")
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args(argv)
    if args.playouts < 1 or args.step < 1:
        parser.error("--playouts and --step must be at least 1")
    records = [r for path in args.records for r in read_records(path)]
    if args.games:
        records = records[:args.games]
    caps = [float(c) for c in args.caps.split(",") if c.strip()]
    positions = sample_positions(records, args.first, args.step, args.margin)
    if not positions:
        parser.error("no positions: the records are shorter than --first + --margin")
    print(f"{len(records)} games, {len(positions)} positions, {args.playouts} playouts each")
    print(f"{'predictor':14s} {'log-loss':>9s} {'corr':>7s} {'us/position':>12s}")
    for name, loss, corr, us in measure(positions, args.playouts, caps, args.seed):
        print(f"{name:14s} {loss:9.4f} {corr:7.4f} {us:12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
