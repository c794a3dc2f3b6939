"""Self-play games in worker processes (``selfplay.workers = N``).

Self-play is most of a run's time and the games of one iteration do not depend on each
other: they all read the network of the last update. So they can be played side by side
in N processes while the trainer keeps the update, the replay memory and the
checkpoints. Two things keep a run deterministic whatever N is:

- each game draws its chance outcomes and move selections from its own generator,
  seeded by the run's seed and the game's number (``game_rng``), not from the run's
  shared generator; its searches are seeded by the game's number as before;
- the records come back in game order, and every game starts from a fresh search
  (no state carries from one game to the next inside a worker).

So N = 1 and N = 8 give the same data, the same network and the same metrics, and a
resumed run continues as an unbroken one. ``workers = 0`` (the default) plays the games
in the trainer's process and draws them from the run's generator, as runs did before.

Batched self-play (``selfplay.batch_games = B``): a worker plays B games of a task at
once, one thread each, and their searches' network calls meet in one ``BatchGatherer``
(search/gather.py), which runs the backend once on all the waiting batches: a GPU, or
ONNX Runtime on a small network, sees batches of hundreds of positions instead of one
node's children. A game's search sees exactly the values it would see alone (the batch
only groups the calls), so the games are the same for any B. No call waits for the
others: while one backend call runs, the calls that arrive queue for the next.

A worker values positions as the trainer's own self-play does: an mlp network with the C
evaluator inside the search (nets.backends.native), any other through an ONNX Runtime
session of the network's weights on one thread; ``selfplay.backend = "torch"`` with
``device = "cuda"`` sends each worker's batches to a GPU instead (one CUDA context per
worker: a GPU machine's cores all play while the GPU values). It gets the weights with its tasks (a
model without provenance), and the warm start's games (``bootstrap_games``) use the
game's C heuristic. The workers are started with ``spawn`` (no fork of a process that
holds torch and its threads) and live for one ``Trainer.run``; a script that runs a
Trainer with workers needs the usual ``if __name__ == "__main__":`` guard (``descent
train`` has it).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.nets.modelfile import LoadedModel
from descent.train.config import TrainConfig
from descent.train.data import pack_rows, stored_rows
from descent.train.selfplay import GameRecord

PR_SET_PDEATHSIG = 1          # linux/prctl.h
GAME_STREAM = 0x5E1F9A7E      # tells a game's generator apart from other seeded streams
GATHER_WAIT = 0.0             # batched self-play: a call never waits for the other games'
#                               (while one backend call runs, the others queue for the next)


def game_rng(seed: int, number: int) -> np.random.Generator:
    """The generator of self-play game ``number`` (0 for the run's first game)."""
    return np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, number, GAME_STREAM])


def search_seed(seed: int, number: int) -> int:
    """The seed of game ``number``'s searches (the trainer's rule since the first runs)."""
    return (seed * 1_000_003 + number) % (1 << 62)


@dataclass
class PlayedGame:
    """One game's record and what the network valued for its searches."""

    record: GameRecord
    positions: int          # positions the network valued (0 in a warm-start game)
    batches: int            # its batch calls (a native evaluator's flushes)
    stored: npt.NDArray[Any] | None = None   # the planes as the replay memory keeps them

    def pack(self) -> PlayedGame:
        """Ships the planes as the replay memory stores them (bit-packed where they are
        0/1): a tree-learning game's planes are tens of MB of float32, and pickling them
        through the pool's pipe cost a worker a third of its time (EinStein, descent, 800
        pairs a search). The trainer adds ``stored`` to its memory as it is."""
        planes = self.record.planes
        self.stored = pack_rows(planes)
        self.record.planes = np.zeros((0, *planes.shape[1:]), np.float32)
        return self

    def unpack(self) -> PlayedGame:
        if self.stored is not None and len(self.record.planes) != len(self.stored):
            shape = tuple(self.record.planes.shape[1:])
            self.record.planes = stored_rows(self.stored, np.arange(len(self.stored)), shape)
        return self


