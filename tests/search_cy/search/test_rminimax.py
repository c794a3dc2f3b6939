"""Rminimax (rminimax.pyx, the paper's eq. 10-11): the partition recurrence on trees
worked out by hand, its limits, chance nodes, the cost a move, the horizon charge of the
flat trees the searches build, and expectiminimax's full-width policy against a plain
enumeration of the game."""

from __future__ import annotations

import math

import numpy as np
import pytest

from descent.search_cy.eval.einstein_eval import EinsteinEvaluator
from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.expectimax import Expectiminimax
from descent.search_cy.search.rminimax import (
    CHANCE,
    LEAF,
    OPPONENT,
    RANDOMISED,
    full_width_tree,
    log_partition,
    root_policy,
)
from descent.search_cy.search.stopper import Stopper

Tree = tuple[list[int], list[int], list[int], list[float], list[int], list[float]]


def flat(spec: list[tuple[int, list[int] | float, list[float] | None]]) -> Tree:
    """A flat tree from [(kind, children ids or a leaf value, outcome probabilities)]."""
    kind: list[int] = []
    first: list[int] = []
    count: list[int] = []
    value: list[float] = []
    edge_to: list[int] = []
    edge_p: list[float] = []
    for k, body, probs in spec:
        kind.append(k)
        if isinstance(body, list):
            first.append(len(edge_to))
            count.append(len(body))
            value.append(0.0)
            edge_to.extend(body)
            edge_p.extend(probs or [0.0] * len(body))
        else:
            first.append(0)
            count.append(0)
            value.append(body)
    return kind, first, count, value, edge_to, edge_p


# the randomised player at the root, the opponent below, the randomised player again,
# then eight leaves: a three-level binary tree
LEAVES = [1.0, -1.0, 0.5, 0.5, 0.8, -0.6, 0.2, 0.1]
THREE_LEVELS = flat([
    (RANDOMISED, [1, 2], None),
    (OPPONENT, [3, 4], None), (OPPONENT, [5, 6], None),
    (RANDOMISED, [7, 8], None), (RANDOMISED, [9, 10], None),
    (RANDOMISED, [11, 12], None), (RANDOMISED, [13, 14], None),
    *[(LEAF, v, None) for v in LEAVES],
])


def by_hand(theta: float, a: float) -> float:
    """p(root -> node 1) of THREE_LEVELS, the formulas written out."""
    def rand(u: float, v: float) -> float:      # z of a randomised node over two leaves
        return 0.5 * math.exp(-theta * a) * (math.exp(theta * u) + math.exp(theta * v))
    z3, z4 = rand(1.0, -1.0), rand(0.5, 0.5)
    z5, z6 = rand(0.8, -0.6), rand(0.2, 0.1)
    z1 = math.exp(-theta * a) * min(z3, z4)
    z2 = math.exp(-theta * a) * min(z5, z6)
    return z1 / (z1 + z2)


@pytest.mark.parametrize("theta", [3.0, 0.5, 1e-4])
@pytest.mark.parametrize("a", [0.0, 1.0, 0.25])
def test_three_level_binary_tree_by_hand(theta: float, a: float) -> None:
    p = root_policy(*THREE_LEVELS, theta, a)
    assert p.sum() == pytest.approx(1.0)
    assert p[0] == pytest.approx(by_hand(theta, a), rel=1e-12)
    # the paper's limits: towards 0, the reference policy; large, the minimax move
    # (node 1's worst is min(soft(1, -1), 0.5) against node 2's min(soft(.8, -.6), .15))
    if theta < 1e-3:
        assert p[0] == pytest.approx(0.5, abs=1e-4)


# -- the paper's Table I -------------------------------------------------------------
#
# Table I gives p12 / p13 at the root of "a binary game tree with a depth of 3", one
# winning node, every move costing 1: 0.998 / 0.002 at theta = 3, 0.728 / 0.268 at
# theta = 0.5 (these two sum to 0.996, so at least one is misprinted) and 0.5001 / 0.4999
# at theta = 0.001. The paper does not give the tree. On the full depth-3 binary tree the
# unit arc cost and the reference policy's 1/2 are the same on every path, so only the
# leaves matter. These tests pin what root_policy (the one implementation of the
# recurrence) gives on the readings that come closest, beside the printed columns.

TABLE_I = {3.0: (0.998, 0.002), 0.5: (0.728, 0.268), 0.001: (0.5001, 0.4999)}


