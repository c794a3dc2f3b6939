"""Self-play on a Ray cluster (``descent train --cluster ray``).

The learner stays where it is: the trainer's process owns the run directory, the replay
memory, the network and the checkpoints, exactly as in a local run. Only the games move:
``RayPool`` is ``SelfPlayPool``'s interface over Ray actors, one CPU each, on any node of
the cluster. Each actor holds a worker's self-player (``workers._Player``: the config's
game, search and heuristics, batched self-play included) and plays the tasks it is given.

- Weights: after each update round the learner puts the new network into Ray's object
  store once (``ray.put``) and every task of the next round carries the reference; an
  actor rebuilds its evaluator only when the weights change, and reports the version it
  holds (``versions``).
- Games stream back as they finish (``ray.wait``) and the next waiting task goes to the
  actor that finished. They are learned in game order, once the round is complete.
- Faults: an actor that dies (a node lost, a process killed) is restarted by Ray
  (``max_restarts=-1``); its task is never retried half-way (``max_task_retries=0``):
  the pool plays those games again from their first move on a live actor. A game's moves
  come from its own generator, seeded by the run's seed and the game's number, so the
  replayed game is the game the dead actor was playing and nothing of the lost attempt
  is learned.
- Code: every actor must run the ``descent`` package this process runs. Ray puts the
  driver's current folder first on its workers' ``sys.path``, so a run started from a
  clone of the sources (``pip install .`` there, unbuilt ``descent/`` under the current
  folder) would have its actors import that copy. ``ray.init`` is therefore called from
  the folder that holds this process's package (``package_root``), and the pool checks,
  before any game, that each actor started and (on this node) imports the very files
  this process imports: an actor that cannot start fails the run in seconds with one
  line that says why (``ValueError``), rather than a pool waiting on dead actors.
- The learner: killing it loses the games since its last checkpoint, as in a local run;
  ``--resume`` (with or without ``--cluster``) continues the run, which also means that a
  run started locally can go on on a cluster and come back.

Ray is an optional extra (``pip install "descent-engine[cluster]"``): nothing but this
module imports it, and only when a run asks for a cluster.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import re
from collections.abc import Iterator
from typing import Any

import descent
from descent.nets.modelfile import LoadedModel
from descent.train.config import TrainConfig
from descent.train.workers import PlayedGame, task_numbers

RAY_MISSING = ("--cluster ray needs Ray, which the engine itself does not: "
               "pip install 'descent-engine[cluster]' (or pip install ray)")


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError(RAY_MISSING) from None
    return ray


START_SECONDS = 60.0
"""How long the pool waits for its actors' first answer before it gives up."""


def package_root() -> str:
    """The folder holding the ``descent`` package this process imported."""
    return os.path.dirname(os.path.dirname(os.path.abspath(descent.__file__)))


@contextlib.contextmanager
def _working_folder(folder: str) -> Iterator[None]:
    """This process's current folder is ``folder`` inside the block, then what it was."""
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


_ERROR_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*(?:Error|Exception)): (.+)$")
_IMPORT_FAILED = re.compile(r"ModuleNotFoundError|ImportError|No module named")


def error_line(exc: BaseException) -> str:
    """One line for a Ray error: the last ``SomeError: message`` line of its text (a
    worker's traceback), or its first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    found = [m for m in map(_ERROR_LINE.match, lines) if m]
    if found:
        return f"{found[-1].group(1)}: {found[-1].group(2)}"
    return lines[0] if lines else type(exc).__name__


def _token_auth_when_available() -> None:
    """Ray (2.5x on) gives every new cluster a token (``~/.ray/auth_token``) and finds it
    when it joins ``auto``, but not when it joins a cluster by its address: then it
    connects without it and is refused. Where the user has not chosen a mode
    (``RAY_AUTH_MODE``) and a token is there, this process uses it, as ``auto`` does."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:           # a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


class SelfPlayActor:
    """One self-play worker inside a Ray actor (made remote by ``RayPool``)."""

    def __init__(self, cfg: TrainConfig) -> None:
        from descent.train.workers import _Player

        self.player = _Player(cfg)
        self.version = -1          # the weights' version it holds (-1: none yet)

    def play(self, numbers: list[int], epsilon: float, model: LoadedModel | None,
             version: int) -> list[PlayedGame]:
        """Games ``numbers`` with the network ``model`` (its version ``version``)."""
        games = self.player.play(numbers, epsilon, model)
        if model is not None:
            self.version = version
        return [game.pack() for game in games]

    def held_version(self) -> int:
        return self.version

    def pid(self) -> int:
        return os.getpid()

    def origin(self) -> tuple[str, str]:
        """The ``descent`` package this actor runs (its ``__init__.py``) and its node."""
        import ray

        return os.path.abspath(descent.__file__), ray.get_runtime_context().get_node_id()


