"""Shared fixtures: seeded RNGs and helpers to walk random games through the Python API."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from descent.nets.modelfile import LoadedModel, save_model
from descent.search_cy.games.sampling import random_action
from descent.search_cy.games.state import GameState

# Files of few tests that run long, sent to the test workers first. With --dist loadfile
# a file goes whole to one worker, in the order of the collection (pyproject turns off
# xdist's own order, most tests first, which sent these last): one of them started late
# runs on alone after the other worker has finished everything else.
LONG_FILES = (
    "tests/train/test_cluster.py",          # a Ray cluster, actors and training runs
    "tests/train/test_training.py",         # `descent train` runs end to end
    "tests/protocols/test_time_control.py",  # games under real clocks
    "tests/tools/test_bench_search.py",     # benchmark runs
    "tests/train/test_memory_files.py",     # training runs
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """LONG_FILES first, then the other files by their number of tests, most first (as
    xdist orders them); the tests of a file keep their order."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)

    def rank(path: str) -> tuple[int, int]:
        long = LONG_FILES.index(path) if path in LONG_FILES else len(LONG_FILES)
        return long, -len(files[path])

    items[:] = [item for path in sorted(files, key=rank) for item in files[path]]


def random_game(state: GameState, rng: random.Random, max_steps: int = 10_000) -> Iterator[int]:
    """Apply random actions until the end; yields each action after applying it."""
    steps = 0
    while not state.is_terminal() and steps < max_steps:
        action = random_action(state, rng)
        state.apply_action(action)
        steps += 1
        yield action


@pytest.fixture(scope="session")
def trained_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


def _trained(spec: str, folder: Path, name: str) -> LoadedModel:
    import torch  # noqa: F401

    from descent.nets.train_quick import train_quick

    model = train_quick(spec, "tiny", steps=15, positions=128, seed=3)
    save_model(model, folder / name)
    return model


@pytest.fixture(scope="session")
def hex5_model(trained_dir: Path) -> LoadedModel:
    """A tiny Hex 5x5 network trained a few steps, once for the whole run."""
    return _trained("hex(size=5)", trained_dir, "hex5.dnet")


@pytest.fixture(scope="session")
def hex5_model_file(hex5_model: LoadedModel, trained_dir: Path) -> Path:
    """``hex5_model``'s file."""
    return trained_dir / "hex5.dnet"


@pytest.fixture(scope="session")
def einstein_model(trained_dir: Path) -> LoadedModel:
    return _trained("einstein", trained_dir, "einstein.dnet")
