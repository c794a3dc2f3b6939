"""Search threads with a network: positions valued a second and positions a backend call.

    python -m descent.tools.bench_threads_net data/runs/hex11/model.dnet --device cuda

UBFM_s from the empty board of the model's game, ``--seconds`` per configuration, at each
thread count with the threads' own backend calls and with gathered calls
(``SearchParams.gather``). It answers whether threads add throughput on a given machine
and backend (on an H200 they did not: docs/results/speed.md, threads with a network on the
GPU).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from descent.nets.evaluator import network_evaluator
from descent.nets.modelfile import load_model
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper

CONFIGS = ((1, False), (4, False), (4, True), (8, False), (8, True), (14, True))


class CallRates:
    """Positions valued a second and a backend call, for a row with those three fields."""

    positions: int
    calls: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.positions / self.seconds if self.seconds > 0 else 0.0

    @property
    def per_call(self) -> float:
        return self.positions / self.calls if self.calls else 0.0


@dataclass
class Row(CallRates):
    threads: int
    gather: bool
    positions: int
    calls: int
    seconds: float
    iterations: int


def measure(model: str, backend: str = "torch", device: str = "cuda", seconds: float = 3.0,
            configs: tuple[tuple[int, bool], ...] = CONFIGS) -> list[Row]:
    """One row per (threads, gather), each after a short warm-up. Blocks."""
    loaded = load_model(model)
    state = make_game(loaded.game.spec).new_initial_state()
    rows = []
    for threads, gather in configs:
        evaluator = network_evaluator(loaded, state, backend=backend, device=device)
        fn = getattr(evaluator, "fn", None)
        if fn is None:
            raise ValueError(f"backend {backend!r} makes no batch calls to count")
        search = make_search("ubfms", evaluator, SearchParams(
            threads=threads, gather=gather, keep_tree=False))
        search.run(state, Stopper(time=min(0.3, seconds)))      # warm-up
        calls, positions = fn.calls, fn.positions
        start = time.perf_counter()
        result = search.run(state, Stopper(time=seconds))
        elapsed = time.perf_counter() - start
        rows.append(Row(threads, gather, fn.positions - positions, fn.calls - calls,
                        elapsed, result.iterations))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model", help="a model file (.dnet)")
    p.add_argument("--backend", default="torch", help="torch | onnxruntime | tensorrt")
    p.add_argument("--device", default="cuda", help="cuda | cpu")
    p.add_argument("--seconds", type=float, default=3.0, help="time per configuration")
    args = p.parse_args(argv)
    for r in measure(args.model, args.backend, args.device, args.seconds):
        print(f"threads={r.threads:2d} gather={int(r.gather)} positions/s={r.per_second:10,.0f} "
              f"calls={r.calls:6d} positions/call={r.per_call:7.1f} "
              f"iterations={r.iterations}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
