"""The strength ladder: each Rminimax level (``--strength``) against the next one up,
through ``descent arena``, and the Elo of every level above the weakest.

    python -m descent.tools.ladder --game einstein --games 40 --nodes 2000 -j 2

Neighbouring levels play a match (colours swapped in pairs, paired dice); the ladder adds
up the Elo differences of the neighbours, anchored at the first level (0). A level is
*monotone* when it scores above 50% against the level below it; the table gives each
difference with its 95% interval, so a gap that is not separated from 0 shows as such.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from descent.search_cy.games.registry import make_game
from descent.search_cy.search.strength import MAX_LEVEL, STRENGTH_LEVELS, parse_strength
from descent.tools.arena import load_openings, play_match
from descent.tools.stats import Summary, fmt_elo

DEFAULT_LEVELS = [*sorted(STRENGTH_LEVELS, key=lambda k: STRENGTH_LEVELS[k]), MAX_LEVEL]


@dataclass
class Rung:
    lower: str
    upper: str
    summary: Summary            # the upper level's result against the lower one

    @property
    def monotone(self) -> bool:
        return self.summary.score > 0.5


def player_spec(level: str, nodes: int | None, time: float | None, extra: str) -> str:
    options = [f"strength={level}", f"name={level}"]
    if nodes is not None:
        options.append(f"nodes={nodes}")
    if time is not None:
        options.append(f"time={time}")
    if extra:
        options.append(extra)
    return "descent:" + ",".join(options)


def climb(game: str, levels: Sequence[str], games: int, nodes: int | None,
          time: float | None, jobs: int, seed: int, extra: str = "",
          out: Path | None = None, openings: str = "") -> list[Rung]:
    """One match per pair of neighbouring levels, the stronger level listed first.
    ``openings`` (arena's: none, all-1, FILE) defaults to every first move for Hex, whose
    pairs would otherwise all play one game (the engines are deterministic by seed, and
    Hex has no dice to tell the pairs apart), and to none for the dice games."""
    choice = openings or ("all-1" if make_game(game).name == "hex" else "none")
    suite = load_openings(choice, make_game(game).spec, seed)
    rungs = []
    for k, (lower, upper) in enumerate(zip(levels, levels[1:], strict=False)):
        result = play_match(
            game, [player_spec(upper, nodes, time, extra), player_spec(lower, nodes, time, extra)],
            games=games, movetime=time or 1.0, jobs=jobs, seed=seed + 1000 * k,
            openings=suite,
            out=None if out is None else out / f"{lower}-{upper}")
        rungs.append(Rung(lower, upper, result.tally(0, 1).summary()))
        print(f"{upper} against {lower}: {table_row(rungs[-1], 0.0)}", file=sys.stderr,
              flush=True)
    return rungs


def table_row(rung: Rung, elo: float) -> str:
    s = rung.summary
    return (f"| {rung.upper} | {rung.lower} | {s.wins}-{s.draws}-{s.losses} | "
            f"{100 * s.score:.1f}% [{100 * s.score_lo:.1f}, {100 * s.score_hi:.1f}] | "
            f"{fmt_elo(s.elo)} [{fmt_elo(s.elo_lo)}, {fmt_elo(s.elo_hi)}] | "
            f"{fmt_elo(elo, signed=False)} |")


def table(rungs: list[Rung]) -> str:
    lines = ["| level | against | W-D-L | score [95%] | Elo difference [95%] | ladder Elo |",
             "|---|---|---|---|---|---|"]
    elo = 0.0
    for rung in rungs:
        elo += rung.summary.elo
        lines.append(table_row(rung, elo))
    return "\n".join(lines)


def _log_theta(level: str) -> float | None:
    """log theta of a numeric or ``theta=X`` level, None for any other."""
    if level.isdigit() or level.startswith("theta="):
        theta = parse_strength(level)
        return None if theta is None else math.log(theta)
    return None


def calibrate(rungs: list[Rung]) -> dict[str, float]:
    """The named levels' ``theta`` from a ladder of numeric (or ``theta=X``) levels ending
    at ``max``: the ladder's Elo (made monotone by pooling adjacent violators),
    interpolated linearly in log theta, read at equal Elo steps from the first level's
    (the weakest, ``random``) to ``max``'s. ValueError for any other ladder."""
    if not rungs or rungs[-1].upper != MAX_LEVEL or any(
            _log_theta(r.lower) is None for r in rungs) or any(
            _log_theta(r.upper) is None for r in rungs[:-1]):
        raise ValueError("calibration needs a ladder of numeric levels ending with max")
    points = [(float(_log_theta(rungs[0].lower) or 0.0), 0.0)]
    elo = 0.0
    for rung in rungs:
        elo += rung.summary.elo
        if rung.upper != MAX_LEVEL:
            points.append((float(_log_theta(rung.upper) or 0.0), elo))
    top = elo
    if not math.isfinite(top):
        raise ValueError("a rung was won or lost outright: its Elo is infinite; play more "
                         "levels between")
    # pool adjacent violators: a monotone curve through the noisy sums
    blocks: list[list[float]] = []      # [sum of elo, count, first x, last x]
    for x, e in points:
        blocks.append([e, 1.0, x, x])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            last = blocks.pop()
            blocks[-1] = [blocks[-1][0] + last[0], blocks[-1][1] + last[1], blocks[-1][2],
                          last[3]]
    curve = [(x, b[0] / b[1]) for b in blocks for x, _ in points if b[2] <= x <= b[3]]
    names = sorted(STRENGTH_LEVELS, key=lambda n: STRENGTH_LEVELS[n])
    out = {names[0]: float(f"{math.exp(points[0][0]):.4g}")}
    for i, name in enumerate(names[1:], start=1):
        target = top * i / len(names)
        x = curve[-1][0] if target >= curve[-1][1] else curve[0][0]
        for (x0, e0), (x1, e1) in zip(curve, curve[1:], strict=False):
            if e0 <= target <= e1:
                x = x0 if e1 == e0 else x0 + (x1 - x0) * (target - e0) / (e1 - e0)
                break
        out[name] = float(f"{math.exp(x):.4g}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m descent.tools.ladder", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", required=True)
    p.add_argument("--levels", default=",".join(DEFAULT_LEVELS),
                   help="comma-separated, weakest first (default: every named level)")
    p.add_argument("--games", type=int, default=40, help="games per pair of neighbours")
    p.add_argument("--nodes", type=int, default=None, help="nodes a move (reproducible)")
    p.add_argument("--time", type=float, default=None, help="seconds a move")
    p.add_argument("-j", "--jobs", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--extra", default="", help="more player settings, e.g. search=ubfms")
    p.add_argument("--out", type=Path, default=None, help="records under DIR/LOWER-UPPER")
    p.add_argument("--openings", default="",
                   help="none | all-1 | FILE, as in descent arena (default: all-1 for Hex)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--calibrate", action="store_true",
                   help="numeric or theta=X levels then max: print the named levels' "
                        "theta at equal Elo steps (strength.GAME_LEVELS)")
    args = p.parse_args(argv)
    levels = [x.strip() for x in args.levels.split(",") if x.strip()]
    if len(levels) < 2:
        p.error("--levels needs at least two levels")
    if args.nodes is None and args.time is None:
        p.error("give --nodes or --time")
    rungs = climb(args.game, levels, args.games, args.nodes, args.time, args.jobs,
                  args.seed, args.extra, args.out, args.openings)
    if args.json:
        out: list[dict[str, Any]] = [
            {"level": r.upper, "against": r.lower, "wins": r.summary.wins,
             "draws": r.summary.draws, "losses": r.summary.losses,
             "score": r.summary.score, "elo": r.summary.elo} for r in rungs]
        print(json.dumps(out))
    else:
        print(table(rungs))
    if args.calibrate:
        print(json.dumps(calibrate(rungs)))
    return 0 if all(r.monotone for r in rungs) else 1


if __name__ == "__main__":
    sys.exit(main())
