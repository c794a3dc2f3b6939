"""PNG charts of a training run, drawn with matplotlib.

Three charts from the metrics records (``metrics.jsonl``), each over the run's whole
history: the losses per game played (``loss_figure``), the evaluation win rates with their
95% intervals as shaded bands and the 0.5 line (``winrate_figure``), and the data produced
per hour (``throughput_figure``). ``write_plots`` writes them as loss.png, winrate.png and
throughput.png, each atomically.

matplotlib belongs to the training extra (``pip install 'descent-engine[train]'``), not to
the engine: it is imported only when a chart is drawn, and without it ``write_plots``
raises ``PlotsUnavailable``. Figures are built with the object API and rendered by the
Agg canvas (never pyplot's global state), so drawing works headless and in any thread.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from descent.nets.files import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

INSTALL_HINT = "pip install 'descent-engine[train]'"
SIZE = (9.0, 5.0)          # inches
DPI = 110


class PlotsUnavailable(ImportError):
    """matplotlib is not installed (it comes with the training extra)."""


def _new_figure(rows: int = 1) -> tuple[Figure, list[Axes]]:
    """A figure with ``rows`` stacked axes sharing x, on the Agg canvas."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise PlotsUnavailable(
            f"training plots need matplotlib: {INSTALL_HINT}") from exc
    height = SIZE[1] if rows == 1 else SIZE[1] * 0.7 * rows
    fig = Figure(figsize=(SIZE[0], height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    for ax in axes:
        ax.grid(True, color="0.88", linewidth=0.8)
        ax.set_axisbelow(True)
    return fig, list(axes)


def _finite(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _iterations(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("kind", "iteration") == "iteration"]


def _column(rows: Sequence[dict[str, Any]], x: Callable[[dict[str, Any]], Any], key: str,
            scale: float = 1.0) -> tuple[list[float], list[float]]:
    """(xs, ys) of the rows that have a finite ``key`` and a finite x."""
    xs, ys = [], []
    for r in rows:
        a, b = _finite(x(r)), _finite(r.get(key))
        if a is not None and b is not None:
            xs.append(a)
            ys.append(b * scale)
    return xs, ys


def _legend(fig: Figure, ax: Axes) -> None:
    """The legend in its own column right of the plot, never over a curve."""
    if ax.get_legend_handles_labels()[0]:
        fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper",
                   frameon=False)


def _no_data(ax: Axes) -> None:
    ax.text(0.5, 0.75, "no data yet", transform=ax.transAxes, ha="center", va="center",
            color="0.4", fontsize=12)


def loss_figure(records: Sequence[dict[str, Any]], title: str = "") -> Figure:
    """Training loss and the loss on the iteration's new games (before training on them),
    per game played; a log scale when they span more than a decade."""
    rows = _iterations(records)
    fig, (ax,) = _new_figure()
    drawn: list[float] = []
    for key, label in (("loss", "train loss"), ("fresh_loss", "loss on new games")):
        xs, ys = _column(rows, lambda r: r.get("games_total"), key)
        if xs:
            ax.plot(xs, ys, label=label, linewidth=1.4, marker="o" if len(xs) < 30 else None,
                    markersize=3)
            drawn += ys
    if not drawn:
        _no_data(ax)
    elif min(drawn) > 0 and max(drawn) / min(drawn) > 10:
        ax.set_yscale("log")
    ax.set_title(f"Loss: {title}" if title else "Loss")
    ax.set_xlabel("games played")
    ax.set_ylabel("loss (output units)")
    _legend(fig, ax)
    return fig


@dataclass
class WinRates:
    """One opponent's evaluations, in order of games played."""
    opponent: str
    games: list[float]
    rate: list[float]
    lo: list[float]
    hi: list[float]


def win_rates(records: Iterable[dict[str, Any]]) -> list[WinRates]:
    """Every evaluation of the run (those of iteration records and the final ones of
    ``kind = "eval"`` records), per opponent, sorted by games played."""
    points: dict[str, list[tuple[float, float, float, float]]] = {}
    for r in records:
        x = _finite(r.get("games_total"))
        if x is None:
            continue
        for opp, stats in (r.get("eval") or {}).items():
            rate = _finite(stats.get("win_rate"))
            if rate is None:
                continue
            ci = stats.get("ci95") or (rate, rate)
            lo, hi = _finite(ci[0]), _finite(ci[1])
            points.setdefault(opp, []).append(
                (x, rate, rate if lo is None else lo, rate if hi is None else hi))
    out = []
    for opp, pts in sorted(points.items()):
        pts.sort(key=lambda p: p[0])
        out.append(WinRates(opp, [p[0] for p in pts], [p[1] for p in pts],
                            [p[2] for p in pts], [p[3] for p in pts]))
    return out


def winrate_figure(records: Sequence[dict[str, Any]], title: str = "") -> Figure:
    """The learner's win rate against each evaluation opponent, its 95% interval as a
    shaded band, and the 0.5 line."""
    fig, (ax,) = _new_figure()
    series = win_rates(records)
    ax.axhline(0.5, color="0.35", linestyle="--", linewidth=1.0, label="0.5 (even)")
    for k, s in enumerate(series):
        colour = f"C{k}"
        ax.fill_between(s.games, s.lo, s.hi, color=colour, alpha=0.2, linewidth=0,
                        label=f"vs {s.opponent}: 95% interval")
        ax.plot(s.games, s.rate, color=colour, marker="o", markersize=4, linewidth=1.4,
                label=f"vs {s.opponent}")
    if not series:
        _no_data(ax)
    ax.set_ylim(0.0, 1.0)
    ax.set_title(f"Win rate: {title}" if title else "Win rate")
    ax.set_xlabel("games played")
    ax.set_ylabel("win rate (draws count 1/2)")
    _legend(fig, ax)
    return fig


def throughput_figure(records: Sequence[dict[str, Any]], title: str = "") -> Figure:
    """Training pairs and network evaluations so far, per hour of the run."""
    from matplotlib.ticker import EngFormatter

    rows = _iterations(records)
    fig, axes = _new_figure(rows=2)

    def hours(r: dict[str, Any]) -> float | None:
        seconds = _finite(r.get("elapsed"))
        return None if seconds is None else seconds / 3600.0

    panels = (("pairs_total", "training pairs", "C0"),
              ("network_evaluations_total", "network evaluations", "C1"))
    for ax, (key, label, colour) in zip(axes, panels, strict=True):
        xs, ys = _column(rows, hours, key)
        if xs:
            ax.plot(xs, ys, color=colour, linewidth=1.4, label=label,
                    marker="o" if len(xs) < 30 else None, markersize=3)
        else:
            _no_data(ax)
        ax.set_ylabel(f"{label}\n(total)")
        ax.yaxis.set_major_formatter(EngFormatter())
    axes[0].set_title(f"Data: {title}" if title else "Data")
    axes[-1].set_xlabel("hours of training")
    return fig


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def write_figure(path: str | Path, fig: Figure) -> Path:
    """Writes the figure as a PNG, atomically (a temporary file in the folder, then
    os.replace): a reader never sees half a chart."""
    return atomic_write_bytes(path, png_bytes(fig), durable=False)


CHARTS: tuple[tuple[str, Callable[[Sequence[dict[str, Any]], str], Figure]], ...] = (
    ("loss.png", loss_figure), ("winrate.png", winrate_figure),
    ("throughput.png", throughput_figure))


def write_plots(records: list[dict[str, Any]], folder: Path, title: str) -> list[Path]:
    """loss.png, winrate.png and throughput.png in ``folder`` from the metrics records.
    Raises PlotsUnavailable without matplotlib."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return [write_figure(folder / name, build(records, title)) for name, build in CHARTS]
