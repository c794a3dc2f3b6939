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
- The learner: killing it loses the games since its last checkpoint, as in a local run;
  ``--resume`` (with or without ``--cluster``) continues the run, which also means that a
  run started locally can go on on a cluster and come back.

Ray is an optional extra (``pip install "descent-engine[cluster]"``): nothing but this
module imports it, and only when a run asks for a cluster.
"""

from __future__ import annotations

import collections
import logging
import os
from typing import Any

from descent.nets.learn.config import TrainConfig
from descent.nets.learn.workers import PlayedGame, task_numbers
from descent.nets.modelfile import LoadedModel

RAY_MISSING = ("--cluster ray needs Ray, which the engine itself does not: "
               "pip install 'descent-engine[cluster]' (or pip install ray)")


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError(RAY_MISSING) from None
    return ray


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
        from descent.nets.learn.workers import _Player

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


class RayPool:
    """``workers`` self-play actors on a Ray cluster. Blocks in ``play``.

    ``address``: None or "" starts a local cluster in this process (stopped by
    ``close``); ``auto`` joins the cluster started on this machine by ``ray start``;
    ``ray://HOST:PORT`` joins a remote one through Ray Client; any other value is passed
    to ``ray.init``. ``workers`` 0: one actor per CPU of the cluster.
    """

    def __init__(self, cfg: TrainConfig, workers: int, address: str | None = None,
                 num_cpus: int | None = None) -> None:
        ray = _ray()
        self.cfg = cfg
        self.started_here = False
        if not ray.is_initialized():
            options: dict[str, Any] = dict(
                include_dashboard=False, log_to_driver=False,
                logging_level=logging.WARNING, configure_logging=True)
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
                except ray.exceptions.RayActorError:
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