class _Player:
    """A worker's self-player: the config's game, its heuristics, the last network."""

    def __init__(self, cfg: TrainConfig) -> None:
        from descent.search_cy.eval.heuristics import heuristic_for
        from descent.search_cy.games.registry import make_game
        from descent.train.heuristics import reinforcement_for
        from descent.train.selfplay import SelfPlayer

        self.cfg = cfg
        self.game = make_game(cfg.game)
        self.prototype = self.game.new_initial_state()
        sp = cfg.selfplay
        self.reinforcement = reinforcement_for(self.prototype, sp.heuristic, sp.max_plies)
        self.heuristic = heuristic_for(self.prototype)
        # the evaluator is set per game (the heuristic for warm-start games)
        self.selfplayer = SelfPlayer(self.game, sp, self.reinforcement, self.heuristic,
                                     symmetries=cfg.data.symmetries)
        self.network: Any = None
        self.counter: Any = None
        self.sha = ""

    def use(self, model: LoadedModel) -> None:
        if model.weights_sha256 == self.sha:
            return
        sp = self.cfg.selfplay
        if model.arch.family == "mlp" and sp.backend == "auto":
            from descent.nets.backends.native import native_evaluator

            self.network = self.counter = native_evaluator(model, self.prototype)
        else:
            from descent.nets.backends import make_backend
            from descent.nets.evaluator import NetworkFunction, network_evaluator

            name = "onnxruntime" if sp.backend == "auto" else sp.backend
            function = NetworkFunction(
                model, make_backend(name, model, device=sp.device, threads=1))
            self.network = network_evaluator(function, self.prototype)
            self.counter = function
        self.sha = model.weights_sha256

    @property
    def function(self) -> Any:
        """The network's batch function, or None on the native backend (no batches)."""
        from descent.nets.evaluator import NetworkFunction

        return self.counter if isinstance(self.counter, NetworkFunction) else None

    def counts(self) -> tuple[int, int]:
        if self.counter is None:
            return 0, 0
        batches = getattr(self.counter, "batches", None)
        if batches is None:
            batches = self.counter.calls
        return int(self.counter.positions), int(batches)

    def play(self, numbers: Sequence[int], epsilon: float,
             model: LoadedModel | None) -> list[PlayedGame]:
        cfg = self.cfg
        if model is not None:
            self.use(model)
        out: dict[int, PlayedGame] = {}
        together = [n for n in numbers if n >= cfg.selfplay.bootstrap_games]
        if cfg.selfplay.batch_games > 1 and self.function is not None and len(together) > 1:
            out.update(self._play_together(together, epsilon))
        for number in numbers:
            if number in out:
                continue
            warm = number < cfg.selfplay.bootstrap_games
            if not warm and self.network is None:
                raise ValueError(f"self-play game {number} needs the network's weights")
            self.selfplayer.evaluator = self.heuristic if warm else self.network
            before = self.counts()
            record = self.selfplayer.play(game_rng(cfg.seed, number), epsilon,
                                          search_seed(cfg.seed, number))
            after = self.counts()
            out[number] = PlayedGame(record, after[0] - before[0], after[1] - before[1])
        return [out[number] for number in numbers]

    def _play_together(self, numbers: Sequence[int], epsilon: float) -> dict[int, PlayedGame]:
        """Games ``numbers`` played at once, ``batch_games`` at a time, one thread each,
        their network calls gathered. Blocks."""
        from descent.search_cy.search.gather import BatchGatherer
        from descent.train.selfplay import SelfPlayer

        cfg = self.cfg
        out: dict[int, PlayedGame] = {}
        size = cfg.selfplay.batch_games
        for start in range(0, len(numbers), size):
            group = list(numbers[start:start + size])
            gatherer = BatchGatherer(self.function, threads=len(group), wait=GATHER_WAIT)
            counted = {n: _Counted(gatherer) for n in group}
            records: dict[int, Any] = {}
            errors: list[BaseException] = []

            def game(number: int, gatherer: BatchGatherer = gatherer,
                     counted: dict[int, _Counted] = counted,
                     records: dict[int, Any] = records,
                     errors: list[BaseException] = errors) -> None:
                try:
                    player = SelfPlayer(self.game, cfg.selfplay, self.reinforcement,
                                        self.network.spawn(counted[number]),
                                        symmetries=cfg.data.symmetries)
                    records[number] = player.play(game_rng(cfg.seed, number), epsilon,
                                                  search_seed(cfg.seed, number))
                except BaseException as exc:
                    errors.append(exc)
                finally:
                    gatherer.leave()

            threads = [threading.Thread(target=game, args=(n,), name=f"selfplay-{n}")
                       for n in group]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise errors[0]
            # the group's backend calls, shared out evenly among its games
            calls, share = divmod(gatherer.calls, len(group))
            for i, number in enumerate(group):
                out[number] = PlayedGame(records[number], counted[number].positions,
                                         calls + (1 if i < share else 0))
        return out


