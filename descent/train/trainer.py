"""The Descent training loop and its run directory.

One *iteration*: ``selfplay.games_per_iteration`` self-play matches (train.selfplay),
their data added to the replay memory, then one update - Adam on the MSE over the new
data plus a ``data.replay_rate`` sample of the older memory, ``update.epochs`` passes in
minibatches of ``update.batch_size`` - then the metrics line, and every ``eval.every``
iterations the evaluation matches, every ``run.checkpoint_every`` a checkpoint.

Warm start (``selfplay.bootstrap_games``, off by default): the first N self-play games
search with the game's C heuristic as the leaf evaluator instead of the network, so the
first targets are the values of heuristic-led Descent trees (terminal results backed up
through heuristic leaves) rather than of a random network's; from game N on, the network
searches and learns from its own trees as in the papers.

The run directory::

    config.toml         the complete configuration (read back by --resume)
    checkpoint.pt       the latest atomic checkpoint (train.checkpoint)
    memory/*.npz        the replay memory's games, a segment per checkpoint that added
                        some (train.memory_files; the checkpoint names its own)
    metrics.jsonl       one JSON object per iteration (and one for pre-initialisation)
    models/iter-N.dnet  the network at each evaluation (the next one's "previous")
    model.dnet          the final network, a nets.modelfile model file with provenance
    plots/*.png         loss, win rates with 95% intervals, data and evaluations

Determinism: everything random is drawn from one numpy generator seeded by ``seed`` (and
saved in checkpoints), searches are seeded per game, evaluation games by ``eval.seed``;
with iteration (not time) budgets and the same torch thread count, a run interrupted and
resumed writes the same metrics as one that was not (wall-clock fields aside).
"""

from __future__ import annotations

import random
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from descent.nets.modelfile import LoadedModel, load_model, save_model
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams
from descent.search_cy.search.selection import annealed_epsilon
from descent.train.checkpoint import (
    leftover_temporaries,
    load_checkpoint,
    restore_rng,
    rng_state,
    save_checkpoint,
)
from descent.train.config import (
    TrainConfig,
    config_from_toml,
    load_config,
    to_dict,
    to_toml,
)
from descent.train.data import ReplayMemory, random_terminal_data
from descent.train.evaluation import (
    MatchStats,
    Player,
    RandomPlayer,
    SearchPlayer,
    paired_matches,
)
from descent.train.heuristics import reinforcement_for
from descent.train.memory_files import (
    MissingSegment,
    Segment,
    checkpoint_games,
    checkpoint_segments,
    live_segments,
    load_run_memory,
    remove_unnamed,
    write_segment,
)
from descent.train.network import Learner
from descent.train.report import MetricsLog, PlotsUnavailable, ProgressBar, write_plots
from descent.train.selfplay import SelfPlayer
from descent.train.workers import PlayedGame, SelfPlayPool, search_seed

if TYPE_CHECKING:
    from descent.train.cluster import RayPool

CLUSTERS = ("local", "ray")
CONFIG_NAME = "config.toml"
METRICS_NAME = "metrics.jsonl"
FINAL_MODEL = "model.dnet"
DEFAULT_ANNEAL = 1000


@dataclass
class Counters:
    """Totals of a run (saved in checkpoints)."""

    iterations: int = 0
    games: int = 0
    pairs: int = 0                  # learning pairs produced by self-play
    train_pairs: int = 0            # pairs passed through the optimiser (with repeats)
    network_evaluations: int = 0    # positions the network valued in self-play searches
    network_batches: int = 0        # forward passes of those evaluations
    search_nodes: int = 0           # states the self-play searches visited
    seconds: float = 0.0            # training time (self-play, updates, evaluations)
    pretrained: bool = False
    last_eval: int = -1             # iteration of the last evaluation


# What a resumed run may not change: the game and the network define the checkpoint's
# weights and the replay memory's rows. Everything else (search budget, schedule, data
# and update settings, workers, evaluation, limits) may change, and is recorded.
FIXED_ON_RESUME = ("game", "network")