class RayPool:
    """``workers`` self-play actors on a Ray cluster. Blocks in ``play``.

    ``address``: None or "" starts a local cluster in this process (stopped by
    ``close``); ``auto`` joins the cluster started on this machine by ``ray start``;
    ``ray://HOST:PORT`` joins a remote one through Ray Client; any other value is passed
    to ``ray.init``. ``workers`` 0: one actor per CPU of the cluster. ``start_seconds``:
    how long the actors have to answer a first call (``ValueError`` after that, or as
    soon as one fails to start).
    """

    def __init__(self, cfg: TrainConfig, workers: int, address: str | None = None,
                 num_cpus: int | None = None, start_seconds: float = START_SECONDS) -> None:
        ray = _ray()
        self.cfg = cfg
        self.started_here = False
        self.through_client = bool(address) and str(address).startswith("ray://")
        if not ray.is_initialized():
            options: dict[str, Any] = dict(
                include_dashboard=False, log_to_driver=False,
                logging_level=logging.WARNING, configure_logging=True)
            # Ray's workers put the driver's current folder first on their sys.path:
            # that folder is made the one holding this process's package
            with _working_folder(package_root()):
                if address:
                    _token_auth_when_available()
                    ray.init(address=address, **options)
                else:
                    ray.init(num_cpus=num_cpus, **options)
                    self.started_here = True
        if workers <= 0:
            workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.workers = workers
        resources: dict[str, Any] = {"num_cpus": 1}
        if cfg.selfplay.device == "cuda":
            # Ray hides the GPUs from an actor that asks for none: the cluster's GPUs are
            # shared out among the actors (several per GPU, as local workers share one)
            gpus = float(ray.cluster_resources().get("GPU", 0.0))
            if gpus <= 0:
                raise ValueError("selfplay.device = 'cuda', but the Ray cluster has no GPU")
            resources["num_gpus"] = min(1.0, gpus / workers)
        remote = ray.remote(max_restarts=-1, max_task_retries=0,
                            **resources)(SelfPlayActor)
        self.actors = [remote.remote(cfg) for _ in range(workers)]
        self.version = 0                   # bumped whenever the weights change
        self._sha = ""
        self._model_ref: Any = None
        self.replayed = 0                  # games played again after their actor died
        try:
            self._check_started(start_seconds)
        except BaseException:
            self.close()
            raise

    def _check_started(self, seconds: float) -> None:
        """Every actor answers within ``seconds`` and runs this process's ``descent``
        (the same files where it shares this process's node). ``ValueError`` otherwise."""
        ray = _ray()
        calls = [actor.origin.remote() for actor in self.actors]
        try:
            origins = ray.get(calls, timeout=seconds)
        except ray.exceptions.GetTimeoutError:
            raise ValueError(f"ray workers did not start within {seconds:g} s (is the "
                             f"cluster short of CPUs for {self.workers} actors?)") from None
        except ray.exceptions.RayError as exc:
            line = error_line(exc)
            what = "import descent" if _IMPORT_FAILED.search(line) else "start"
            raise ValueError(f"ray workers could not {what}: {line}") from None
        if self.through_client:
            return          # this process is not on a node: its files are not theirs
        here = os.path.abspath(descent.__file__)
        node = ray.get_runtime_context().get_node_id()
        for there, their_node in origins:
            if their_node == node and there != here:
                raise ValueError(f"ray workers import descent from {there}, this process "
                                 f"from {here}")

    def play(self, first: int, count: int, epsilon: float,
             model: LoadedModel | None) -> list[PlayedGame]:
        """Games ``first .. first+count-1``, in that order. ``model``: the network's
        weights (None when every game of the batch is a warm-start game)."""
        ray = _ray()
        if model is not None and model.weights_sha256 != self._sha:
            # one copy in the object store for all the actors of every node
            self._model_ref = ray.put(model)
            self._sha = model.weights_sha256
            self.version += 1
        ref = self._model_ref if model is not None else None
        waiting = collections.deque(task_numbers(self.cfg, first, count, self.workers))
        idle = collections.deque(range(self.workers))
        running: dict[Any, tuple[int, list[int]]] = {}
        done: dict[int, PlayedGame] = {}
        while waiting or running:
            while waiting and idle:
                actor, numbers = idle.popleft(), waiting.popleft()
                call = self.actors[actor].play.remote(numbers, epsilon, ref, self.version)
                running[call] = (actor, numbers)
            finished, _ = ray.wait(list(running), num_returns=1)
            for call in finished:
                actor, numbers = running.pop(call)
                idle.append(actor)         # alive, or being restarted by Ray
                try:
                    games = ray.get(call)
                except ray.exceptions.RayActorError as exc:
                    if getattr(exc, "actor_init_failed", False):
                        # restarted, it could not start again: no live actor to play them
                        raise ValueError(f"a ray worker could not start: "
                                         f"{error_line(exc)}") from None
                    # the actor died mid-task: its games start again from their first move
                    self.replayed += len(numbers)
                    waiting.appendleft(numbers)
                    continue
                for number, game in zip(numbers, games, strict=True):
                    done[number] = game.unpack()
        return [done[number] for number in range(first, first + count)]

    def versions(self) -> list[int]:
        """The weights' version each actor holds (-1: none yet). Blocks."""
        ray = _ray()
        return list(ray.get([actor.held_version.remote() for actor in self.actors]))

    def pids(self) -> list[int]:
        """The actors' process ids (on their nodes). Blocks."""
        ray = _ray()
        return list(ray.get([actor.pid.remote() for actor in self.actors]))

    def close(self, terminate: bool = False) -> None:
        """Ends the actors at once, games in progress abandoned, whatever ``terminate``
        (``SelfPlayPool``'s interface), and the local cluster this pool started."""
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self.started_here:
            ray.shutdown()
