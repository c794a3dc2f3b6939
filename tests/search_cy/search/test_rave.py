"""MCTS with RAVE and Hex playouts (search/rave.pyx; games/hex_playout.pyx): its solver
against brute force, its playout policy and scoring against plain rules written here,
seeds, threads, limits."""
from __future__ import annotations

import random
import threading
from collections.abc import Callable

import pytest

from descent.search_cy.eval.evaluator import ZeroEvaluator
from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.hex_playout import (
    bridge_reply,
    pattern_draws,
    pattern_weights_followed,
    playout_value,
)
from descent.search_cy.games.hex_swap import SwapMap
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.rave import DEFAULT_PRUNE_RATIO, RaveSearch, playout
from descent.search_cy.search.stopper import Stopper
from tests.search_cy.search.test_bestfirst import wins


def rave(**kw: int) -> RaveSearch:
    kw.setdefault("hash_mb", 16)
    search = make_search("rave", ZeroEvaluator(), SearchParams(**kw)).impl
    assert isinstance(search, RaveSearch)
    return search


def position(spec: str, moves: list[str]) -> GameState:
    state = make_game(spec).new_initial_state()
    for m in moves:
        state.apply_move(m)
    return state


def random_position(spec: str, plies: int, rnd: random.Random) -> GameState | None:
    """A position after ``plies`` random moves, or None when the game ended first."""
    state = make_game(spec).new_initial_state()
    for _ in range(plies):
        state.apply_action(rnd.choice(state.legal_actions()))
        if state.is_terminal():
            return None
    return state


def black_connected(cells: list[int], n: int) -> bool:
    """Plain flood fill from the top row over black cells."""
    todo = [c for c in range(n) if cells[c] == 1]
    seen = set(todo)
    while todo:
        x = todo.pop()
        r, c = divmod(x, n)
        if r == n - 1:
            return True
        for dr, dc in ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)):
            rr, cc = r + dr, c + dc
            y = rr * n + cc
            if 0 <= rr < n and 0 <= cc < n and cells[y] == 1 and y not in seen:
                seen.add(y)
                todo.append(y)
    return False


# the default prunes at DEFAULT_PRUNE_RATIO; at 0.5 (far above any useful ratio) skipped
# children come back only once the rest are lost, which makes 4x4 take minutes
@pytest.mark.parametrize(("size", "prune_ratio"), [(2, 0.0), (3, 0.0), (4, 0.0),
                                                   (2, DEFAULT_PRUNE_RATIO),
                                                   (3, DEFAULT_PRUNE_RATIO),
                                                   (4, DEFAULT_PRUNE_RATIO),
                                                   (2, 0.5), (3, 0.5)])
def test_the_solver_proves_the_empty_board_and_plays_a_winning_move(
        size: int, prune_ratio: float) -> None:
    state = make_game(f"hex(size={size})").new_initial_state()
    # the proof needs every node of the proof tree: 4x4 takes about 30 MiB
    search = rave(seed=3, hash_mb=128)
    search.prune_ratio = prune_ratio
    result = search.run(state, Stopper(time=60))
    assert result.resolved and result.stop_reason == "resolved"
    assert result.value == 1.0
    state.apply_action(result.action)
    assert not wins(state, {})                 # the reply position is lost for White


@pytest.mark.parametrize(("prune_ratio", "inferior", "fill_in", "vc_at", "vcm", "rave_prior",
                          "plain", "value"),
                         [(0.5, True, False, 4, 3.0, 0, 0, "route"),
                          (0.0, True, False, 0, 0.0, 0, 0, 0),
                          (0.5, True, False, 0, 0.0, 0, 0, 0),
                          (0.0, False, False, 0, 0.0, 0, 0, 0),
                          (0.0, True, True, 0, 0.0, 0, 0, 0),
                          (0.0, True, False, 4, 0.0, 0, 0, 0),
                          (0.0, False, False, 1, 0.0, 0, 0, 0),
                          (0.5, True, False, 4, 3.0, 0, 0, 0),
                          (0.0, True, "node", 0, 0.0, 0, 0, 0),
                          (0.0, True, False, 4, 3.0, 8, 3, 0),
                          (0.0, True, False, 4, 0.0, 0, 0, 50),
                          (0.0, True, False, 4, 0.0, 0, 0, "actions"),
                          (0.0, True, False, 4, 0.0, 0, 0, "minimax"),
                          (0.0, True, False, 4, 0.0, 0, 0, "mix"),
                          (0.0, True, False, 4, 0.0, 0, 0, "faded mix")])
