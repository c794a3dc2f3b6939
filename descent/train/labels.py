"""``descent labels``: training data that accumulates, from self-play of the default player.

Hex's learned networks need tens of thousands of games labelled by a strong search, far
more than one machine makes in one sitting, so generation resumes wherever it stopped and
keeps what it made in a folder of compressed shards with a manifest::

    descent labels generate data/labels/hex11 --size 11 --sims 1000 --hours 2 -j 2
    descent labels info data/labels/hex11
    descent labels retest data/labels/hex11 --positions 400 -j 2   # how noisy a label is

Each game is ``rave`` (the default Hex player: MCTS with RAVE, the pattern prior, H-search
and inferior cells, the VC heuristic) against itself at ``--sims`` simulations a move: a
uniformly random first stone, then moves drawn in proportion to visits squared up to
``OPENING_PLIES``, then the search's choice. The game ends when a search proves
its root (the winner is then known; the filling moves after a proof teach nothing). Every
searched position is kept with the search's value (player 0's view, exact when proven) and
its visit distribution over the root's children (the policy target); with probability
``--branch`` the position after a uniformly random move is searched too and kept the same
way, so that the value network also sees the children of bad moves.

The dice games (``--game einstein``, ``--game dicechess``) are played the same way by their
default player, expectiminimax over the game's default heuristic at ``--sims`` nodes a
move: the dice are drawn from the game's seed and recorded among its moves (so a
position's ``pos_ply`` counts them), every decision's position is kept (exact where the
search solved it), and the game is played to its end (``game_winner`` 2: a draw).

Games are numbered within a stream (``--stream``): game ``i`` of stream ``s`` is played with
seed ``s * 1_000_000 + i``, so it is the same game on any machine and at any ``-j``, and two
machines that generate at once use two streams. A shard is written (atomically) every
``--shard-games`` finished games and when generation stops (``--hours``, ``--games``,
SIGINT or SIGTERM); games still being played are lost, never half-written. The manifest is
rebuilt from the shards' own metadata after each one, so shards copied in from another
machine join with ``descent labels index``.

A shard (``s<stream>-<first>-<last>.npz``, NumPy's compressed archive, no pickles) holds:

- per game: ``game_stream``, ``game_index``, ``game_seed``, ``game_winner`` (0 or 1) and
  its moves (``game_moves`` concatenated, ``game_offset`` of length games + 1);
- per position: ``pos_game`` (the game's row in this shard), ``pos_ply`` (how many of the
  game's moves lead to it), ``pos_extra`` (the random move played after them, or -1),
  ``value``, ``proven``, ``best`` (the search's move) and the visits of the root's children
  (``policy_action`` and ``policy_visits`` concatenated, ``policy_offset``);
- ``meta``: JSON (UTF-8 bytes) with the game spec, the generating player and the counts.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import random
import signal
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

FORMAT = 1
MANIFEST = "manifest.json"
DRAW = 2                # game_winner of a drawn game (dice chess)
STREAM_STRIDE = 1_000_000
OPENING_PLIES = 7       # self-play samples moves by visits squared before this ply
HELD_OUT_EVERY = 10     # the games whose seed is divisible by this are every trainer's test


@dataclass(frozen=True)
class Player:
    """The generating player, as recorded in every shard: Hex of ``size`` by default, or
    the game ``spec`` (a dice game: see ``for_game``)."""

    size: int = 11
    sims: int = 1000            # rave: simulations a move; expectiminimax: nodes a move
    branch: float = 0.25
    search: str = "rave"
    heuristic: str = "vc"
    policy: str = ""            # a move-policy model file for rave (expert iteration)
    policy_sha256: str = ""     # ... its weights' SHA-256, what the shards record
    policy_at: int = 300
    action_visits: int = 0      # rave's virtual visits at a policy_value network's values
    value: str = ""             # a value model file in C (a Hex nnue) for rave's leaves
    value_sha256: str = ""      # ... its weights' SHA-256, what the shards record
    value_visits: int = 8       # rave's value_visits, value_mix and value_fade with it
    value_mix: float = 0.0
    value_fade: float = 0.0
    spec: str = ""              # the game, when not Hex of ``size``
    # KataGo's playout cap randomisation: a move is searched in full (and labelled) with
    # probability full_share, else with fast_sims only (played, not labelled); 0: all full
    fast_sims: int = 0
    full_share: float = 1.0

    @property
    def game(self) -> str:
        return self.spec or f"hex(size={self.size})"

    @classmethod
    def for_game(cls, spec: str, **kw: Any) -> Player:
        """The default player of the game ``spec``: for Hex ``rave`` with the VC heuristic,
        for the dice games expectiminimax (Star2) with the game's default heuristic."""
        from descent.search_cy.eval.heuristics import heuristic_names
        from descent.search_cy.games.registry import make_game

        game = make_game(spec)
        if game.name == "hex":
            return cls(size=int(game.params["size"]), **kw)
        return cls(spec=game.spec, search="expectiminimax",
                   heuristic=heuristic_names(game)[0], **kw)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"game": self.game, "search": self.search,
                               "heuristic": self.heuristic, "sims": self.sims,
                               "branch": self.branch}
        if self.policy:
            out |= {"policy_sha256": self.policy_sha256, "policy_at": self.policy_at}
        if self.action_visits:
            out["action_visits"] = self.action_visits
        if self.value:
            out |= {"value_sha256": self.value_sha256, "value_visits": self.value_visits,
                    "value_mix": self.value_mix, "value_fade": self.value_fade}
        if self.fast_sims:
            out |= {"fast_sims": self.fast_sims, "full_share": self.full_share}
        return out

    @classmethod
    def with_policy(cls, path: str, policy_at: int, **kw: Any) -> Player:
        """The player with the policy model file at ``path`` (checked, its weights'
        SHA-256 recorded)."""
        from descent.nets.modelfile import load_model

        model = load_model(path, f"hex(size={kw.get('size', 11)})")
        if not model.arch.is_policy:
            raise ValueError(f"{path}: not a move-policy network")
        return cls(policy=str(path), policy_sha256=model.weights_sha256,
                   policy_at=policy_at, **kw)

    def with_value(self, path: str, mix: float, fade: float = 0.0, visits: int = 8) -> Player:
        """This player with the value model file at ``path`` in ``rave`` (checked: a
        network valued in C as odds, its weights' SHA-256 recorded): the engine's
        ``search=rave,model=PATH,value_mix=MIX,value_fade=FADE,value_visits=VISITS``."""
        if self.search != "rave":
            raise ValueError(f"a value network guides rave's leaves, not {self.search}")
        if not 0.0 <= mix <= 1.0:
            raise ValueError(f"value mix {mix:g}: a share, in [0, 1]")
        if fade < 0.0:
            raise ValueError(f"value fade {fade:g}: child visits, >= 0")
        if visits < 0:
            raise ValueError(f"value visits {visits}: virtual visits, >= 0")
        _, sha256 = _value_network(str(path), self.game)
        return replace(self, value=str(path), value_sha256=sha256, value_visits=visits,
                       value_mix=mix, value_fade=fade)


