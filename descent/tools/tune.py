"""``descent tune``: the weights of a game's C heuristic, tuned by self-play matches.

    descent tune --game einstein --method spsa --iterations 300 --games 8 --depth 2 \\
        --out runs/tune-einstein --verify 400

Each step plays an in-process match (games in pairs with colours reversed and the same
dice) between two weight sets searched alike (``--search``, ``--depth`` or ``--nodes``
a move); the tuner (tools/tuners.py: SPSA, hill climbing or the genetic algorithm) moves
the weights by the results. ``--config FILE.toml`` lists the weights to tune, with their
bounds and steps::

    heuristic = "distance"        # optional: the game's default heuristic otherwise
    [weights.tempo]
    lo = 0.0
    hi = 2.0
    step = 0.1
    start = 0.5                   # optional: the heuristic's current value otherwise

Without it every weight of the heuristic is tuned within its declared bounds, with a
step of a twentieth of the range. The weights not listed keep their values.
``--out DIR`` writes ``DIR/history.jsonl`` (one line a step) and ``DIR/result.json``;
``--verify N`` plays N games of the tuned weights against the start and reports the
score with its Wilson interval and Elo. The last line printed is the weights as
``descent play --heuristic-weights`` reads them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.eval.heuristics import format_weights, heuristic_for
from descent.search_cy.games.registry import Game, make_game
from descent.search_cy.search.api import SearchParams
from descent.tools.stats import fmt_elo, summarize
from descent.tools.tuners import CROSSOVERS, METHODS, SELECTIONS, Param, tune
from descent.train.evaluation import MatchStats, SearchPlayer, paired_matches


def load_params(game: Game, config: Mapping[str, Any]) -> tuple[str | None, list[Param]]:
    """(heuristic name, params) from a parsed config (see the module docstring)."""
    heuristic = config.get("heuristic")
    evaluator = heuristic_for(game.spec, heuristic)
    declared = {name: (float(lo), float(hi)) for name, _d, lo, hi in type(evaluator).WEIGHTS}
    current = evaluator.weights
    listed = config.get("weights") or {name: {} for name in declared}
    params = []
    for name, spec in listed.items():
        if name not in declared:
            raise ValueError(f"{type(evaluator).__name__} has no weight {name!r}; its "
                             f"weights: {', '.join(declared)}")
        lo = float(spec.get("lo", declared[name][0]))
        hi = float(spec.get("hi", declared[name][1]))
        if lo < declared[name][0] or hi > declared[name][1]:
            raise ValueError(f"{name}: [{lo}, {hi}] leaves the heuristic's bounds "
                             f"{list(declared[name])}")
        step = float(spec.get("step", (hi - lo) / 20.0))
        params.append(Param(name, float(spec.get("start", current[name])), lo, hi, step))
    if not params:
        raise ValueError("no weight to tune")
    return heuristic, params


class MatchRunner:
    """``match(a, b)``: a's result against b in [-1, 1] over ``games`` in-process games,
    each match on dice seeds of its own (pairs share theirs)."""

    def __init__(self, game: Game, heuristic: str | None, search: str, games: int,
                 nodes: int, depth: int, seed: int) -> None:
        self.game = game
        self.heuristic = heuristic
        self.search = search
        self.games = games + games % 2
        self.nodes = nodes
        self.depth = depth
        self.next_seed = seed * 1_000_003
        self.played = 0

    def player(self, name: str, weights: Mapping[str, float]) -> SearchPlayer:
        evaluator: HeuristicEvaluator = heuristic_for(self.game.spec, self.heuristic,
                                                      dict(weights))
        params = SearchParams(hash_mb=16, max_depth=self.depth if self.depth > 0 else 64)
        return SearchPlayer(name, evaluator, self.search, params,
                            nodes=self.nodes if self.nodes > 0 else 1 << 40)

    def stats(self, a: Mapping[str, float], b: Mapping[str, float], games: int) -> MatchStats:
        seed = self.next_seed
        self.next_seed += games
        self.played += games
        return paired_matches(self.game, self.player("a", a), self.player("b", b), games,
                              seed)

    def __call__(self, a: Mapping[str, float], b: Mapping[str, float]) -> float:
        s = self.stats(a, b, self.games)
        return (s.wins - s.losses) / s.games


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", required=True, help="game spec, e.g. einstein, dicechess")
    p.add_argument("--config", type=Path, default=None, metavar="FILE.toml",
                   help="the weights to tune, bounds and steps (default: all, declared "
                        "bounds, a twentieth of the range a step)")
    p.add_argument("--heuristic", default=None,
                   help="the heuristic tuned, by name (default: the config's, else the "
                        "game's default)")
    p.add_argument("--method", choices=METHODS, default="spsa")
    p.add_argument("--population", type=int, default=12,
                   help="genetic: chromosomes (the dice-chess study: 20)")
    p.add_argument("--rounds", type=int, default=2,
                   help="genetic: matches each chromosome starts a generation against "
                        "random others (0: every pair plays once, the study's round robin)")
    p.add_argument("--elite", type=int, default=2,
                   help="genetic: the best kept unchanged (the study: 5 of 20)")
    p.add_argument("--selection", choices=SELECTIONS, default="tournament",
                   help="genetic: parents by tournaments of two, or drawn from the best "
                        "--parents (the study: truncation, 10 of 20)")
    p.add_argument("--parents", type=int, default=0,
                   help="genetic, truncation: how many of the best are parents "
                        "(default: half the population)")
    p.add_argument("--crossover", choices=CROSSOVERS, default="blend",
                   help="genetic: each gene a random mix, or one cut point (the study)")
    p.add_argument("--crossover-point", type=float, default=0.5,
                   help="genetic, point: the share of genes from the first parent "
                        "(the study: 0.5, or 0.25 with elitism)")
    p.add_argument("--mutation", type=float, default=0.5,
                   help="genetic: a mutation's standard deviation, in steps")
    p.add_argument("--mutation-rate", type=float, default=1.0,
                   help="genetic: each gene's chance of a mutation (the study: 0.007)")
    p.add_argument("--answer", default="mean",
                   help="genetic: mean (of the final population), best (its winner, "
                        "ranked by one more generation of matches) or winners:N (the "
                        "mean of the last N generations' winners)")
    p.add_argument("--winner-means", default="",
                   help="genetic: comma-separated N; result.json also gets the mean of "
                        "the last N generations' winners for each (the study's "
                        "Expecti-50/150/300: 50,150,300)")
    p.add_argument("--iterations", type=int, default=200,
                   help="matches (spsa, hill) or generations (genetic)")
    p.add_argument("--games", type=int, default=8, help="games a match (even)")
    p.add_argument("--search", default="", help="default: the game's (ubfms for Hex)")
    p.add_argument("--depth", type=int, default=2,
                   help="expectiminimax depth a move (0: no limit but --nodes)")
    p.add_argument("--nodes", type=int, default=0, help="nodes a move (0: none)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--verify", type=int, default=0,
                   help="games of the tuned weights against the start at the end")
    p.add_argument("--out", type=Path, default=None, help="DIR for history.jsonl, result.json")


def run(args: argparse.Namespace) -> int:
    game = make_game(args.game)
    config: dict[str, Any] = {}
    if args.config is not None:
        with open(args.config, "rb") as fh:
            config = tomllib.load(fh)
    if args.heuristic is not None:
        config["heuristic"] = args.heuristic
    heuristic, params = load_params(game, config)
    search = args.search or ("ubfms" if game.name == "hex" else game.default_search)
    if args.depth <= 0 and args.nodes <= 0:
        raise SystemExit("descent tune: give --depth or --nodes (a budget a move)")
    runner = MatchRunner(game, heuristic, search, args.games, args.nodes, args.depth,
                         args.seed)
    start = {p.name: p.start for p in params}
    means = [int(x) for x in args.winner_means.split(",") if x.strip()]
    if means and (args.method != "genetic" or min(means) < 1):
        raise SystemExit("descent tune: --winner-means takes counts >= 1, with --method "
                         "genetic")
    winners: list[dict[str, float]] = []
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()

    def on_step(step: dict[str, Any]) -> None:
        if "best" in step:
            winners.append(step["best"])
        step["games"] = runner.played
        step["seconds"] = round(time.perf_counter() - began, 1)
        if history is not None:
            history.write(json.dumps(step) + "\n")
            history.flush()
        print(f"step {step['iteration']}: result {step['result']:+.3f}  "
              f"{format_weights(step['weights'])}", file=sys.stderr, flush=True)

    with contextlib.ExitStack() as stack:
        history = None if args.out is None else stack.enter_context(
            open(args.out / "history.jsonl", "w", encoding="utf-8"))
        options = ({"population": args.population, "rounds": args.rounds,
                    "elite": args.elite, "selection": args.selection,
                    "parents": args.parents, "crossover": args.crossover,
                    "crossover_point": args.crossover_point, "mutation": args.mutation,
                    "mutation_rate": args.mutation_rate, "answer": args.answer}
                   if args.method == "genetic" else {})
        tuned = tune(args.method, params, runner, args.iterations, seed=args.seed,
                     on_step=on_step, **options)
    result: dict[str, Any] = {"game": game.spec, "heuristic": heuristic,
                              "method": args.method, "search": search,
                              "depth": args.depth, "nodes": args.nodes, "start": start,
                              "tuned": tuned, "games": runner.played,
                              "seconds": round(time.perf_counter() - began, 1)}
    if means:
        result["winner_means"] = {
            str(k): {name: sum(w[name] for w in winners[-k:]) / len(winners[-k:])
                     for name in start} for k in means}
    if args.verify > 0:
        s = runner.stats(tuned, start, args.verify)
        summary = summarize(s.wins, s.draws, s.losses)
        result["verify"] = {"games": s.games, "wins": s.wins, "draws": s.draws,
                            "losses": s.losses, "score": summary.score,
                            "score_95": [summary.score_lo, summary.score_hi],
                            "elo": summary.elo, "elo_95": [summary.elo_lo, summary.elo_hi]}
        print(f"tuned against start: {s.wins}-{s.draws}-{s.losses}, "
              f"{100 * summary.score:.1f}% [{100 * summary.score_lo:.1f}, "
              f"{100 * summary.score_hi:.1f}], Elo {fmt_elo(summary.elo)} "
              f"[{fmt_elo(summary.elo_lo)}, {fmt_elo(summary.elo_hi)}]", file=sys.stderr)
    if args.out is not None:
        (args.out / "result.json").write_text(json.dumps(result, indent=1) + "\n",
                                              encoding="utf-8")
    print(format_weights(tuned))
    return 0
