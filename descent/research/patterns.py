"""``descent patterns``: the Hex move prior's records and its fit.

``selfplay`` plays ``rave`` against itself at a fixed number of simulations a move and
writes, one JSON line a game, the moves and every position's root visits (the search's
own judgement of each move). ``fit`` reads such records and fits the gammas of the
pattern model of ``descent.search_cy.games.hex_patterns`` by minorization-maximization
(Coulom 2007, "Computing Elo ratings of move patterns in the game of Go"), with each
position's visit distribution as its soft target and one virtual win and one virtual
loss against a gamma-1 opponent per gamma as the prior; then the route gammas (each
cell's two-distance route code, hex_patterns.pyx) by MM over the pattern and local
gammas held fixed, as the search applies them: on top of the prior a node starts with.
A round of expert iteration is::

    descent patterns selfplay records.jsonl --games 400 --sims 10000 --seed 21 -j 2
    descent patterns fit records.jsonl prior.npz

The shipped ``descent/search_cy/games/hex_prior.npz`` is, bit for bit, the fit of the
records in ``data/patterns/hex11-rave-selfplay.jsonl.xz`` (578 games of 11x11 at 10,000
simulations a move, played in three rounds: without a prior, then with the fits of the
rounds before; docs/results/hex.md, the pattern prior)::

    descent patterns fit data/patterns/hex11-rave-selfplay.jsonl.xz \
        descent/search_cy/games/hex_prior.npz
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from descent.train.labels import selfplay_move

MIN_VISITS = 1000       # positions whose search stopped sooner (proofs) are not targets


@dataclass
class Dataset:
    """Candidate moves of many positions: position index, pattern key, local code and
    target share of each candidate (the targets of a position sum to 1), and its route
    code (hex_patterns.pyx; all 0 where none was read)."""

    pos: np.ndarray
    key: np.ndarray
    local: np.ndarray
    target: np.ndarray
    positions: int
    route: np.ndarray | None = None

    def routes(self) -> np.ndarray:
        return np.zeros(len(self.key), np.int64) if self.route is None else self.route


def selfplay_games(games: int, sims: int, seed: int, size: int) -> Iterator[dict[str, Any]]:
    """Records of ``rave`` self-play games: a random first stone, moves sampled in
    proportion to visits squared up to OPENING_PLIES, then the search's choice."""
    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.games.registry import make_game
    from descent.search_cy.search.api import SearchParams, make_search
    from descent.search_cy.search.stopper import Stopper

    rnd = random.Random(seed)
    game = make_game(f"hex(size={size})")
    for index in range(games):
        state = game.new_initial_state()
        search = make_search("rave", heuristic_for(state),
                             SearchParams(seed=seed * 100003 + index, hash_mb=128))
        first = rnd.randrange(size * size)
        state.apply_action(first)
        moves: list[int] = [first]
        visits: list[list[list[int]] | None] = [None]
        while not state.is_terminal():
            result = search.run(state, Stopper(iterations=sims))
            seen = [[c.action, c.visits] for c in result.children if c.visits > 0]
            action = selfplay_move(result, len(moves), rnd)
            visits.append(seen)
            state.apply_action(action)
            moves.append(action)
        yield {"size": size, "moves": moves, "visits": visits}


def _play_one(job: tuple[int, int, int, int]) -> dict[str, Any]:
    games, sims, seed, size = job
    return next(selfplay_games(games, sims, seed, size))


def selfplay(out: Path, games: int, sims: int, seed: int, size: int, jobs: int = 1) -> None:
    """Appends ``games`` records to ``out``, each written as soon as it ends; with
    ``jobs`` > 1 the games are played in that many processes (game i has seed
    ``seed * 1000 + i`` either way, so the records do not depend on ``jobs``)."""
    append_games(out, _play_one, [(1, sims, seed * 1000 + i, size) for i in range(games)],
                 jobs)


def append_games(out: Path, play: Callable[[Any], dict[str, Any]], tasks: Sequence[Any],
                 jobs: int = 1, chunksize: int = 1) -> None:
    """Appends ``play(task)`` of every task to the JSONL file ``out``, each line written
    when its game ends; ``jobs`` > 1 plays them in that many processes (``play`` must be
    a module-level function)."""
    with open(out, "a") as f:
        if jobs <= 1:
            for task in tasks:
                f.write(json.dumps(play(task)) + "\n")
                f.flush()
            return
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            for record in pool.imap_unordered(play, tasks, chunksize=chunksize):
                f.write(json.dumps(record) + "\n")
                f.flush()


def check_selfplay_arguments(args: argparse.Namespace) -> None:
    """ValueError unless the ``selfplay`` arguments make sense."""
    if args.games < 1 or args.sims < 1 or args.jobs < 1 or not 2 <= args.size <= 25:
        raise ValueError("selfplay needs games, sims and jobs >= 1 and a size in 2..25")


