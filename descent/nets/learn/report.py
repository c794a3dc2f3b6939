"""What a run shows while it runs: JSON-lines metrics, a progress bar, the PNG plots."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from descent.nets.learn.plots import Series, line_chart, write_png

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
    """A one-line progress bar on stderr: redrawn in place on a terminal, a plain line
    every ``interval`` seconds otherwise (logs stay readable)."""

    def __init__(self, total: float | None, unit: str = "it", stream: TextIO | None = None,
                 enabled: bool = True, interval: float = 30.0, width: int = 24) -> None:
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval
        self.width = width
        self.last = -math.inf
        self.shown = False

    def render(self, done: float, info: str) -> str:
        if self.total:
            frac = min(max(done / self.total, 0.0), 1.0)
            filled = int(round(frac * self.width))
            bar = "#" * filled + "." * (self.width - filled)
            head = f"[{bar}] {frac * 100:5.1f}% {_num(done)}/{_num(self.total)} {self.unit}"
        else:
            head = f"{_num(done)} {self.unit}"
        return f"{head}  {info}".rstrip()

    def update(self, done: float, info: str = "", force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        # a terminal redraws in place (at most 10 times a second); a log gets a line
        # every ``interval`` seconds, and the forced ones (evaluations, the end)
        wait = 0.1 if self.tty else self.interval
        if not force and now - self.last < wait:
            return
        self.last = now
        line = self.render(done, info)
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.enabled and self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


def write_plots(records: list[dict[str, Any]], folder: Path, title: str) -> list[Path]:
    """loss.png, winrate.png and throughput.png from the metrics records."""
    rows = [r for r in records if r.get("kind", "iteration") == "iteration"]
    out: list[Path] = []
    games = [float(r["games_total"]) for r in rows]
    loss = Series("train loss", games, [float(r["loss"]) for r in rows])
    fresh = Series("loss on new games", games, [float(r["fresh_loss"]) for r in rows])
    out.append(write_png(folder / "loss.png",
                         line_chart(f"loss (output units): {title}", [loss, fresh], "games")))
    by_opponent: dict[str, tuple[list[float], list[float], list[float], list[float]]] = {}
    for r in rows:
        for opp, stats in (r.get("eval") or {}).items():
            xs, ys, lo, hi = by_opponent.setdefault(opp, ([], [], [], []))
            xs.append(float(r["games_total"]))
            ys.append(float(stats["win_rate"]))
            lo.append(float(stats["ci95"][0]))
            hi.append(float(stats["ci95"][1]))
    series = [Series(f"vs {opp}", *vals) for opp, vals in sorted(by_opponent.items())]
    out.append(write_png(folder / "winrate.png",
                         line_chart(f"win rate, 95% ci: {title}", series, "games",
                                    y_range=(0.0, 1.0))))
    hours = [float(r.get("elapsed", 0.0)) / 3600.0 for r in rows]
    pairs = Series("data pairs", hours, [float(r["pairs_total"]) for r in rows])
    evals = Series("network evaluations / 10", hours,
                   [float(r["network_evaluations_total"]) / 10.0 for r in rows])
    out.append(write_png(folder / "throughput.png",
                         line_chart(f"data: {title}", [pairs, evals], "hours")))
    return out
