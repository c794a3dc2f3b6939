"""Learning data: tree / root / terminal learning, symmetry augmentation, replay memory.

A *pair* is (network input, target value): float32 planes (planes, H, W) and a value in
player 0's view and value units (train.heuristics). Stores keep one row per
distinct state of a game and symmetry; a later label of the same state replaces an
earlier one (the latest search knows best).

A search tree is read by ``ByteStore`` + ``BestFirstSearch.learning_data`` (C): every
stored state below the root with its value v(s) and the terminal states reached. The
searches value terminal states with the run's reinforcement heuristic themselves
(terminal.pxd), so their values are the targets. ``StateStore`` keeps the labels of the
states of the game's own path (root and chance learning, determinized chance states,
terminal learning).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.search_cy.games.state import GameState
from descent.train.heuristics import Reinforcement

Planes = npt.NDArray[np.float32]
Values = npt.NDArray[np.float32]



def symmetry_list(state: GameState, augment: bool) -> list[int]:
    """Every symmetry id of the game (augmentation), or the identity only."""
    return list(range(state.num_symmetries)) if augment else [0]


class StateStore:
    """Distinct states by hash, each encoded once per symmetry; labels can be replaced."""

    def __init__(self, prototype: GameState, symmetries: Sequence[int]) -> None:
        self.shape = tuple(prototype.encoding_shape)
        self.symmetries = list(symmetries)
        self.signs = np.array([-1.0 if prototype.symmetry_swaps_colours(s) else 1.0
                               for s in self.symmetries], dtype=np.float32)
        self.index: dict[int, int] = {}
        self.planes: list[Planes] = []
        self.values: list[float] = []
        self.resolved: list[bool] = []

    def __len__(self) -> int:
        return len(self.values)

    def __contains__(self, key: int) -> bool:
        return key in self.index

    def put(self, state: GameState, value: float, resolved: bool) -> None:
        key = state.hash
        at = self.index.get(key)
        if at is not None:
            self.values[at] = value
            self.resolved[at] = resolved
            return
        rows = np.empty((len(self.symmetries), *self.shape), dtype=np.float32)
        for k, sym in enumerate(self.symmetries):
            state.encode(rows[k], sym)
        self.index[key] = len(self.values)
        self.planes.append(rows)
        self.values.append(value)
        self.resolved.append(resolved)

    def label(self, key: int, value: float, resolved: bool = False) -> None:
        at = self.index[key]
        self.values[at] = value
        self.resolved[at] = resolved

    def value(self, key: int) -> float:
        return self.values[self.index[key]]

    def mix_unresolved(self, target: float, weight: float) -> None:
        """Move every unresolved label ``weight`` of the way to ``target``."""
        for at, resolved in enumerate(self.resolved):
            if not resolved:
                self.values[at] = (1.0 - weight) * self.values[at] + weight * target

    def arrays(self, exclude: set[int] | None = None
               ) -> tuple[Planes, Values, npt.NDArray[np.bool_]]:
        """(planes, values, resolved), one row per state and symmetry (colour-swapping
        symmetries negate the value); states whose hash is in ``exclude`` are left out."""
        nsym = len(self.symmetries)
        keep = [i for key, i in self.index.items() if not exclude or key not in exclude]
        if not keep:
            return (np.zeros((0, *self.shape), dtype=np.float32),
                    np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.bool_))
        planes = np.concatenate([self.planes[i] for i in keep]).reshape(-1, *self.shape)
        base = np.asarray([self.values[i] for i in keep], dtype=np.float32)
        values = (base[:, None] * self.signs[None, :]).reshape(-1).astype(np.float32)
        resolved = np.repeat(np.asarray([self.resolved[i] for i in keep], dtype=np.bool_),
                             nsym)
        return planes, values, resolved


class ByteStore:
    """Rows from ``learning_data``, deduplicated by their encoding (later rows win)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.rows: dict[bytes, tuple[float, bool]] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, planes: Planes, values: Values, resolved: npt.NDArray[np.bool_]) -> None:
        if len(values) == 0:
            return
        flat = np.ascontiguousarray(planes, dtype=np.float32).reshape(len(values), -1)
        for i in range(len(values)):
            self.rows[flat[i].tobytes()] = (float(values[i]), bool(resolved[i]))

    def arrays(self) -> tuple[Planes, Values, npt.NDArray[np.bool_]]:
        n = len(self.rows)
        if n == 0:
            return (np.zeros((0, *self.shape), dtype=np.float32),
                    np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.bool_))
        planes = np.frombuffer(b"".join(self.rows), dtype=np.float32).reshape(n, *self.shape)
        values = np.fromiter((v for v, _ in self.rows.values()), np.float32, n)
        resolved = np.fromiter((r for _, r in self.rows.values()), np.bool_, n)
        return planes.copy(), values, resolved


def pack_rows(planes: Planes) -> npt.NDArray[Any]:
    """Planes as a replay memory stores them, one row per position: bit-packed
    (``np.packbits``, 32x smaller than float32) when every value is 0 or 1, else float32."""
    flat = np.ascontiguousarray(planes, dtype=np.float32).reshape(len(planes), -1)
    if np.all((flat == 0.0) | (flat == 1.0)):
        return np.packbits(flat.astype(np.uint8), axis=1)
    return flat.copy()


