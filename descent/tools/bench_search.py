"""``descent bench search``: search speed per game and search, with heuristic leaves.

Each search runs a fixed iteration budget (expectiminimax: a fixed depth) on a fixed set of
positions, so the node counts are deterministic: their sum is the bench signature, which
changes only when search behaviour changes (as Stockfish's bench). Nodes are states
applied by the search; nodes per second divide them by the wall time.

Two further measurements:
- EinStein expectiminimax next to OpenSpiel's Python ``expectiminimax`` on the same
  positions and depth (when open-spiel is installed);
- the share of a best-first search's time spent outside the evaluator when the evaluator
  is a network-sized batch call (a NumPy stand-in costing about what a small CPU value
  network costs per batch), which says whether search or evaluation is the bottleneck;
- for the dice games, how expectiminimax batches such an evaluator (calls, positions a
  call), since a network's per-call cost dominates at small batches.

With ``--threads N`` it also measures thread scaling: every search on the same positions
under a time limit at 1, 2, 4, ... and N threads, nodes per second and the speed-up over
one thread measured in the same run (the signature stays the one-thread count).
"""

from __future__ import annotations

import importlib.util
import json
import random
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.search_cy.eval.evaluator import BatchEvaluator
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.sampling import random_action
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import BEST_FIRST, SearchParams, make_search, search_plays
from descent.search_cy.search.stopper import Stopper

GAMES = {
    "hex": ("hex(size=11)", 8),
    "einstein": ("einstein", 20),
    "dicechess": ("dicechess", 16),
}
# MCTS with RAVE and playouts (Hex only): simulations, each a playout to the end
RAVE_ITERATIONS = 20000
# descent iterations run to the end of the game: far fewer of them for the same work
ITERATIONS = {"hex": 300, "einstein": 60000, "dicechess": 30000}
DESCENT_ITERATIONS = {"hex": 15, "einstein": 6000, "dicechess": 1500}
EMM_DEPTH = {"hex": 2, "einstein": 6, "dicechess": 4}


@dataclass
class Row:
    game: str
    search: str
    positions: int
    nodes: int
    seconds: float

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


def positions(game: str, count: int = 4, seed: int = 1) -> list[GameState]:
    """Fixed positions: seeded random plies from the start, stopping at player nodes."""
    spec, plies = GAMES[game]
    rng = random.Random(seed)
    out: list[GameState] = []
    while len(out) < count:
        state = make_game(spec).new_initial_state()
        for _ in range(plies):
            state.apply_action(random_action(state, rng))
            if state.is_terminal():
                break
        while not state.is_terminal() and state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        if not state.is_terminal():
            out.append(state)
    return out


def _searches(game: str) -> list[str]:
    names = list(BEST_FIRST)
    if importlib.util.find_spec("descent.search_cy.search.expectimax") is not None:
        names.append("expectiminimax")
    names.append("rave")
    return [name for name in names if search_plays(name, game)]


def bench_game(game: str, searches: list[str] | None = None) -> list[Row]:
    rows = []
    states = positions(game)
    for name in searches or _searches(game):
        nodes = 0
        elapsed = 0.0
        for state in states:
            if name == "expectiminimax":
                params = SearchParams(hash_mb=32, max_depth=EMM_DEPTH[game])
                stopper = Stopper(iterations=EMM_DEPTH[game])
            elif name == "rave":
                params = SearchParams(hash_mb=64)
                stopper = Stopper(iterations=RAVE_ITERATIONS)
            else:
                params = SearchParams(hash_mb=64)
                budget = DESCENT_ITERATIONS if name == "descent" else ITERATIONS
                stopper = Stopper(iterations=budget[game])
            search = make_search(name, heuristic_for(state), params)
            result = search.run(state, stopper)
            nodes += result.nodes
            elapsed += result.time
        rows.append(Row(game, name, len(states), nodes, elapsed))
    return rows


@dataclass
class ScalingRow:
    game: str
    search: str
    threads: int
    nodes: int
    seconds: float
    speedup: float          # nodes per second over the one-thread row of the same run

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


def thread_counts(threads: int) -> list[int]:
    """1, 2, 4, ... below ``threads``, then ``threads``."""
    counts, n = [], 1
    while n < threads:
        counts.append(n)
        n *= 2
    return counts + [threads]


def bench_scaling(game: str, threads: int, seconds: float,
                  searches: list[str] | None = None) -> list[ScalingRow]:
    """Nodes per second of each search at each thread count, ``seconds`` per search and
    thread count spread over the bench positions (a fresh search per position)."""
    rows: list[ScalingRow] = []
    states = positions(game)
    for name in searches or _searches(game):
        base = 0.0
        for count in thread_counts(threads):
            nodes = 0
            elapsed = 0.0
            for state in states:
                params = SearchParams(hash_mb=64, threads=count, keep_tree=False)
                search = make_search(name, heuristic_for(state), params)
                result = search.run(state, Stopper(time=seconds / len(states)))
                nodes += result.nodes
                elapsed += result.time
            nps = nodes / elapsed if elapsed > 0 else 0.0
            if count == 1:
                base = nps
            rows.append(ScalingRow(game, name, count, nodes, elapsed,
                                   nps / base if base > 0 else 0.0))
    return rows


