"""What the networks know about the kernels' input encodings.

A model file records the encoding it was trained on: the version below, the shape, and a
fingerprint (SHA-256 of the planes of a few seeded positions). The version is the contract
people bump when they change a kernel's ``c_encode``; the fingerprint catches the change
they forgot to announce, so a model never silently reads planes it was not trained on.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np
import numpy.typing as npt

from descent.search_cy.games.registry import Game
from descent.search_cy.games.sampling import random_action
from descent.search_cy.games.state import GameState

# Bump a game's version whenever its kernel's c_encode changes meaning or layout.
ENCODING_VERSIONS: dict[str, int] = {"hex": 1, "einstein": 1, "dicechess": 1}

# The plane that is all ones when player 0 is to move (in the encoded frame): networks
# whose output is in the side to move's view are turned into player 0's view with it.
TO_MOVE_PLANE: dict[str, int] = {"hex": 2, "einstein": 12, "dicechess": 12}

# Dice chess's planes past the twelve of the pieces (White's pawn..king, then Black's;
# dicechess.pyx c_features): the nnue reads them by these names (nets/models.py,
# nets/onnx_graph.py): White to move, the castling rights K Q k q, the en passant square,
# the pending die 1..6.
DICECHESS_PLANES: dict[str, int] = {"to_move": 12, "castling": 13, "ep": 17, "die": 18}

FINGERPRINT_POSITIONS = 8


def encoding_version(game: str) -> int:
    if game not in ENCODING_VERSIONS:
        raise ValueError(f"no input encoding is declared for game {game!r}")
    return ENCODING_VERSIONS[game]


def sample_positions(game: Game, count: int, seed: int = 0, max_plies: int = 40) -> list[GameState]:
    """Seeded non-terminal positions: random plies from the start (chance nodes included).

    Deterministic for a seed on every machine: Python's own RNG drives the choices.
    """
    rng = random.Random(seed)
    out: list[GameState] = []
    while len(out) < count:
        state = game.new_initial_state()
        plies = rng.randrange(max_plies + 1)
        for _ in range(plies):
            if state.is_terminal():
                break
            state.apply_action(random_action(state, rng))
        if state.is_terminal():
            state.undo()
        out.append(state)
    return out


def encode_batch(states: list[GameState], symmetry: int = 0) -> npt.NDArray[np.float32]:
    """The network input of ``states`` as one (n, planes, height, width) float32 array."""
    if not states:
        raise ValueError("encode_batch needs at least one state")
    batch = np.zeros((len(states), *states[0].encoding_shape), dtype=np.float32)
    for i, state in enumerate(states):
        state.encode(batch[i], symmetry)
    return batch


def fingerprint(game: Game) -> str:
    """SHA-256 of the encodings of a few seeded positions of ``game``."""
    batch = encode_batch(sample_positions(game, FINGERPRINT_POSITIONS, seed=20260101))
    digest = hashlib.sha256()
    digest.update(repr(batch.shape).encode())
    digest.update(np.ascontiguousarray(batch, dtype="<f4").tobytes())
    return digest.hexdigest()