@dataclass
class GameRecord:
    """One finished self-play game and its labelled positions."""

    stream: int
    index: int
    seed: int
    moves: list[int]
    winner: int
    plies: list[int] = field(default_factory=list)
    extras: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    proven: list[bool] = field(default_factory=list)
    best: list[int] = field(default_factory=list)
    policy: list[list[tuple[int, int]]] = field(default_factory=list)

    def add(self, ply: int, extra: int, result: Any) -> None:
        self.plies.append(ply)
        self.extras.append(extra)
        self.values.append(float(result.value))
        self.proven.append(bool(result.resolved))
        self.best.append(int(result.action))
        self.policy.append([(int(c.action), int(c.visits)) for c in result.children
                            if c.visits > 0])


def selfplay_move(result: Any, plies: int, rnd: random.Random) -> int:
    """The move a self-play game plays after the search ``result`` at ply ``plies``: drawn
    in proportion to visits squared before OPENING_PLIES (unless the position is
    decided), then the search's own choice."""
    seen = [(c.action, c.visits) for c in result.children if c.visits > 0]
    if plies < OPENING_PLIES and not result.resolved and seen:
        return int(rnd.choices([a for a, _ in seen], weights=[n * n for _, n in seen])[0])
    return int(result.action)


def game_seed(stream: int, index: int) -> int:
    return stream * STREAM_STRIDE + index