def _network_stand_in(width: int) -> Any:
    """A NumPy function costing about what a small CPU value network costs per batch."""
    rng = np.random.default_rng(0)
    hidden = None

    def fn(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        nonlocal hidden
        flat = batch.reshape(len(batch), -1)
        if hidden is None:
            hidden = rng.standard_normal((flat.shape[1], width)).astype(np.float32) * 0.01
        out: npt.NDArray[np.float32] = np.tanh(np.tanh(flat @ hidden).sum(axis=1) * 0.01)
        return out
    return fn


def evaluator_share(seconds: float = 2.0, width: int = 4096) -> dict[str, float]:
    """Hex 11 UBFM_s with a network-sized batch evaluator: time inside vs outside it."""
    state = make_game("hex(size=11)").new_initial_state()
    inner = _network_stand_in(width)
    spent = [0.0]

    def timed(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        start = time.perf_counter()
        out: npt.NDArray[np.float32] = inner(batch)
        spent[0] += time.perf_counter() - start
        return out

    evaluator = BatchEvaluator(timed, state)
    search = make_search("ubfms", evaluator, SearchParams(hash_mb=64))
    result = search.run(state, Stopper(time=seconds))
    total = result.time
    return {"seconds": total, "evaluator_seconds": spent[0],
            "outside_share": (total - spent[0]) / total if total else 0.0,
            "positions_per_second": result.evaluations / total if total else 0.0,
            "iterations": result.iterations}


# expectiminimax depths for the batch measurement (about a second each)
BATCH_DEPTH = {"einstein": 4, "dicechess": 3}


def emm_batches(game: str, width: int = 256) -> dict[str, float] | None:
    """Dice-game expectiminimax with a network-sized batch evaluator on the bench
    positions at a fixed depth: network calls, positions per call and time. A frontier
    chance node values all its outcomes' moves in one call, so the calls are few and
    large, which is what a network's per-call cost wants."""
    if game not in BATCH_DEPTH or importlib.util.find_spec(
            "descent.search_cy.search.expectimax") is None:
        return None
    inner = _network_stand_in(width)
    sizes: list[int] = []

    def counted(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        sizes.append(len(batch))
        out: npt.NDArray[np.float32] = inner(batch)
        return out

    depth = BATCH_DEPTH[game]
    total = 0.0
    for state in positions(game):
        search = make_search("expectiminimax", BatchEvaluator(counted, state),
                             SearchParams(hash_mb=32, max_depth=depth))
        total += search.run(state, Stopper(iterations=depth)).time
    calls = len(sizes)
    return {"depth": depth, "calls": calls, "positions": sum(sizes),
            "positions_per_call": sum(sizes) / calls if calls else 0.0,
            "largest_call": max(sizes, default=0), "seconds": total}


def openspiel_comparison(seconds: float) -> list[dict[str, Any]] | None:
    try:
        from descent.tools.bench_emm import bench_expectiminimax
    except ImportError:
        return None
    try:
        rows: list[dict[str, Any]] = bench_expectiminimax(seconds)
    except ImportError:
        return None
    return rows


def main(game: str | None = None, as_json: bool = False, seconds: float = 1.0,
         threads: int = 1) -> int:
    names = [game] if game else list(GAMES)
    for name in names:
        if name not in GAMES:
            raise ValueError(f"no search benchmark for {name!r} (known: {', '.join(GAMES)})")
    rows = [row for name in names for row in bench_game(name)]
    signature = sum(r.nodes for r in rows)
    share = evaluator_share(seconds * 2) if game in (None, "hex") else None
    emm = openspiel_comparison(seconds) if game in (None, "einstein") else None
    batches = {name: b for name in names if (b := emm_batches(name)) is not None}
    scaling = [row for name in names for row in bench_scaling(name, threads, seconds)] \
        if threads > 1 else []
    if as_json:
        print(json.dumps({"suite": "search", "signature": signature,
                          "rows": [{**asdict(r), "nps": r.nps} for r in rows],
                          "evaluator_share": share, "einstein_vs_openspiel": emm,
                          "expectiminimax_batches": batches,
                          "threads": [{**asdict(r), "nps": r.nps} for r in scaling]}))
        return 0
    print(f"{'game':<10} {'search':<15} {'positions':>9} {'nodes':>12} {'seconds':>8} "
          f"{'nodes/s':>12}")
    for r in rows:
        print(f"{r.game:<10} {r.search:<15} {r.positions:>9} {r.nodes:>12,} {r.seconds:>8.3f} "
              f"{r.nps:>12,.0f}")
    if share:
        print(f"\nhex 11 ubfms with a network-sized batch evaluator: "
              f"{share['outside_share']:.1%} of the time outside the evaluator "
              f"({share['positions_per_second']:,.0f} positions/s, "
              f"{share['iterations']:,.0f} iterations in {share['seconds']:.2f} s)")
    for name, b in batches.items():
        print(f"\n{name} expectiminimax depth {b['depth']} with a network-sized batch "
              f"evaluator: {b['calls']:,} calls, {b['positions_per_call']:.1f} positions a "
              f"call (largest {b['largest_call']}), {b['seconds']:.2f} s")
    if emm:
        print("\neinstein expectiminimax vs OpenSpiel (same positions and depth):")
        for row in emm:
            print("  " + ", ".join(f"{k}={v:,.3f}" if isinstance(v, float) else f"{k}={v}"
                                   for k, v in row.items()))
    if scaling:
        print(f"\nthreads ({seconds:g} s per search and thread count; speed-up over one "
              "thread in this run):")
        print(f"{'game':<10} {'search':<15} {'threads':>7} {'nodes':>12} {'nodes/s':>12} "
              f"{'speed-up':>8}")
        for t in scaling:
            print(f"{t.game:<10} {t.search:<15} {t.threads:>7} {t.nodes:>12,} "
                  f"{t.nps:>12,.0f} {t.speedup:>7.2f}x")
    print(f"\nsignature: {signature}")
    return 0
