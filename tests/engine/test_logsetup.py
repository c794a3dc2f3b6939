"""Log lines are JSON that any reader accepts, whatever values an event carries."""

from __future__ import annotations

import json
from pathlib import Path

from descent.engine.logsetup import configure_logging, get_logger


def _reject(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def test_non_finite_values_are_logged_as_strings(tmp_path: Path) -> None:
    """A network gone bad logged ``value=NaN``: the bare word no JSON reader accepts."""
    log_file = tmp_path / "engine.log"
    configure_logging("info", str(log_file))
    try:
        get_logger(component="test").info("move", value=float("nan"),
                                          budget=[0.5, float("inf")], nested={"v": -float("inf")})
    finally:
        configure_logging("warning")
    line = log_file.read_text().strip()
    event = json.loads(line, parse_constant=_reject)
    assert (event["value"], event["budget"], event["nested"]) == ("nan", [0.5, "inf"],
                                                                  {"v": "-inf"})