@functools.lru_cache(maxsize=2)
def _value_network(path: str, game: str) -> tuple[Any, str]:
    """The value model file at ``path`` as an evaluator in C for ``game`` and its weights'
    SHA-256 (loaded once a process: a worker plays many games with it)."""
    from descent.nets.evaluator import network_evaluator
    from descent.nets.modelfile import load_model
    from descent.search_cy.eval.evaluator import HeuristicEvaluator
    from descent.search_cy.games.registry import make_game
    from descent.search_cy.search.api import check_rave_value

    state = make_game(game).new_initial_state()
    model = load_model(path, state)
    if model.arch.is_policy:
        raise ValueError(f"{path}: a move-policy network, not a value network")
    evaluator = network_evaluator(model, state)      # the file read once
    if not isinstance(evaluator, HeuristicEvaluator):
        raise ValueError(f"{path}: rave reads a value network in C only (an mlp or an nnue)")
    try:
        check_rave_value(evaluator)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return evaluator, model.weights_sha256


def player_searches(player: Player, state: Any, seeds: Sequence[int],
                    policy: Any = None) -> list[Any]:
    """The searches of ``player`` on the game of ``state``, one a seed (its heuristic, and
    for a policy player its network at its threshold: ``policy`` when the caller loaded
    it already, else loaded once here)."""
    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.search.api import SearchParams, make_search

    evaluator = heuristic_for(state, player.heuristic)
    searches = [make_search(player.search, evaluator, SearchParams(seed=seed, hash_mb=64))
                for seed in seeds]
    if player.policy:
        if policy is None:
            from descent.nets.policy import load_policy

            policy = load_policy(player.policy, state)
        for runner in searches:
            impl: Any = runner.impl
            impl.policy, impl.policy_at = policy, player.policy_at
            impl.action_visits = player.action_visits
    if player.value:
        evaluator, _ = _value_network(player.value, player.game)
        for runner in searches:
            # one network for all: a process runs one search at a time, and an nnue's
            # sums of the last board it valued give the same bits as a fresh sum
            impl = runner.impl
            impl.value, impl.value_visits = evaluator, player.value_visits
            impl.value_mix, impl.value_fade = player.value_mix, player.value_fade
    return searches


def player_budget(player: Player, state: Any, fast: bool = False) -> Any:
    """One move's search of ``player`` (``fast``: its fast search): simulations for Hex,
    nodes for the dice games."""
    from descent.search_cy.search.stopper import Stopper

    sims = player.fast_sims if fast else player.sims
    if state.game.name == "hex":
        return Stopper(iterations=sims)
    return Stopper(nodes=sims)


