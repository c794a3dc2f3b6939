"""The engine's option table (Stockfish's OptionsMap, lc0's options dictionary): every
setting a protocol may show or change while the process runs, its type and range, and
what its change handler rebuilds.

A change handler runs at one of four depths (``Option.rebuild``):

- ``game``: a new game descriptor and position, then its evaluator and search;
- ``evaluator``: the value network or heuristic (model, backend), then the search that
  holds it;
- ``search``: the search and its table (search, hash size, seed, threads);
- ``none``: a value the engine reads at ``go`` (strength, resign threshold, move overhead,
  nodes-as-time rate).

Protocols only translate names and print (UCI's ``Hash`` is ``hash_mb`` here); ranges,
choices and error messages come from this table, so every protocol refuses the same
values in the same words.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from descent.engine.settings import Settings
from descent.search_cy.search.api import registered_searches
from descent.search_cy.search.strength import parse_strength

OptionKind = Literal["spin", "float", "combo", "string"]
Rebuild = Literal["game", "evaluator", "search", "none"]
BACKENDS = ("auto", "onnxruntime", "torch", "native", "tensorrt")
MAX_HASH_MB = 131072
MAX_THREADS = 1024
MAX_OVERHEAD_MS = 60000
MAX_SEED = 2**31 - 1


@dataclass(frozen=True)
class Option:
    """One option: the Settings field it sets, its kind and range, its handler's depth."""

    name: str
    kind: OptionKind
    rebuild: Rebuild
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    @property
    def help(self) -> str:
        return _HELP[self.name]

    def parse(self, raw: object) -> Any:
        """The value of ``raw`` (text or a typed value), or ValueError saying what is
        allowed."""
        text = str(raw).strip()
        if self.kind == "spin":
            if isinstance(raw, bool) or not (isinstance(raw, int) or _is_integer(text)):
                raise ValueError(f"{self.name}: expected an integer, got {raw!r}")
            value: Any = int(text)
        elif self.kind == "float":
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"{self.name}: expected a number, got {raw!r}") from None
            if not math.isfinite(value):
                raise ValueError(f"{self.name}: expected a finite number, got {raw!r}")
        else:
            value = text
        if self.kind == "combo" and value.lower() not in self.choices:
            raise ValueError(f"{self.name} must be one of {', '.join(self.choices)}, "
                             f"got {raw!r}")
        if self.kind in ("spin", "float") and not (
                (self.minimum is None or value >= self.minimum)
                and (self.maximum is None or value <= self.maximum)):
            raise ValueError(f"{self.name} must be in {number_text(self.minimum)}.."
                             f"{number_text(self.maximum)}, got {number_text(value)}")
        if self.name == "strength":
            parse_strength(value)      # ValueError lists the levels
            value = value.lower()
        if self.name == "hash_mb":
            check_hash_mb(value)
        return value.lower() if self.kind == "combo" else value


def available_memory_mb() -> int | None:
    """MiB of memory this machine can give now (Linux MemAvailable, else the physical
    memory), or None where neither can be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")) // (1 << 20)
    except (AttributeError, OSError, ValueError):
        return None


def check_hash_mb(value: int) -> None:
    """ValueError when a table of ``value`` MiB cannot fit in the memory available now:
    refused at start and on a change, rather than failing at the first search."""
    available = available_memory_mb()
    if available is not None and value > available:
        raise ValueError(f"hash_mb={value} MiB is more than the {available} MiB of memory "
                         "available on this machine")


def _is_integer(text: str) -> bool:
    digits = text[1:] if text[:1] in "+-" else text
    return 0 < len(digits) <= 18 and digits.isascii() and digits.isdigit()


def number_text(value: float | None) -> str:
    """A bound or value as people write it: 2147483647, 0.5 (never 2.14748e+09)."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


OPTIONS: Mapping[str, Option] = {o.name: o for o in (
    Option("game", "string", "game"),
    Option("model", "string", "evaluator"),
    Option("policy", "string", "search"),
    Option("policy_at", "spin", "search", 1, 1 << 30),
    Option("policy_weight", "float", "search", 0.0, 4.0),
    Option("action_visits", "spin", "search", 0, 10_000),
    Option("minimax_weight", "float", "search", 0.0, 1.0),
    Option("value_visits", "spin", "search", 0, 10_000),
    Option("value_mix", "float", "search", 0.0, 1.0),
    Option("value_fade", "float", "search", 0.0, 1e9),
    Option("heuristic", "string", "evaluator"),
    Option("heuristic_weights", "string", "evaluator"),
    Option("backend", "combo", "evaluator", choices=BACKENDS),
    Option("search", "combo", "search", choices=tuple(registered_searches())),
    Option("hash_mb", "spin", "search", 1, MAX_HASH_MB),
    Option("seed", "spin", "search", 0, MAX_SEED),
    Option("strength", "string", "none"),
    Option("resign_threshold", "float", "none", 0.0, 1.0e9),
    Option("move_overhead_ms", "spin", "none", 0, MAX_OVERHEAD_MS),
    Option("nodes_per_second", "float", "none", 0.0, 1.0e12),
    Option("threads", "spin", "search", 1, MAX_THREADS),
)}

_HELP = {f.name: str(f.metadata.get("help", "")) for f in fields(Settings)}