class _Counted:
    """A game's share of a gathered batch function: the positions it sent."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.positions = 0

    def __call__(self, batch: npt.NDArray[np.float32]) -> Any:
        self.positions += int(batch.shape[0])
        return self.fn(batch)


_PLAYER: _Player | None = None


def _die_with(parent: int) -> None:
    """Ends this worker when the trainer ``parent`` dies, however it dies (a kill -9, the
    OOM killer): a worker orphaned while waiting on the pool's queue would wait forever."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:        # it died before prctl took effect
        os._exit(1)

    def watch() -> None:              # where prctl is missing
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _start_worker(cfg: TrainConfig, parent: int) -> None:
    global _PLAYER
    # a Ctrl-C or SIGTERM sent to the process group is the trainer's to handle (it stops
    # after the iteration, then closes the pool); a worker that took it would break the
    # pool and lose the iteration
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _die_with(parent)
    _PLAYER = _Player(cfg)


def _play_task(numbers: list[int], epsilon: float,
               model: LoadedModel | None) -> list[PlayedGame]:
    if _PLAYER is None:
        raise RuntimeError("self-play worker was not started")
    return [game.pack() for game in _PLAYER.play(numbers, epsilon, model)]


def task_numbers(cfg: TrainConfig, first: int, count: int, workers: int) -> list[list[int]]:
    """Games ``first .. first+count-1`` split into the tasks of ``workers`` workers."""
    # a few tasks per worker even out games of different lengths; each task carries
    # the weights (a worker rebuilds its evaluator only when they change)
    size = max(1, -(-count // (4 * workers)))
    if cfg.selfplay.batch_games > 1:
        # a task is the games a worker plays together
        size = max(1, min(cfg.selfplay.batch_games, -(-count // workers)))
    return [list(range(start, min(start + size, first + count)))
            for start in range(first, first + count, size)]


class SelfPlayPool:
    """``workers`` processes playing the games of an iteration. Blocks in ``play``."""

    def __init__(self, cfg: TrainConfig, workers: int) -> None:
        if workers < 1:
            raise ValueError("a self-play pool needs at least one worker")
        self.cfg = cfg
        self.workers = workers
        self.executor = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker, initargs=(cfg, os.getpid()))

    def play(self, first: int, count: int, epsilon: float,
             model: LoadedModel | None) -> list[PlayedGame]:
        """Games ``first .. first+count-1``, in that order. ``model``: the network's
        weights (None when every game of the batch is a warm-start game)."""
        tasks = task_numbers(self.cfg, first, count, self.workers)
        futures = [self.executor.submit(_play_task, numbers, epsilon, model)
                   for numbers in tasks]
        return [game.unpack() for future in futures for game in future.result()]

    def close(self, terminate: bool = False) -> None:
        """Stops the workers. Blocks until they exit; ``terminate``: at once, games in
        progress abandoned (the trainer is leaving on an exception)."""
        if terminate:
            # ProcessPoolExecutor has no public terminate before Python 3.14
            processes = getattr(self.executor, "_processes", None) or {}
            for process in list(processes.values()):
                process.terminate()
        self.executor.shutdown(wait=not terminate, cancel_futures=True)