def play_game(task: tuple[Player, int, int]) -> GameRecord:
    """One self-play game of ``player`` (a module-level function for the process pool)."""
    from descent.search_cy.games.registry import make_game

    player, stream, index = task
    seed = game_seed(stream, index)
    rng = random.Random(seed)
    state = make_game(player.game).new_initial_state()
    hex_game = state.game.name == "hex"
    search, side = player_searches(player, state, [seed, seed + 1])

    record = GameRecord(stream, index, seed, [], winner=-1)
    if hex_game:                       # a uniformly random first stone
        record.moves.append(rng.randrange(player.size * player.size))
        state.apply_action(record.moves[0])
    while not state.is_terminal():
        if state.is_chance_node():     # the dice: drawn, recorded among the moves
            outcomes = state.chance_outcomes()
            roll = rng.choices([a for a, _ in outcomes], weights=[p for _, p in outcomes])[0]
            state.apply_action(roll)
            record.moves.append(roll)
            continue
        # (the draw only for a player with fast searches: the others' games stay as they were)
        full = not player.fast_sims or rng.random() < player.full_share
        result = search.run(state, player_budget(player, state, fast=not full))
        if full:
            record.add(len(record.moves), -1, result)
        if hex_game and result.resolved:   # proven: the winner is known, the rest is filling
            record.winner = 0 if result.value > 0 else 1
            break
        if full and player.branch > 0.0 and rng.random() < player.branch:
            legal = state.legal_actions()
            extra = legal[rng.randrange(len(legal))]
            state.apply_action(extra)
            if not state.is_terminal():
                branch = side.run(state, player_budget(player, state))
                record.add(len(record.moves), extra, branch)
            state.undo()
        # the dice vary the dice games' openings; Hex's are drawn from the visits
        action = selfplay_move(result, len(record.moves), rng) if hex_game else int(
            result.action)
        state.apply_action(action)
        record.moves.append(action)
    if record.winner < 0:
        value = state.terminal_value()
        record.winner = 0 if value > 0 else 1 if value < 0 else DRAW
    return record


def _concat(parts: Sequence[Sequence[int]], dtype: Any) -> tuple[npt.NDArray[Any],
                                                                 npt.NDArray[np.int64]]:
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(p) for p in parts])
    flat = np.fromiter((x for p in parts for x in p), dtype=dtype, count=int(offsets[-1]))
    return flat, offsets


def shard_arrays(player: Player, games: Sequence[GameRecord]) -> dict[str, npt.NDArray[Any]]:
    """The arrays of one shard of ``games`` (see the module's docstring)."""
    moves, game_offset = _concat([g.moves for g in games], np.int16)
    policies = [p for g in games for p in g.policy]
    actions, policy_offset = _concat([[a for a, _ in p] for p in policies], np.int16)
    visits = np.fromiter((n for p in policies for _, n in p), dtype=np.int32,
                         count=len(actions))
    meta = {"format": FORMAT, "player": player.to_json(), "games": len(games),
            "positions": len(policies), "stream": sorted({g.stream for g in games})}
    return {
        "game_stream": np.array([g.stream for g in games], dtype=np.int32),
        "game_index": np.array([g.index for g in games], dtype=np.int32),
        "game_seed": np.array([g.seed for g in games], dtype=np.int64),
        "game_winner": np.array([g.winner for g in games], dtype=np.int8),
        "game_moves": moves, "game_offset": game_offset,
        "pos_game": np.array([row for row, g in enumerate(games) for _ in g.plies],
                             dtype=np.int32),
        "pos_ply": np.array([p for g in games for p in g.plies], dtype=np.int16),
        "pos_extra": np.array([e for g in games for e in g.extras], dtype=np.int16),
        "value": np.array([v for g in games for v in g.values], dtype=np.float32),
        "proven": np.array([p for g in games for p in g.proven], dtype=np.bool_),
        "best": np.array([b for g in games for b in g.best], dtype=np.int16),
        "policy_action": actions, "policy_visits": visits, "policy_offset": policy_offset,
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8),
    }


