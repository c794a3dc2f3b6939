"""``rave`` with a move-policy network: the network's word multiplies the prior of nodes
visited enough (the root at once), its action values (with value heads) give the children
virtual visits or implicit minimax backups, the search stays deterministic by seed, and
a network for another board size is refused."""

from __future__ import annotations

import numpy as np
import pytest

from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.games.hex_patterns import ROUTE_COUNT, HexPatterns
from descent.search_cy.search.rave import RaveSearch
from descent.search_cy.search.stopper import Stopper
from tests.search_cy.eval.test_hex_policy import random_policy
from tests.search_cy.search.test_rave import assert_reweighed_below_root, position, routed

FLAT = np.ones(ROUTE_COUNT, np.float32)          # route gammas; route_at 0 leaves them out


def priors(search: RaveSearch, path: tuple[int, ...] = ()) -> dict[int, float]:
    return {c[0]: c[7] for c in search._subtree(path)[2]}


def test_the_policy_multiplies_the_prior_of_nodes_visited_enough() -> None:
    state = position("hex(size=7)", ["b3", "f5"])
    policy = random_policy(7, seed=1)
    search = routed(state, 2, 0, FLAT, prune_ratio=0.0)
    search.run(state, Stopper(iterations=1))
    plain = priors(search)
    last = state.history()[-1]
    assert plain == pytest.approx(HexPatterns(7, search.pattern_weights).prior(state, last))

    search = routed(state, 2, 0, FLAT, prune_ratio=0.0, policy=policy, policy_at=30)
    search.run(state, Stopper(iterations=3000))
    probs = policy.probabilities(state)
    weighted = {c: plain[c] * (probs[c] + 1e-4) for c in plain}
    total = sum(weighted.values())
    assert priors(search) == pytest.approx({c: w / total for c, w in weighted.items()},
                                           rel=1e-4)
    assert_reweighed_below_root(search, state, 30, lambda after: {
        c: float(p) + 1e-4 for c, p in enumerate(policy.probabilities(after))})


def test_a_search_with_a_policy_is_deterministic_by_seed_and_differs_from_none() -> None:
    state = position("hex(size=7)", ["d4", "c5"])
    results = []
    for policy in (random_policy(7, seed=5), random_policy(7, seed=5), None):
        search = routed(state, 9, 0, FLAT, policy=policy, policy_at=5)
        search.know_at = 20
        result = search.run(state, Stopper(iterations=2000))
        results.append([(c.action, c.visits) for c in result.children])
    assert results[0] == results[1]
    assert results[0] != results[2]


def test_action_values_give_each_child_virtual_visits_at_their_odds() -> None:
    state = position("hex(size=7)", ["b3", "f5", "c4"])
    mover = state.current_player()
    policy = random_policy(7, seed=3, values=True)
    actions, _ = policy.values(state)
    for visits, net in ((0, policy), (1000, random_policy(7, seed=3)), (1000, policy)):
        # no visits, or a network without value heads: no virtual visits
        search = routed(state, 2, 0, FLAT, prune_ratio=0.0, policy=net, policy_at=10**6,
                        action_visits=visits)
        search.run(state, Stopper(iterations=5))
        children = search._subtree()[2]
        assert len(children) == len(state.legal_actions())
        if not (visits and net.has_values):
            assert sum(c[1] for c in children) <= 5
            continue
        for move, n, w, *_ in children:
            odds = 0.5 * (1.0 + float(actions[move]))
            assert visits <= n <= visits + 5
            assert abs(w - round(odds * visits)) <= n - visits
    assert mover == 1              # White's action values, in the real frame, are its own
    assert len({round(float(a), 3) for a in actions[state.legal_actions()]}) > 5
    runs = []
    for visits in (0, 16, 16):
        search = routed(state, 9, 0, FLAT, policy=policy, policy_at=5, action_visits=visits)
        result = search.run(state, Stopper(iterations=2000))
        runs.append([(c.action, c.visits) for c in result.children])
    assert runs[1] == runs[2] and runs[0] != runs[1]
    with pytest.raises(ValueError, match="action_visits"):
        RaveSearch(heuristic_for(state), search.params, action_visits=-1)


def odds(value: float) -> float:
    return min(1.0, max(0.0, 0.5 * (1.0 + value)))


