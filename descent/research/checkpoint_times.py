"""Seconds a training run spends writing checkpoints, on a copy of a real run.

Copies RUN_DIR to COPY_DIR, resumes the copy with a checkpoint after every iteration and
prints, for each of ``--iterations`` iterations, its wall time and that of each checkpoint
written in it (``Trainer.run`` writes one after the iteration and one when it returns).
Run it on two builds to compare them; the copy is removed at the end.

    python -m descent.research.checkpoint_times runs/ewn_term /tmp/ck --iterations 4
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("copy_dir", type=Path)
    parser.add_argument("--iterations", type=int, default=4)
    args = parser.parse_args(argv)

    from descent.train.config import load_config
    from descent.train.trainer import Trainer

    if args.copy_dir.exists():
        parser.error(f"{args.copy_dir} exists: give a new folder for the copy")
    shutil.copytree(args.run_dir, args.copy_dir)
    try:
        cfg = load_config(args.copy_dir / "config.toml").with_overrides(
            run__checkpoint_every=1, run__progress=False, run__hours=0.0,
            run__max_iterations=10**9)
        start = time.perf_counter()
        trainer = Trainer(cfg, args.copy_dir, resume=True)
        print(f"resumed in {time.perf_counter() - start:.1f} s: {len(trainer.memory)} games, "
              f"{trainer.memory.pairs} pairs in the replay memory", flush=True)
        inner = trainer.checkpoint
        times: list[float] = []

        def timed() -> Any:
            t = time.perf_counter()
            out = inner()
            times.append(time.perf_counter() - t)
            return out

        trainer.checkpoint = timed  # type: ignore[method-assign]
        for _ in range(args.iterations):
            seen = len(times)
            t = time.perf_counter()
            trainer.run(stop_after=1)
            spent = ", ".join(f"{x:.2f}" for x in times[seen:])
            print(f"iteration {trainer.counters.iterations}: {time.perf_counter() - t:.2f} s, "
                  f"checkpoints {spent} s", flush=True)
        size = sum(p.stat().st_size for p in args.copy_dir.rglob("*") if p.is_file())
        print(f"run folder {size / 1e9:.2f} GB")
    finally:
        shutil.rmtree(args.copy_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