def selfplay_arguments(sub: Any, help_text: str, games: int, sims: int,
                       games_help: str) -> argparse.ArgumentParser:
    """The ``selfplay`` subcommand's parser with the arguments every self-play tool
    takes (out, --size, --games, --sims, --seed, -j)."""
    s: argparse.ArgumentParser = sub.add_parser("selfplay", help=help_text)
    s.add_argument("out", type=Path, help="JSONL file to append to")
    s.add_argument("--size", type=int, default=11)
    s.add_argument("--games", type=int, default=games, help=games_help)
    s.add_argument("--sims", type=int, default=sims, help="simulations a move")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("-j", "--jobs", type=int, default=1, help="games played at once")
    return s


def read_jsonl(paths: Iterable[Path]) -> Iterator[tuple[Path, int, Any]]:
    """(path, line number, value) of every non-blank line of JSONL files (``.xz`` ones
    are read compressed); a file that cannot be read or a line that is not JSON is a
    ValueError naming it."""
    import lzma

    for path in paths:
        try:
            with (lzma.open(path, "rt") if str(path).endswith(".xz") else open(path)) as f:
                for number, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        value = json.loads(line)
                    except ValueError as e:
                        raise ValueError(f"{path}:{number}: not JSON ({e})") from None
                    yield path, number, value
        except (OSError, EOFError, lzma.LZMAError) as e:
            raise ValueError(f"{path}: cannot read records ({e})") from None