def stored_rows(stored: npt.NDArray[Any], rows: npt.NDArray[np.int64],
                shape: tuple[int, ...]) -> Planes:
    """Rows ``rows`` of a replay memory's stored inputs (bit-packed uint8 or float32) as
    float32 planes of ``shape``."""
    picked = stored[rows]
    if stored.dtype == np.uint8:
        picked = np.unpackbits(picked, axis=1, count=int(np.prod(shape)))
    return np.ascontiguousarray(picked, dtype=np.float32).reshape(len(rows), *shape)


class ReplayMemory:
    """The data of the last ``capacity`` games (mu), at most ``max_pairs`` pairs: the
    oldest games drop out first (the newest game always stays).

    Inputs whose values are all 0 or 1 (every kernel's encoding today) are kept bit-packed
    (``np.packbits``: 32x smaller than float32); others are kept as float32."""

    def __init__(self, capacity: int, max_pairs: int = 0) -> None:
        if capacity < 1:
            raise ValueError("replay memory capacity must be >= 1")
        self.capacity = capacity
        self.max_pairs = max_pairs
        self.shape: tuple[int, ...] = ()
        self.games: deque[tuple[npt.NDArray[Any], Values]] = deque()
        self.first = 0      # serial number of games[0]: games added before it, ever

    @property
    def end(self) -> int:
        """Serial number the next game will get (games ever added)."""
        return self.first + len(self.games)

    def __len__(self) -> int:
        return len(self.games)

    @property
    def pairs(self) -> int:
        return sum(len(v) for _, v in self.games)

    def add(self, planes: Planes, values: Values,
            stored: npt.NDArray[Any] | None = None) -> None:
        """Adds one game; ``stored``: its planes already as ``pack_rows`` gives them."""
        if len(planes) != len(values):
            raise ValueError("planes and values differ in length")
        self.shape = tuple(planes.shape[1:])
        if stored is None:
            stored = pack_rows(planes)
        self.games.append((stored, np.asarray(values, dtype=np.float32).copy()))
        self.trim()

    def trim(self) -> None:
        """Drops the oldest games beyond the capacity and the pair cap."""
        while len(self.games) > self.capacity or (
                self.max_pairs and len(self.games) > 1 and self.pairs > self.max_pairs):
            self.games.popleft()
            self.first += 1

    def _rows(self, stored: npt.NDArray[Any], rows: npt.NDArray[np.int64]) -> Planes:
        return stored_rows(stored, rows, self.shape)

    def game(self, index: int) -> tuple[Planes, Values]:
        stored, values = self.games[index]
        return self._rows(stored, np.arange(len(values))), values

    def sample(self, rate: float, rng: np.random.Generator, skip_newest: int = 0
               ) -> tuple[Planes, Values] | None:
        """A uniform sample (without replacement) of ``rate`` of the pairs of every game
        but the ``skip_newest`` last ones; None when it is empty."""
        older = list(self.games)[:max(0, len(self.games) - skip_newest)]
        sizes = [len(v) for _, v in older]
        total = sum(sizes)
        count = int(round(rate * total))
        if count <= 0:
            return None
        picks = np.sort(rng.choice(total, size=count, replace=False))
        starts = np.cumsum([0, *sizes])
        planes, values = [], []
        for k, (stored, vals) in enumerate(older):
            lo, hi = np.searchsorted(picks, [starts[k], starts[k + 1]])
            if hi > lo:
                rows = picks[lo:hi] - starts[k]
                planes.append(self._rows(stored, rows))
                values.append(vals[rows])
        return np.concatenate(planes), np.concatenate(values)

    def since(self, serial: int) -> list[tuple[npt.NDArray[Any], Values]]:
        """The stored games (packed) of serial ``serial`` or later still kept, in order:
        what a checkpoint has not written yet."""
        skip = max(0, serial - self.first)
        return [self.games[k] for k in range(skip, len(self.games))]

    def restore(self, shape: Sequence[int], games: Iterable[tuple[npt.NDArray[Any], Values]],
                first: int = 0) -> None:
        """Replaces the memory with ``games``, the oldest of serial ``first``."""
        self.shape = tuple(int(x) for x in shape)
        self.games.clear()
        self.first = first
        for stored, values in games:
            self.games.append((stored, values))


def random_terminal_data(prototype_factory: Callable[[], GameState],
                         reinforcement: Reinforcement, games: int, rng: np.random.Generator,
                         symmetries: bool) -> tuple[Planes, Values]:
    """Pre-initialisation set: the terminal states of ``games`` uniformly random games
    (chance outcomes by their probabilities) with their terminal values."""
    store: StateStore | None = None
    for _ in range(games):
        state = prototype_factory()
        if store is None:
            store = StateStore(state, symmetry_list(state, symmetries))
        while not state.is_terminal():
            state.apply_action(draw_action(state, rng))
        store.put(state, reinforcement.terminal(state), True)
    if store is None:
        raise ValueError("pre-initialisation needs at least one game")
    planes, values, _ = store.arrays()
    return planes, values


def draw_action(state: GameState, rng: np.random.Generator) -> int:
    """A chance outcome drawn by its probability, or a uniform legal move."""
    if state.is_chance_node():
        return draw_outcome(state.chance_outcomes(), rng.random())
    legal = state.legal_actions()
    return legal[int(rng.integers(len(legal)))]


def draw_outcome(outcomes: Sequence[tuple[int, float]], u: float) -> int:
    """The outcome whose cumulative probability interval holds ``u`` in [0, 1)."""
    total = sum(p for _, p in outcomes)
    x = u * total
    for action, p in outcomes:
        x -= p
        if x < 0:
            return action
    return outcomes[-1][0]
