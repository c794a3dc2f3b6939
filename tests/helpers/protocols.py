"""In-process protocol sessions: a protocol object over a fresh engine, and one request
answered by exactly one reply."""

from __future__ import annotations

from typing import Any, TypeVar

from descent.engine.engine import Engine
from descent.engine.settings import Settings
from descent.protocols.base import LineProtocol

P = TypeVar("P", bound=LineProtocol)


def make_protocol(cls: type[P], game: str, *, options: dict[str, Any] | None = None,
                  **settings: Any) -> tuple[P, list[str]]:
    """``cls`` over an engine of ``game`` (seeded, nodes-as-time, a small table; ``settings``
    override those), its ``options`` set by name; returns it with the list its replies
    are appended to."""
    base: dict[str, Any] = {"game": game, "seed": 1, "nodes_per_second": 5000.0,
                            "hash_mb": 8, "log_level": "warning"}
    engine = Engine(Settings(**{**base, **settings}))
    for name, value in (options or {}).items():
        engine.set_option(name, value)
    out: list[str] = []
    return cls(engine, out.append), out


def ask(protocol: LineProtocol, out: list[str], line: str) -> str:
    """The one reply ``line`` gets (an assertion error if it gets none or several)."""
    before = len(out)
    protocol.handle(line)
    assert len(out) == before + 1, (line, out[before:])
    return out[-1]
