"""``descent bench nets``: network inference speed per backend, preset and batch size.

Three tables:

1. positions per second of every available backend (fp32; TensorRT also fp16) for every
   preset of each game at batch sizes 1, 16, 64, 121 and 256, on real encoded positions
   and seeded random weights (speed does not depend on training);
2. the engine's effective evaluation rate inside a search: ``ubfms`` on Hex 11 with the
   network evaluator (evaluations per second of search time) next to the backend's raw
   rate on the same batches (evaluations per second of time inside ``evaluate``), and the
   backend alone on a batch of the search's mean size, measured apart. The overhead is
   the share of search time outside the backend: what the search, the encoding and the
   Python call cost (target: under 10%);
3. the native backend's leaf inside expectiminimax on the dice games (``mlp`` preset):
   nodes per second at a fixed node budget from seeded positions, with the network read
   from the game's list form and from its planes (the same values, so the same tree: their
   ratio is the list form's gain), next to the C heuristic's rate in the same run (its
   tree differs: a reference, not a like-for-like ratio).
"""

from __future__ import annotations

import json
import platform
import time
from dataclasses import asdict, dataclass
from typing import Any

from descent.nets.arch import PRESETS, multiply_adds, preset
from descent.nets.backends import BACKENDS, Backend, make_backend, probe, runs_model
from descent.nets.backends.auto import _cpu_model
from descent.nets.encoding import encode_batch, sample_positions
from descent.nets.evaluator import NetworkFunction, network_evaluator
from descent.nets.modelfile import LoadedModel, make_model
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper

GAMES = {"hex": "hex(size=11)", "einstein": "einstein", "dicechess": "dicechess"}
BATCHES = (1, 16, 64, 121, 256)
# the leaf table's other native networks of each game: the nnue's first layer kept by the
# position, and the networks on the C heuristic
LEAF_PRESETS = {"dicechess": ("nnue", "nnue_small", "hybrid"), "einstein": ("hybrid",)}
BENCH_PRESETS = ("paper", "cpu", "mlp")   # tiny is for tests; ask for it with presets=


@dataclass
class LeafRow:
    game: str
    leaf: str                # heuristic | mlp, planes | mlp, list form | nnue[_small] | hybrid
    nodes: int
    nodes_per_s: float
    heuristic_ratio: float   # the heuristic's nodes/s over this row's


@dataclass
class RateRow:
    game: str
    preset: str
    mmacs: float          # million multiply-adds per position
    backend: str
    device: str
    precision: str
    batch: int
    positions_per_s: float


@dataclass
class SearchRow:
    game: str
    preset: str
    backend: str
    evaluations: int
    seconds: float
    mean_batch: float
    effective_per_s: float   # evaluations / search time
    raw_per_s: float         # evaluations / time inside backend.evaluate (same batches)
    alone_per_s: float       # the backend alone on one batch of the mean size, repeated
    overhead: float          # share of search time outside the backend = 1 - eff / raw