def config_changes(stored: TrainConfig, cfg: TrainConfig) -> dict[str, Any]:
    """``{"section.key": [old, new]}`` for what ``cfg`` changes in a run's ``stored``
    config outside [run]; raises ValueError for a change of the game or the network."""
    a, b = to_dict(stored), to_dict(cfg)
    for d in (a, b):   # any number of workers plays the same games; none plays others
        d["selfplay"]["workers"] = min(int(d["selfplay"].get("workers", 0)), 1)
    fixed = sorted(k for k in FIXED_ON_RESUME if a.get(k) != b.get(k))
    if fixed:
        raise ValueError(f"the config differs from the run's own in "
                         f"{', '.join(fixed)}, which a resumed run keeps (start a new run, "
                         "e.g. with network.init_model or data.init_memory)")
    changed: dict[str, Any] = {}
    for key in sorted(set(a) | set(b)):
        if key == "run":
            continue
        old, new = a.get(key), b.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            for name in sorted(set(old) | set(new)):
                if old.get(name) != new.get(name):
                    changed[f"{key}.{name}"] = [old.get(name), new.get(name)]
        elif old != new:
            changed[key] = [old, new]
    return changed


def provenance_note(cfg: TrainConfig, heuristic: str, iterations: int, note: str) -> str:
    """The model file's training note: how the network was trained, and ``note``."""
    sp = cfg.selfplay
    budget = f"{sp.seconds}s" if sp.seconds > 0 else f"{sp.iterations} iterations"
    warm = f", warm start {sp.bootstrap_games} heuristic games" if sp.bootstrap_games else ""
    if cfg.network.init_model:
        warm += f", initial weights {Path(cfg.network.init_model).name}"
    if cfg.data.init_memory:
        warm += f", replay memory of {Path(cfg.data.init_memory).name}"
    return (f"descent train: {sp.search} {budget}/move, {sp.learning} learning, "
            f"{heuristic}{warm}, {iterations} iterations; {note}")


