"""The ``auto`` backend: measure the available backends on this model, keep the fastest.

No single default is right on a CPU (PyTorch beats ONNX Runtime on the EinStein paper net
at batch >= 16 and loses on small Hex nets and at batch 1; see the field notes), so the
choice is measured on the loaded model, at the batch size its game's searches produce (the
median child count of seeded positions), and cached per model and machine in
``$XDG_CACHE_HOME/descent/auto-backend.json``: a later start reads the answer instead of
measuring again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from descent.nets.backends.base import Backend, BackendUnavailable, cache_dir
from descent.nets.backends.registry import BACKENDS, make_backend, probe, runs_model
from descent.nets.encoding import encode_batch, sample_positions
from descent.nets.files import atomic_write
from descent.nets.modelfile import LoadedModel

log = logging.getLogger(__name__)

CACHE_FILE = "auto-backend.json"


@dataclass
class AutoChoice:
    backend: str                                  # the chosen backend's name
    rates: dict[str, float] = field(default_factory=dict)  # positions/s per backend measured
    batch: int = 0                                # the batch size measured at
    cached: bool = False                          # read from the cache file, not measured
    cache_path: Path | None = None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_id(candidates: list[str]) -> dict[str, Any]:
    """What a measured choice depends on besides the model."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return {"machine": platform.machine(), "cpu": _cpu_model(), "cores": cores,
            "backends": {name: probe(name)[1] for name in candidates}}


def typical_batch(model: LoadedModel, max_batch: int) -> int:
    """The median number of children of seeded positions of the model's game."""
    counts = []
    for state in sample_positions(model.game, 16, seed=7):
        counts.append(len(state.chance_outcomes()) if state.is_chance_node()
                      else len(state.legal_actions()))
    return max(1, min(max_batch, int(statistics.median(counts))))


def measure(backend: Backend, batch_size: int, model: LoadedModel, seconds: float) -> float:
    """Positions per second of ``backend`` on real positions at ``batch_size``."""
    states = sample_positions(model.game, batch_size, seed=11)
    batch = encode_batch(states)
    for _ in range(3):
        backend.evaluate(batch)
    calls = 0
    start = time.perf_counter()
    elapsed = 0.0
    while calls < 5 or elapsed < seconds:
        backend.evaluate(batch)
        calls += 1
        elapsed = time.perf_counter() - start
    return calls * batch_size / elapsed


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(path: Path, data: dict[str, Any]) -> None:
    with atomic_write(path, "w", durable=False) as handle:
        json.dump(data, handle, indent=1, sort_keys=True)


def auto_select(model: LoadedModel, *, candidates: list[str] | None = None,
                measure_seconds: float = 0.25, batch: int = 0, use_cache: bool = True,
                **options: Any) -> tuple[AutoChoice, Backend]:
    """The fastest available backend for ``model`` and how it was chosen. Blocks for about
    ``measure_seconds`` per candidate on a cache miss."""
    names = [n for n in (candidates or list(BACKENDS)) if n in BACKENDS and runs_model(n, model)]
    available = [n for n in names if probe(n)[0]]
    if not available:
        reasons = "; ".join(f"{n}: {probe(n)[1]}" for n in names)
        raise BackendUnavailable(f"auto: no backend is available ({reasons})")
    max_batch = int(options.get("max_batch", 256))
    size = batch or typical_batch(model, max_batch)
    path = cache_dir() / CACHE_FILE
    ident = {"model": model.model_id, "machine": machine_id(available), "batch": size,
             "options": {k: str(v) for k, v in sorted(options.items())}}
    key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]
    entries = _read_cache(path) if use_cache else {}
    entry = entries.get(key)
    if isinstance(entry, dict) and entry.get("backend") in available:
        name = str(entry["backend"])
        try:
            chosen = make_backend(name, model, **options)
        except (BackendUnavailable, RuntimeError, ValueError) as exc:
            log.warning("auto: cached choice %s fails now (%s); measuring again", name, exc)
        else:
            measured = {str(k): float(v) for k, v in dict(entry.get("rates", {})).items()}
            return AutoChoice(name, measured, size, True, path), chosen
    rates: dict[str, float] = {}
    best: tuple[float, str, Backend] | None = None
    for name in available:
        try:
            backend = make_backend(name, model, **options)
            rate = measure(backend, size, model, measure_seconds)
        except (BackendUnavailable, RuntimeError, ValueError) as exc:
            log.warning("auto: backend %s skipped: %s", name, exc)
            continue
        rates[name] = rate
        log.info("auto: %s %.0f positions/s at batch %d", name, rate, size)
        if best is None or rate > best[0]:
            best = (rate, name, backend)
    if best is None:
        raise BackendUnavailable("auto: every available backend failed on this model")
    if use_cache:
        entries[key] = {"backend": best[1], "rates": rates, "batch": size,
                        "model": model.model_id, "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
                        "machine": ident["machine"]}
        _write_cache(path, entries)
    return AutoChoice(best[1], rates, size, False, path), best[2]


def choose_backend(model: LoadedModel, **options: Any) -> Backend:
    return auto_select(model, **options)[1]