def _atomic_write(path: Path, write: Any) -> None:
    """Writes ``path`` through a temporary file in its folder and a rename, so that a
    reader (or a killed writer) never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_shard(folder: Path, player: Player, games: Sequence[GameRecord]) -> Path:
    """Writes one shard of ``games`` (all of one stream) and rebuilds the manifest."""
    stream = games[0].stream
    if any(g.stream != stream for g in games):
        raise ValueError("a shard holds the games of one stream")
    indices = sorted(g.index for g in games)
    path = folder / f"s{stream}-{indices[0]:06d}-{indices[-1]:06d}.npz"
    if path.exists():
        raise FileExistsError(f"{path} exists: a stream's games are written once")
    arrays = shard_arrays(player, sorted(games, key=lambda g: g.index))
    def write(f: Any) -> None:
        np.savez_compressed(f, allow_pickle=False, **arrays)

    _atomic_write(path, write)
    index(folder, rehash=False)
    return path


def read_meta(path: Path) -> dict[str, Any]:
    with np.load(path, allow_pickle=False) as z:
        meta: dict[str, Any] = json.loads(bytes(z["meta"]).decode())
        meta["games_done"] = [[int(s), int(i)] for s, i in zip(z["game_stream"],
                                                                z["game_index"], strict=True)]
    return meta


def index(folder: Path, *, rehash: bool = True) -> dict[str, Any]:
    """Rebuilds ``folder``'s manifest from its shards and returns it: every shard's file,
    player, counts and SHA-256, and the totals. A shard of another game or format is a
    ValueError naming it. With ``rehash`` False the entries of shards the manifest lists
    already are kept as they are (a shard is written once, under a new name), so that
    adding a shard reads that shard only."""
    known: dict[str, dict[str, Any]] = {}
    if not rehash and (folder / MANIFEST).exists():
        known = {s["file"]: s for s in json.loads((folder / MANIFEST).read_text())["shards"]}
    shards = [known.get(path.name) or _shard_entry(path)
              for path in sorted(folder.glob("s*-*-*.npz"))]
    games = {s["player"]["game"] for s in shards}
    if len(games) > 1:
        odd = next(s["file"] for s in shards if s["player"]["game"] != shards[0]["player"]["game"])
        raise ValueError(f"{folder / odd}: {sorted(games)} shards in one folder")
    manifest = {"format": FORMAT, "game": games.pop() if games else None, "shards": shards,
                "games": sum(s["games"] for s in shards),
                "positions": sum(s["positions"] for s in shards)}
    text = json.dumps(manifest, indent=1) + "\n"
    _atomic_write(folder / MANIFEST, lambda f: f.write(text.encode()))
    return manifest


def _shard_entry(path: Path) -> dict[str, Any]:
    """One shard's manifest entry, read from the shard (a ValueError naming a file that is
    not a shard of this format)."""
    try:
        meta = read_meta(path)
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"{path}: not a labels shard ({exc})") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: labels format {meta.get('format')!r}, not {FORMAT}")
    streams: dict[int, list[int]] = {}
    for s, i in meta["games_done"]:
        streams.setdefault(s, []).append(i)
    return {"file": path.name, "player": meta["player"], "games": meta["games"],
            "positions": meta["positions"],
            "games_by_stream": {str(s): _ranges(sorted(v)) for s, v in sorted(streams.items())},
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _ranges(values: Sequence[int]) -> list[list[int]]:
    """Sorted integers as inclusive [first, last] runs (a manifest stays short)."""
    out: list[list[int]] = []
    for v in values:
        if out and out[-1][1] == v - 1:
            out[-1][1] = v
        else:
            out.append([v, v])
    return out


def done_games(folder: Path, stream: int) -> set[int]:
    """The indices of ``stream``'s games already in ``folder``'s shards."""
    done: set[int] = set()
    for path in folder.glob(f"s{stream}-*-*.npz"):
        done.update(i for s, i in read_meta(path)["games_done"] if s == stream)
    return done


class _Stop:
    """Set by SIGINT or SIGTERM: generation stops taking games and writes what it has."""

    def __init__(self) -> None:
        self.set = False

    def __call__(self, signum: int, frame: object) -> None:
        self.set = True


def generate(folder: Path, player: Player, *, games: int = 0, hours: float = 0.0,
             stream: int = 1, jobs: int = 1, shard_games: int = 100,
             log: Any = None) -> int:
    """Plays new games of ``stream`` into ``folder`` until ``games`` more are done (0: no
    count), ``hours`` have passed (0: no limit) or SIGINT/SIGTERM; returns the number of
    games written. Blocks."""
    if games < 0 or hours < 0 or (games == 0 and hours == 0) or jobs < 1 \
            or shard_games < 1 or stream < 0 or player.sims < 1 \
            or not 0.0 <= player.branch <= 1.0 or not (player.spec or 2 <= player.size <= 25) \
            or not 0 <= player.fast_sims < player.sims or not 0.0 < player.full_share <= 1.0:
        raise ValueError("labels generate needs --games or --hours, jobs and shard games "
                         ">= 1, a stream >= 0, sims >= 1, 0 <= branch <= 1, size 2..25, "
                         "0 <= fast sims < sims, 0 < full share <= 1")
    folder.mkdir(parents=True, exist_ok=True)
    for shard in index(folder, rehash=False)["shards"]:
        if shard["player"] != player.to_json():
            raise ValueError(f"{folder / shard['file']} was made by {shard['player']}, not "
                             f"{player.to_json()}: one folder holds one player's games")
    done = done_games(folder, stream)
    deadline = time.monotonic() + hours * 3600.0 if hours > 0 else float("inf")
    stop = _Stop()
    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    pending: list[GameRecord] = []
    written = 0

    def tasks() -> Iterator[tuple[Player, int, int]]:
        i = 0
        while True:
            if i not in done:
                yield player, stream, i
            i += 1

    def flush() -> None:
        nonlocal written
        if pending:
            write_shard(folder, player, pending)
            written += len(pending)
            if log is not None:
                log(f"{len(pending)} games written ({written} this run)")
            pending.clear()

    import multiprocessing

    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_ignore_signals)
    if log is not None:
        log(f"{player.game}: stream {stream}, {len(done)} games done, {jobs} playing")
    try:
        # a bounded window of tasks, so that a stop loses at most ``jobs`` games in play
        window: list[Any] = []
        source = tasks()
        while True:
            while len(window) < jobs and (games == 0 or written + len(pending)
                                          + len(window) < games):
                window.append(pool.apply_async(play_game, (next(source),)))
            if not window:
                break
            ready = [r for r in window if r.ready()]
            if not ready:
                if stop.set or time.monotonic() >= deadline:
                    break
                window[0].wait(0.5)
                continue
            for r in ready:
                window.remove(r)
                pending.append(r.get())
            if len(pending) >= shard_games:
                flush()
            if stop.set or time.monotonic() >= deadline:
                break
    finally:
        pool.terminate()
        pool.join()
        for s, handler in previous.items():
            signal.signal(s, handler)
        flush()
    return written


def _ignore_signals() -> None:
    """Pool workers leave SIGINT and SIGTERM to the parent, which writes what is done."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@dataclass
