"""Benchmark: our expectiminimax against OpenSpiel's Python expectiminimax on EinStein.

    from descent.search_cy.search.bench_emm import bench_expectiminimax
    rows = bench_expectiminimax(10.0)          # one dict per position

Positions come from seeded random playouts of ``einstein(setup=random,first=blue)``: with
Blue moving first our board is OpenSpiel's ``einstein_wurfelt_nicht`` cell for cell (our
Red = its Black = player 0; its die outcomes are 0..5; its move id is
((row * 5 + col) * 6 + dir) * 2 + capture), so each position is replayed on OpenSpiel
from the same set-up ranks, dice and moves.

Both searches run to the same fixed depth (player plies; chance nodes do not count, and a
state at depth 0 is valued even when it is a chance state: OpenSpiel's convention too).
OpenSpiel's ``open_spiel.python.algorithms.minimax.expectiminimax`` has no pruning and a
Python value function (0 here); its nodes are counted in a second, untimed run through a
counting wrapper of the recursive function. Ours runs with the game's heuristic leaf
(``search_cy.eval.heuristics.heuristic_for``, ZeroEvaluator if that is missing), Star2
and the transposition table (cleared before every timed run), and once with star=0 and
ZeroEvaluator without the table: the same tree as OpenSpiel's apart from alpha-beta,
whose value must then equal OpenSpiel's (``agree``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from descent.search_cy.eval.evaluator import Evaluator, ZeroEvaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.sampling import sample_outcome
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams
from descent.search_cy.search.expectimax import Expectiminimax
from descent.search_cy.search.result import SearchResult
from descent.search_cy.search.stopper import Stopper

SPEC = "einstein(setup=random,first=blue,merge_dice=false)"
_OS_DIRS = {(1, 1): 0, (1, 0): 1, (0, 1): 2, (-1, 0): 3, (-1, -1): 4, (0, -1): 5}


def _cell(name: str) -> tuple[int, int]:
    return int(name[1]) - 1, ord(name[0]) - ord("a")


def _os_move(state: Any, text: str) -> int:
    """OpenSpiel's id of our move text (from-cell + to-cell) in our current state."""
    (r1, c1), (r2, c2) = _cell(text[:2]), _cell(text[2:])
    capture = state.piece_at(r2 * 5 + c2) is not None
    return ((r1 * 5 + c1) * 6 + _OS_DIRS[(r2 - r1, c2 - c1)]) * 2 + int(capture)


def einstein_positions(count: int = 8, seed: int = 2024) -> list[tuple[GameState, list[int]]]:
    """``count`` player-node positions from seeded random playouts, each with the
    OpenSpiel action sequence that reaches it from OpenSpiel's initial state."""
    rng = random.Random(seed)
    game = make_game(SPEC)
    out: list[tuple[GameState, list[int]]] = []
    while len(out) < count:
        state = game.new_initial_state()
        os_actions: list[int] = []
        target = rng.randint(4, 16)
        moves = 0
        while not state.is_terminal():
            if state.is_chance_node():
                action = sample_outcome(state, rng)
                state.apply_action(action)
                # set-up ranks are shared; dice 1..6 are its outcomes 0..5
                os_actions.append(action if len(os_actions) < 2 else action - 1)
                continue
            if moves == target:
                out.append((state, os_actions))
                break
            action = rng.choice(state.legal_actions())
            os_actions.append(_os_move(state, state.action_to_string(action)))
            state.apply_action(action)
            moves += 1
    return out


def _timed_runs(search: Expectiminimax, state: GameState, depth: int,
                min_seconds: float) -> tuple[SearchResult, int, float]:
    """Runs the search to ``depth`` until min_seconds of search time; returns the last
    result, total nodes and total seconds (table cleared before each run, untimed)."""
    nodes = 0
    spent = 0.0
    while True:
        search.clear()
        start = time.perf_counter()
        result = search.run(state, Stopper(iterations=depth))
        spent += time.perf_counter() - start
        nodes += result.nodes
        if spent >= min_seconds:
            return result, nodes, spent


def _leaf_evaluator(state: GameState) -> tuple[Evaluator, str]:
    try:
        from descent.search_cy.eval.heuristics import heuristic_for
        return heuristic_for(state), "heuristic"
    except (ImportError, ValueError):
        return ZeroEvaluator(), "zero"


