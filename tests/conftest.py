"""Shared fixtures: seeded RNGs and helpers to walk random games through the Python API."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from descent.nets.modelfile import LoadedModel, save_model
from descent.search_cy.games.sampling import random_action
from descent.search_cy.games.state import GameState


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