def depth_three(inner: int, leaves: list[float]) -> Tree:
    """The full binary tree of depth 3: the randomised player at the root, ``inner`` at
    the root's two children (nodes 1 and 2, the paper's 2 and 3), the randomised player
    below them, then the eight leaves, left to right."""
    return flat([
        (RANDOMISED, [1, 2], None),
        (inner, [3, 4], None), (inner, [5, 6], None),
        *[(RANDOMISED, [7 + 2 * i, 8 + 2 * i], None) for i in range(4)],
        *[(LEAF, v, None) for v in leaves],
    ])


def table_i_row(tree: Tree) -> dict[float, tuple[float, float]]:
    """p12 / p13 at each of Table I's thetas, a unit cost a move."""
    row = {}
    for theta in TABLE_I:
        p = root_policy(*tree, theta, 1.0)
        row[theta] = (float(p[0]), float(p[1]))
    return row


def printed(theta: float, p: tuple[float, float]) -> tuple[float, float]:
    """p rounded to the digits Table I prints in the column of ``theta``."""
    digits = 4 if theta < 0.01 else 3
    return round(p[0], digits), round(p[1], digits)


def test_table_i_eq_11_one_winning_leaf_gives_one_half_at_every_theta() -> None:
    # eq. 10-11 as written: the opponent (the root's children) plays minimax, so it always
    # steers away from the only winning leaf, whichever leaf it is and whatever it is
    # worth; both root moves are then the same to the randomised player
    for win in range(8):
        for reward in (1.0, 2.0, 5.0):
            leaves = [reward if i == win else 0.0 for i in range(8)]
            for p in table_i_row(depth_three(OPPONENT, leaves)).values():
                assert p == pytest.approx((0.5, 0.5), abs=1e-12)


def test_table_i_without_the_opponent_one_winning_leaf() -> None:
    # every node the randomised player's (eq. 8-10, no opponent), the win worth 2.5 at the
    # first leaf: theta = 3 matches Table I; theta = 0.001 gives 0.5002, since its column
    # needs a win worth 0.8 to 2.4 and the theta = 3 column one worth 2.46 to 2.63
    row = table_i_row(depth_three(RANDOMISED, [2.5, 0, 0, 0, 0, 0, 0, 0]))
    assert printed(3.0, row[3.0]) == TABLE_I[3.0]
    assert printed(0.001, row[0.001]) == (0.5002, 0.4998)
    assert row[3.0] == pytest.approx((0.997796, 0.002204), abs=1e-6)
    assert row[0.5] == pytest.approx((0.6187, 0.3813), abs=1e-4)
    assert row[0.001] == pytest.approx((0.500156, 0.499844), abs=1e-6)


def test_table_i_without_the_opponent_a_win_and_a_loss_side_by_side() -> None:
    # the closest reading found: no opponent, the win (2.5) and a loss (-1) under the same
    # randomised node of the first subtree, draws elsewhere. Both the theta = 3 and the
    # theta = 0.001 columns come out as printed; theta = 0.5 gives 0.604 / 0.396, not
    # 0.728 / 0.268
    row = table_i_row(depth_three(RANDOMISED, [2.5, -1, 0, 0, 0, 0, 0, 0]))
    assert printed(3.0, row[3.0]) == TABLE_I[3.0]
    assert printed(0.001, row[0.001]) == TABLE_I[0.001]
    assert row[3.0] == pytest.approx(TABLE_I[3.0], abs=1e-3)
    assert row[0.001] == pytest.approx(TABLE_I[0.001], abs=1e-4)
    assert row[3.0] == pytest.approx((0.997795, 0.002205), abs=1e-6)
    assert row[0.5] == pytest.approx((0.6038, 0.3962), abs=1e-4)
    assert row[0.001] == pytest.approx((0.500094, 0.499906), abs=1e-6)


def test_table_i_a_move_two_cheaper_gives_the_theta_half_column() -> None:
    # a root move worth 2 more than the other, with nothing to randomise below: theta =
    # 3 and 0.5 come out close to the printed 0.998 and 0.728 / 0.268 (the logistic of
    # theta * 2: 0.731 / 0.269), but theta = 0.001 gives 0.5005, not 0.5001
    tree = flat([(RANDOMISED, [1, 2], None), (LEAF, 2.0, None), (LEAF, 0.0, None)])
    row = table_i_row(tree)
    assert printed(3.0, row[3.0]) == TABLE_I[3.0]
    assert row[0.5] == pytest.approx((0.7311, 0.2689), abs=1e-4)
    assert printed(0.001, row[0.001]) == (0.5005, 0.4995)

