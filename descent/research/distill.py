"""``descent distill``: a Hex value network taught by the ``rave`` search.

The Descent run on two CPU cores gets a few dozen 11x11 games an hour, far too few for a
network that knows more than the C heuristics. ``rave`` (MCTS with RAVE, the pattern prior,
inferior cells and H-search) already does: its value of a position after a thousand
simulations is a far better estimate than the two-distance heuristic. Distillation turns
that search time into a value network once, so that every later evaluation costs one
network call (the teacher the issue names as a warm start; the AlphaGo value network was
trained the same way, on a search's positions)::

    descent distill label data/patterns/hex11-rave-selfplay.jsonl.xz labels.jsonl --sims 1000 -j 2
    descent distill fit labels.jsonl hex11-distilled.dnet --preset fast --steps 20000

``label`` takes the positions of recorded games (``descent patterns selfplay`` records or
``descent arena`` records of Hex games), and with probability ``--branch`` also the position
after a uniformly random move from each (the searches value the children of bad moves too,
and on-record positions alone never show them), and writes each with ``rave``'s value after
``--sims`` simulations (the most visited root child's mean, player 0's view, exact when
proven): one JSON line a position, appended, so a stopped run resumes where it stopped.
Game ``i`` is labelled with seed ``seed * 1000 + i`` whatever ``-j``.

``selfplay`` plays ``rave`` against itself at ``--sims`` simulations a move and labels every
position it searches with that search's value (and the same ``--branch`` positions).

``fit`` trains a fresh network of a preset on the labels (every symmetry of each position,
the value's sign turned where a symmetry swaps the colours), holds out the games of the
highest indices (in every file alike), and writes a model file whose value convention is
the plain gain (tanh in [-1, 1]); ``--skip-proven`` fits the undecided positions only.

The labels kept in ``data/distill/`` (docs/results/networks.md, distillation) are, bit for bit::

    descent distill label data/patterns/hex11-rave-selfplay.jsonl.xz \
        data/patterns/hex11-rave-selfplay-round4.jsonl.xz records-2000.jsonl --sims 2000 -j 2
    descent distill selfplay selfplay-2000.jsonl --games 931 --sims 2000 --seed 22 -j 2

and more ``selfplay`` games (another ``--seed``) grow them.
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
import numpy.typing as npt

from descent.research.patterns import read_jsonl
from descent.search_cy.games.state import GameState


@dataclass(frozen=True)
class Game:
    """A recorded Hex game: its board size and its moves as actions (cell indices)."""

    size: int
    moves: tuple[int, ...]


def read_games(paths: Iterable[Path]) -> Iterator[Game]:
    """The Hex games of pattern records (``size`` and ``moves`` as actions) and of arena
    records (``game`` a Hex spec without the swap, ``moves`` as cell names); other arena
    games are skipped, a line that is neither kind is a ValueError naming it."""
    from descent.search_cy.games.registry import make_game

    for path, number, record in read_jsonl(paths):
        try:
            moves = record["moves"]
            if "size" in record:
                yield Game(int(record["size"]), tuple(int(a) for a in moves))
                continue
            spec = str(record["game"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path}:{number}: not a game record ({e})") from None
        if not spec.startswith("hex") or "swap=true" in spec:
            continue
        game = make_game(spec)
        state = game.new_initial_state()
        try:
            actions = []
            for move in moves:
                action = state.string_to_action(str(move))
                state.apply_action(action)
                actions.append(action)
        except ValueError as e:
            raise ValueError(f"{path}:{number}: {e}") from None
        yield Game(int(game.params["size"]), tuple(actions))


def positions(game: Game, every: int, min_ply: int, branch: float,
              rng: random.Random) -> list[tuple[int, ...]]:
    """The move sequences of the positions of ``game`` to label: every ``every``-th ply
    from ``min_ply`` on (never the final, decided position), each followed with
    probability ``branch`` by the same position after one uniformly random move."""
    from descent.search_cy.games.registry import make_game

    out: list[tuple[int, ...]] = []
    state = make_game(f"hex(size={game.size})").new_initial_state()
    for ply, action in enumerate(game.moves):
        if ply >= min_ply and (ply - min_ply) % every == 0 and not state.is_terminal():
            prefix = game.moves[:ply]
            out.append(prefix)
            if branch > 0.0 and rng.random() < branch:
                legal = state.legal_actions()
                extra = legal[rng.randrange(len(legal))]
                state.apply_action(extra)
                if not state.is_terminal():
                    out.append(prefix + (extra,))
                state.undo()
        state.apply_action(action)
    return out


def walk(state: GameState, at: Sequence[int], moves: Sequence[int]) -> tuple[int, ...]:
    """Takes ``state`` (after the moves ``at``) to the position after ``moves``: back to
    their common part, then forward (positions of one game come in order, so each step is
    a move or two). Returns ``moves`` as the new ``at``."""
    common = 0
    while common < min(len(at), len(moves)) and at[common] == moves[common]:
        common += 1
    for _ in range(len(at) - common):
        state.undo()
    for action in moves[common:]:
        state.apply_action(int(action))
    return tuple(int(a) for a in moves)


def label_game(task: tuple[int, Game, int, int, int, float, int]) -> list[dict[str, Any]]:
    """The labelled positions of one game (a module-level function for the pool)."""
    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.games.registry import make_game
    from descent.search_cy.search.api import SearchParams, make_search
    from descent.search_cy.search.stopper import Stopper

    index, game, sims, every, min_ply, branch, seed = task
    rng = random.Random(seed)
    spec = f"hex(size={game.size})"
    state = make_game(spec).new_initial_state()
    search = make_search("rave", heuristic_for(state), SearchParams(seed=seed, hash_mb=64))
    rows = []
    on_record = set(game.moves[:k] for k in range(len(game.moves) + 1))
    at: tuple[int, ...] = ()              # the moves on ``state`` now
    for prefix in positions(game, every, min_ply, branch, rng):
        at = walk(state, at, prefix)
        result = search.run(state, Stopper(iterations=sims))
        rows.append({"game": index, "size": game.size, "moves": list(prefix),
                     "value": round(float(result.value), 5), "sims": sims,
                     "proven": bool(result.resolved), "branch": prefix not in on_record})
    return rows


def selfplay_game(task: tuple[int, int, int, int, float, int]) -> list[dict[str, Any]]:
    """The labelled positions of one ``rave`` self-play game (a module-level function for
    the pool): a random first stone, then the moves of ``labels.selfplay_move`` (visits
    squared in the opening, then the search's choice); every position searched is labelled
    with that search's value, and with probability ``branch`` also the position after a
    uniformly random move (valued by a search of its own)."""
    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.games.registry import make_game
    from descent.search_cy.search.api import SearchParams, make_search
    from descent.search_cy.search.stopper import Stopper
    from descent.train.labels import selfplay_move

    index, size, sims, min_ply, branch, seed = task
    rng = random.Random(seed)
    state = make_game(f"hex(size={size})").new_initial_state()
    search = make_search("rave", heuristic_for(state), SearchParams(seed=seed, hash_mb=64))
    side = make_search("rave", heuristic_for(state), SearchParams(seed=seed + 1, hash_mb=64))
    moves = [rng.randrange(size * size)]
    state.apply_action(moves[0])
    rows: list[dict[str, Any]] = []

    def row(prefix: list[int], value: float, proven: bool, branch: bool) -> dict[str, Any]:
        return {"game": index, "size": size, "moves": list(prefix), "value": round(value, 5),
                "sims": sims, "proven": proven, "branch": branch}

    while not state.is_terminal():
        result = search.run(state, Stopper(iterations=sims))
        if len(moves) >= min_ply:
            rows.append(row(moves, float(result.value), bool(result.resolved), False))
            if branch > 0.0 and rng.random() < branch:
                legal = state.legal_actions()
                extra = legal[rng.randrange(len(legal))]
                state.apply_action(extra)
                if not state.is_terminal():
                    other = side.run(state, Stopper(iterations=sims))
                    rows.append(row(moves + [extra], float(other.value), bool(other.resolved),
                                    True))
                state.undo()
        action = selfplay_move(result, len(moves), rng)
        state.apply_action(action)
        moves.append(action)
    return rows


def selfplay(out: Path, games: int, sims: int, *, size: int = 11, min_ply: int = 1,
             branch: float = 0.5, seed: int = 1, jobs: int = 1) -> int:
    """Appends the labels of ``games`` new ``rave`` self-play games to ``out`` (game ``i``
    with seed ``seed * 1000 + i``; games already in ``out`` are not played again);
    returns the number of positions written. Blocks."""
    if games < 1 or sims < 1 or min_ply < 0 or not 0.0 <= branch <= 1.0 or jobs < 1 \
            or not 2 <= size <= 25:
        raise ValueError("selfplay needs games, sims, jobs >= 1, min_ply >= 0, "
                         "0 <= branch <= 1 and a size in 2..25")
    done = labelled_games(out)
    tasks = [(i, size, sims, min_ply, branch, seed * 1000 + i)
             for i in range(games) if i not in done]
    return _append(out, selfplay_game, tasks, jobs)


def labelled_games(out: Path) -> set[int]:
    """The game indices already in a labels file (none if it does not exist)."""
    if not out.exists():
        return set()
    return {int(row["game"]) for _, _, row in read_jsonl([out])}


def label(records: Sequence[Path], out: Path, sims: int, *, every: int = 1, min_ply: int = 1,
          branch: float = 0.5, seed: int = 1, jobs: int = 1, limit: int = 0) -> int:
    """Appends the labels of the games of ``records`` not yet in ``out``, game by game in
    record order (``limit`` > 0: only the first ``limit`` games); returns the number of
    positions written. Blocks (a position costs ``sims`` simulations)."""
    if sims < 1 or every < 1 or min_ply < 0 or not 0.0 <= branch <= 1.0 or jobs < 1:
        raise ValueError("label needs sims, every, jobs >= 1, min_ply >= 0 and 0 <= branch <= 1")
    games = list(read_games(records))
    if limit > 0:
        games = games[:limit]
    done = labelled_games(out)
    tasks = [(i, g, sims, every, min_ply, branch, seed * 1000 + i)
             for i, g in enumerate(games) if i not in done]
    return _append(out, label_game, tasks, jobs)


def _append(out: Path, work: Callable[[Any], list[dict[str, Any]]], tasks: Sequence[Any],
            jobs: int) -> int:
    """Appends the rows of ``work(task)`` for every task, in task order, each task's rows
    written (and flushed) when it is done; ``jobs`` > 1 in that many processes."""
    written = 0
    with open(out, "a") as f:
        def write(rows: list[dict[str, Any]]) -> None:
            nonlocal written
            f.write("".join(json.dumps(row) + "\n" for row in rows))
            f.flush()
            written += len(rows)

        if jobs <= 1:
            for task in tasks:
                write(work(task))
        else:
            import multiprocessing

            with multiprocessing.get_context("spawn").Pool(jobs) as pool:
                for rows in pool.imap(work, tasks):
                    write(rows)
    return written


@dataclass
class Labels:
    """Labelled positions as network inputs: planes (every symmetry), values (player 0's
    view, the sign turned for the symmetries that swap the colours) and game indices."""

    planes: npt.NDArray[np.float32]
    values: npt.NDArray[np.float32]
    games: npt.NDArray[np.int64]


def read_labels(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The rows of labels files; a row without a size, moves or value is a ValueError."""
    rows = []
    sources = {path: k for k, path in enumerate(paths)}
    for path, number, row in read_jsonl(paths):
        try:
            int(row["size"]), list(row["moves"]), float(row["value"]), int(row["game"])  # noqa: B018
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path}:{number}: not a label ({e})") from None
        row["source"] = sources[path]      # game indices count per file
        rows.append(row)
    if not rows:
        raise ValueError("no labelled positions in " + ", ".join(map(str, paths)))
    if len({int(r["size"]) for r in rows}) > 1:
        raise ValueError("labels of several board sizes: fit one size at a time")
    return rows


