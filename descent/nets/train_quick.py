"""A few Adam steps on random positions: real (if weak) model files for tests and tools.

This is not the Descent training loop (that is nets' learning issue): the targets are the
outcomes of one seeded random playout from each position (player 0's view), enough to give
a network that is trained, saved, reloaded and searched with end to end. Needs torch.

    model = train_quick("hex(size=5)", preset_name="tiny", steps=20, seed=1)
    save_model(model, "hex5.safetensors")
"""

from __future__ import annotations

import random
import time

import numpy as np
import numpy.typing as npt

from descent.nets.arch import preset
from descent.nets.encoding import encode_batch, sample_positions
from descent.nets.modelfile import LoadedModel, Provenance, ValueSpec, make_model
from descent.search_cy.games.registry import Game, make_game
from descent.search_cy.games.sampling import random_action
from descent.search_cy.games.state import GameState


def playout_value(state: GameState, rng: random.Random) -> float:
    """Player 0's outcome of one random playout from ``state`` (state left unchanged)."""
    steps = 0
    while not state.is_terminal():
        state.apply_action(random_action(state, rng))
        steps += 1
    value = state.terminal_value()
    for _ in range(steps):
        state.undo()
    return value


def random_dataset(game: Game, count: int, seed: int
                   ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """(inputs, targets): seeded positions and their random-playout outcomes."""
    rng = random.Random(seed)
    states = sample_positions(game, count, seed=seed)
    targets = np.array([playout_value(s, rng) for s in states], dtype=np.float32)
    return encode_batch(states), targets


def train_quick(game: Game | str, preset_name: str = "tiny", *, steps: int = 20,
                batch: int = 32, positions: int = 256, seed: int = 0, lr: float = 1e-3,
                weight_decay: float = 1e-4) -> LoadedModel:
    """A model trained for ``steps`` Adam steps (L2 via weight decay). Deterministic by seed."""
    import torch

    from descent.nets.models import module_from_weights, weights_from_module

    g = make_game(game) if isinstance(game, str) else game
    initial = make_model(g, preset(g.name, preset_name), seed=seed)
    torch.manual_seed(seed)
    net = module_from_weights(initial.arch, initial.input_shape, initial.weights)
    inputs, targets = random_dataset(g, positions, seed)
    x_all, y_all = torch.from_numpy(inputs), torch.from_numpy(targets)
    optimiser = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    order = np.random.default_rng(seed)
    net.train()
    for _ in range(steps):
        idx = torch.from_numpy(order.choice(len(targets), size=min(batch, len(targets)),
                                            replace=False))
        loss = torch.mean((net(x_all[idx]) - y_all[idx]) ** 2)
        optimiser.zero_grad()
        torch.autograd.backward(loss)
        optimiser.step()
    net.eval()
    return make_model(g, initial.arch, weights_from_module(net), value=ValueSpec(),
                      training=Provenance(steps=steps, games=positions,
                                          date=time.strftime("%Y-%m-%d"), seed=seed,
                                          note="nets.train_quick: random-playout targets"))