def test_proven_children_agree_with_brute_force_on_random_positions(
        prune_ratio: float, inferior: bool, fill_in: bool | str, vc_at: int, vcm: float,
        rave_prior: int, plain: int, value: int | str) -> None:
    # prior pruning (at a ratio far above any useful one), inferior cells, playouts from
    # the fill-in (each playout's own, or "node": the last expanded node's), H-search's
    # knowledge (at nearly every node), its VC maintenance, virtual AMAF visits,
    # selections that ignore RAVE, a value network's virtual visits (the two-distance
    # heuristic standing in for one, with many visits) or its leaf values as the whole
    # of every score ("mix"; "faded mix": fading with the child's visits), a policy
    # network's action values
    # (a random one's, at every node: as virtual visits, or as the whole of every score
    # by implicit minimax) and the prior's route factor (at every node,
    # redoing the pruning) must never make a proof wrong
    rnd = random.Random(11)
    checked = proven = 0
    for _ in range(40):
        state = random_position("hex(size=4)", rnd.randrange(0, 9), rnd)
        if state is None:
            continue
        mover = state.current_player()
        search = rave(seed=rnd.randrange(1000))
        if value == "route":
            search = make_search("rave", heuristic_for(state),
                                 SearchParams(seed=rnd.randrange(1000), hash_mb=16)).impl
            assert isinstance(search, RaveSearch)
            search.route_at = 1
        search.prune_ratio = prune_ratio
        search.inferior = inferior
        search.playout_fill_in = fill_in is True
        search.playout_node_fill_in = fill_in == "node"
        search.vc_at = vc_at
        search.vcm_bonus = vcm
        search.rave_prior = rave_prior
        search.plain_every = plain
        if isinstance(value, int) and value:
            search.value = heuristic_for(state, "two_distance")
            search.value_at = 3
            search.value_visits = value
        if value in ("mix", "faded mix"):
            search.value = heuristic_for(state, "two_distance")
            search.value_visits = 0
            search.value_mix = 1.0
            search.value_fade = 10.0 if value == "faded mix" else 0.0
        if value in ("actions", "minimax"):
            from tests.search_cy.eval.test_hex_policy import random_policy

            search.policy = random_policy(4, seed=rnd.randrange(1000), values=True)
            search.policy_at = 1
            search.action_visits = 50 if value == "actions" else 0
            search.minimax_weight = 1.0 if value == "minimax" else 0.0
        result = search.run(state, Stopper(iterations=20000))
        memo: dict[int, float] = {}
        if result.resolved:
            assert ((result.value > 0) == (mover == 0)) == wins(state, memo)
        for child in result.children:
            if not child.resolved:
                continue
            state.apply_action(child.action)
            mover_wins = state.is_terminal() or not wins(state, memo)
            state.undo()
            assert child.outcome == (1 if mover_wins == (mover == 0) else -1)
            assert child.value == float(child.outcome)
            proven += 1
        checked += 1
    # a proven root stops the search, so most children stay unproven
    assert checked >= 30 and proven >= 50


