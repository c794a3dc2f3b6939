"""The best-first searches' Hex evaluator on a policy's value heads: an expansion's
children valued by one pass over their parent, the VC evaluator's proofs kept above
them, proofs never made wrong, and the same search by seed."""

from __future__ import annotations

import numpy as np
import pytest

from descent.search_cy.eval.heuristics import heuristic_for
from descent.search_cy.eval.hex_actions import HexActionEvaluator
from descent.search_cy.eval.hex_eval import VC_VALUES
from descent.search_cy.games.hex import HexState
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper
from tests.search_cy.eval.test_hex_policy import random_policy, random_position
from tests.search_cy.search.test_bestfirst import MODES, action_values, solve

SCALE = VC_VALUES["clip"]   # learned values stay below the VC evaluator's proof


def evaluator(n: int, seed: int = 0) -> HexActionEvaluator:
    return HexActionEvaluator(random_policy(n, seed=seed, values=True),
                              heuristic_for(f"hex(size={n})", "vc"))


def root_children(ev: HexActionEvaluator, state: HexState) -> dict[int, float]:
    """The values UBFM_s gives the root's children at its first expansion."""
    result = make_search("ubfms", ev, SearchParams(seed=1)).run(state, Stopper(iterations=1))
    return {c.action: c.value for c in result.children}


@pytest.mark.parametrize("stones", [2, 5, 8])
def test_children_are_the_parents_action_values_in_player_zeros_view(stones: int) -> None:
    ev = evaluator(6, seed=stones)
    state = random_position(6, stones, seed=stones)
    actions, _ = ev.policy.values(state)
    sign = 1.0 if state.current_player() == 0 else -1.0
    children = root_children(ev, state)
    assert sorted(children) == state.legal_actions()
    for action, value in children.items():
        assert value == pytest.approx(sign * SCALE * actions[action], abs=1e-6)
    assert ev.positions == len(children)


def test_one_state_is_the_position_value_unless_a_connection_is_proven() -> None:
    ev = evaluator(5, seed=3)
    base = heuristic_for("hex(size=5)", "vc")
    for seed in range(12):
        state = random_position(5, 1 + seed % 9, seed=seed)
        proven = base.evaluate([state])[0]
        got = ev.evaluate([state])[0]
        if abs(proven) >= 0.99:
            assert got == proven
        else:
            _, value = ev.policy.values(state)
            sign = 1.0 if state.current_player() == 0 else -1.0
            assert got == pytest.approx(sign * SCALE * value, abs=1e-6)
            assert abs(got) < 0.99


def test_the_swap_is_valued_by_the_position_value_on_its_child() -> None:
    state = make_game("hex(size=5,swap=true)").new_initial_state()
    state.apply_action(7)
    ev = evaluator(5, seed=5)
    children = root_children(ev, state)
    swap = max(state.legal_actions())
    assert swap >= 25
    child = state.clone()
    child.apply_action(swap)
    assert children[swap] == pytest.approx(ev.evaluate([child])[0], abs=1e-6)


def test_another_board_size_is_valued_by_the_vc_evaluator() -> None:
    ev = evaluator(6)
    state = random_position(5, 4, seed=2)
    base = heuristic_for("hex(size=5)", "vc")
    assert ev.evaluate([state])[0] == base.evaluate([state])[0]
    children = root_children(ev, state)
    for action, value in children.items():
        child = state.clone()
        child.apply_action(action)
        if not child.is_terminal():
            assert value == pytest.approx(base.evaluate([child])[0])


@pytest.mark.parametrize("mode", MODES)
def test_solved_roots_are_exact_whatever_the_network(mode: str) -> None:
    """Random 3x3 and 4x4 positions: every best-first search with completion proves the
    exact value over the learned values, and its move has that value."""
    rng = np.random.default_rng(5)
    for k in range(8):
        n = 3 if k < 4 else 4
        state = random_position(n, int(rng.integers(0, 3)) + (0 if n == 3 else 5), seed=k)
        if state.is_terminal():
            continue
        result = make_search(mode, evaluator(n, seed=k), SearchParams(seed=k)).run(
            state, Stopper(nodes=3_000_000))
        assert result.resolved
        assert result.value == solve(state)
        assert action_values(state)[result.action] == result.value


def test_the_search_is_deterministic_by_seed_and_threads_share_the_network() -> None:
    state = random_position(7, 6, seed=9)

    def run(threads: int) -> tuple[int, float, list[int]]:
        search = make_search("ubfms", evaluator(7, seed=1),
                             SearchParams(seed=4, threads=threads))
        result = search.run(state, Stopper(iterations=400))
        return result.action, result.value, result.pv

    assert run(1) == run(1)
    action, value, _ = run(2)
    assert action in state.legal_actions() and -1.0 <= value <= 1.0


def test_a_policy_without_value_heads_is_refused() -> None:
    with pytest.raises(ValueError, match="no value heads"):
        HexActionEvaluator(random_policy(5), heuristic_for("hex(size=5)", "vc"))
    spawned = evaluator(5).spawn()
    assert isinstance(spawned, HexActionEvaluator)
    state = random_position(5, 3, seed=1)
    assert spawned.evaluate([state])[0] == evaluator(5).evaluate([state])[0]


def test_ties_at_the_final_choice_go_to_the_policys_logits() -> None:
    ev = evaluator(5, seed=2)
    state = random_position(5, 4, seed=6)
    priors = ev.move_priors(state)
    logits = ev.policy.logits(state)
    assert priors == [float(logits[a]) for a in state.legal_actions()]
    assert np.argmax(priors) == np.argmax([logits[a] for a in state.legal_actions()])
