"""What a run shows while it runs: JSON-lines metrics, a progress bar (tqdm), the PNG plots
(matplotlib: plots.py)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from descent.progress import LineStream
from descent.train.plots import PlotsUnavailable, write_plots

__all__ = ["MetricsLog", "PlotsUnavailable", "ProgressBar", "without_timings", "write_plots"]

TIMING_KEYS = frozenset({"seconds", "elapsed", "eval_seconds", "time"})


class MetricsLog:
    """``metrics.jsonl``: one JSON object per line, appended and flushed per iteration.

    ``truncate(size)`` cuts the file back to a checkpoint's size on resume, so lines of
    iterations that a kill lost are not kept twice."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def truncate(self, size: int) -> None:
        if self.path.exists():
            with open(self.path, "r+b") as handle:
                handle.truncate(size)

    def append(self, record: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out


def without_timings(record: dict[str, Any]) -> dict[str, Any]:
    """A metrics record without its wall-clock fields (for determinism checks)."""
    return {k: (without_timings(v) if isinstance(v, dict) else v)
            for k, v in record.items() if k not in TIMING_KEYS}


class ProgressBar:
    """A one-line tqdm progress bar (on stderr unless ``stream``): redrawn in place on a
    terminal (at most 10 times a second), a plain line at most every ``interval`` seconds
    otherwise, so logs stay readable; ``force`` shows the state now (evaluations, the
    end). ``update`` takes the amount done so far, not an increment; ``unit="h"`` counts
    hours (a float). ``initial``: what was done before (a resumed run)."""

    def __init__(self, total: float | None, unit: str = "it", stream: TextIO | None = None,
                 enabled: bool = True, interval: float = 30.0, initial: float = 0.0) -> None:
        stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.bar_format = (
            "{l_bar}{bar}| {n:.2f}/{total:.2f} h [{elapsed}<{remaining}{postfix}]"
            if unit == "h" and total else None)
        self.bar = tqdm(
            total=total, initial=self._count(initial), unit=unit, disable=not enabled, leave=True,
            file=stream if self.tty else LineStream(stream),
            mininterval=0.1 if self.tty else interval, miniters=0,
            dynamic_ncols=self.tty, ascii=None if self.tty else True,
            bar_format=self.bar_format)

    def _count(self, x: float) -> float:
        """Whole counts as ints (tqdm shows ``3/10``, not ``3.0/10``)."""
        return int(x) if self.bar_format is None and float(x).is_integer() else x

    def update(self, done: float, info: str = "", force: bool = False) -> None:
        if not self.enabled:
            return
        done = self._count(done)
        self.bar.set_postfix_str(info, refresh=False)
        if force:
            self.bar.n = done
            self.bar.refresh()
            self.bar.last_print_n = done
            self.bar.last_print_t = time.time()
        else:
            self.bar.update(done - self.bar.n)

    def close(self) -> None:
        """Ends the bar: on a terminal, the last state stays and the cursor goes to the
        next line; a log gets the last state unless its last line shows it already."""
        if self.enabled and not self.tty and self.bar.last_print_n == self.bar.n:
            self.bar.leave = False
        self.bar.close()