def test_every_child_starts_with_the_virtual_amaf_visits() -> None:
    state = make_game("hex(size=5)").new_initial_state()
    for prior in (0, 8):
        search = rave(seed=4)
        search.rave_prior = prior
        # the root is expanded, then one playout fills the board: each child's AMAF
        # count is the virtual visits plus at most that one, at even odds before it
        search.run(state, Stopper(iterations=1))
        children = search._subtree()[2]
        assert len(children) == 25
        assert {c[3] for c in children} <= {prior, prior + 1}
        assert any(c[3] == prior + 1 for c in children)
        assert all(c[4] - prior // 2 in (0, c[3] - prior) for c in children)
    with pytest.raises(ValueError, match="even"):
        RaveSearch(ZeroEvaluator(), SearchParams(), rave_prior=3)


def test_a_value_network_gives_each_child_virtual_visits_at_its_odds() -> None:
    state = position("hex(size=5)", ["c3", "b4"])
    value = heuristic_for(state, "two_distance")        # a C evaluator standing in for one
    mover = state.current_player()
    for visits in (0, 1000):
        search = rave(seed=5)
        search.pattern_weights = None
        search.value = value
        search.value_at = 4
        search.value_visits = visits
        # the root is expanded at once and valued at its 4th visit: simulations 5 and 6
        # run with the network's visits in place
        search.run(state, Stopper(iterations=6))
        children = [c for c in search._subtree()[2] if c[5] == 0]
        if not visits:
            assert sum(c[1] for c in children) <= 6
            continue
        assert len(children) >= 10
        for move, n, w, *_ in children:
            state.apply_action(move)
            v = float(value.evaluate([state])[0])          # player 0's view
            state.undo()
            odds = 0.5 * (1.0 + v) if mover == 0 else 0.5 * (1.0 - v)
            assert visits <= n <= visits + 6
            assert abs(w - round(odds * visits)) <= n - visits
    with pytest.raises(ValueError, match="value_at"):
        RaveSearch(ZeroEvaluator(), SearchParams(), value_at=0)


def test_a_batch_network_is_read_a_node_at_a_time_and_its_failure_is_raised() -> None:
    import numpy as np

    from descent.search_cy.eval.evaluator import BatchEvaluator

    state = position("hex(size=5)", ["c3", "b4"])
    mover = state.current_player()
    calls = []

    def half(planes: np.ndarray) -> np.ndarray:
        calls.append(len(planes))
        return np.full(len(planes), 0.5)          # every child: +0.5 for Black

    search = rave(seed=5)
    search.pattern_weights = None
    search.value = BatchEvaluator(half, state)
    search.value_at = 4
    search.value_visits = 1000
    search.run(state, Stopper(iterations=6))
    children = [c for c in search._subtree()[2] if c[5] == 0]
    assert calls and calls[0] == len(children)      # the root's children in one call
    odds = 0.75 if mover == 0 else 0.25
    for _, n, w, *_ in children:
        assert 1000 <= n <= 1006 and abs(w - 1000 * odds) <= n - 1000

    def broken(planes: np.ndarray) -> np.ndarray:
        raise RuntimeError("no such backend")

    search.value = BatchEvaluator(broken, state)
    with pytest.raises(ValueError, match="value network failed: no such backend"):
        search.run(state, Stopper(iterations=50))
    search.value = None                              # the search itself is still whole
    assert search.run(state, Stopper(iterations=50)).action in state.legal_actions()


@pytest.mark.parametrize("read", ["visits", "leaves", "faded leaves"])
def test_the_value_network_is_deterministic_by_seed_and_moves_the_search(read: str) -> None:
    # as the children's virtual visits, or at the walks' ends (value_mix), its share
    # there kept or fading with the child's visits (value_fade)
    state = position("hex(size=7)", ["d4", "c5"])
    runs = []
    for amount in (0, 16, 16):
        search = rave(seed=9)
        search.value = heuristic_for(state, "two_distance")
        search.value_visits = amount if read == "visits" else 0
        search.value_mix = amount / 32 if read != "visits" else 0.0
        search.value_fade = 50.0 if read == "faded leaves" else 0.0
        search.run(state, Stopper(iterations=3000))
        runs.append([(c[0], c[1]) for c in search._subtree()[2]])
    assert runs[1] == runs[2] and runs[0] != runs[1]
    if read == "faded leaves":
        # the fade is read: the same share kept at every child searches otherwise
        kept = rave(seed=9)
        kept.value = heuristic_for(state, "two_distance")
        kept.value_visits, kept.value_mix = 0, 0.5
        kept.run(state, Stopper(iterations=3000))
        assert [(c[0], c[1]) for c in kept._subtree()[2]] != runs[1]


def test_each_child_sums_the_leaf_values_of_the_simulations_through_it() -> None:
    # value_mix: every simulation's walk ends at a node the network values (a proven
    # one: the sure result), each child on the path adds that value for its mover; so a
    # child's sum is its node's own value for each walk that ended there plus, for each
    # child below, its visits less its sum (the other player's view)
    state = position("hex(size=7)", ["d4", "c5"])
    value = heuristic_for(state, "two_distance")
    for mix in (0.0, 0.5):
        search = rave(seed=3)
        search.value = value
        search.value_visits = 0                    # no virtual visits: each visit is a walk
        search.value_mix = mix
        search.run(state, Stopper(iterations=3000))
        checked = 0
        stack = [(search._subtree(), state.clone())]
        while stack:
            node, at = stack.pop()
            for move, n, _w, *_, sub, _prior, _av, vw in node[2]:
                if not mix:
                    assert vw == 0.0                # nothing read
                    continue
                assert 0.0 <= vw <= n + 1e-3
                if sub is None or sub[3] != 0 or n < 3:
                    continue
                after = at.clone()
                after.apply_action(move)
                below = sum(c[1] for c in sub[2])
                own = 0.5 * (1.0 + float(value.evaluate([after])[0]))   # Black's chance
                own = own if at.current_player() == 0 else 1.0 - own
                expected = (n - below) * own + sum(c[1] - c[9] for c in sub[2])
                assert vw == pytest.approx(expected, rel=1e-4, abs=1e-3)
                checked += 1
                stack.append((sub, after))
        assert checked >= 50 or not mix
    with pytest.raises(ValueError, match="value_mix"):
        RaveSearch(ZeroEvaluator(), SearchParams(), value_mix=1.5)
    with pytest.raises(ValueError, match="value_fade"):
        RaveSearch(ZeroEvaluator(), SearchParams(), value_fade=-1.0)


def test_selections_without_rave_are_deterministic_by_seed_and_change_the_search() -> None:
    state = position("hex(size=7)", ["d4", "c5"])
    runs = []
    for plain in (0, 4, 4):
        search = rave(seed=9)
        search.plain_every = plain
        search.run(state, Stopper(iterations=3000))
        runs.append([(c[0], c[1]) for c in search._subtree()[2]])
    assert runs[1] == runs[2]                  # the draws come from the tree's seeded rng
    assert runs[0] != runs[1]
    with pytest.raises(ValueError, match="plain_every"):
        RaveSearch(ZeroEvaluator(), SearchParams(), plain_every=-1)


def test_vc_maintenance_raises_the_answers_to_a_probe() -> None:
    from descent.search_cy.games.hex_vc import HexVC

    rnd = random.Random(21)
    checked = 0
    for _ in range(60):
        state = random_position("hex(size=7)", rnd.randrange(4, 14), rnd)
        if state is None:
            continue
        answers: dict[int, set[int]] = {}
        for probe, answer, _, _ in HexVC(7).maintenance(state):
            answers.setdefault(probe, set()).add(answer)
        for bonus in (0.0, 3.0):
            search = rave(seed=3)
            search.pattern_weights = None         # uniform priors: the bonus stands out
            search.vc_at = 300
            search.vcm_bonus = bonus
            # the root's maintenance runs at its 300th visit, with its children grown
            search.run(state, Stopper(iterations=301))
            for child in search._subtree()[2]:
                below = child[6]
                if child[0] not in answers or below is None or not below[2]:
                    continue
                kids = [k for k in below[2] if k[5] == 0]        # searched, not skipped
                raised = [k[7] for k in kids if k[0] in answers[child[0]]]
                others = [k[7] for k in kids if k[0] not in answers[child[0]]]
                if not raised or not others:
                    continue
                if bonus:
                    assert min(raised) > max(others)
                    checked += 1
                else:
                    assert min(raised) == max(others)          # no maintenance: uniform
    assert checked >= 5


def test_a_winning_move_is_played_at_once() -> None:
    # Black (to move) connects with c3, and any other move lets White connect there
    state = position("hex(size=5)", ["c1", "a3", "c2", "b3", "c4", "d3", "c5", "e3"])
    result = rave(seed=1).run(state, Stopper(time=10))
    assert state.action_to_string(result.action) == "c3" and result.resolved


def test_same_seed_and_budget_give_the_same_search() -> None:
    state = position("hex(size=9)", ["e5"])
    a = rave(seed=5).run(state, Stopper(iterations=2000))
    b = rave(seed=5).run(state, Stopper(iterations=2000))
    assert a.action == b.action and a.children == b.children and a.nodes == b.nodes
    c = rave(seed=6).run(state, Stopper(iterations=2000))
    assert [x.visits for x in c.children] != [x.visits for x in a.children]
    assert a.iterations == 2000 and sum(x.visits for x in a.children) == 2000


def test_the_tree_is_kept_across_moves() -> None:
    state = position("hex(size=9)", ["e5"])
    search = rave(seed=4)
    first = search.run(state, Stopper(iterations=3000))
    state.apply_action(first.action)
    state.apply_action(first.pv[1])
    kept = search.run(state, Stopper(iterations=3000))
    assert kept.iterations == 3000 and sum(c.visits for c in kept.children) > 3000
    fresh = rave(seed=4, keep_tree=False)
    fresh.run(position("hex(size=9)", ["e5"]), Stopper(iterations=3000))
    again = fresh.run(state, Stopper(iterations=3000))
    assert sum(c.visits for c in again.children) == 3000
    # another game (not a continuation of the last root) starts a fresh tree
    other = search.run(position("hex(size=9)", ["a1"]), Stopper(iterations=500))
    assert sum(c.visits for c in other.children) == 500


@pytest.mark.parametrize("hash_mb, plies", [(1, 1), (16, 2)])
def test_a_kept_tree_is_exactly_the_subtree_it_was_cut_from(hash_mb: int, plies: int) -> None:
    """The tree is moved down in place (garbage nodes and blocks between the kept ones
    when 1 MiB fills): every node, child and statistic below the new root survives."""
    state = position("hex(size=9)", ["e5"])
    search = rave(seed=4, hash_mb=hash_mb)
    first = search.run(state, Stopper(iterations=6000))
    path = first.pv[:plies]
    if hash_mb == 1:
        # a full table leaves nodes unexpanded: the most visited child that has children
        grown = [c for c in search._subtree()[2] if c[6] is not None and c[6][2]]
        path = [max(grown, key=lambda c: c[1])[0]]
    before = search._subtree(path)
    assert len(before[2]) > 10 and before[1] > 50
    for move in path:
        state.apply_action(move)
    search._trees_for(state, False)
    assert search._subtree() == before
    # and it searches on from there
    kept = search.run(state, Stopper(iterations=500))
    assert sum(c.visits for c in kept.children) == sum(c[1] for c in before[2]) + 500


def test_proofs_stay_exact_along_a_game_with_the_kept_tree() -> None:
    state = make_game("hex(size=4)").new_initial_state()
    search = rave(seed=9, hash_mb=64)
    memo: dict[int, float] = {}
    while not state.is_terminal():
        mover = state.current_player()
        result = search.run(state, Stopper(iterations=4000))
        for child in result.children:
            if child.resolved:
                state.apply_action(child.action)
                mover_wins = state.is_terminal() or not wins(state, memo)
                state.undo()
                assert child.outcome == (1 if mover_wins == (mover == 0) else -1)
        if result.resolved:
            assert ((result.value > 0) == (mover == 0)) == wins(state, memo)
        state.apply_action(result.action)


def test_two_threads_sum_their_trees() -> None:
    state = position("hex(size=7)", ["d4"])
    before = {t.ident for t in threading.enumerate()}
    result = rave(seed=2, threads=2).run(state, Stopper(time=0.3))
    assert sum(c.visits for c in result.children) == result.iterations
    assert result.action in state.legal_actions()
    # the search's threads are gone (the test runner may have threads of its own)
    assert [t for t in threading.enumerate() if t.ident not in before and t.is_alive()] == []


def test_the_swap_is_searched_at_the_second_ply() -> None:
    state = position("hex(size=5,swap=true)", ["c3"])     # the centre: swapping wins
    search = rave(seed=1)
    search.swap_map = None                 # the search, not the map, decides
    result = search.run(state, Stopper(iterations=20000))
    swap = state.string_to_action("swap")
    assert swap in [c.action for c in result.children]
    assert result.action == swap
    fresh = position("hex(size=5,swap=true)", ["c3", "swap"])
    assert fresh.current_player() == 0


def five_map(black_wins: dict[int, int]) -> SwapMap:
    """A 5x5 swap map with 10 games a first stone: Black's wins as given, else 5."""
    cells = range(13)
    return SwapMap({"5": {"games": {str(c): 10 for c in cells},
                          "black_wins": {str(c): black_wins.get(c, 5) for c in cells}}})


def test_the_swap_map_decides_the_swap_and_the_opening() -> None:
    search = rave(seed=1)
    search.swap_map = five_map({0: 2, 7: 9})
    swap = 25
    # a first stone the map swaps: the swap at once, valued from White's side
    state = position("hex(size=5,swap=true)", ["c2"])      # cell 7
    result = search.run(state, Stopper(iterations=20000))
    assert (result.action, result.stop_reason, result.iterations) == (swap, "book", 0)
    assert result.value == pytest.approx(-0.8)
    # its half turn (cell 17) is the same stone
    assert search.run(position("hex(size=5,swap=true)", ["c4"]),
                      Stopper(iterations=10)).action == swap
    # a stone the map keeps (even centre included): searched, and the swap is no child
    for first in ("a1", "c3"):
        state = position("hex(size=5,swap=true)", [first])
        result = search.run(state, Stopper(iterations=2000))
        assert result.stop_reason == "iterations"
        assert swap not in [c.action for c in result.children]
        assert result.action != swap and result.action in state.legal_actions()
    # the opening under the swap rule: the stone nearest one half (ties: smaller cell)
    search.swap_map = five_map({c: 9 for c in range(13)} | {3: 4, 11: 6})
    empty = make_game("hex(size=5,swap=true)").new_initial_state()
    result = search.run(empty, Stopper(iterations=100))
    assert (result.action, result.stop_reason) == (3, "book")
    # without the swap rule, or without a map of the size, the search plays
    assert rave(seed=1).run(make_game("hex(size=5)").new_initial_state(),
                            Stopper(iterations=100)).stop_reason == "iterations"
    search.swap_map = SwapMap({})
    assert search.run(empty, Stopper(iterations=100)).stop_reason == "iterations"


def test_limits_stop_and_errors() -> None:
    state = make_game("hex(size=11)").new_initial_state()
    stopper = Stopper()
    timer = threading.Timer(0.2, stopper.stop)
    timer.start()
    result = rave().run(state, stopper)
    timer.join()
    assert result.stop_reason == "stopped" and result.iterations > 0
    result = rave().run(state, Stopper(nodes=5000))
    assert result.stop_reason == "nodes"
    with pytest.raises(ValueError, match="Hex only"):
        rave().run(make_game("einstein").new_initial_state(), Stopper(iterations=1))
    done = position("hex(size=2)", ["a1", "b1", "a2"])
    assert done.is_terminal()
    with pytest.raises(ValueError, match="terminal"):
        rave().run(done, Stopper(iterations=1))
    with pytest.raises(ValueError):
        RaveSearch(ZeroEvaluator(), SearchParams(), rave_k=0.0)


def test_a_full_table_stops_growing_and_keeps_simulating() -> None:
    state = make_game("hex(size=11)").new_initial_state()
    search = make_search("rave", ZeroEvaluator(), SearchParams(hash_mb=1)).impl
    result = search.run(state, Stopper(iterations=20000))
    assert result.iterations == 20000 and result.action in state.legal_actions()


# -- the playout policy ----------------------------------------------------------------


def test_an_intruded_bridge_is_restored() -> None:
    # Black c3 and d4 (bridge, carrier d3 and c4): White intrudes on d3, Black answers c4
    state = position("hex(size=6)", ["c3", "a6", "d4", "d3"])
    d3, c4 = state.string_to_action("d3"), state.string_to_action("c4")
    assert bridge_reply(state, d3, 0) == c4
    assert bridge_reply(state, d3, 1) == -1          # not White's bridge


def test_an_intruded_edge_template_is_restored() -> None:
    # Black d2 reaches the top through c1 or d1; White takes d1, Black answers e1... by
    # the carrier: d2's top neighbours are d1 and e1
    state = position("hex(size=6)", ["d2", "d1"])
    d1, e1 = state.string_to_action("d1"), state.string_to_action("e1")
    assert bridge_reply(state, d1, 0) == e1


def test_no_reply_without_a_bridge() -> None:
    state = position("hex(size=6)", ["c3", "d3"])
    assert bridge_reply(state, state.string_to_action("d3"), 0) == -1


@pytest.mark.parametrize("fill_in", [False, True])
def test_playouts_fill_the_board_and_score_it_by_the_rules(fill_in: bool) -> None:
    rnd = random.Random(3)
    for seed in range(60):
        spec = f"hex(size={rnd.choice([3, 5, 8, 11])})"
        state = random_position(spec, rnd.randrange(0, 30 if fill_in else 6), rnd)
        if state is None:
            continue
        n = state.size
        cells, black = playout(state, seed, fill_in=fill_in)
        before = [state.cell(r, c) for r in range(n) for c in range(n)]
        assert all(b == 0 or a == b for a, b in zip(cells, before, strict=True))
        assert black == black_connected(cells, n)
        if 0 not in cells and not fill_in:
            blacks, whites = cells.count(1), cells.count(2)
            assert blacks - whites in (0, 1)           # alternate moves, Black first


@pytest.mark.parametrize("fill", ["fill_in", "node_fill_in"])
def test_playouts_from_the_fill_in_keep_captured_cells_with_their_owner(fill: str) -> None:
    # Black c2 on 5x5: c1 and d1 under it are Black's whatever White does (the node
    # fill-in is the root's, found when it was expanded)
    state = position("hex(size=5)", ["c2", "a5"])
    plain = [playout(state, seed)[0] for seed in range(40)]
    filled = [playout(state, seed, **{fill: True})[0] for seed in range(40)]
    assert all(cells[2] == cells[3] == 1 for cells in filled)
    assert any(cells[2] == 2 or cells[3] == 2 for cells in plain)


@pytest.mark.parametrize("fill_in", [False, True])
def test_the_playout_value_of_a_position_is_its_share_of_black_wins(fill_in: bool) -> None:
    from descent.search_cy.games.hex_patterns import shipped_weights

    # Black b2 holds a 3x3 board by two edge templates: every intrusion is answered
    held = position("hex(size=3)", ["b2"])
    assert playout_value(held, 200, 1, fill_in=fill_in) == 1.0
    assert playout_value(held, 200, 1, shipped_weights(), 4.0, fill_in=fill_in) == 1.0
    # the empty 5x5 board: Black places the odd stone, so it wins more than half
    empty = position("hex(size=5)", [])
    value = playout_value(empty, 4000, 2, fill_in=fill_in)
    assert 0.52 < value < 0.9
    assert playout_value(empty, 4000, 2, fill_in=fill_in) == value      # by seed
    # Black's wasted corner stone and White's centre: Black is worse off than on the empty board
    assert playout_value(position("hex(size=5)", ["a1", "c3"]), 4000, 2, fill_in=fill_in) \
        < value


def test_the_pattern_prior_steers_the_search_and_prunes() -> None:
    from descent.search_cy.games.hex_patterns import HexPatterns, unit_weights

    state = position("hex(size=7)", ["d4"])
    target = state.string_to_action("b6")
    key = HexPatterns(7).key(state, target)
    gp, gl, _ = unit_weights()
    gp[key] = 1000.0
    favoured = [c for c in state.legal_actions() if HexPatterns(7).key(state, c) == key]
    search = rave(seed=1)
    search.vc_at = 0              # H-search's mustplay (d4 holds a 7x7 board) prunes both
    search.pattern_weights = (gp, gl)
    search.progressive_bias = 10.0
    result = search.run(state, Stopper(iterations=60))
    top = max(result.children, key=lambda c: c.visits)
    assert top.action in favoured
    search = rave(seed=1)
    search.pattern_weights = (gp, gl)
    search.prune_ratio = 0.5
    search.vc_at = 0              # H-search's mustplay would bring skipped moves back
    result = search.run(state, Stopper(iterations=2000))
    assert {c.action for c in result.children if c.visits} <= set(favoured)
    search.pattern_weights = None                        # no prior: every move is searched
    search.prune_ratio = 0.5
    search.clear()
    result = search.run(state, Stopper(iterations=2000))
    assert sum(1 for c in result.children if c.visits) > len(favoured)


def routed(state: GameState, seed: int, route_at: int, gr: object, **kw: object) -> RaveSearch:
    """A search with the real Hex evaluator (whose move codes the route factor reads),
    the shipped pattern and local gammas and route gammas ``gr``, no knowledge, no
    H-search and no inferior cells, so that every cell is a child with its prior."""
    from descent.search_cy.games.hex_patterns import shipped_weights

    search = make_search("rave", heuristic_for(state),
                         SearchParams(seed=seed, hash_mb=16)).impl
    assert isinstance(search, RaveSearch)
    gp, gl, _ = shipped_weights()
    search.pattern_weights = (gp, gl, gr)
    search.route_at = route_at
    search.know_at = 0
    search.vc_at = 0
    search.inferior = False
    for name, value in kw.items():
        setattr(search, name, value)
    return search


def assert_reweighed_below_root(search: RaveSearch, state: GameState, at: int,
                                factor: Callable[[GameState], dict[int, float]]) -> None:
    """The root's children that have a node: with ``at`` visits or more, their children's
    prior is the patterns' times ``factor`` of their position, renormalised; with fewer,
    the patterns' alone. Both kinds are seen."""
    from descent.search_cy.games.hex_patterns import HexPatterns

    size = int(state.game.params["size"])
    seen = {True: 0, False: 0}
    for child in search._subtree()[2]:
        if child[6] is None:
            continue
        after = state.clone()
        after.apply_action(child[0])
        mine = {c[0]: c[7] for c in search._subtree((child[0],))[2]}
        if not mine:
            continue                           # not expanded yet
        base = HexPatterns(size, search.pattern_weights).prior(after, child[0])
        if child[6][1] >= at:
            f = factor(after)
            w = {c: base[c] * f[c] for c in base}
            t = sum(w.values())
            assert mine == pytest.approx({c: x / t for c, x in w.items()}, rel=1e-4)
        else:
            assert mine == pytest.approx(base, rel=1e-5)
        seen[child[6][1] >= at] += 1
    assert seen[True] and seen[False]


def test_the_route_factor_reweighs_the_prior_of_nodes_visited_enough() -> None:
    import numpy as np

    from descent.search_cy.games.hex_patterns import ROUTE_COUNT, HexPatterns

    state = position("hex(size=7)", ["b3", "f5"])
    codes = heuristic_for(state).move_codes(state)
    gr = np.geomspace(1.0, 0.01, ROUTE_COUNT).astype(np.float32)

    def priors(search: RaveSearch, path: tuple[int, ...] = ()) -> dict[int, float]:
        return {c[0]: c[7] for c in search._subtree(path)[2]}

    search = routed(state, 2, 0, gr, prune_ratio=0.0)
    search.run(state, Stopper(iterations=1))
    plain = priors(search)
    last = state.history()[-1]
    assert plain == pytest.approx(HexPatterns(7, search.pattern_weights).prior(state, last))
    search = routed(state, 2, 30, gr, prune_ratio=0.0)
    search.run(state, Stopper(iterations=3000))
    root = priors(search)                      # the root gets it before its first simulation
    weighted = {c: plain[c] * gr[codes[c]] for c in plain}
    total = sum(weighted.values())
    assert root == pytest.approx({c: w / total for c, w in weighted.items()}, rel=1e-4)
    # a node below the root: with route_at visits it has it, with fewer it has not
    assert_reweighed_below_root(search, state, 30, lambda after: {
        c: float(gr[code]) for c, code in enumerate(heuristic_for(after).move_codes(after))})
    # without the evaluator's codes (a search's zero evaluator) the prior stays the patterns'
    zero = rave(seed=2)
    zero.pattern_weights, zero.route_at = search.pattern_weights, 1
    zero.vc_at, zero.inferior, zero.prune_ratio = 0, False, 0.0
    zero.run(state, Stopper(iterations=50))
    assert priors(zero) == pytest.approx(plain)


def test_the_route_factor_redoes_the_prior_pruning() -> None:
    import numpy as np

    from descent.search_cy.games.hex_patterns import ROUTE_COUNT

    state = position("hex(size=7)", ["b3", "f5"])
    codes = heuristic_for(state).move_codes(state)
    # gammas that favour the cells off the routes, which the patterns skip
    gr = np.geomspace(1e-3, 1.0, ROUTE_COUNT).astype(np.float32)
    search = routed(state, 3, 1, gr, prune_ratio=0.3)
    search.run(state, Stopper(iterations=1))
    children = search._subtree()[2]
    best = max(c[7] for c in children)
    for _move, visits, *_, pruned, _sub, prior, _av, _vw in children:
        if visits == 0:
            assert (pruned == 2) == (prior < 0.3 * best)   # SKIPPED_BY_PRIOR
    # cells the route gammas favour come back, those they disfavour are skipped
    plain = routed(state, 3, 0, gr, prune_ratio=0.3)
    plain.run(state, Stopper(iterations=1))
    skipped_plain = {c[0] for c in plain._subtree()[2] if c[5] == 2}
    skipped = {c[0] for c in children if c[5] == 2}
    back, gone = skipped_plain - skipped, skipped - skipped_plain
    assert back and gone
    assert min(codes[m] for m in back) > max(codes[m] for m in gone)


def test_the_route_factor_is_deterministic_and_moves_the_search() -> None:
    from descent.search_cy.games.hex_patterns import shipped_weights

    state = position("hex(size=9)", ["e5", "c7"])
    gr = shipped_weights()[2]
    a = routed(state, 5, 20, gr).run(state, Stopper(iterations=3000))
    b = routed(state, 5, 20, gr).run(state, Stopper(iterations=3000))
    assert a.children == b.children
    off = routed(state, 5, 0, gr).run(state, Stopper(iterations=3000))
    assert off.children != a.children


def test_pattern_playout_weights_follow_the_board_stone_by_stone() -> None:
    from descent.search_cy.games.hex_patterns import shipped_weights

    rnd = random.Random(8)
    for _ in range(12):
        spec = f"hex(size={rnd.choice([3, 5, 11])})"
        state = random_position(spec, rnd.randrange(0, 8), rnd)
        if state is None:
            continue
        empty = [a for a in state.legal_actions() if a < state.size ** 2]
        moves = rnd.sample(empty, rnd.randrange(len(empty) + 1))
        followed, fresh = pattern_weights_followed(state, moves, shipped_weights(), 4.0)
        assert followed[0] == fresh[0] and followed[1] == fresh[1]
        assert followed[2] == pytest.approx(fresh[2]) and followed[3] == pytest.approx(fresh[3])
        assert max(fresh[0] + fresh[1]) <= 4.0              # the cap
        assert all(fresh[0][c] == fresh[1][c] == 0.0 for c in moves)  # never drawn


def test_pattern_playouts_draw_cells_in_proportion_to_their_gammas() -> None:
    from descent.search_cy.games.hex_patterns import HexPatterns, unit_weights

    state = position("hex(size=3)", [])
    table = HexPatterns(3)
    centre = table.key(state, 4)
    assert all(table.key(state, c) != centre for c in range(9) if c != 4)
    gp, gl, _ = unit_weights()
    gp = gp.copy()
    gp[centre] = 8.0                                       # the centre: 8 of 16 in all
    counts = pattern_draws(state, (gp, gl), 100.0, 16000, 1)
    assert sum(counts) == 16000
    assert counts[4] / 16000 == pytest.approx(0.5, abs=0.02)
    assert all(c / 16000 == pytest.approx(1 / 16, abs=0.01) for c in counts[:4] + counts[5:])
    # the cap bounds a gamma: at 2 the centre is 2 of 10
    counts = pattern_draws(state, (gp, gl), 2.0, 10000, 1)
    assert counts[4] / 10000 == pytest.approx(0.2, abs=0.02)


def test_pattern_playouts_keep_the_search_exact_and_deterministic() -> None:
    state = position("hex(size=9)", ["e5"])
    a = rave(seed=5)
    a.playout_gamma_cap = 4.0
    b = rave(seed=5)
    b.playout_gamma_cap = 4.0
    ra = a.run(state, Stopper(iterations=1500))
    rb = b.run(state, Stopper(iterations=1500))
    assert ra.children == rb.children
    plain = rave(seed=5).run(state, Stopper(iterations=1500))
    assert [c.visits for c in plain.children] != [c.visits for c in ra.children]
    with pytest.raises(ValueError, match="playout_gamma_cap"):
        RaveSearch(ZeroEvaluator(), SearchParams(), playout_gamma_cap=-1.0)
    # the solver still proves the 3x3 board: Black wins with c1, a2, b2 or their turns
    small = rave(seed=1)
    small.playout_gamma_cap = 4.0
    proof = small.run(position("hex(size=3)", []), Stopper(iterations=200000))
    assert proof.resolved and proof.value == 1.0 and proof.action in {2, 3, 4, 5, 6}


# -- the clock: unstable searches extended, decided ones stopped -------------------------


def test_root_lead_reads_the_root_children() -> None:
    """The clock rules' reading of the root against one written here from the children:
    the visit lead of the most visited child, and whether a rival with a tenth of its
    visits has a higher mean."""
    rnd = random.Random(21)
    seen_unstable = seen_stable = 0
    for trial in range(12):
        state = random_position("hex(size=7)", rnd.randrange(0, 6), rnd)
        if state is None:
            continue
        search = rave(seed=trial)
        result = search.run(state, Stopper(iterations=1500))
        if result.resolved or any(c.resolved for c in result.children):
            continue
        children = [(c[1], c[2]) for c in search._subtree()[2]]
        visits = sorted((n for n, _ in children), reverse=True)
        best_n, best_w = max(children, key=lambda c: c[0])
        unstable = any(n > 0 and n >= 0.1 * best_n and w * best_n > best_w * n
                       for n, w in children if (n, w) != (best_n, best_w))
        assert search.root_lead() == (visits[0] - visits[1], unstable)
        seen_unstable += unstable
        seen_stable += not unstable
    assert seen_unstable and seen_stable


def test_a_fixed_move_time_is_neither_extended_nor_cut() -> None:
    state = position("hex(size=9)", ["e5"])
    search = rave(seed=3)
    search.run(state, Stopper(iterations=20_000))
    stopper = Stopper(time=0.1)          # max_time = time: a one-stone byo-yomi
    result = search.run(state, stopper)
    assert result.stop_reason == "time"
    assert stopper.deadline_seconds == pytest.approx(0.1)


def test_a_decided_move_stops_early_where_the_clock_keeps_the_time() -> None:
    """A kept tree whose best child leads by more simulations than the latest deadline
    leaves room for cannot change its move: under an elastic clock it stops at once.
    (After e5 d6, 40,000 simulations leave all but about a thousand on one reply.)"""
    state = position("hex(size=9)", ["e5", "d6"])
    search = rave(seed=3)
    search.run(state, Stopper(iterations=40_000))
    lead, _ = search.root_lead()
    assert lead > 10_000
    stopper = Stopper(time=0.15, max_time=0.2)
    result = search.run(state, stopper)
    assert result.stop_reason == "decided"
    assert stopper.deadline_seconds == pytest.approx(0.15)    # stopped before its target
    search.stop_decided = False
    result = search.run(state, Stopper(time=0.15, max_time=0.2))
    assert result.stop_reason == "time"


def test_an_extended_search_keeps_to_the_maximum() -> None:
    """Unstable or not, an elastic search's deadline is its target or its one extension,
    never past ``max_time``; where it was extended, the deadline is the factor's."""
    rnd = random.Random(5)
    for trial in range(4):
        state = random_position("hex(size=11)", 2 + trial, rnd)
        assert state is not None
        search = rave(seed=trial)
        search.extend_unstable = 2.0
        search.stop_decided = False
        stopper = Stopper(time=0.08, max_time=0.3)
        result = search.run(state, stopper)
        assert result.stop_reason in ("time", "resolved")
        assert stopper.deadline_seconds <= 0.3
        if stopper.deadline_seconds > 0.09:
            assert stopper.deadline_seconds == pytest.approx(0.16)
    with pytest.raises(ValueError, match="extend_unstable"):
        RaveSearch(ZeroEvaluator(), SearchParams(), extend_unstable=0.5)
