"""The dice-chess study's agents as baselines: depth-2 expectiminimax over material, and
over the study's kind of 37-feature linear evaluation.

- ``material``: the study's material agent. Our expectiminimax (``max_depth=2``, the
  depth counting player plies, chance nodes in between averaged exactly) over a material
  evaluator that reads the network input planes (one plane per colour and piece kind,
  nets.encoding): pawn 1, knight 3, bishop 3, rook 5, queen 9; the king is not counted,
  its capture ends the game and the search values that terminal state as a win. The
  difference is divided by 64, so that every reachable value (promotions included) stays
  inside (-1, 1) and expectations over dice are expectations of material, unchanged by
  any squashing.
- ``study``: the study's strongest agent's method (Expecti-300: the same two plies, the
  leaves valued by a 37-feature linear evaluation whose weights were the mean of 300
  winning chromosomes of a genetic algorithm). The study names its features by group
  only; ``DiceChessFeatureEvaluator`` (the heuristic ``features``) has features in each
  group, and its shipped weights are the mean of the last 300 generations' winners of
  ``descent tune --method genetic`` run with the study's settings (docs/results/papers.md,
  the dice-chess study). ``--player-weights`` and ``--baseline-weights`` set other
  weights (the Expecti-50 and Expecti-150 means of the same run, say), as
  ``name=value,...`` or ``FILE.json:key.key`` (a tune run's result.json, e.g.
  ``ga/result.json:winner_means.50``).

Matches are in process, in pairs with the colours reversed and the same dice
(train.evaluation):

    python -m descent.research.dicechess_baselines --model nets/shipped/dicechess-....dnet
    python -m descent.research.dicechess_baselines --player heuristic --baseline study
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

from descent.search_cy.eval.evaluator import BatchEvaluator, Evaluator
from descent.search_cy.eval.heuristics import heuristic_for, parse_weights
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams
from descent.train.evaluation import SearchPlayer, paired_matches

# pawn, knight, bishop, rook, queen: planes 0-4 (White) and 6-10 (Black) of the encoding
PIECE_VALUES = np.array([1.0, 3.0, 3.0, 5.0, 9.0], dtype=np.float32)
WHITE_PLANES = slice(0, 5)
BLACK_PLANES = slice(6, 11)
SCALE = 64.0
BOUND = 0.99
GAME = "dicechess"


def material_values(batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """White's material minus Black's, / 64, clipped to [-0.99, 0.99], for encoded
    positions ``(n, planes, 8, 8)`` (symmetry 0: player 0 is White)."""
    counts = batch.sum(axis=(2, 3))
    diff = counts[:, WHITE_PLANES] @ PIECE_VALUES - counts[:, BLACK_PLANES] @ PIECE_VALUES
    out: npt.NDArray[np.float32] = np.clip(diff / SCALE, -BOUND, BOUND).astype(np.float32)
    return out


def material_evaluator(prototype: GameState) -> BatchEvaluator:
    """A BatchEvaluator valuing dice chess positions by material alone."""
    if prototype.game.name != GAME:
        raise ValueError(f"the material baseline is for dice chess, not {prototype.game.name}")
    return BatchEvaluator(material_values, prototype,
                          capacity=max(prototype.max_actions, prototype.max_chance_outcomes),
                          lo=-BOUND, hi=BOUND)


def material_player(prototype: GameState, depth: int = 2) -> SearchPlayer:
    """The material player: expectiminimax to ``depth`` player plies over material. Its
    ties go to the first move in the search's ordering (deterministic)."""
    params = SearchParams(max_depth=depth, keep_tree=False, hash_mb=16)
    return SearchPlayer(f"material-depth{depth}", material_evaluator(prototype),
                        "expectiminimax", params, nodes=1 << 62)


def load_weights(text: str) -> dict[str, float]:
    """Weights as ``name=value,...``, or ``FILE.json:key.key``: the mapping at that key
    path of a JSON file (``ga/result.json:winner_means.50``); {} for ""."""
    path, sep, keys = text.partition(":")
    if not (sep and path.endswith(".json")):
        return parse_weights(text)
    node = json.loads(Path(path).read_text(encoding="utf-8"))
    for key in keys.split(".") if keys else []:
        if not isinstance(node, dict) or key not in node:
            raise ValueError(f"{path}: no key {key!r} on the path {keys!r}")
        node = node[key]
    if not isinstance(node, dict):
        raise ValueError(f"{path}:{keys} is not a mapping of weights")
    return {str(k): float(v) for k, v in node.items()}