def bench_expectiminimax(seconds: float, depth: int = 4,
                         positions: int = 8) -> list[dict[str, Any]]:
    """Nodes per second of our expectiminimax and OpenSpiel's on EinStein positions at a
    fixed depth; stops taking new positions once ``seconds`` are spent (always one).

    Each row: position text, depth, our nodes / seconds / nodes per second (heuristic
    leaf, Star2, table; ``nodes``/``seconds`` summed over repeated runs, ``run_nodes``/
    ``run_seconds`` per run), our plain run's nodes / seconds (star=0, no table, zero
    leaf), OpenSpiel's nodes / seconds / nodes per second (value function 0),
    ``speedup`` (our nodes per second over OpenSpiel's), ``time_ratio`` (OpenSpiel's
    seconds over our plain run's: same depth, same leaves), ``run_time_ratio``
    (OpenSpiel's seconds over our heuristic run's) and ``agree`` (same root value).
    """
    import pyspiel
    from open_spiel.python.algorithms import minimax

    os_game = pyspiel.load_game("einstein_wurfelt_nicht")
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    share = max(seconds / max(positions, 1) / 4.0, 1e-3)
    for state, os_actions in einstein_positions(positions):
        if rows and time.perf_counter() - started >= seconds:
            break
        evaluator, leaf = _leaf_evaluator(state)
        ours = Expectiminimax(evaluator, SearchParams(star=2, max_depth=depth, hash_mb=16))
        result, nodes, spent = _timed_runs(ours, state, depth, share)
        runs = max(1, round(nodes / max(result.nodes, 1)))
        plain = Expectiminimax(ZeroEvaluator(), SearchParams(star=0, max_depth=depth),
                               use_tt=False)
        plain_result, plain_nodes, plain_spent = _timed_runs(plain, state, depth, share)
        plain_runs = max(1, round(plain_nodes / max(plain_result.nodes, 1)))

        os_state = os_game.new_initial_state()
        for action in os_actions:
            os_state.apply_action(action)
        player = os_state.current_player()
        assert player == state.current_player()

        def zero(_: Any) -> float:
            return 0.0

        start = time.perf_counter()
        os_value, _ = minimax.expectiminimax(os_state, depth, zero, player)
        os_spent = time.perf_counter() - start
        os_nodes = _count_openspiel_nodes(minimax, os_state, depth, zero, player)
        our_value = plain_result.value
        rows.append({
            "position": state.to_text(),
            "depth": depth,
            "leaf": leaf,
            "nodes": nodes,
            "seconds": spent,
            "nps": nodes / spent if spent > 0 else 0.0,
            "run_nodes": result.nodes,
            "run_seconds": spent / runs,
            "plain_nodes": plain_result.nodes,
            "plain_seconds": plain_spent / plain_runs,
            "plain_nps": plain_nodes / plain_spent if plain_spent > 0 else 0.0,
            "os_nodes": os_nodes,
            "os_seconds": os_spent,
            "os_nps": os_nodes / os_spent if os_spent > 0 else 0.0,
            "speedup": (nodes / spent) / (os_nodes / os_spent)
            if spent > 0 and os_nodes and os_spent > 0 else 0.0,
            "time_ratio": os_spent / (plain_spent / plain_runs) if plain_spent > 0 else 0.0,
            "run_time_ratio": os_spent / (spent / runs) if spent > 0 else 0.0,
            "agree": abs(os_value - (our_value if player == 0 else -our_value)) < 1e-9,
        })
    return rows


def _count_openspiel_nodes(module: Any, state: Any, depth: int,
                           value_function: Callable[[Any], float], player: int) -> int:
    """States OpenSpiel's recursion visits (its root included), counted through a
    wrapper of the module-level function that its recursive calls look up."""
    original = module.expectiminimax
    count = 0

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal count
        count += 1
        return original(*args, **kwargs)

    module.expectiminimax = counting
    try:
        original(state, depth, value_function, player)
    finally:
        module.expectiminimax = original
    return count


def main() -> None:  # pragma: no cover - manual benchmark
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--positions", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = bench_expectiminimax(args.seconds, args.depth, args.positions)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for row in rows:
        print(f"{row['position']:<28} d={row['depth']} ours {row['nps']:>12,.0f} n/s "
              f"({row['nodes']:,} nodes)  plain {row['plain_nps']:>12,.0f} n/s  "
              f"openspiel {row['os_nps']:>10,.0f} n/s ({row['os_nodes']:,} nodes, "
              f"{row['os_seconds']:.3f} s)  x{row['speedup']:,.0f}  "
              f"time: ours {row['run_seconds'] * 1e3:.2f} ms ({row['run_nodes']:,} nodes), "
              f"plain {row['plain_seconds'] * 1e3:.2f} ms ({row['plain_nodes']:,} nodes), "
              f"openspiel/plain x{row['time_ratio']:,.0f}  agree={row['agree']}")
    total = sum(r["nodes"] for r in rows) / sum(r["seconds"] for r in rows)
    os_total = sum(r["os_nodes"] for r in rows) / sum(r["os_seconds"] for r in rows)
    print(f"overall: ours {total:,.0f} nodes/s, openspiel {os_total:,.0f} nodes/s, "
          f"x{total / os_total:,.0f}")


if __name__ == "__main__":  # pragma: no cover
    main()