class Trainer:
    """A training run in ``run_dir``. ``resume``: continue from its checkpoint (``cfg``
    keeps the run's game and network; what else it changes is recorded in the metrics)."""

    def __init__(self, cfg: TrainConfig, run_dir: str | Path, *, resume: bool = False,
                 stream: TextIO | None = None,
                 log: Callable[[str], None] | None = None,
                 cluster: str = "local", address: str | None = None) -> None:
        import torch

        if cluster not in CLUSTERS:
            raise ValueError(f"unknown cluster {cluster!r} (known: {', '.join(CLUSTERS)})")
        self.cfg = cfg
        # where the self-play games are played: local (the trainer's process, or
        # selfplay.workers processes) | ray (actors on a Ray cluster at ``address``);
        # not part of the run's config, so a run moves between the two on --resume
        self.cluster = cluster
        self.address = address
        self.run_dir = Path(run_dir)
        self.log = log or (lambda _msg: None)
        self.log_given = log is not None
        self.plot_warnings: set[str] = set()
        self.game = make_game(cfg.game)
        self.prototype = self.game.new_initial_state()
        sp = cfg.selfplay
        self.reinforcement = reinforcement_for(self.prototype, sp.heuristic, sp.max_plies)
        self.rng = np.random.default_rng(cfg.seed)
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        init_seed = cfg.network.init_seed if cfg.network.init_seed >= 0 else cfg.seed
        u = cfg.update
        self.learner = Learner(self.game, cfg.network.preset, self.reinforcement,
                               view=cfg.network.view, seed=init_seed, lr=u.lr,
                               weight_decay=u.weight_decay, device=u.device,
                               threads=u.threads)
        self.network_evaluator = self.learner.evaluator(self.prototype)
        # the warm start's leaf evaluator: the C heuristic, values in [-1, 1] like the
        # gain, presence and score targets (config.validate checks the heuristic)
        self.bootstrap_evaluator = heuristic_for(self.prototype) if sp.bootstrap_games else None
        self.selfplayer = SelfPlayer(self.game, sp, self.reinforcement,
                                     self.network_evaluator,
                                     symmetries=cfg.data.symmetries)
        self.memory = ReplayMemory(cfg.data.replay_games, cfg.data.replay_pairs)
        self.segments: list[Segment] = []      # memory files the checkpoint names
        self.pool: SelfPlayPool | RayPool | None = None  # workers or a cluster, in run()
        self.counters = Counters()
        self.metrics = MetricsLog(self.run_dir / METRICS_NAME)
        self.records: list[dict[str, Any]] = []
        self.previous_model: Path | None = None
        self.stop_requested = False
        self.stream = stream
        self._start(resume)

    # -- run directory ---------------------------------------------------------------------

    def _start(self, resume: bool) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "models").mkdir(exist_ok=True)
        config_path = self.run_dir / CONFIG_NAME
        for tmp in leftover_temporaries(self.run_dir):
            tmp.unlink(missing_ok=True)
        state = load_checkpoint(self.run_dir) if resume else None
        if not resume and (self.run_dir / "checkpoint.pt").exists():
            raise ValueError(f"{self.run_dir} holds a training run already: use --resume "
                             "to continue it, or another --run-dir")
        changed: dict[str, Any] = {}
        if resume and state is not None and "config_toml" in state:
            # against the config the checkpoint was trained with, not config.toml: a
            # resume that changed it and stopped before its first checkpoint rewrote
            # config.toml, and its metrics record went with the truncation below
            changed = config_changes(config_from_toml(str(state["config_toml"])), self.cfg)
        elif resume and config_path.exists():
            changed = config_changes(load_config(config_path), self.cfg)
        config_path.write_text(to_toml(self.cfg), encoding="utf-8")
        if state is None:
            self.metrics.truncate(0)
            if self.cfg.network.init_model:
                self.learner.load_weights(load_model(self.cfg.network.init_model,
                                                     self.game.spec))
            if self.cfg.data.init_memory:
                self._inherit_memory(Path(self.cfg.data.init_memory))
            initial = self.run_dir / "models" / "iter-000000.dnet"
            save_model(self._export("initial weights"), initial)
            self.previous_model = initial
            self.log(f"new run in {self.run_dir}: {self.game.spec}, "
                     f"{self.reinforcement.name} heuristic, {self.learner.arch.preset} net")
            return
        self.learner.restore(state["learner"])
        restore_rng(self.rng, state["rng_json"])
        try:
            shape, games = checkpoint_games(self.run_dir, state)
            self.memory.restore(shape, games, int(state.get("memory_first", 0)))
            self.segments = checkpoint_segments(state)
        except MissingSegment as exc:
            # a run is committed without its replay memory (memory/ is not versioned), so
            # a fresh clone resumes with the network, optimiser and counters and an empty
            # memory that fills again from the next game on
            end = int(state.get("memory_end", 0))
            self.memory.restore(tuple(int(x) for x in state["memory_shape"]), [], end)
            self.segments = []
            self.log(f"{exc}: resuming with an empty replay memory (the network, "
                     "optimiser and counters are the checkpoint's)")
        remove_unnamed(self.run_dir, self.segments)   # written after the checkpoint: a kill
        known = {f.name for f in fields(Counters)}
        self.counters = Counters(**{k: v for k, v in state["counters"].items() if k in known})
        self.metrics.truncate(int(state["metrics_bytes"]))
        self.records = self.metrics.read()
        previous = str(state.get("previous_model", ""))
        self.previous_model = Path(previous) if previous else None
        self.log(f"resumed {self.run_dir} at iteration {self.counters.iterations} "
                 f"({self.counters.games} games)")
        if changed:
            # the history says from which iteration on the run trained differently
            self.metrics.append({"kind": "config", "iteration": self.counters.iterations,
                                 "games_total": self.counters.games, "changed": changed})
            self.log("config changed on resume: " + ", ".join(
                f"{k} {v[0]!r} -> {v[1]!r}" for k, v in changed.items()))

    def extend(self, hours: float | None = None, iterations: int | None = None) -> None:
        """Sets the run's limits to ``hours`` more training time and ``iterations`` more
        iterations from where it stands (a resumed run's budget for this invocation;
        None: no limit of that kind), and stores them in ``config.toml``."""
        c = self.counters
        self.cfg = self.cfg.with_overrides(
            run__hours=round(c.seconds / 3600.0 + hours, 4) if hours else 0.0,
            run__max_iterations=c.iterations + iterations if iterations else 0)
        (self.run_dir / CONFIG_NAME).write_text(to_toml(self.cfg), encoding="utf-8")

    def _inherit_memory(self, source: Path) -> None:
        """Starts the replay memory with another run's (same game and encoding): a run
        warm-started from a refit network then keeps training on the data it was fitted
        to, instead of on its first game alone."""
        other = load_config(source / CONFIG_NAME) if (source / CONFIG_NAME).exists() else None
        if other is None or make_game(other.game).spec != self.game.spec:
            raise ValueError(f"data.init_memory: {source} is not a training run of "
                             f"{self.game.spec}")
        import torch

        loaded = load_run_memory(source)
        torch.manual_seed(self.cfg.seed)   # loading restored the source run's torch RNG
        if loaded is None:
            raise ValueError(f"data.init_memory: {source} has no checkpoint yet")
        _state, shape, games = loaded
        if shape != tuple(self.prototype.encoding_shape):
            raise ValueError(f"data.init_memory: {source} holds inputs of shape "
                             f"{shape}, this run encodes "
                             f"{tuple(self.prototype.encoding_shape)}")
        self.memory.restore(shape, games)
        self.memory.trim()
        self.log(f"replay memory from {source}: {len(self.memory)} games, "
                 f"{self.memory.pairs} pairs")

    def checkpoint(self) -> Path:
        """Writes the games added since the last checkpoint as a memory segment, then the
        checkpoint naming it; then removes the segments no longer named. Blocks."""
        saved = max((first + count for _name, first, count in self.segments), default=0)
        start = max(saved, self.memory.first)
        new = self.memory.since(start)
        if new:
            self.segments.append(write_segment(self.run_dir, start, new))
        self.segments = live_segments(self.segments, self.memory.first)
        path = save_checkpoint(self.run_dir, {
            "learner": self.learner.state(),
            "memory_segments": [list(s) for s in self.segments],
            "memory_first": self.memory.first,
            "memory_end": self.memory.end,
            "memory_shape": list(self.memory.shape),
            "rng_json": rng_state(self.rng),
            "counters": asdict(self.counters),
            "metrics_bytes": self.metrics.size(),
            "previous_model": str(self.previous_model or ""),
            "config_toml": to_toml(self.cfg),
        })
        remove_unnamed(self.run_dir, self.segments)
        return path

    def _export(self, note: str) -> LoadedModel:
        text = provenance_note(self.cfg, self.reinforcement.name,
                               self.counters.iterations, note)
        return self.learner.export(games=self.counters.games, seed=self.cfg.seed, note=text)

    def export_final(self) -> Path:
        """Writes ``model.dnet`` (the current network, with its provenance)."""
        return save_model(self._export("final"), self.run_dir / FINAL_MODEL)

    # -- schedule --------------------------------------------------------------------------

    def progress(self) -> float:
        """Fraction of the annealing horizon done (before the next iteration)."""
        sp, run = self.cfg.selfplay, self.cfg.run
        if sp.anneal_iterations:
            return self.counters.iterations / sp.anneal_iterations
        if run.max_iterations:
            return self.counters.iterations / run.max_iterations
        if run.hours:
            return self.counters.seconds / (run.hours * 3600.0)
        return self.counters.iterations / DEFAULT_ANNEAL

    def epsilon(self) -> float:
        sp = self.cfg.selfplay
        return annealed_epsilon(self.progress(), sp.eps_start, sp.eps_end)

    def finished(self) -> bool:
        run = self.cfg.run
        if run.max_iterations and self.counters.iterations >= run.max_iterations:
            return True
        return bool(run.hours) and self.counters.seconds >= run.hours * 3600.0

    def request_stop(self) -> None:
        """Stop after the current iteration (a checkpoint is written). Must not block."""
        self.stop_requested = True

    # -- the loop --------------------------------------------------------------------------

    def run(self, stop_after: int | None = None) -> dict[str, Any]:
        """Trains until the run's limits (or ``stop_after`` more iterations, or a stop
        request), checkpointing as configured; returns the last metrics record. With no
        limit at all it runs until stopped. Blocks."""
        run = self.cfg.run
        total: float | None = (float(run.max_iterations) if run.max_iterations
                               else (run.hours if run.hours else None))
        unit = "it" if run.max_iterations or not run.hours else "h"
        bar = ProgressBar(total, unit, stream=self.stream, enabled=run.progress,
                          initial=self._progress_done())
        self._bar = bar
        done = 0
        last: dict[str, Any] = self.records[-1] if self.records else {}
        try:
            if not self.counters.pretrained and self.cfg.data.pretrain_games > 0:
                last = self.pretrain()
            while not self.finished() and not self.stop_requested and (
                    stop_after is None or done < stop_after):
                last = self.iteration()
                done += 1
                self._show(bar, last, force="eval" in last)
            natural_end = self.finished()
            if natural_end and self.counters.last_eval != self.counters.iterations \
                    and self.cfg.evaluation.games > 0 and self.counters.iterations > 0:
                last = self._final_evaluation()
            self.checkpoint()
            if self.records:
                self.plot()
            self.export_final()
            if last:
                self._show(bar, last, force=True)
        except BaseException:
            self.close(terminate=True)
            raise
        finally:
            self.close()
            bar.close()
        return last

    def _show(self, bar: ProgressBar, record: dict[str, Any], force: bool = False) -> None:
        c = self.counters
        parts = [f"games {c.games}", f"pairs {c.pairs}"]
        if "loss" in record:
            parts.append(f"loss {record['loss']:.4f}")
        for opp, stats in (record.get("eval") or {}).items():
            parts.append(f"{opp} {stats['win_rate']:.2f}")
        bar.update(self._progress_done(), "  ".join(parts), force=force)

    def _progress_done(self) -> float:
        """The progress bar's count: iterations, or hours for a run limited by time."""
        c = self.counters
        return c.iterations if (self.cfg.run.max_iterations or not self.cfg.run.hours) \
            else c.seconds / 3600.0

    def pretrain(self) -> dict[str, Any]:
        """Pre-initialisation on the values of random terminal states."""
        t0 = time.monotonic()
        d = self.cfg.data
        planes, values = random_terminal_data(self.game.new_initial_state, self.reinforcement,
                                              d.pretrain_games, self.rng, d.symmetries)
        before = self.learner.loss(planes, values)
        loss = 0.0
        for _ in range(d.pretrain_epochs):
            loss = self.learner.fit(planes, values, self.rng, self.cfg.update.batch_size)
        self.counters.pretrained = True
        self.counters.train_pairs += len(values) * d.pretrain_epochs
        seconds = time.monotonic() - t0
        self.counters.seconds += seconds
        record = {"kind": "pretrain", "iteration": 0, "games": d.pretrain_games,
                  "pairs": int(len(values)), "loss_before": before, "loss": loss,
                  "updates": self.learner.steps, "seconds": round(seconds, 3)}
        self.metrics.append(record)
        self.records.append(record)
        return record

    def iteration(self) -> dict[str, Any]:
        """One iteration (self-play games, update, metrics, maybe evaluation/checkpoint)."""
        t0 = time.monotonic()
        cfg, c = self.cfg, self.counters
        eps = self.epsilon()
        positions, batches = self.learner.positions, self.learner.batches
        games = cfg.selfplay.games_per_iteration
        new_planes, new_values = [], []
        results, plies, nodes = [], [], 0
        bootstrap = c.games < cfg.selfplay.bootstrap_games
        played = (self._play_pool(games, eps)
                  if cfg.selfplay.workers or self.cluster != "local" else None)
        worker_positions = worker_batches = 0
        for k in range(games):
            stored = None
            if played is not None:
                record, stored = played[k].record, played[k].stored
                worker_positions += played[k].positions
                worker_batches += played[k].batches
            else:
                self.selfplayer.evaluator = (self.bootstrap_evaluator
                                             if c.games < cfg.selfplay.bootstrap_games
                                             and self.bootstrap_evaluator is not None
                                             else self.network_evaluator)
                record = self.selfplayer.play(self.rng, eps, search_seed(cfg.seed, c.games))
            c.games += 1
            self.memory.add(record.planes, record.values, stored)
            new_planes.append(record.planes)
            new_values.append(record.values)
            results.append(record.result)
            plies.append(record.plies)
            nodes += record.search_nodes
        planes = np.concatenate(new_planes)
        values = np.concatenate(new_values)
        fresh_loss = self.learner.loss(planes, values)
        replay = self.memory.sample(cfg.data.replay_rate, self.rng, skip_newest=games)
        if replay is not None:
            train_planes = np.concatenate([planes, replay[0]])
            train_values = np.concatenate([values, replay[1]])
        else:
            train_planes, train_values = planes, values
        loss = self.learner.fit(train_planes, train_values, self.rng,
                                cfg.update.batch_size, cfg.update.epochs)
        c.iterations += 1
        c.pairs += len(values)
        c.train_pairs += len(train_values) * cfg.update.epochs
        evaluations = self.learner.positions - positions + worker_positions
        c.network_evaluations += evaluations
        c.network_batches += self.learner.batches - batches + worker_batches
        c.search_nodes += nodes
        out: dict[str, Any] = {
            "kind": "iteration", "iteration": c.iterations, "epsilon": round(eps, 6),
            "games": games, "games_total": c.games, "pairs": int(len(values)),
            "pairs_total": c.pairs, "train_pairs": int(len(train_values)),
            "memory_games": len(self.memory), "memory_pairs": self.memory.pairs,
            "updates": self.learner.steps, "loss": loss, "fresh_loss": fresh_loss,
            "mean_result": float(np.mean(results)), "mean_plies": float(np.mean(plies)),
            "search_nodes": nodes, "search_nodes_total": c.search_nodes,
            "network_evaluations": evaluations,
            "network_evaluations_total": c.network_evaluations,
            "network_batches_total": c.network_batches,
            "value_min": float(values.min()) if len(values) else 0.0,
            "value_max": float(values.max()) if len(values) else 0.0,
        }
        if bootstrap:
            out["bootstrap"] = True
        every = cfg.evaluation.every
        if every and c.iterations % every == 0 and cfg.evaluation.games > 0:
            t_eval = time.monotonic()
            out["eval"] = {k: v.to_json() for k, v in self.evaluate().items()}
            out["eval_seconds"] = round(time.monotonic() - t_eval, 3)
        seconds = time.monotonic() - t0
        c.seconds += seconds
        out["seconds"] = round(seconds, 3)
        out["elapsed"] = round(c.seconds, 3)
        self.metrics.append(out)
        self.records.append(out)
        if c.iterations % cfg.run.checkpoint_every == 0:
            self.checkpoint()
        if c.iterations % cfg.run.plot_every == 0:
            self.plot()
        return out

    def _play_pool(self, games: int, eps: float) -> list[PlayedGame]:
        """The iteration's games, played by the self-play workers (started on first use)."""
        first = self.counters.games
        if self.pool is None:
            if self.cluster == "ray":
                from descent.train.cluster import RayPool

                self.pool = RayPool(self.cfg, self.cfg.selfplay.workers, self.address)
                self.log(f"self-play on a Ray cluster: {self.pool.workers} actors")
            else:
                self.pool = SelfPlayPool(self.cfg, self.cfg.selfplay.workers)
        warm_only = first + games <= self.cfg.selfplay.bootstrap_games
        model = None if warm_only else self.learner.current_model()
        return self.pool.play(first, games, eps, model)

    def close(self, terminate: bool = False) -> None:
        """Stops the self-play workers, if any. Blocks until they exit (``terminate``:
        abandons their games)."""
        if self.pool is not None:
            pool, self.pool = self.pool, None
            pool.close(terminate)

    def _final_evaluation(self) -> dict[str, Any]:
        t0 = time.monotonic()
        stats = {k: v.to_json() for k, v in self.evaluate().items()}
        seconds = time.monotonic() - t0
        self.counters.seconds += seconds
        record = {"kind": "eval", "iteration": self.counters.iterations,
                  "games_total": self.counters.games, "eval": stats,
                  "eval_seconds": round(seconds, 3)}
        self.metrics.append(record)
        self.records.append(record)
        return record

    # -- evaluation ------------------------------------------------------------------------

    def play_search(self) -> str:
        e = self.cfg.evaluation
        if e.search:
            return e.search
        return "expectiminimax" if self.selfplayer.stochastic else "ubfms"

    def network_player(self, model: LoadedModel | Path, name: str) -> SearchPlayer:
        from descent.nets.evaluator import network_evaluator

        e = self.cfg.evaluation
        evaluator = network_evaluator(model if isinstance(model, LoadedModel) else str(model),
                                      self.prototype, backend=e.backend, device=e.device)
        r = self.reinforcement
        params = SearchParams(hash_mb=e.hash_mb, seed=e.seed, terminal=r.search_terminal,
                              max_plies=r.max_plies)
        return SearchPlayer(name, evaluator, self.play_search(), params, e.nodes, e.seconds)

    def heuristic_player(self) -> SearchPlayer:
        e = self.cfg.evaluation
        params = SearchParams(hash_mb=e.hash_mb, seed=e.seed)
        return SearchPlayer("heuristic", heuristic_for(self.prototype), self.play_search(),
                            params, e.nodes, e.seconds)

    def opening_plies(self) -> int:
        e = self.cfg.evaluation
        if e.opening_plies >= 0:
            return e.opening_plies
        return 0 if self.selfplayer.stochastic else 2

    def evaluate(self) -> dict[str, MatchStats]:
        """The evaluation matches of the current network (saved as models/iter-N.dnet,
        the next evaluation's "previous"). Blocks."""
        e = self.cfg.evaluation
        c = self.counters
        path = self.run_dir / "models" / f"iter-{c.iterations:06d}.dnet"
        model = self._export(f"evaluation at iteration {c.iterations}")
        save_model(model, path)
        learner = self.network_player(model, "network")
        out: dict[str, MatchStats] = {}
        for name in e.opponents:
            opponent: Player
            if name == "heuristic":
                opponent = self.heuristic_player()
            elif name == "random":
                opponent = RandomPlayer()
            else:
                if self.previous_model is None or not self.previous_model.exists():
                    continue
                opponent = self.network_player(load_model(self.previous_model, self.game),
                                               "previous")
            out[name] = paired_matches(self.game, learner, opponent, e.games, e.seed,
                                       self.opening_plies())
        self.previous_model = path
        c.last_eval = c.iterations
        return out

    def plot(self) -> None:
        """The run's charts in plots/. A chart is not worth a run: without matplotlib, or
        when drawing fails, a warning is logged (once per cause) and training goes on."""
        try:
            write_plots(self.records, self.run_dir / "plots", self.game.spec)
        except Exception as exc:
            message = (f"warning: no plots: {exc}" if isinstance(exc, PlotsUnavailable)
                       else f"warning: plots failed: {type(exc).__name__}: {exc}")
            if message not in self.plot_warnings:
                self.plot_warnings.add(message)
                if self.log_given:
                    self.log(message)
                else:
                    warnings.warn(message, RuntimeWarning, stacklevel=2)


def train(cfg: TrainConfig, run_dir: str | Path, *, resume: bool = False,
          stop_after: int | None = None, stream: TextIO | None = None) -> dict[str, Any]:
    """Runs (or resumes) a training run; the last metrics record. Blocks."""
    trainer = Trainer(cfg, run_dir, resume=resume, stream=stream)
    return trainer.run(stop_after=stop_after)