def encode(rows: Sequence[dict[str, Any]], symmetries: bool = True) -> Labels:
    """Every row's position under every symmetry of the game (or the identity only)."""
    from descent.search_cy.games.registry import make_game

    game = make_game(f"hex(size={int(rows[0]['size'])})")
    prototype = game.new_initial_state()
    syms = list(range(prototype.num_symmetries)) if symmetries else [0]
    signs = [-1.0 if prototype.symmetry_swaps_colours(s) else 1.0 for s in syms]
    shape = prototype.encoding_shape
    planes = np.zeros((len(rows) * len(syms), *shape), dtype=np.float32)
    values = np.zeros(len(rows) * len(syms), dtype=np.float32)
    games = np.zeros(len(rows) * len(syms), dtype=np.int64)
    k = 0
    state = game.new_initial_state()
    at: tuple[int, ...] = ()
    for row in rows:
        at = walk(state, at, row["moves"])
        for s, sign in zip(syms, signs, strict=True):
            state.encode(planes[k], s)
            values[k] = sign * float(row["value"])
            games[k] = int(row["game"])
            k += 1
    return Labels(planes, values, games)


@dataclass(frozen=True)
class FitReport:
    train_positions: int       # encoded positions (symmetries included)
    holdout_positions: int
    steps: int
    holdout_mse: float         # the network on the held-out positions
    holdout_variance: float    # a constant's error there (the targets' variance)
    holdout_correlation: float
    losses: tuple[float, ...]


