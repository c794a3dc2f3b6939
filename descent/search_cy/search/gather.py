"""One backend call for several search threads' expansions (lc0's multi-gather).

A parallel best-first search on a GPU backend would otherwise send one small batch per
expansion from each thread (the children of one node), and a GPU is fast only on large
batches. A ``BatchGatherer`` wraps the batch function that every thread's
``BatchEvaluator`` calls: a call joins the waiting ones, and the first caller to find no
call running becomes the leader once every thread is waiting or ``wait`` seconds have
passed since the oldest waiting call; it runs the function once on all the waiting
batches, concatenated, and hands each caller its slice. On a CPU backend the threads'
own calls, run side by side, are faster: the search gathers only when told to
(``SearchParams.gather``). Batched self-play (train/workers.py) shares one among the
games a worker plays at once, each game's thread calling it until its game ends
(``leave``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

BatchFn = Callable[[npt.NDArray[np.float32]], Any]


class _Request:
    __slots__ = ("batch", "error", "result")

    def __init__(self, batch: npt.NDArray[np.float32]) -> None:
        self.batch = batch
        self.result: npt.NDArray[np.float64] | None = None
        self.error: BaseException | None = None


class BatchGatherer:
    """Calls ``fn`` once for the batches of up to ``threads`` concurrent callers.

    ``wait``: the longest a call waits for the others before its batch goes alone.
    Statistics: ``calls`` (calls of ``fn``) and ``positions`` (rows sent)."""

    def __init__(self, fn: BatchFn, threads: int, wait: float = 0.002) -> None:
        if threads < 1:
            raise ValueError("threads must be >= 1")
        if not wait >= 0.0:
            raise ValueError("wait must be >= 0")
        self.fn = fn
        self.threads = threads
        self.wait = wait
        self.calls = 0
        self.positions = 0
        self._cond = threading.Condition()
        self._pending: list[_Request] = []
        self._since = 0.0           # when the oldest pending call arrived
        self._running = False

    def __call__(self, batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """The values of ``batch`` (valid only during the call, like any batch
        function's argument: the caller waits here until its values are known). Blocks."""
        request = _Request(batch)
        with self._cond:
            if not self._pending:
                self._since = time.monotonic()
            self._pending.append(request)
            self._cond.notify_all()
            while request.result is None and request.error is None:
                left = self._since + self.wait - time.monotonic()
                if not self._running and (len(self._pending) >= self.threads or left <= 0):
                    self._lead()
                else:
                    self._cond.wait(timeout=max(left, 0.0005) if not self._running else None)
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def leave(self) -> None:
        """One caller is done for good (a self-play game that ended): the leader no
        longer waits for it."""
        with self._cond:
            self.threads = max(1, self.threads - 1)
            self._cond.notify_all()

    def _lead(self) -> None:
        """Runs ``fn`` on every pending batch (called with the condition held; released
        while ``fn`` computes)."""
        taken, self._pending = self._pending, []
        self._running = True
        self._cond.release()
        try:
            joined = taken[0].batch if len(taken) == 1 else np.concatenate(
                [r.batch for r in taken])
            values = np.asarray(self.fn(joined), dtype=np.float64).reshape(-1)
            if values.shape[0] != joined.shape[0]:
                raise ValueError(f"batch function returned {values.shape[0]} values for "
                                 f"{joined.shape[0]} states")
            start = 0
            for r in taken:
                r.result = values[start:start + r.batch.shape[0]]
                start += r.batch.shape[0]
            self.calls += 1
            self.positions += joined.shape[0]
        except BaseException as exc:        # every caller of this batch sees the error
            for r in taken:
                r.error = exc
        finally:
            self._cond.acquire()
            self._running = False
            if self._pending:
                self._since = time.monotonic()
            self._cond.notify_all()
