"""Heuristic evaluators: bounds, purity, obvious positions, colour symmetry, strength.

Every random walk is seeded, so the suite is deterministic. The benchmarks are disabled
by default (pyproject addopts) and then run once as plain tests; measure with
``python -m pytest tests/search_cy/eval --benchmark-enable -k bench``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from descent.search_cy.eval.dicechess_eval import DiceChessEvaluator, DiceChessFeatureEvaluator
from descent.search_cy.eval.einstein_eval import EinsteinEvaluator
from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.eval.heuristics import game_name, heuristic_for
from descent.search_cy.eval.hex_eval import HexEvaluator, HexVCEvaluator
from descent.search_cy.games.hex import HexState
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from tests.conftest import random_action

RANGE_SPECS = [
    "hex(size=2,swap=true)",
    "hex(size=3,swap=false)",
    "hex(size=5,swap=true)",
    "hex(size=11,swap=false)",
    "hex(size=25,swap=true)",
    "einstein(setup=random,first=red,merge_dice=false)",
    "einstein(setup=mirror,first=blue,merge_dice=true)",
    "einstein(setup=free,first=red,merge_dice=true)",
    "dicechess(nomove=reroll,castle=king)",
    "dicechess(nomove=pass,castle=king-or-rook)",
    "dicechess(nomove=free,castle=king)",
]


def random_states(spec: str, count: int, seed: int, max_steps: int = 400) -> list[GameState]:
    """Non-terminal states (chance, set-up and move nodes alike) from seeded random walks."""
    rng = random.Random(seed)
    game = make_game(spec)
    states: list[GameState] = []
    while len(states) < count:
        state = game.new_initial_state()
        for _ in range(rng.randrange(max_steps)):
            if state.is_terminal():
                break
            state.apply_action(random_action(state, rng))
        if not state.is_terminal():
            states.append(state)
    return states


def value(evaluator: HeuristicEvaluator, state: GameState) -> float:
    return float(evaluator.evaluate([state])[0])


# ---- the registry of heuristics ----

@pytest.mark.parametrize(("name", "cls"), [
    ("hex", HexVCEvaluator), ("einstein", EinsteinEvaluator),
    ("dicechess", DiceChessEvaluator)])
def test_heuristic_for_maps_names_specs_games_and_states(name: str, cls: type) -> None:
    game = make_game(name)
    for key in (name, f"{name}()", game, game.new_initial_state()):
        evaluator = heuristic_for(key)
        assert type(evaluator) is cls and isinstance(evaluator, HeuristicEvaluator)
        assert evaluator.bounds == (-1.0, 1.0)
    assert game_name(game.new_initial_state()) == name
    assert heuristic_for(name) is not heuristic_for(name)


def test_heuristic_for_unknown_game_names_it() -> None:
    with pytest.raises(ValueError, match="'go'"):
        heuristic_for("go(size=9)")
    with pytest.raises(TypeError):
        heuristic_for(42)  # type: ignore[arg-type]


# ---- bounds and purity over random states ----

@pytest.mark.parametrize("spec", RANGE_SPECS)
def test_values_inside_open_interval_and_state_untouched(spec: str) -> None:
    evaluator = heuristic_for(spec)
    count = 50 if "size=25" in spec else 150
    states = random_states(spec, count, seed=11, max_steps=700 if "size=25" in spec else 400)
    before = [(s.hash, s.snapshot()) for s in states]
    values = evaluator.evaluate(states)
    assert values.dtype == np.float64 and values.shape == (len(states),)
    assert np.all(np.isfinite(values))
    assert np.all(np.abs(values) <= 0.99) and np.all(np.abs(values) < 1.0)
    assert [(s.hash, s.snapshot()) for s in states] == before
    assert all(s.hash == s.recompute_hash() for s in states)
    # one at a time gives the same values as the batch: no state leaks between calls
    assert [value(evaluator, s) for s in states] == pytest.approx(list(values), abs=0.0)
    assert evaluator.positions == 2 * len(states)


@pytest.mark.parametrize("spec", ["hex(size=11)", "einstein", "dicechess"])
def test_terminal_states_are_refused(spec: str) -> None:
    rng = random.Random(5)
    state = make_game(spec).new_initial_state()
    for _ in random_game_steps(state, rng):
        pass
    assert state.is_terminal()
    with pytest.raises(ValueError):
        heuristic_for(spec).evaluate([state])


def random_game_steps(state: GameState, rng: random.Random) -> list[int]:
    actions = []
    while not state.is_terminal():
        actions.append(random_action(state, rng))
        state.apply_action(actions[-1])
    return actions


# ---- Hex ----

NEIGHBOURS = ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0))


def reference_two_distances(state: HexState, player: int) -> tuple[list[int | None], ...]:
    """The two-distance by its definition, relaxed to a fixpoint (no queue, no stamps)."""
    n = state.size
    stone = player + 1
    cells = [state.cell(r, c) for r in range(n) for c in range(n)]

    def nbrs(cell: int) -> list[int]:
        r, c = divmod(cell, n)
        return [(r + dr) * n + c + dc for dr, dc in NEIGHBOURS
                if 0 <= r + dr < n and 0 <= c + dc < n]

    group = [-1] * (n * n)
    groups: list[set[int]] = []
    for cell in range(n * n):
        if cells[cell] == stone and group[cell] < 0:
            members, todo = {cell}, [cell]
            group[cell] = len(groups)
            while todo:
                for w in nbrs(todo.pop()):
                    if cells[w] == stone and group[w] < 0:
                        group[w] = len(groups)
                        members.add(w)
                        todo.append(w)
            groups.append(members)
    libs = [{w for m in g for w in nbrs(m) if cells[w] == 0} for g in groups]
    empty = [cell for cell in range(n * n) if cells[cell] == 0]
    reach = {}
    for v in empty:
        near = {w for w in nbrs(v) if cells[w] == 0}
        for w in nbrs(v):
            if cells[w] == stone:
                near |= libs[group[w]]
        reach[v] = near - {v}

    def on_edge(cell: int, far: bool) -> bool:
        r, c = divmod(cell, n)
        line = r if player == 0 else c
        return line == (n - 1 if far else 0)

    maps = []
    for far in (False, True):
        start = {v for v in empty if on_edge(v, far)}
        for g, members in enumerate(groups):
            if any(on_edge(m, far) for m in members):
                start |= libs[g]
        inf = 10**9
        dist = {v: 1 if v in start else inf for v in empty}
        changed = True
        while changed:
            changed = False
            for v in empty:
                if v in start:
                    continue
                best = sorted(dist[u] for u in reach[v])
                new = best[1] + 1 if len(best) >= 2 and best[1] < inf else inf
                if new != dist[v]:
                    dist[v] = new
                    changed = True
        maps.append([dist[c] if c in dist and dist[c] < inf else None for c in range(n * n)])
    return tuple(maps)


@pytest.mark.parametrize("size", [2, 3, 4, 5, 7])
def test_hex_two_distance_matches_its_definition(size: int) -> None:
    evaluator = HexEvaluator()
    for state in random_states(f"hex(size={size},swap=true)", 40, seed=size,
                               max_steps=size * size):
        assert isinstance(state, HexState)
        for player in (0, 1):
            assert evaluator.two_distances(state, player) == \
                reference_two_distances(state, player)


@pytest.mark.parametrize("size", [3, 5, 7])
def test_hex_route_codes_follow_the_two_distances_by_definition(size: int) -> None:
    # each empty cell: (mover's route through it - mover's shortest, capped at 4; 5 for
    # none) * 6 + the same for the opponent, from the definition's two-distances
    from descent.search_cy.games.hex_patterns import ROUTE_GAP_CAP, ROUTE_NONE

    evaluator = HexVCEvaluator()          # the search's evaluator inherits them
    for state in random_states(f"hex(size={size},swap=true)", 40, seed=size + 100,
                               max_steps=size * size):
        assert isinstance(state, HexState)
        if state.is_terminal():
            continue
        codes = evaluator.move_codes(state)
        assert codes is not None
        gaps = []
        for player in (state.current_player(), 1 - state.current_player()):
            near, far = reference_two_distances(state, player)
            totals = {c: near[c] + far[c] for c in range(size * size)
                      if near[c] is not None and far[c] is not None
                      and state.cell(*divmod(c, size)) == 0}
            least = min(totals.values(), default=0)
            gaps.append({c: min(totals[c] - least, ROUTE_GAP_CAP) if c in totals
                         else ROUTE_NONE for c in range(size * size)})
        for c in range(size * size):
            if state.cell(*divmod(c, size)) == 0:
                assert codes[c] == gaps[0][c] * 6 + gaps[1][c]
    other = make_game("einstein").new_initial_state()
    assert heuristic_for(other).move_codes(other) is None     # the base has none


def test_hex_empty_board_potential_and_tempo() -> None:
    evaluator = HexEvaluator()
    for size in (2, 5, 11, 25):
        state = make_game(f"hex(size={size})").new_initial_state()
        assert isinstance(state, HexState)
        # row r is r + 1 from the top and size - r from the bottom
        assert evaluator.potential(state, 0) == (size + 1, size)
        assert evaluator.potential(state, 1) == (size + 1, size)
        assert 0.0 < value(evaluator, state) < 0.5   # only the first move's tempo


def hex_position(n: int, black: list[int], white: list[int], black_to_move: bool) -> HexState:
    """A Hex state with these stones and side to move, reached by legal moves. Positions
    with White to move and equal counts (or Black to move, one White stone more) exist
    only through the canonical swap, so those play a first stone and swap it."""
    game = make_game(f"hex(size={n},swap=true)")
    moves: list[int] = []
    if len(black) == len(white) + (0 if black_to_move else 1):
        for i in range(len(white)):
            moves += [black[i], white[i]]
        moves += black[len(white):]
    else:
        assert len(white) == len(black) + (1 if black_to_move else 0) and white
        r, c = divmod(white[0], n)
        moves += [c * n + r, n * n]
        for i in range(len(black)):
            moves.append(black[i])
            if i + 1 < len(white):
                moves.append(white[i + 1])
    state = game.new_initial_state()
    for move in moves:
        state.apply_action(move)
    assert isinstance(state, HexState)
    assert (state.current_player() == 0) == black_to_move and not state.is_terminal()
    return state


def stones(state: HexState, colour: int) -> list[int]:
    n = state.size
    return [r * n + c for r in range(n) for c in range(n) if state.cell(r, c) == colour]


def test_hex_transpose_with_colour_exchange_negates_and_rotation_keeps() -> None:
    evaluator = HexEvaluator()
    for n in (3, 6, 11):
        for state in random_states(f"hex(size={n},swap=false)", 30, seed=n, max_steps=n * n):
            assert isinstance(state, HexState)
            black, white = stones(state, 1), stones(state, 2)
            to_move_black = state.current_player() == 0
            if not black and not white:
                continue   # the empty board has no image with White to move
            transpose = [(cell % n) * n + cell // n for cell in range(n * n)]
            v = value(evaluator, state)
            mirrored = hex_position(n, [transpose[w] for w in white],
                                    [transpose[b] for b in black], not to_move_black)
            rotated = hex_position(n, [n * n - 1 - b for b in black],
                                   [n * n - 1 - w for w in white], to_move_black)
            assert value(evaluator, mirrored) == pytest.approx(-v, abs=1e-12)
            assert value(evaluator, rotated) == pytest.approx(v, abs=1e-12)


def test_hex_nearly_complete_chain_favours_its_owner() -> None:
    evaluator = HexEvaluator()
    n = 7

    def transpose(cells: list[int]) -> list[int]:
        return [(cell % n) * n + cell // n for cell in cells]

    # Black holds d1..d6 (column d, rows 1..6), White scatters stones on the left edge
    column = [r * n + 3 for r in range(n - 1)]
    scatter = [r * n for r in range(n - 1)]
    for black_to_move in (True, False):
        black = column if black_to_move else column + [n * n - 1]
        state = hex_position(n, black, scatter, black_to_move)
        assert value(evaluator, state) > 0.5
        # the same shape for White: a row across the board, Black on the top edge
        mirror = hex_position(n, transpose(scatter), transpose(black), not black_to_move)
        assert value(evaluator, mirror) < -0.5


def test_hex_blocked_side_scores_worse_than_free_side() -> None:
    evaluator = HexEvaluator()
    n = 5
    # White's wall across row 3 except one cell: Black needs that cell and more
    wall = hex_position(n, [0, 24, 1, 23], [10, 11, 12, 13], True)
    assert value(evaluator, wall) < 0.0


# ---- EinStein ----

def ewn_cells(text: str) -> tuple[list[str], str, str]:
    board, side, phase = text.split()
    cells: list[str] = []
    for row in board.split("/"):
        for ch in row:
            cells.extend(["."] * int(ch) if ch.isdigit() else [ch])
    return cells, side, phase


def ewn_text(cells: list[str], side: str, phase: str) -> str:
    rows = []
    for r in range(5):
        row, empty = "", 0
        for ch in cells[r * 5:r * 5 + 5]:
            if ch == ".":
                empty += 1
                continue
            row += (str(empty) if empty else "") + ch
            empty = 0
        rows.append(row + (str(empty) if empty else ""))
    return f"{'/'.join(rows)} {side} {phase}"


def ewn(text: str) -> GameState:
    return make_game("einstein").state_from_text(text)


def test_einstein_cube_near_goal_and_more_cubes_scores_better() -> None:
    evaluator = EinsteinEvaluator()
    # Red's cube 1 on d4, one diagonal step from e5; Blue far from a1 with fewer cubes
    red_ahead = ewn("5/1B3/2C1b/3A1/4c r roll")
    assert value(evaluator, red_ahead) > 0.5
    # the same, Blue to roll: still Red's game, but less so
    assert 0.0 < value(evaluator, ewn("5/1B3/2C1b/3A1/4c b roll")) < value(evaluator, red_ahead)
    # Red three cubes against Blue's one, then Red one against Blue's two
    more = ewn("AB3/C4/5/4a/5 r roll")
    fewer = ewn("A4/5/5/3ba/5 r roll")
    assert value(evaluator, more) > value(evaluator, fewer)


def test_einstein_pending_die_counts() -> None:
    evaluator = EinsteinEvaluator()
    # Red to move with a 1: cube 1 on d4 steps onto e5 and wins
    assert value(evaluator, ewn("5/1B3/2C1b/3A1/4c r d1")) == pytest.approx(0.98)
    # with a 2 it must move cube 2 instead: good for Red, but no sure win
    assert 0.0 < value(evaluator, ewn("5/1B3/2C1b/3A1/4c r d2")) < 0.98
    # Blue's cube 3 on e5 may take Red's cube 1 on d4 with a 3, not with a 2 (cube 2 on
    # e3 must move then): the capture is worth something to Blue
    assert value(evaluator, ewn("5/1B3/2C1b/3A1/4c b d3")) < \
        value(evaluator, ewn("5/1B3/2C1b/3A1/4c b d2"))


def test_einstein_setup_nodes_are_neutral() -> None:
    evaluator = EinsteinEvaluator()
    for spec in ("einstein(setup=random)", "einstein(setup=free)", "einstein(setup=mirror)"):
        state = make_game(spec).new_initial_state()
        assert value(evaluator, state) == 0.0


def test_einstein_point_reflection_negates_and_transpose_keeps() -> None:
    evaluator = EinsteinEvaluator()
    for spec in ("einstein(setup=random)", "einstein(setup=random,merge_dice=true)"):
        for state in random_states(spec, 200, seed=3, max_steps=60):
            text = state.to_text()
            cells, side, phase = ewn_cells(text)
            if phase == "setup":
                continue
            other = "b" if side == "r" else "r"
            reflected = ["."] * 25
            transposed = ["."] * 25
            for cell, ch in enumerate(cells):
                r, c = divmod(cell, 5)
                reflected[(4 - r) * 5 + (4 - c)] = ch.swapcase()
                transposed[c * 5 + r] = ch
            v = value(evaluator, state)
            assert value(evaluator, ewn(ewn_text(reflected, other, phase))) == \
                pytest.approx(-v, abs=1e-12)
            assert value(evaluator, ewn(ewn_text(transposed, side, phase))) == \
                pytest.approx(v, abs=1e-12)


# ---- dice chess ----

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def chess(text: str, spec: str = "dicechess") -> GameState:
    return make_game(spec).state_from_text(text)


def flip_fen(text: str) -> str:
    """The colour-flipped position: ranks mirrored, colours and side exchanged."""
    fields = text.split()
    board = "/".join(reversed(fields[0].split("/"))).swapcase()
    side = "b" if fields[1] == "w" else "w"
    rights = "".join(ch for ch in "KQkq" if ch.swapcase() in fields[2]) or "-"
    ep = "-" if fields[3] == "-" else fields[3][0] + str(9 - int(fields[3][1]))
    out = [board, side, rights, ep, fields[4], fields[5]]
    if len(fields) > 6:
        out.append(fields[6].swapcase())
    return " ".join(out)


def test_dicechess_start_is_balanced_and_material_counts() -> None:
    evaluator = DiceChessEvaluator()
    start = value(evaluator, chess(START))
    assert abs(start) < 0.1
    white_up = chess("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    black_up = chess("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1")
    # dice chess is random enough that a queen is a clear edge, not a won game (the tuned
    # scale values it near 0.2)
    assert 0.15 < value(evaluator, white_up) < 0.5
    assert -0.5 < value(evaluator, black_up) < -0.15
    # a pawn up is worth less than a queen up
    pawn_up = chess("rnbqkbnr/ppppppp1/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    assert start < value(evaluator, pawn_up) < value(evaluator, white_up)


def test_dicechess_king_capture_threats() -> None:
    evaluator = DiceChessEvaluator()
    # White's rook on e1 sees Black's king on e8 along the open file
    fen = "4k3/8/8/8/8/8/8/4RK2 w - - 0 1"
    assert value(evaluator, chess(fen + " R")) == pytest.approx(0.98)   # rolled the rook
    at_roll = value(evaluator, chess(fen))
    assert 0.2 < at_roll < 0.98          # a rook roll is one of the rolls that can move
    # with Black to roll instead, the threat waits a turn: worth less to White
    assert value(evaluator, chess("4k3/8/8/8/8/8/8/4RK2 b - - 0 1")) < at_roll
    # the same threat for Black
    assert value(evaluator, chess("4rk2/8/8/8/8/8/8/4K3 b - - 0 1 r")) == pytest.approx(-0.98)


def test_dicechess_hanging_piece_counts_for_the_roller() -> None:
    evaluator = DiceChessEvaluator()
    # Black's queen on d5 is attacked by White's knight on c3 and defended by nothing
    hanging = "4k3/8/8/3q4/8/2N5/8/4K3 w - - 0 1"
    safe = "4k3/8/8/q7/8/2N5/8/4K3 w - - 0 1"
    assert value(evaluator, chess(hanging)) > value(evaluator, chess(safe))
    assert value(evaluator, chess(hanging + " N")) > value(evaluator, chess(hanging))


@pytest.mark.parametrize("spec", ["dicechess(nomove=reroll)", "dicechess(nomove=pass)",
                                  "dicechess(nomove=free)"])
def test_dicechess_colour_flip_negates(spec: str) -> None:
    evaluator = DiceChessEvaluator()
    for state in random_states(spec, 200, seed=9, max_steps=200):
        flipped = chess(flip_fen(state.to_text()), spec)
        assert value(evaluator, flipped) == pytest.approx(-value(evaluator, state), abs=1e-12)


# ---- playing strength: a 1-ply greedy player against a uniform random one ----

def greedy_action(state: GameState, evaluator: HeuristicEvaluator,
                  rng: np.random.Generator) -> int:
    """The move whose child is best for the mover (terminal children by their value)."""
    mover = state.current_player()
    best, choices = -2.0, []
    for action in state.legal_actions():
        state.apply_action(action)
        v = state.terminal_value() if state.is_terminal() else value(evaluator, state)
        state.undo()
        if mover == 1:
            v = -v
        if v > best + 1e-12:
            best, choices = v, [action]
        elif v >= best - 1e-12:
            choices.append(action)
    return choices[int(rng.integers(len(choices)))]


def greedy_wins(spec: str, games: int, seed: int, max_plies: int = 2000) -> int:
    """Games won by the greedy player, which alternates colours (player 0 in even games)."""
    rng = np.random.default_rng(seed)
    evaluator = heuristic_for(spec)
    wins = 0
    for i in range(games):
        greedy = i % 2
        state = make_game(spec).new_initial_state()
        for _ in range(max_plies):
            if state.is_terminal():
                break
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                pick = rng.choice(len(outcomes), p=[p for _, p in outcomes])
                action = outcomes[int(pick)][0]
            elif state.current_player() == greedy:
                action = greedy_action(state, evaluator, rng)
            else:
                legal = state.legal_actions()
                action = legal[int(rng.integers(len(legal)))]
            state.apply_action(action)
        if state.is_terminal():
            wins += (state.terminal_value() > 0) == (greedy == 0) \
                and state.terminal_value() != 0
    return wins


@pytest.mark.parametrize(("spec", "need"), [
    ("hex(size=9)", 38),
    ("einstein", 30),
    ("dicechess", 36),
])
def test_greedy_heuristic_player_beats_random(spec: str, need: int) -> None:
    assert greedy_wins(spec, 40, seed=2024) >= need


# ---- benchmarks (disabled by default: they then run once as plain tests) ----

BENCH: list[tuple[str, Callable[[], HeuristicEvaluator], int]] = [
    ("hex(size=11)", HexEvaluator, 121),
    ("einstein", EinsteinEvaluator, 60),
    ("dicechess", DiceChessEvaluator, 200),
    ("dicechess", DiceChessFeatureEvaluator, 200),
]


@pytest.mark.parametrize(("spec", "factory", "steps"), BENCH)
def test_bench_heuristic(benchmark: Any, spec: str, factory: Callable[[], HeuristicEvaluator],
                         steps: int) -> None:
    benchmark.group = "heuristic evaluators (1000 random states per round)"
    states = random_states(spec, 1000, seed=1, max_steps=steps)
    evaluator = factory()
    values = benchmark(evaluator.evaluate, states)
    assert values.shape == (1000,)
    benchmark.extra_info["states"] = len(states)