def fit(rows: Sequence[dict[str, Any]], out: Path, preset: str = "fast", *,
        steps: int = 20000, batch_size: int = 256, holdout: float = 0.05, seed: int = 1,
        lr: float = 1e-3, weight_decay: float = 1e-4, threads: int = 1,
        skip_proven: bool = False, progress: Any = None) -> FitReport:
    """Trains a fresh ``preset`` network on labelled rows (the newest ``holdout`` share of
    the games kept out) and writes it to ``out``. Blocks (minutes). Deterministic for a
    seed at one thread (``threads`` > 1: PyTorch's intra-op threads). ``skip_proven``
    leaves out the positions their search proved (a search proves those itself: the
    network's capacity goes to the undecided ones)."""
    import torch

    from descent.nets.modelfile import save_model
    from descent.search_cy.games.registry import make_game
    from descent.train.heuristics import reinforcement_for
    from descent.train.network import Learner
    from descent.train.refit import supervised_steps

    if steps < 1 or batch_size < 1 or not 0.0 <= holdout < 1.0:
        raise ValueError("fit needs steps >= 1, batch_size >= 1 and 0 <= holdout < 1")
    if skip_proven:
        rows = [r for r in rows if not r.get("proven")]
        if not rows:
            raise ValueError("every labelled position is proven: nothing to fit")
    spec = f"hex(size={int(rows[0]['size'])})"
    game = make_game(spec)
    def game_of(row: dict[str, Any]) -> tuple[int, int]:
        return int(row["game"]), int(row.get("source", 0))

    # the games of the highest indices are held out, in every file alike
    ids = sorted({game_of(r) for r in rows})
    kept = set(ids[:max(1, int(round(len(ids) * (1.0 - holdout))))]) if holdout else set(ids)
    train = encode([r for r in rows if game_of(r) in kept])
    test_rows = [r for r in rows if game_of(r) not in kept]
    test = encode(test_rows, symmetries=False) if test_rows else None
    torch.manual_seed(seed)
    learner = Learner(game, preset, reinforcement_for(game.new_initial_state(), "gain"),
                      view="player0", seed=seed, lr=lr, weight_decay=weight_decay,
                      device="cpu", threads=threads)
    learner.training_only()
    rng = np.random.default_rng(seed)
    losses = supervised_steps(learner, lambda index: train.planes[index], train.values, steps,
                              batch_size, rng, progress)
    n = len(train.values)
    mse = variance = correlation = float("nan")
    if test is not None:
        mse = learner.loss(test.planes, test.values)
        variance = float(np.var(test.values))
        with torch.inference_mode():
            out_values = np.concatenate([
                learner.cpu_net(torch.from_numpy(test.planes[i:i + 4096])).numpy().ravel()
                for i in range(0, len(test.values), 4096)])
        correlation = float(np.corrcoef(out_values, test.values)[0, 1])
    sims = sorted({int(r.get("sims", 0)) for r in rows})
    note = (f"descent distill fit: {preset} on {len(rows)} positions of {len(ids)} games "
            f"labelled by rave at {'/'.join(map(str, sims))} simulations, {steps} steps of "
            f"{batch_size}, seed {seed}{', unproven positions only' if skip_proven else ''}")
    save_model(learner.export(games=len(kept), seed=seed, note=note), out)
    return FitReport(train_positions=n, holdout_positions=0 if test is None else len(test.values),
                     steps=steps, holdout_mse=mse, holdout_variance=variance,
                     holdout_correlation=correlation, losses=tuple(losses))


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = sub.add_parser("label", help="value positions of recorded Hex games with rave")
    a.add_argument("records", type=Path, nargs="+",
                   help="JSONL game records (descent patterns selfplay or descent arena)")
    a.add_argument("out", type=Path, help="labels file to append to (JSONL)")
    a.add_argument("--sims", type=int, default=1000, help="rave simulations a position")
    a.add_argument("--every", type=int, default=1, help="label every N-th ply")
    a.add_argument("--min-ply", type=int, default=1, help="first ply labelled")
    a.add_argument("--branch", type=float, default=0.5,
                   help="chance of also labelling the position after a random move")
    a.add_argument("--games", type=int, default=0, help="only the first N games (0: all)")
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("-j", "--jobs", type=int, default=1, help="games labelled at once")
    s = sub.add_parser("selfplay", help="rave self-play games, every position labelled by "
                                        "its own search (JSONL)")
    s.add_argument("out", type=Path, help="labels file to append to (JSONL)")
    s.add_argument("--games", type=int, default=100)
    s.add_argument("--size", type=int, default=11)
    s.add_argument("--sims", type=int, default=2000, help="rave simulations a move")
    s.add_argument("--min-ply", type=int, default=1, help="first ply labelled")
    s.add_argument("--branch", type=float, default=0.5,
                   help="chance of also labelling the position after a random move")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("-j", "--jobs", type=int, default=1, help="games played at once")
    f = sub.add_parser("fit", help="train a value network on labels")
    f.add_argument("labels", type=Path, nargs="+", help="labels files (JSONL)")
    f.add_argument("out", type=Path, help="model file to write (.dnet)")
    f.add_argument("--preset", default="fast", help="network preset (descent.nets.arch)")
    f.add_argument("--steps", type=int, default=20000, help="minibatches")
    f.add_argument("--batch-size", type=int, default=256)
    f.add_argument("--holdout", type=float, default=0.05,
                   help="share of the newest games kept out to measure the fit")
    f.add_argument("--lr", type=float, default=1e-3)
    f.add_argument("--weight-decay", type=float, default=1e-4)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--threads", type=int, default=1, help="PyTorch threads")
    f.add_argument("--skip-proven", action="store_true",
                   help="leave out the positions their search proved")