def test_the_opponent_plays_minimax_not_a_soft_choice() -> None:
    # node 1: the opponent may give 1.0 or -1.0; node 2: 0.0 or 0.0. A softened opponent
    # would let the randomised player hope for node 1's +1; the paper's opponent takes
    # -1 there, so every theta prefers node 2, more surely as theta grows
    tree = flat([
        (RANDOMISED, [1, 2], None),
        (OPPONENT, [3, 4], None), (OPPONENT, [5, 6], None),
        (LEAF, 1.0, None), (LEAF, -1.0, None), (LEAF, 0.0, None), (LEAF, 0.0, None),
    ])
    previous = 0.5
    for theta in (0.1, 0.5, 2.0, 10.0):
        p = root_policy(*tree, theta, 0.0)
        assert p[1] == pytest.approx(1.0 / (1.0 + math.exp(-theta)))
        assert p[1] > previous
        previous = p[1]


def test_minimax_move_at_large_theta_reference_policy_towards_zero() -> None:
    # unbalanced subtrees: node 1 has one leaf, node 2 three; towards theta = 0 the root
    # still follows the uniform reference policy (the 1/n of each node)
    tree = flat([
        (RANDOMISED, [1, 2], None),
        (RANDOMISED, [3], None), (RANDOMISED, [4, 5, 6], None),
        (LEAF, 0.3, None), (LEAF, 0.2, None), (LEAF, 0.1, None), (LEAF, -0.9, None),
    ])
    assert root_policy(*tree, 1e-7, 0.0) == pytest.approx([0.5, 0.5], abs=1e-6)
    assert root_policy(*tree, 500.0, 0.0)[0] == pytest.approx(1.0)


def test_chance_nodes_take_the_expectation_of_the_free_energy() -> None:
    # a roll worth +1 or -0.5 (expectation -0.125) against a sure 0.1: at a large theta
    # the randomised player is expectiminimax (the sure 0.1), never a gambler
    tree = flat([
        (RANDOMISED, [1, 2], None),
        (CHANCE, [3, 4], [0.25, 0.75]), (LEAF, 0.1, None),
        (LEAF, 1.0, None), (LEAF, -0.5, None),
    ])
    theta = 2.0
    lz1 = 0.25 * theta * 1.0 + 0.75 * theta * -0.5
    lz = log_partition(*tree, theta, 0.0)
    assert lz[1] == pytest.approx(lz1)
    expected = math.exp(lz1) / (math.exp(lz1) + math.exp(theta * 0.1))
    assert root_policy(*tree, theta, 0.0)[0] == pytest.approx(expected)
    assert root_policy(*tree, 200.0, 0.0)[1] == pytest.approx(1.0)


def test_a_move_costs_the_quicker_win_is_preferred() -> None:
    # a win now, or a node whose two moves both win one move later
    tree = flat([
        (RANDOMISED, [1, 2], None),
        (LEAF, 1.0, None), (RANDOMISED, [3, 4], None),
        (LEAF, 1.0, None), (LEAF, 1.0, None),
    ])
    assert root_policy(*tree, 3.0, 0.0) == pytest.approx([0.5, 0.5])
    p = root_policy(*tree, 3.0, 0.1)
    assert p[0] == pytest.approx(1.0 / (1.0 + math.exp(-0.3)))


def test_a_position_met_again_below_itself_is_a_leaf_there() -> None:
    # node 1 leads back to the root (a repeated position in a stored tree): there the
    # root counts as a leaf with its own stored value, 0.1
    tree = flat([
        (RANDOMISED, [1, 2], None),
        (OPPONENT, [0, 3], None), (LEAF, 0.2, None), (LEAF, 0.5, None),
    ])
    kind, first, count, value, edge_to, edge_p = tree
    value[0] = 0.1
    theta = 2.0
    lz1 = min(theta * 0.1, theta * 0.5)
    p = root_policy(kind, first, count, value, edge_to, edge_p, theta, 0.0)
    assert p[0] == pytest.approx(math.exp(lz1) / (math.exp(lz1) + math.exp(theta * 0.2)))


