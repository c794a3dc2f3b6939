"""``descent train``: a Descent training run from the command line.

    descent train --game "hex(size=4)" --run-dir runs/hex4 --hours 1
    descent train --game hex --config hex11.toml --run-dir runs/hex11
    descent train --run-dir runs/hex4 --resume --hours 2      # continue: 2 more hours
    descent train --run-dir runs/hex4 --snapshot hex4.dnet    # the last checkpoint's net
    descent train --run-dir runs/ewn --refit mlp --out ewn-mlp.dnet  # another net, same data

Settings come from the defaults (train.config), then ``--config``, then the flags;
``--resume`` reads the run's own ``config.toml`` instead, then ``--config`` over it (the game
and the network may not change; other changes are recorded in the metrics), and its
``--hours`` / ``--max-iterations`` count from where the run stands: each session that resumes
a long run with ``--hours 2.5`` trains it 2.5 more hours.
SIGINT / SIGTERM finish the current iteration, write a checkpoint and the model, and exit;
a second SIGINT interrupts at once (the last checkpoint still resumes).
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

from descent.train.config import TrainConfig, load_config


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default=None,
                   help="game spec, e.g. 'hex(size=4)', 'einstein', 'dicechess' "
                        "(required for a new run)")
    p.add_argument("--config", default=None, help="training config (TOML)")
    p.add_argument("--run-dir", required=True,
                   help="run directory: config, checkpoints, metrics, plots, models")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --run-dir from its last checkpoint")
    p.add_argument("--hours", type=float, default=None,
                   help="stop after this much training time (with --resume: this much "
                        "more than the run has had)")
    p.add_argument("--max-iterations", type=int, default=None,
                   help="stop after this many iterations (with --resume: this many more)")
    p.add_argument("--seed", type=int, default=None, help="seed of a new run")
    p.add_argument("--cluster", choices=("local", "ray"), default="local",
                   help="where self-play runs: local (this process, or selfplay.workers "
                        "processes) or ray (selfplay.workers actors on a Ray cluster, 0: "
                        "one per CPU; the learner stays here). Not part of the run's "
                        "config: a run may resume on either")
    p.add_argument("--address", default=None,
                   help="with --cluster ray: the cluster to join (auto: the one `ray "
                        "start` runs on this machine; ray://HOST:PORT: a remote one "
                        "through Ray Client); none: a local cluster of this machine's CPUs")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--snapshot", metavar="MODEL", default=None,
                   help="write the network of the run's last checkpoint to MODEL and exit "
                        "(reads the run only: safe while it trains)")
    p.add_argument("--refit", metavar="PRESET", default=None,
                   help="train a fresh network of PRESET (e.g. mlp) on the run's replay "
                        "memory, supervised, and write it to --out (reads the run only)")
    p.add_argument("--out", metavar="MODEL", default=None, help="model file of --refit")
    p.add_argument("--refit-steps", type=int, default=30000,
                   help="minibatches of --refit (default 30000)")
    p.add_argument("--refit-batch", type=int, default=512,
                   help="minibatch size of --refit (default 512)")
    p.add_argument("--refit-weight-decay", type=float, default=None,
                   help="L2 of --refit's Adam (default: the run's update.weight_decay)")


def build_config(args: argparse.Namespace) -> TrainConfig:
    run_dir = Path(args.run_dir)
    stored = run_dir / "config.toml"
    cfg: TrainConfig
    if args.resume and stored.exists():
        cfg = load_config(stored)
        if args.config:
            cfg = load_config(args.config, cfg)
        if args.game is not None:
            from descent.search_cy.games.registry import make_game

            if make_game(args.game).spec != make_game(cfg.game).spec:
                raise ValueError(f"--game {args.game} differs from the run's game {cfg.game}")
    else:
        cfg = load_config(args.config) if args.config else TrainConfig()
        if args.game is not None:
            cfg = cfg.with_overrides(game=args.game)
        elif not args.config:
            raise ValueError("--game is required for a new run")
        if args.seed is not None:
            cfg = cfg.with_overrides(seed=args.seed)
    changes: dict[str, Any] = {}
    if args.resume and stored.exists():
        # the limits count from the checkpoint: Trainer.extend sets them (run())
        return cfg.with_overrides(run__progress=False) if args.quiet else cfg
    if args.hours is not None:
        changes["run__hours"] = args.hours
    if args.max_iterations is not None:
        changes["run__max_iterations"] = args.max_iterations
    if args.quiet:
        changes["run__progress"] = False
    return cfg.with_overrides(**changes) if changes else cfg


TORCH_MISSING = ("descent train needs PyTorch, which the engine itself does not: "
                 "pip install torch==2.13.0 (or pip install 'descent-engine[torch]')")


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("torch") is None:
        raise ValueError(TORCH_MISSING)
    from descent.train.trainer import FINAL_MODEL, Trainer

    if args.snapshot:
        from descent.train.snapshot import export_snapshot

        print(f"model: {export_snapshot(args.run_dir, args.snapshot)}")
        return 0
    if args.refit:
        return run_refit(args)
    cfg = build_config(args)
    if not cfg.run.max_iterations and not cfg.run.hours:
        print("descent train: no limit (--hours/--max-iterations/[run]): training until "
              "SIGINT or SIGTERM", file=sys.stderr)

    def log(msg: str) -> None:
        print(f"descent train: {msg}", file=sys.stderr)

    if args.address and args.cluster != "ray":
        raise ValueError("--address needs --cluster ray")
    trainer = Trainer(cfg, args.run_dir, resume=args.resume, log=log, cluster=args.cluster,
                      address=args.address)
    if args.resume and (args.hours is not None or args.max_iterations is not None):
        trainer.extend(hours=args.hours, iterations=args.max_iterations)
    if args.resume and trainer.finished():
        c = trainer.counters
        log(f"the run in {args.run_dir} is finished ({c.iterations} iterations, "
            f"{c.seconds / 3600:.2f} hours of its limit): give a larger --hours or "
            "--max-iterations to continue it")
        return 0
    interrupts = 0

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1 and signum == signal.SIGINT:
            raise KeyboardInterrupt
        log("stopping after this iteration (checkpoint and model follow)")
        trainer.request_stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        last = trainer.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    c = trainer.counters
    print(f"run: {trainer.run_dir}")
    print(f"game: {trainer.game.spec}")
    print(f"iterations: {c.iterations}  games: {c.games}  pairs: {c.pairs}  "
          f"updates: {trainer.learner.steps}  hours: {c.seconds / 3600:.3f}")
    if "loss" in last:
        print(f"loss: {last['loss']:.5f}")
    for opp, stats in (last.get("eval") or {}).items():
        lo, hi = stats["ci95"]
        print(f"vs {opp}: {stats['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] over "
              f"{stats['games']} games (+{stats['wins']} ={stats['draws']} -{stats['losses']})")
    print(f"model: {trainer.run_dir / FINAL_MODEL}")
    return 0


def run_refit(args: argparse.Namespace) -> int:
    from descent.nets.modelfile import save_model
    from descent.train.refit import refit

    if not args.out:
        raise ValueError("--refit needs --out MODEL")

    def progress(done: int, total: int, loss: float) -> None:
        if not args.quiet and (done % 4096 < 64 or done == total):
            print(f"descent train: refit {done}/{total} steps, loss {loss:.5f}",
                  file=sys.stderr)

    report = refit(args.run_dir, args.refit, steps=args.refit_steps,
                   batch_size=args.refit_batch, seed=args.seed,
                   weight_decay=args.refit_weight_decay, progress=progress)
    path = save_model(report.model, args.out)
    print(f"model: {path}")
    print(f"{report.model.describe()}")
    print(f"trained on {report.train_pairs} pairs, {report.steps} steps of {args.refit_batch}")
    print(f"held-out MSE over {report.holdout_pairs} pairs: {report.holdout_mse:.5f} "
          f"(the run's own network: {report.run_holdout_mse:.5f})")
    return 0