class Labels:
    """Every shard of a folder, concatenated (see the module's docstring for the arrays);
    ``pos_game`` indexes the concatenated games."""

    size: int                          # Hex's board size, 0 for the dice games
    arrays: dict[str, npt.NDArray[Any]]
    game: str = ""                     # the game spec

    @property
    def positions(self) -> int:
        return int(len(self.arrays["value"]))

    def moves(self, position: int) -> list[int]:
        """The moves that lead to position ``position`` (its game's first ``pos_ply``,
        then its random move if it has one)."""
        a = self.arrays
        g = int(a["pos_game"][position])
        start = int(a["game_offset"][g])
        out = [int(m) for m in a["game_moves"][start:start + int(a["pos_ply"][position])]]
        if int(a["pos_extra"][position]) >= 0:
            out.append(int(a["pos_extra"][position]))
        return out

    def policy(self, position: int) -> npt.NDArray[np.float32]:
        """The visit distribution of position ``position`` over the board's cells."""
        a = self.arrays
        lo, hi = int(a["policy_offset"][position]), int(a["policy_offset"][position + 1])
        out = np.zeros(self.size * self.size, dtype=np.float32)
        visits = a["policy_visits"][lo:hi].astype(np.float32)
        out[a["policy_action"][lo:hi]] = visits / max(float(visits.sum()), 1.0)
        return out


def labels_game(folder: Path) -> str:
    """The game spec of the labels in ``folder`` (its manifest's)."""
    return str(json.loads((folder / MANIFEST).read_text())["game"])