def study_player(prototype: GameState, depth: int = 2,
                 weights: dict[str, float] | None = None) -> SearchPlayer:
    """The study-style agent: expectiminimax to ``depth`` player plies over the
    37-feature linear evaluation, with its shipped (genetic-algorithm mean) weights or
    ``weights`` over them."""
    if prototype.game.name != GAME:
        raise ValueError(f"the study agent is for dice chess, not {prototype.game.name}")
    params = SearchParams(max_depth=depth, keep_tree=False, hash_mb=16)
    return SearchPlayer(f"study-depth{depth}",
                        heuristic_for(prototype, "features", weights or {}),
                        "expectiminimax", params, nodes=1 << 62)


BASELINES = {"material": material_player, "study": study_player}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="", help="the network (a .dnet model file)")
    parser.add_argument("--player", choices=["model", "heuristic"], default="model",
                        help="the player measured: the network, or the C heuristic")
    parser.add_argument("--heuristic", default=None,
                        help="with --player heuristic: its name (default: the game's)")
    parser.add_argument("--player-weights", default="",
                        help="with --player heuristic: weights over its defaults, "
                             "name=value,... or FILE.json:key.key")
    parser.add_argument("--baseline-weights", default="",
                        help="with --baseline study: weights over the shipped ones, "
                             "name=value,... or FILE.json:key.key")
    parser.add_argument("--search", default="expectiminimax",
                        help="the measured player's search (expectiminimax, ubfms, ...)")
    parser.add_argument("--tc", type=float, default=0.1, help="its seconds a move")
    parser.add_argument("--player-depth", type=int, default=0,
                        help="search the measured player to this depth (player plies) "
                             "instead of by --tc")
    parser.add_argument("--baseline", choices=sorted(BASELINES), default="material",
                        help="the opponent: the material agent or the study-style one")
    parser.add_argument("--depth", type=int, default=2, help="the baseline's depth")
    parser.add_argument("--games", type=int, default=40, help="games (an even number)")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--backend", default="onnxruntime")
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        parser.error("--games must be an even number >= 2")
    game = make_game(GAME)
    prototype = game.new_initial_state()
    evaluator: Evaluator
    if args.player == "model":
        if args.player_weights:
            parser.error("--player-weights is for --player heuristic")
        if not args.model:
            parser.error("--model is required with --player model")
        from descent.nets.evaluator import network_evaluator

        evaluator = network_evaluator(args.model, prototype, backend=args.backend)
        name = "network"
    else:
        evaluator = heuristic_for(prototype, args.heuristic,
                                  load_weights(args.player_weights))
        name = "heuristic" if args.heuristic is None else f"heuristic {args.heuristic}"
    if args.player_depth > 0:
        # a fixed depth: as the baselines search, so equal depths compare evaluations
        params = SearchParams(max_depth=args.player_depth, keep_tree=False, hash_mb=16)
        player = SearchPlayer(name, evaluator, args.search, params, nodes=1 << 62)
        budget = f"depth {args.player_depth}"
    else:
        player = SearchPlayer(name, evaluator, args.search, SearchParams(hash_mb=64),
                              seconds=args.tc)
        budget = f"{args.tc:g} s a move"
    if args.baseline_weights:
        if args.baseline != "study":
            parser.error("--baseline-weights is for --baseline study")
        baseline = study_player(prototype, args.depth, load_weights(args.baseline_weights))
    else:
        baseline = BASELINES[args.baseline](prototype, args.depth)

    from tqdm import tqdm

    bar = tqdm(total=args.games, unit="game", file=sys.stderr, leave=True)

    def progress(done: int) -> None:
        bar.update(done - bar.n)

    try:
        stats = paired_matches(game, player, baseline, args.games, args.seed,
                               on_game=progress)
    finally:
        bar.close()
    lo, hi = stats.ci95
    print(f"{name} ({args.search}, {budget}) vs {baseline.name}: "
          f"{stats.win_rate:.3f} [{lo:.3f}, {hi:.3f}] over {stats.games} games "
          f"(+{stats.wins} ={stats.draws} -{stats.losses})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