def read_records(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """The pattern records of JSONL files (``.xz`` ones are read compressed); a file
    that cannot be read or a line that is not a record is a ValueError naming it."""
    for path, number, record in read_jsonl(paths):
        try:
            record["size"], record["moves"], record["visits"]  # noqa: B018
        except (KeyError, TypeError) as e:
            raise ValueError(f"{path}:{number}: not a pattern record ({e})") from None
        yield record


def dataset(records: Iterable[dict[str, Any]], min_visits: int = MIN_VISITS) -> Dataset:
    """The candidates of every position of ``records`` whose root had ``min_visits``."""
    from descent.search_cy.eval.hex_eval import HexEvaluator
    from descent.search_cy.games.hex_patterns import HexPatterns
    from descent.search_cy.games.registry import make_game

    tables: dict[int, HexPatterns] = {}
    routes = HexEvaluator()
    pos, key, local, target, route = [], [], [], [], []
    positions = 0
    for record in records:
        size = int(record["size"])
        if size not in tables:
            tables[size] = HexPatterns(size)
        patterns = tables[size]
        state = make_game(f"hex(size={size})").new_initial_state()
        last = -1
        for move, visits in zip(record["moves"], record["visits"], strict=True):
            if visits and sum(n for _, n in visits) >= min_visits:
                cells, keys, codes = patterns.features(state, last)
                share = np.zeros(size * size + 1)
                for a, n in visits:
                    share[a] = n
                y = share[cells]
                if y.sum() > 0:
                    pos.append(np.full(len(cells), positions, np.int64))
                    key.append(keys)
                    local.append(codes)
                    read = routes.move_codes(state)
                    assert read is not None           # Hex's evaluator always has them
                    route.append(read[cells].astype(np.int64))
                    target.append(y / y.sum())
                    positions += 1
            state.apply_action(move)
            last = move
    if not positions:
        raise ValueError("no position in the records has a search of "
                         f"{min_visits} simulations")
    return Dataset(np.concatenate(pos), np.concatenate(key), np.concatenate(local),
                   np.concatenate(target), positions, np.concatenate(route))


def _relative(gamma: np.ndarray) -> np.ndarray:
    """Gammas relative to code 0's (MM fixes them only up to a common factor), floored at
    1e-6; relative to the largest when code 0 drew no share of any target (its MM
    update is then 0)."""
    ref = gamma[0] if gamma[0] > 0 else gamma.max()
    out: np.ndarray = np.maximum(gamma / ref, 1e-6)
    return out


def fit(data: Dataset, iterations: int = 30) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Gammas by minorization-maximization: (pattern gammas over every key, local
    gammas relative to code 0's (``_relative``), the mean log-likelihood after each
    iteration)."""
    from descent.search_cy.games.hex_patterns import LOCAL_COUNT, PATTERN_COUNT

    used, kidx = np.unique(data.key, return_inverse=True)
    gk = np.ones(len(used))
    gl = np.ones(LOCAL_COUNT)
    wins_k = np.bincount(kidx, data.target, len(used))
    wins_l = np.bincount(data.local, data.target, LOCAL_COUNT)
    history = []
    for _ in range(iterations):
        e = np.bincount(data.pos, gk[kidx] * gl[data.local], data.positions)
        den = np.bincount(kidx, gl[data.local] / e[data.pos], len(used))
        gk = (wins_k + 1.0) / (den + 2.0 / (gk + 1.0))
        e = np.bincount(data.pos, gk[kidx] * gl[data.local], data.positions)
        den = np.bincount(data.local, gk[kidx] / e[data.pos], LOCAL_COUNT)
        gl = np.where(den > 0, wins_l / np.maximum(den, 1e-300), 1.0)
        gl = _relative(gl)
        history.append(log_likelihood(data, gk[kidx] * gl[data.local]))
    gp = np.ones(PATTERN_COUNT, np.float32)
    gp[used] = gk
    return gp, gl.astype(np.float32), history


def fit_route(data: Dataset, gp: np.ndarray, gl: np.ndarray,
              iterations: int = 30) -> tuple[np.ndarray, list[float]]:
    """The route gammas by MM with the pattern and local gammas held where ``fit`` left
    them (the search multiplies them in later, at nodes it has visited a few times):
    (route gammas relative to code 0's (``_relative``), the mean log-likelihood after
    each iteration).
    A code never seen keeps gamma 1."""
    from descent.search_cy.games.hex_patterns import ROUTE_COUNT

    base = gp[data.key].astype(np.float64) * gl[data.local]
    codes = data.routes()
    gr = np.ones(ROUTE_COUNT)
    wins = np.bincount(codes, data.target, ROUTE_COUNT)
    history = []
    for _ in range(iterations):
        e = np.bincount(data.pos, base * gr[codes], data.positions)
        den = np.bincount(codes, base / e[data.pos], ROUTE_COUNT)
        gr = np.where(den > 0, wins / np.maximum(den, 1e-300), 1.0)
        gr = _relative(gr)
        history.append(log_likelihood(data, base * gr[codes]))
    return gr.astype(np.float32), history


def log_likelihood(data: Dataset, gamma: np.ndarray) -> float:
    """Mean over positions of sum(target * log p), p the model's move probabilities."""
    e = np.bincount(data.pos, gamma, data.positions)
    p = gamma / e[data.pos]
    return float(np.sum(data.target * np.log(p)) / data.positions)


def top1(data: Dataset, gamma: np.ndarray) -> float:
    """Share of positions whose most visited move is the model's most probable one."""
    order = np.lexsort((-gamma, data.pos))
    first = np.ones(len(order), bool)
    first[1:] = data.pos[order][1:] != data.pos[order][:-1]
    best_model = order[first]
    order_t = np.lexsort((-data.target, data.pos))
    best_target = order_t[first]
    return float(np.mean(best_model == best_target))


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    selfplay_arguments(sub, "rave self-play records with root visits (JSONL)", 100, 10000,
                       "games to play")
    f = sub.add_parser("fit", help="fit the pattern gammas on records (MM)")
    f.add_argument("records", type=Path, nargs="+", help="JSONL files of selfplay")
    f.add_argument("out", type=Path, help="weights file to write (.npz)")
    f.add_argument("--iterations", type=int, default=30)
    f.add_argument("--min-visits", type=int, default=MIN_VISITS,
                   help="positions whose search had fewer simulations are left out")
    f.add_argument("--holdout", type=float, default=0.1,
                   help="share of games kept out of the fit to measure it")


def run(args: argparse.Namespace) -> int:
    if args.action == "selfplay":
        check_selfplay_arguments(args)
        selfplay(args.out, args.games, args.sims, args.seed, args.size, args.jobs)
        return 0
    from descent.search_cy.games.hex_patterns import save_weights

    records = list(read_records(args.records))
    cut = len(records) - int(round(len(records) * args.holdout))
    train = dataset(records[:cut], args.min_visits)
    gp, gl, history = fit(train, args.iterations)
    gr, route_history = fit_route(train, gp, gl, args.iterations)
    save_weights(args.out, gp, gl, gr)
    print(f"{len(records[:cut])} games, {train.positions} positions, "
          f"{int(np.sum(gp != 1.0))} patterns; local gammas {np.round(gl, 3).tolist()}")
    print(f"train: log-likelihood {history[0]:.4f} -> {history[-1]:.4f}, "
          f"with the route factor {route_history[-1]:.4f}")
    if cut < len(records):
        test = dataset(records[cut:], args.min_visits)
        uniform = np.ones(len(test.key))
        model = gp[test.key].astype(np.float64) * gl[test.local]
        routed = model * gr[test.routes()]
        print(f"held out ({len(records) - cut} games, {test.positions} positions): "
              f"log-likelihood {log_likelihood(test, uniform):.4f} uniform, "
              f"{log_likelihood(test, model):.4f} fitted, {log_likelihood(test, routed):.4f} "
              f"with the route factor; top-1 {top1(test, uniform):.3f} uniform, "
              f"{top1(test, model):.3f} fitted, {top1(test, routed):.3f} with the route factor")
    sys.stdout.flush()
    return 0