def held_out(labels: Labels) -> npt.NDArray[np.bool_]:
    """Per position: whether its game is held out (seed divisible by HELD_OUT_EVERY), the
    one split every network trained on the labels is measured on."""
    seeds = labels.arrays["game_seed"]
    out: npt.NDArray[np.bool_] = (seeds[labels.arrays["pos_game"]] % HELD_OUT_EVERY) == 0
    return out


def load(folder: Path, *more: Path) -> Labels:
    """Every shard of ``folder`` (and of the ``more`` folders, of the same game: the
    players of successive generations), as their manifests list them, checked against
    their SHA-256, as one ``Labels``."""
    parts: list[dict[str, npt.NDArray[Any]]] = []
    specs: set[str] = set()
    for where in (folder, *more):
        manifest = json.loads((where / MANIFEST).read_text())
        specs.add(manifest["game"])
        for shard in manifest["shards"]:
            path = where / shard["file"]
            if hashlib.sha256(path.read_bytes()).hexdigest() != shard["sha256"]:
                raise ValueError(f"{path}: its SHA-256 is not the manifest's")
            with np.load(path, allow_pickle=False) as z:
                parts.append({k: z[k] for k in z.files if k != "meta"})
    if len(specs) > 1:
        raise ValueError(f"labels of {sorted(specs)} cannot be read as one")
    if not parts:
        raise ValueError(f"{folder}: no shards")
    from descent.search_cy.games.registry import make_game

    spec = specs.pop()
    size = int(make_game(spec).params.get("size", 0))
    out: dict[str, list[npt.NDArray[Any]]] = {}
    games = positions = moves = policy = 0
    for part in parts:
        shifted = dict(part)
        shifted["pos_game"] = part["pos_game"] + games
        shifted["game_offset"] = part["game_offset"][:-1] + moves
        shifted["policy_offset"] = part["policy_offset"][:-1] + policy
        games += len(part["game_index"])
        positions += len(part["value"])
        moves += int(part["game_offset"][-1])
        policy += int(part["policy_offset"][-1])
        for k, v in shifted.items():
            out.setdefault(k, []).append(v)
    arrays = {k: np.concatenate(v) for k, v in out.items()}
    arrays["game_offset"] = np.append(arrays["game_offset"], moves)
    arrays["policy_offset"] = np.append(arrays["policy_offset"], policy)
    return Labels(size, arrays, spec)


def rave_value_arguments(p: argparse.ArgumentParser) -> None:
    """How ``rave`` reads a value network in C (the engine's options of the same names):
    ``labels generate``'s player and ``values bench``."""
    p.add_argument("--value-visits", type=int, default=8,
                   help="rave's value_visits: virtual visits at the network's odds for the "
                        "children of a node of enough visits (0: none, the leaves only)")
    p.add_argument("--value-mix", type=float, default=0.0,
                   help="rave's value_mix: the leaf values' share in a score (0: none)")
    p.add_argument("--value-fade", type=float, default=0.0,
                   help="rave's value_fade with --value-mix: the child visits that halve it")


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="labels_command", metavar="ACTION", required=True)
    g = sub.add_parser("generate", help="self-play games of the default player into shards")
    g.add_argument("folder", type=Path, help="labels folder (created; resumed if it exists)")
    g.add_argument("--game", default="",
                   help="game spec (default: Hex of --size); einstein, dicechess: their "
                        "default player, expectiminimax over the default heuristic")
    g.add_argument("--size", type=int, default=11, help="Hex's board size")
    g.add_argument("--sims", type=int, default=1000,
                   help="a move's search: rave's simulations, expectiminimax's nodes")
    g.add_argument("--branch", type=float, default=0.25,
                   help="probability of also labelling a random move's position")
    g.add_argument("--games", type=int, default=0, help="stop after this many new games")
    g.add_argument("--hours", type=float, default=0.0, help="stop after this long")
    g.add_argument("--stream", type=int, default=1,
                   help="game numbering stream (one per machine generating at once)")
    g.add_argument("--shard-games", type=int, default=100, help="games a shard")
    g.add_argument("--policy", default="",
                   help="move-policy model file the player searches with (expert iteration: "
                        "a folder holds one player's games)")
    g.add_argument("--policy-at", type=int, default=300, help="rave's policy_at")
    g.add_argument("--action-visits", type=int, default=0,
                   help="rave's action_visits (a policy_value network's action values)")
    g.add_argument("--value", default="",
                   help="value model file in C (a Hex nnue) the player's rave reads: "
                        "virtual visits at its odds, and with --value-mix its leaves")
    rave_value_arguments(g)
    g.add_argument("--fast-sims", type=int, default=0,
                   help="playout cap randomisation: the moves not searched in full are "
                        "searched with this budget and not labelled (0: every move in full)")
    g.add_argument("--full-share", type=float, default=0.25,
                   help="with --fast-sims: the share of moves searched in full")
    g.add_argument("-j", "--jobs", type=int, default=1, help="games played at once")
    i = sub.add_parser("info", help="a labels folder's counts (rebuilds its manifest)")
    i.add_argument("folder", type=Path)
    x = sub.add_parser("index", help="rebuild a labels folder's manifest from its shards")
    x.add_argument("folder", type=Path)
    r = sub.add_parser("retest", help="search held-out Hex labels twice afresh: how much "
                                      "of a label is its search's noise")
    r.add_argument("folder", type=Path)
    r.add_argument("--positions", type=int, default=400,
                   help="held-out unproven positions, drawn by the seed")
    r.add_argument("--policy", default="",
                   help="the policy network file the labels' player searched with")
    r.add_argument("--value", default="",
                   help="the value network file the labels' player searched with")
    r.add_argument("--network", type=Path, default=None,
                   help="a policy_value network whose value is measured against both")
    r.add_argument("--deep", type=int, default=0,
                   help="also search each position once with this many simulations")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("-j", "--jobs", type=int, default=1, help="processes")