def run(args: argparse.Namespace) -> int:
    if args.action == "selfplay":
        written = selfplay(args.out, args.games, args.sims, size=args.size,
                           min_ply=args.min_ply, branch=args.branch, seed=args.seed,
                           jobs=args.jobs)
        print(f"{written} positions labelled into {args.out}")
        return 0
    if args.action == "label":
        written = label(args.records, args.out, args.sims, every=args.every,
                        min_ply=args.min_ply, branch=args.branch, seed=args.seed,
                        jobs=args.jobs, limit=args.games)
        print(f"{written} positions labelled into {args.out}")
        return 0
    rows = read_labels(args.labels)
    report = fit(rows, args.out, args.preset, steps=args.steps, batch_size=args.batch_size,
                 holdout=args.holdout, seed=args.seed, lr=args.lr,
                 weight_decay=args.weight_decay, threads=args.threads,
                 skip_proven=args.skip_proven)
    print(f"trained on {report.train_positions} encoded positions, {report.steps} steps; "
          f"loss {report.losses[0]:.4f} -> {report.losses[-1]:.4f}")
    if report.holdout_positions:
        print(f"held out: {report.holdout_positions} positions, mse {report.holdout_mse:.4f} "
              f"(a constant: {report.holdout_variance:.4f}), correlation "
              f"{report.holdout_correlation:.3f}")
    print(f"model: {args.out}")
    sys.stdout.flush()
    return 0