class _Timed:
    """A backend wrapper that adds up the time spent in evaluate."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name, self.device = inner.name, inner.device
        self.precision, self.max_batch = inner.precision, inner.max_batch
        self.spent = 0.0

    def evaluate(self, batch: Any) -> Any:
        start = time.perf_counter()
        out = self.inner.evaluate(batch)
        self.spent += time.perf_counter() - start
        return out

    def describe(self) -> str:
        return self.inner.describe()


def rate(backend: Backend, batch: Any, seconds: float) -> float:
    backend.evaluate(batch)
    backend.evaluate(batch)
    calls, start, elapsed = 0, time.perf_counter(), 0.0
    while calls < 3 or elapsed < seconds:
        backend.evaluate(batch)
        calls += 1
        elapsed = time.perf_counter() - start
    return float(calls * batch.shape[0] / elapsed)


def _variants() -> list[tuple[str, str]]:
    out = []
    for name in BACKENDS:
        ok, detail = probe(name)
        if ok:
            out.append((name, "fp32"))
            if name == "tensorrt" or (name == "torch" and "cuda" in detail):
                out.append((name, "fp16"))
    return out


def bench_rates(games: list[str], presets: tuple[str, ...], seconds: float,
                batches: tuple[int, ...], variants: list[tuple[str, str]]) -> list[RateRow]:
    rows = []
    for game in games:
        g = make_game(GAMES[game])
        states = sample_positions(g, max(batches), seed=5)
        for pname in presets:
            if pname not in PRESETS[game]:
                continue
            model = make_model(g, preset(game, pname), seed=1)
            mmacs = multiply_adds(model.arch, model.input_shape) / 1e6
            for name, precision in variants:
                if not runs_model(name, model):
                    continue
                backend = make_backend(name, model, precision=precision, max_batch=max(batches))
                for size in batches:
                    positions = rate(backend, encode_batch(states[:size]),
                                     seconds / len(batches))
                    rows.append(RateRow(game, pname, round(mmacs, 2), name, backend.device,
                                        precision, size, round(positions, 1)))
    return rows


def bench_search(presets: tuple[str, ...], seconds: float,
                 variants: list[tuple[str, str]]) -> list[SearchRow]:
    rows = []
    g = make_game(GAMES["hex"])
    root = g.new_initial_state()
    for pname in presets:
        model: LoadedModel = make_model(g, preset("hex", pname), seed=1)
        for name, precision in variants:
            if not runs_model(name, model):
                continue
            if name == "native":
                rows.append(_native_search_row(model, root, seconds))
                continue
            timed = _Timed(make_backend(name, model, precision=precision))
            fn = NetworkFunction(model, timed)
            evaluator = network_evaluator(fn, root)
            search = make_search("ubfms", evaluator, SearchParams(seed=1, keep_tree=False))
            search.run(root, Stopper(iterations=2))          # warm-up
            timed.spent = 0.0
            calls_before = fn.calls
            result = search.run(root, Stopper(time=seconds))
            calls = max(fn.calls - calls_before, 1)
            mean_batch = result.evaluations / calls
            size = max(1, round(mean_batch))
            alone = rate(timed.inner, encode_batch(sample_positions(g, size, seed=5)),
                         seconds / 2)
            elapsed = max(result.time, 1e-9)
            rows.append(SearchRow(g.spec, pname, f"{name}/{precision}", result.evaluations,
                                  round(elapsed, 3), round(mean_batch, 1),
                                  round(result.evaluations / elapsed, 1),
                                  round(result.evaluations / max(timed.spent, 1e-9), 1),
                                  round(alone, 1), round(1.0 - timed.spent / elapsed, 3)))
    return rows


def _native_search_row(model: LoadedModel, root: Any, seconds: float) -> SearchRow:
    """The native evaluator values each position inside the search, in C: there is no
    batch call to time apart, so the raw and alone rates are the backend's own rate over
    positions at batch 1 and the overhead is left at 0 (it is all one C loop)."""
    g = root.game
    evaluator = network_evaluator(model, root, backend="native")
    search = make_search("ubfms", evaluator, SearchParams(seed=1, keep_tree=False))
    search.run(root, Stopper(iterations=2))
    result = search.run(root, Stopper(time=seconds))
    elapsed = max(result.time, 1e-9)
    alone = rate(make_backend("native", model), encode_batch(sample_positions(g, 1, seed=5)),
                 seconds / 2)
    return SearchRow(g.spec, model.arch.preset, "native/fp32", result.evaluations,
                     round(elapsed, 3), 1.0, round(result.evaluations / elapsed, 1),
                     round(alone, 1), round(alone, 1), 0.0)


def bench_leaf(games: list[str], seconds: float, positions: int = 12) -> list[LeafRow]:
    """Expectiminimax with the C heuristic, then the native mlp leaf from planes and from
    the list form, and the game's LEAF_PRESETS, runs interleaved (best of three) so that
    machine load hits all alike."""
    from descent.nets.backends.native import native_evaluator
    from descent.search_cy.eval.heuristics import heuristic_for

    rows = []
    for game in games:
        if game == "hex":
            continue
        g = make_game(GAMES[game])
        states = [s for s in sample_positions(g, 3 * positions, seed=7)
                  if not s.is_terminal() and not s.is_chance_node()][:positions]
        model = make_model(g, preset(game, "mlp"), seed=1)
        leaves = {"heuristic": heuristic_for(g),
                  "mlp, planes": native_evaluator(model, states[0], list_form=False),
                  "mlp, list form": native_evaluator(model, states[0])}
        for name in LEAF_PRESETS.get(game, ()):
            leaves[name] = native_evaluator(make_model(g, preset(game, name), seed=1),
                                            states[0])
        # the budget from a first timed run with the heuristic: about seconds / 3 a pass
        probe_search = make_search("expectiminimax", leaves["heuristic"], SearchParams())
        probe_result = probe_search.run(states[0], Stopper(time=seconds / (3 * len(states))))
        budget = max(1000, probe_result.nodes)
        best: dict[str, tuple[int, float]] = {}
        for _ in range(3):
            for name, leaf in leaves.items():
                search = make_search("expectiminimax", leaf, SearchParams(keep_tree=False))
                nodes, start = 0, time.perf_counter()
                for state in states:
                    nodes += search.run(state, Stopper(nodes=budget)).nodes
                per_s = nodes / max(time.perf_counter() - start, 1e-9)
                if per_s > best.get(name, (0, 0.0))[1]:
                    best[name] = (nodes, per_s)
        reference = best["heuristic"][1]
        for name, (nodes, per_s) in best.items():
            rows.append(LeafRow(g.spec, name, nodes, round(per_s, 1),
                                round(reference / per_s, 3)))
    return rows


def main(game: str | None = None, as_json: bool = False, seconds: float = 1.0,
         presets: tuple[str, ...] = BENCH_PRESETS, batches: tuple[int, ...] = BATCHES,
         search: bool = True) -> int:
    games = [game] if game else list(GAMES)
    for g in games:
        if g not in GAMES:
            raise ValueError(f"bench nets: unknown game {g!r} (known: {', '.join(GAMES)})")
    variants = _variants()
    cpu = f"{_cpu_model()}, {platform.machine()}"
    rows = bench_rates(games, presets, seconds, batches, variants)
    search_rows = bench_search(presets, seconds, variants) if search and "hex" in games else []
    leaf_rows = bench_leaf(games, seconds) if search and "mlp" in presets else []
    if as_json:
        print(json.dumps({"cpu": cpu, "backends": [f"{n}/{p}" for n, p in variants],
                          "rates": [asdict(r) for r in rows],
                          "search": [asdict(r) for r in search_rows],
                          "leaf": [asdict(r) for r in leaf_rows]}, indent=1))
        return 0
    print(f"network inference, positions/s (CPU: {cpu}; seeded random weights, real "
          "positions)")
    header = f"{'game':10s} {'preset':7s} {'MMAC':>6s} {'backend':18s}" + "".join(
        f"{'b=' + str(b):>10s}" for b in batches)
    print(header)
    keyed: dict[tuple[str, str, str], dict[int, float]] = {}
    macs: dict[tuple[str, str], float] = {}
    for r in rows:
        keyed.setdefault((r.game, r.preset, f"{r.backend}/{r.precision}"), {})[r.batch] = \
            r.positions_per_s
        macs[(r.game, r.preset)] = r.mmacs
    for (g, p, b), by_batch in keyed.items():
        print(f"{g:10s} {p:7s} {macs[(g, p)]:6.1f} {b:18s}" + "".join(
            f"{by_batch.get(size, float('nan')):10.0f}" for size in batches))
    if search_rows:
        print()
        print("inside a search: ubfms on hex(size=11), network evaluator, "
              f"{seconds:g} s per run")
        print(f"{'preset':7s} {'backend':18s} {'evals':>7s} {'mean batch':>10s} "
              f"{'in search/s':>12s} {'raw/s':>9s} {'alone/s':>9s} {'overhead':>9s}")
        for s in search_rows:
            print(f"{s.preset:7s} {s.backend:18s} {s.evaluations:7d} {s.mean_batch:10.1f} "
                  f"{s.effective_per_s:12.0f} {s.raw_per_s:9.0f} {s.alone_per_s:9.0f} "
                  f"{100 * s.overhead:8.1f}%")
    if leaf_rows:
        print()
        print("the native leaf inside expectiminimax (mlp preset, seeded weights, fixed node "
              "budget): nodes/s")
        print(f"{'game':50s} {'leaf':15s} {'nodes':>9s} {'nodes/s':>11s} "
              f"{'heuristic x':>12s}")
        for leaf in leaf_rows:
            print(f"{leaf.game:50s} {leaf.leaf:15s} {leaf.nodes:9d} {leaf.nodes_per_s:11.0f} "
                  f"{leaf.heuristic_ratio:12.2f}")
    return 0