def test_bad_trees_are_refused_by_name() -> None:
    kind, first, count, value, edge_to, edge_p = THREE_LEVELS
    with pytest.raises(ValueError, match="theta"):
        root_policy(*THREE_LEVELS, 0.0)
    with pytest.raises(ValueError, match="root"):
        root_policy([OPPONENT, *kind[1:]], first, count, value, edge_to, edge_p, 1.0)
    with pytest.raises(ValueError, match="outside"):
        root_policy(kind, first, count, value, [*edge_to[:-1], 99], edge_p, 1.0)
    with pytest.raises(ValueError, match="finite"):
        root_policy(kind, first, count, [math.nan] * len(value), edge_to, edge_p, 1.0)


# -- the full-width tree (expectiminimax) ----------------------------------------------


def enumerate_log_z(state: GameState, ev: Evaluator, left: int, root: int, theta: float,
                    a: float, deepest: int, depth: int = 0) -> float:
    """The recurrence by plain enumeration of the game, horizon leaves charged the
    moves down to ``deepest``."""
    if state.is_terminal():
        v = state.terminal_value()
        return theta * (v if root == 0 else -v)
    if left == 0:                      # the horizon, a chance state too
        v = float(ev.evaluate([state])[0])
        return theta * ((v if root == 0 else -v) - a * (deepest - depth))
    if state.is_chance_node():
        total = 0.0
        for outcome, p in state.chance_outcomes():
            state.apply_action(outcome)
            total += p * enumerate_log_z(state, ev, left, root, theta, a, deepest, depth + 1)
            state.undo()
        return total
    logs = []
    for action in state.legal_actions():
        state.apply_action(action)
        logs.append(enumerate_log_z(state, ev, left - 1, root, theta, a, deepest, depth + 1))
        state.undo()
    if state.current_player() == root:
        m = max(logs)
        return m + math.log(sum(math.exp(x - m) for x in logs) / len(logs)) - theta * a
    return min(logs) - theta * a


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("a", [0.0, 0.05])
def test_full_width_tree_matches_an_enumeration(depth: int, a: float) -> None:
    state = make_game("einstein").state_from_text("A1B2/5/2a2/5/3bc r roll")
    state.apply_action(2)              # the die: Red moves with 3 (or its neighbours)
    ev = EinsteinEvaluator()
    tree = full_width_tree(state, ev, depth)
    assert tree is not None
    kind, _first, _count, value, _to, _p = tree.arrays(0.0)
    theta = 1.7
    policy = tree.policy(theta, a)
    root = state.current_player()
    deepest = _deepest(state, depth)
    logs = []
    for action in tree.root_actions:
        state.apply_action(action)
        logs.append(enumerate_log_z(state, ev, depth - 1, root, theta, a, deepest, 1))
        state.undo()
    m = max(logs)
    expected = np.exp(np.array(logs) - m)
    assert policy == pytest.approx(expected / expected.sum(), rel=1e-9)
    assert sorted(tree.root_actions) == state.legal_actions()
    assert (kind == LEAF).sum() > 0 and np.all(np.abs(value) <= 1.0)


def _deepest(state: GameState, left: int, depth: int = 0) -> int:
    """The depth of the deepest leaf of the full-width tree (chance nodes count a level
    of the tree but no ply of the search)."""
    if state.is_terminal() or left == 0:
        return depth
    chance = state.is_chance_node()
    moves = [o for o, _ in state.chance_outcomes()] if chance else state.legal_actions()
    out = 0
    for action in moves:
        state.apply_action(action)
        out = max(out, _deepest(state, left if chance else left - 1, depth + 1))
        state.undo()
    return out


def test_expectiminimax_policy_plays_its_search_at_a_high_theta() -> None:
    state = make_game("einstein").state_from_text("A1B2/5/2a2/5/3bc r roll")
    state.apply_action(5)
    search = make_search("expectiminimax", EinsteinEvaluator(),
                         SearchParams(hash_mb=8, max_depth=3))
    result = search.run(state, Stopper())
    impl = search.impl
    assert isinstance(impl, Expectiminimax)
    sharp = dict(impl.rminimax_policy(state, 1e4, depth=3))
    assert max(sharp, key=lambda m: sharp[m]) == result.action
    flat_policy = dict(impl.rminimax_policy(state, 1e-9, depth=3))
    assert list(flat_policy.values()) == pytest.approx([1 / len(flat_policy)] * len(flat_policy))
    with pytest.raises(ValueError, match="theta"):
        impl.rminimax_policy(state, -1.0)