def run(args: argparse.Namespace) -> int:
    if args.labels_command == "generate":
        if args.game and (args.policy or args.value):
            raise SystemExit("labels generate: --policy and --value guide Hex of --size, "
                             "not --game")
        search: dict[str, Any] = {"sims": args.sims, "branch": args.branch}
        if args.fast_sims:
            search |= {"fast_sims": args.fast_sims, "full_share": args.full_share}
        player = (Player.with_policy(args.policy, args.policy_at, size=args.size,
                                     action_visits=args.action_visits, **search)
                  if args.policy else Player.for_game(args.game, **search)
                  if args.game else Player(size=args.size, **search))
        if args.value:
            player = player.with_value(args.value, args.value_mix, args.value_fade,
                                       args.value_visits)
        started = time.monotonic()
        written = generate(args.folder, player, games=args.games, hours=args.hours,
                           stream=args.stream, jobs=args.jobs, shard_games=args.shard_games,
                           log=lambda text: print(text, flush=True))
        elapsed = time.monotonic() - started
        print(f"{written} games in {elapsed:.0f} s "
              f"({3600.0 * written / max(elapsed, 1e-9):.0f} an hour)")
        return 0
    if args.labels_command == "retest":
        from descent.train.label_noise import retest
        from descent.train.policy import network_values

        labels = load(args.folder)
        result = retest(args.folder, args.positions, policy=args.policy, value=args.value,
                        seed=args.seed, deep=args.deep, jobs=args.jobs, labels=labels)
        predictor = (network_values(args.network, labels, result.positions)
                     if args.network else None)
        for name, value in result.summary(predictor).items():
            print(f"{name:>24}: {value:.4f}")
        return 0
    manifest = index(args.folder)
    if args.labels_command == "info":
        proven = 0
        for shard in manifest["shards"]:
            with np.load(args.folder / shard["file"], allow_pickle=False) as z:
                proven += int(z["proven"].sum())
        print(f"{manifest['game']}: {manifest['games']} games, {manifest['positions']} "
              f"positions ({proven} proven) in {len(manifest['shards'])} shards")
        for shard in manifest["shards"]:
            print(f"  {shard['file']}: {shard['games']} games, {shard['positions']} "
                  f"positions, {shard['player']}")
    return 0
