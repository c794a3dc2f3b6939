"""structlog configured for a protocol process: JSON lines to stderr or a file, never stdout
(stdout carries protocol lines only; structlog's default would print there)."""

from __future__ import annotations

import json
import logging
import math
import sys
from typing import IO, Any

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "critical": logging.CRITICAL}
_sink: IO[str] | None = None


def _finite(value: Any) -> Any:
    """NaN and the infinities as strings: JSON has no such numbers (json.dumps would write
    the bare word NaN, which no JSON reader accepts)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _json_lines(event: Any, **kwargs: Any) -> str:
    kwargs.setdefault("default", repr)
    return json.dumps(_finite(event), allow_nan=False, **kwargs)


def configure_logging(level: str = "info", log_file: str | None = None) -> None:
    """Routes every structlog event of this process to ``log_file`` or stderr, as JSON."""
    global _sink
    if level.lower() not in _LEVELS:
        raise ValueError(f"log level must be one of {', '.join(_LEVELS)}")
    if _sink is not None and _sink not in (sys.stderr, sys.stdout):
        _sink.close()
    # the sink lives as long as the process logs: a context manager cannot hold it
    _sink = open(log_file, "a", encoding="utf-8", buffering=1) if log_file else sys.stderr  # noqa: SIM115
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            structlog.processors.JSONRenderer(serializer=_json_lines),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level.lower()]),
        logger_factory=structlog.WriteLoggerFactory(file=_sink),
        cache_logger_on_first_use=False,
    )


def get_logger(**bound: Any) -> Any:
    """A bound logger; configures the stderr default first if nothing configured logging,
    so that no library use of the engine ever writes a log line to stdout."""
    if _sink is None:
        configure_logging("warning")
    return structlog.get_logger().bind(**bound)