def test_action_values_are_each_root_childs_minimax_value_until_it_is_valued() -> None:
    state = position("hex(size=7)", ["b3", "f5", "c4"])
    policy = random_policy(7, seed=3, values=True)
    actions, _ = policy.values(state)
    for weight in (0.0, 0.4):
        search = routed(state, 2, 0, FLAT, prune_ratio=0.0, policy=policy, policy_at=10**6,
                        action_visits=0, minimax_weight=weight)
        search.run(state, Stopper(iterations=300))
        children = search._subtree()[2]
        assert len(children) == len(state.legal_actions())
        for move, n, w, *_, av, _vw in children:
            assert n < 300 and w <= n           # no virtual visits
            if weight:
                assert av == pytest.approx(odds(float(actions[move])), abs=1e-6)
            else:
                assert av == -1.0               # nothing read, nothing backed up


def minimax_of(sub: tuple) -> float | None:
    """What a node's parent holds for it by implicit minimax: one minus the best of its
    children's values for its player to move (a proven child as a sure win or loss), or
    None where no child carries a value."""
    values = []
    for *_, pruned, grand, _prior, av, _vw in sub[2]:
        if av < 0.0:
            continue
        if grand is not None and grand[3] != 0:
            av = 0.5 * (1.0 - grand[3])
        elif pruned == 1:                       # lost by knowledge
            av = 0.0
        values.append(av)
    return 1.0 - max(values) if values else None


@pytest.mark.parametrize("knowledge", [False, True])
def test_implicit_minimax_backs_the_best_childs_value_up_the_tree(knowledge: bool) -> None:
    # with the evaluator's and H-search's knowledge, children valued before a mustplay
    # pruned them count as losses
    state = position("hex(size=7)", ["d4", "c5", "c4", "e3"])
    search = routed(state, 7, 0, FLAT, policy=random_policy(7, seed=8, values=True),
                    policy_at=8, action_visits=0, minimax_weight=0.5)
    if knowledge:
        search.know_at, search.vc_at = 20, 30
    search.run(state, Stopper(iterations=4000))
    checked = deep = lost = 0
    stack = [(search._subtree(), 0)]
    while stack:
        node, depth = stack.pop()
        lost += sum(1 for c in node[2] if c[5] == 1 and c[8] >= 0.0)
        for *_, grand, _prior, av, _vw in node[2]:
            if grand is None:
                continue
            backed = minimax_of(grand)
            if backed is not None:
                assert av == pytest.approx(backed, abs=1e-6)
                checked += 1
                deep += depth > 0
            stack.append((grand, depth + 1))
    assert checked >= 10 and deep >= 3
    assert (lost > 0) == knowledge


def test_the_minimax_weight_moves_the_search_deterministically() -> None:
    state = position("hex(size=7)", ["d4", "c5"])
    runs = []
    for weight in (0.0, 0.5, 0.5, 1.0):
        search = routed(state, 9, 0, FLAT, policy=random_policy(7, seed=5, values=True),
                        policy_at=5, minimax_weight=weight)
        result = search.run(state, Stopper(iterations=2000))
        runs.append([(c.action, c.visits) for c in result.children])
    assert runs[1] == runs[2]
    assert runs[0] != runs[1] != runs[3]
    with pytest.raises(ValueError, match="minimax_weight"):
        RaveSearch(heuristic_for(state), search.params, minimax_weight=1.5)


def test_a_policy_for_another_board_is_left_out_and_bad_settings_refused() -> None:
    state = position("hex(size=7)", ["d4"])
    plain = routed(state, 3, 0, FLAT)
    plain.run(state, Stopper(iterations=500))
    other = routed(state, 3, 0, FLAT, policy=random_policy(6), policy_at=1)
    other.run(state, Stopper(iterations=500))
    assert priors(other) == priors(plain)
    with pytest.raises(ValueError, match="policy_at"):
        RaveSearch(heuristic_for(state), plain.params, policy_at=0)


def test_the_policy_never_skips_a_child_the_patterns_kept() -> None:
    """The network's product with the patterns is far sharper than the patterns: redoing
    the 2% pruning on it would leave a handful of moves at a root of a hundred. It may
    bring a skipped child back, never skip another; at the weight 0 it changes nothing."""
    state = position("hex(size=9)", ["e5", "d6", "c7"])
    kept: dict[object, set[int]] = {}
    for name, weight in (("none", None), ("product", 1.0), ("zero", 0.0)):
        policy = None if weight is None else random_policy(9, filters=8, seed=11)
        search = routed(state, 4, 0, FLAT, prune_ratio=0.05, policy=policy, policy_at=1,
                        policy_weight=1.0 if weight is None else weight)
        search.run(state, Stopper(iterations=200))
        kept[name] = {c[0] for c in search._subtree()[2] if c[5] != 2}
    assert kept["none"] <= kept["product"]
    assert kept["zero"] == kept["none"]
    assert len(kept["none"]) < len(state.legal_actions())      # the pruning is at work
