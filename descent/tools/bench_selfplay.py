"""Self-play throughput: one worker, batched games, a Ray cluster's actors.

    python -m descent.tools.bench_selfplay --game "hex(size=7)" --preset cpu --games 8
    python -m descent.tools.bench_selfplay --modes worker,ray:1,ray:2      # issue 22's 1.6x
    python -m descent.tools.bench_selfplay --modes worker,batched:8       # ... and its 3x

Every mode plays the same games (the same seeds, the same network: the games and their
network evaluations are identical, only the time differs) through the real pools of
``descent train``: ``worker`` one self-play process (``selfplay.workers = 1``),
``workers:N`` N of them, ``batched:B`` one process playing B games at once with their
network calls gathered (``selfplay.batch_games``; ``batched:BxW``: W such processes),
``ray:N`` N actors on a local Ray cluster of N CPUs. On a GPU machine, the hex11 run's
network on 14 CUDA workers, one game each and four at once (docs/results/speed.md,
self-play)::

    python -m descent.tools.bench_selfplay --config data/runs/hex11/config.toml \
        --model data/runs/hex11/model.dnet --iterations 3 --backend torch --device cuda \
        --games 56 --modes workers:14,batched:4x14

Each pool first plays a warm-up round (its start, the network's first calls) that is not
timed. Ratios are against the first mode, measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any

from descent.nets.modelfile import LoadedModel, load_model
from descent.tools.bench_threads_net import CallRates
from descent.train.config import TrainConfig, load_config

EPSILON = 0.5


@dataclass
class Row(CallRates):
    mode: str
    games: int
    plies: int
    positions: int           # network evaluations
    calls: int               # backend calls
    seconds: float


def _pool(cfg: TrainConfig, mode: str) -> Any:
    kind, _, arg = mode.partition(":")
    n_text, _, w_text = arg.partition("x")
    n = int(n_text) if n_text else 1
    w = int(w_text) if w_text else 1
    if kind == "worker":
        from descent.train.workers import SelfPlayPool

        return SelfPlayPool(cfg.with_overrides(selfplay__batch_games=1, selfplay__workers=1), 1)
    if kind == "workers":
        from descent.train.workers import SelfPlayPool

        return SelfPlayPool(cfg.with_overrides(selfplay__batch_games=1, selfplay__workers=n), n)
    if kind == "batched":
        from descent.train.workers import SelfPlayPool

        return SelfPlayPool(cfg.with_overrides(selfplay__batch_games=n, selfplay__workers=w), w)
    if kind == "ray":
        from descent.train.cluster import RayPool

        return RayPool(cfg.with_overrides(selfplay__batch_games=1, selfplay__workers=n), n,
                       num_cpus=n)
    raise ValueError(f"unknown mode {mode!r} (worker, workers:N, batched:B[xW], ray:N)")


def measure(cfg: TrainConfig, mode: str, model: LoadedModel, games: int,
            warmup: int) -> Row:
    """The mode's time for games 1000 .. 1000+games-1 after ``warmup`` untimed games.
    Blocks."""
    pool = _pool(cfg, mode)
    try:
        if warmup:
            pool.play(0, warmup, EPSILON, model)
        t0 = time.perf_counter()
        played = pool.play(1000, games, EPSILON, model)
        seconds = time.perf_counter() - t0
    finally:
        pool.close()
    return Row(mode, games, sum(g.record.plies for g in played),
               sum(g.positions for g in played), sum(g.batches for g in played), seconds)


def _config(args: argparse.Namespace) -> TrainConfig:
    cfg = load_config(args.config) if args.config else TrainConfig(game=args.game)
    changes: dict[str, Any] = {"run__progress": False, "selfplay__bootstrap_games": 0}
    if not args.config:
        changes["network__preset"] = args.preset
    if args.iterations:
        changes["selfplay__iterations"] = args.iterations
    if args.backend:
        changes["selfplay__backend"] = args.backend
    if args.device:
        changes["selfplay__device"] = args.device
    return cfg.with_overrides(**changes)


def _model(cfg: TrainConfig, path: str | None) -> LoadedModel:
    if path:
        return load_model(path, cfg.game)
    from descent.search_cy.games.registry import make_game
    from descent.train.heuristics import reinforcement_for
    from descent.train.network import Learner

    game = make_game(cfg.game)
    sp = cfg.selfplay
    reinforcement = reinforcement_for(game.new_initial_state(), sp.heuristic, sp.max_plies)
    return Learner(game, cfg.network.preset, reinforcement, seed=cfg.seed,
                   device="cpu").current_model()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=None, help="a training config (TOML) to play")
    p.add_argument("--model", default=None, help="the network (default: a fresh one)")
    p.add_argument("--game", default="hex(size=7)", help="game of a config-less run")
    p.add_argument("--preset", default="cpu", help="network preset of a config-less run")
    p.add_argument("--iterations", type=int, default=0,
                   help="search iterations a move (default: the config's)")
    p.add_argument("--backend", default=None, help="selfplay.backend (default: config's)")
    p.add_argument("--device", default=None, help="selfplay.device (default: config's)")
    p.add_argument("--games", type=int, default=8, help="games each mode plays, timed")
    p.add_argument("--warmup", type=int, default=2, help="untimed games before them")
    p.add_argument("--modes", default="worker,ray:1,ray:2,batched:8",
                   help="comma-separated: worker, workers:N, batched:B[xW], ray:N")
    args = p.parse_args(argv)
    cfg = _config(args)
    model = _model(cfg, args.model)
    print(f"{cfg.game}, {model.arch.preset} network, {cfg.selfplay.search} "
          f"{cfg.selfplay.iterations} iterations a move, backend {cfg.selfplay.backend} "
          f"on {cfg.selfplay.device}, {args.games} games a mode")
    print(f"{'mode':<12} {'games':>5} {'plies':>6} {'evaluations':>12} {'calls':>9} "
          f"{'per call':>9} {'seconds':>8} {'evals/s':>10} {'plies/s':>8} {'x':>6}")
    reference: Row | None = None
    for mode in args.modes.split(","):
        row = measure(cfg, mode.strip(), model, args.games, args.warmup)
        reference = reference or row
        ratio = row.per_second / reference.per_second if reference.per_second else 0.0
        print(f"{row.mode:<12} {row.games:>5} {row.plies:>6} {row.positions:>12,} "
              f"{row.calls:>9,} {row.per_call:>9.1f} {row.seconds:>8.2f} "
              f"{row.per_second:>10,.0f} {row.plies / row.seconds:>8.2f} {ratio:>6.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
