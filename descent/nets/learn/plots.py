"""PNG line charts of a training run without a plotting library.

matplotlib is not a dependency of the engine, so the curves are drawn here on a numpy
raster (lines, axes, a 3x5 pixel font for titles and tick labels) and written with a
minimal PNG encoder (zlib + CRC, RGB8). Good enough to watch a run; not publication
graphics.
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from descent.nets.files import atomic_write_bytes

Image = npt.NDArray[np.uint8]

# 3x5 pixel font: five rows of three pixels per character (lower case drawn as upper).
_GLYPHS: dict[str, str] = {
    "A": ".#. #.# ### #.# #.#", "B": "##. #.# ##. #.# ##.", "C": ".## #.. #.. #.. .##",
    "D": "##. #.# #.# #.# ##.", "E": "### #.. ##. #.. ###", "F": "### #.. ##. #.. #..",
    "G": ".## #.. #.# #.# .##", "H": "#.# #.# ### #.# #.#", "I": "### .#. .#. .#. ###",
    "J": "..# ..# ..# #.# .#.", "K": "#.# #.# ##. #.# #.#", "L": "#.. #.. #.. #.. ###",
    "M": "#.# ### ### #.# #.#", "N": "##. #.# #.# #.# #.#", "O": ".#. #.# #.# #.# .#.",
    "P": "##. #.# ##. #.. #..", "Q": ".#. #.# #.# ##. .##", "R": "##. #.# ##. #.# #.#",
    "S": ".## #.. .#. ..# ##.", "T": "### .#. .#. .#. .#.", "U": "#.# #.# #.# #.# ###",
    "V": "#.# #.# #.# #.# .#.", "W": "#.# #.# ### ### #.#", "X": "#.# #.# .#. #.# #.#",
    "Y": "#.# #.# .#. .#. .#.", "Z": "### ..# .#. #.. ###", "0": "### #.# #.# #.# ###",
    "1": ".#. ##. .#. .#. ###", "2": "##. ..# .#. #.. ###", "3": "##. ..# .#. ..# ##.",
    "4": "#.# #.# ### ..# ..#", "5": "### #.. ##. ..# ##.", "6": ".## #.. ### #.# ###",
    "7": "### ..# .#. .#. .#.", "8": "### #.# ### #.# ###", "9": "### #.# ### ..# ##.",
    ".": "... ... ... ... .#.", "-": "... ... ### ... ...", "+": "... .#. ### .#. ...",
    ":": "... .#. ... .#. ...", "(": ".#. #.. #.. #.. .#.", ")": ".#. ..# ..# ..# .#.",
    "/": "..# ..# .#. #.. #..", "%": "#.# ..# .#. #.. #.#", "_": "... ... ... ... ###",
    ",": "... ... ... .#. #..", "=": "... ### ... ### ...", " ": "... ... ... ... ...",
}

def _glyph(ch: str) -> npt.NDArray[np.bool_]:
    rows = _GLYPHS.get(ch.upper(), _GLYPHS["-"]).split()
    return np.array([[c == "#" for c in row] for row in rows], dtype=np.bool_)


def draw_text(img: Image, x: int, y: int, text: str, colour: tuple[int, int, int],
              scale: int = 2) -> int:
    """Draws ``text`` with its top-left corner at (x, y); returns the width drawn."""
    cx = x
    for ch in text:
        mask = np.kron(_glyph(ch), np.ones((scale, scale), dtype=np.bool_))
        h, w = mask.shape
        y0, x0 = max(y, 0), max(cx, 0)
        y1, x1 = min(y + h, img.shape[0]), min(cx + w, img.shape[1])
        if y1 > y0 and x1 > x0:
            region = img[y0:y1, x0:x1]
            region[mask[y0 - y:y1 - y, x0 - cx:x1 - cx]] = colour
        cx += 4 * scale
    return cx - x


def text_width(text: str, scale: int = 2) -> int:
    return 4 * scale * len(text)


def draw_line(img: Image, x0: float, y0: float, x1: float, y1: float,
              colour: tuple[int, int, int], width: int = 1) -> None:
    steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    xs = np.rint(np.linspace(x0, x1, steps + 1)).astype(int)
    ys = np.rint(np.linspace(y0, y1, steps + 1)).astype(int)
    for dx in range(width):
        for dy in range(width):
            px, py = xs + dx - width // 2, ys + dy - width // 2
            ok = (px >= 0) & (px < img.shape[1]) & (py >= 0) & (py < img.shape[0])
            img[py[ok], px[ok]] = colour


def png_bytes(img: Image) -> bytes:
    """RGB8 image (H, W, 3) as PNG bytes."""
    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
        raise ValueError("png_bytes needs a uint8 (H, W, 3) image")
    height, width = img.shape[:2]
    raw = np.concatenate([np.zeros((height, 1), np.uint8), img.reshape(height, -1)], axis=1)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))


def write_png(path: str | os.PathLike[str], img: Image) -> Path:
    """Writes the image atomically."""
    return atomic_write_bytes(path, png_bytes(img), durable=False)


PALETTE: tuple[tuple[int, int, int], ...] = (
    (31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14), (148, 103, 189),
    (140, 86, 75))


@dataclass
class Series:
    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    lo: Sequence[float] | None = None     # optional band (confidence interval)
    hi: Sequence[float] | None = None


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.1e}".replace("e+0", "e").replace("e-0", "e-")
    text = f"{v:.3g}"
    return text


LEGEND_ROW = 14


def chart_margins(n_series: int) -> tuple[int, int, int, int]:
    """(left, right, top, bottom) of the plot area: the legend has its own rows between
    the title and the plot, so it never covers a curve."""
    return 70, 20, 30 + LEGEND_ROW * n_series, 44


def line_chart(title: str, series: Sequence[Series], xlabel: str = "",
               size: tuple[int, int] = (640, 400), y_range: tuple[float, float] | None = None
               ) -> Image:
    """A chart of the series (points joined by lines; bands as thin vertical bars)."""
    width, height = size
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    left, right, top, bottom = chart_margins(len(series))
    pw, ph = width - left - right, height - top - bottom
    draw_text(img, left, 8, title, (0, 0, 0))
    pts = [(x, y) for s in series for x, y in zip(s.xs, s.ys, strict=False)
           if math.isfinite(x) and math.isfinite(y)]
    for s in series:
        if s.lo is not None and s.hi is not None:
            pts += [(x, v) for x, a, b in zip(s.xs, s.lo, s.hi, strict=False) for v in (a, b)]
    grey, black = (220, 220, 220), (0, 0, 0)
    if not pts:
        draw_text(img, left + 10, top + ph // 2, "no data yet", black)
        return img
    xmin, xmax = min(p[0] for p in pts), max(p[0] for p in pts)
    ymin, ymax = y_range if y_range else (min(p[1] for p in pts), max(p[1] for p in pts))
    if xmax <= xmin:
        xmax = xmin + 1.0
    if ymax <= ymin:
        ymin, ymax = ymin - 0.5, ymax + 0.5
    pad = 0.05 * (ymax - ymin) if y_range is None else 0.0
    ymin, ymax = ymin - pad, ymax + pad

    def px(x: float) -> float:
        return left + (x - xmin) / (xmax - xmin) * pw

    def py(y: float) -> float:
        return top + ph - (y - ymin) / (ymax - ymin) * ph

    for k in range(5):
        fy = ymin + (ymax - ymin) * k / 4
        yy = py(fy)
        draw_line(img, left, yy, left + pw, yy, grey)
        label = _fmt(fy)
        draw_text(img, left - 6 - text_width(label), int(yy) - 5, label, black)
        fx = xmin + (xmax - xmin) * k / 4
        xx = px(fx)
        draw_line(img, xx, top, xx, top + ph, grey)
        label = _fmt(fx)
        draw_text(img, int(xx) - text_width(label) // 2, top + ph + 6, label, black)
    draw_line(img, left, top, left, top + ph, black)
    draw_line(img, left, top + ph, left + pw, top + ph, black)
    if xlabel:
        draw_text(img, left + pw // 2 - text_width(xlabel) // 2, height - 16, xlabel, black)
    legend_x = left + pw - 8
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        xy = [(px(x), py(y)) for x, y in zip(s.xs, s.ys, strict=False)
              if math.isfinite(x) and math.isfinite(y)]
        if s.lo is not None and s.hi is not None:
            for x, a, b in zip(s.xs, s.lo, s.hi, strict=False):
                draw_line(img, px(x), py(a), px(x), py(b), colour)
        for (xa, ya), (xb, yb) in zip(xy, xy[1:], strict=False):
            draw_line(img, xa, ya, xb, yb, colour, width=2)
        if len(xy) == 1:
            draw_line(img, xy[0][0] - 2, xy[0][1], xy[0][0] + 2, xy[0][1], colour, width=3)
        w = text_width(s.label) + 16
        ly = 26 + LEGEND_ROW * i          # in the legend rows, above the plot area
        img[ly:ly + 8, legend_x - w:legend_x - w + 10] = colour
        draw_text(img, legend_x - w + 14, ly - 1, s.label, black)
    return img
