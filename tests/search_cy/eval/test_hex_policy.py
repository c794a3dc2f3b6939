"""The Hex policy network in C: its prior is a softmax over the empty cells, it reads both
colours in the side to move's view, and it refuses weights that are not a tower's."""

from __future__ import annotations

import random

import numpy as np
import pytest

from descent.search_cy.eval.hex_policy import HexPolicy
from descent.search_cy.games.hex import HexState
from descent.search_cy.games.registry import make_game


def random_policy(n: int, filters: int = 6, convs: int = 3, seed: int = 0,
                  values: bool = False) -> HexPolicy:
    """A random tower and policy head; ``values``: with random value heads (hidden 5)."""
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(0, 0.5, (filters, 3 if i == 0 else filters, 3, 3)),
               rng.normal(0, 0.1, filters)) for i in range(convs)]
    heads = None
    if values:
        f = filters
        heads = {"vconv.weight": rng.normal(0, 0.5, (f, f, 1, 1)),
                 "vconv.bias": rng.normal(0, 0.1, f),
                 "qhead.weight": rng.normal(0, 0.05, (1, f, 1, 1)),
                 "qhead.bias": rng.normal(0, 0.1, 1),
                 "qglobal.weight": rng.normal(0, 0.02, (1, 2 * f)),
                 "qglobal.bias": rng.normal(0, 0.1, 1),
                 "vfc.weight": rng.normal(0, 0.5, (5, 2 * f)),
                 "vfc.bias": rng.normal(0, 0.1, 5),
                 "vhead.weight": rng.normal(0, 0.05, (1, 5)),
                 "vhead.bias": rng.normal(0, 0.1, 1)}
    return HexPolicy(n, layers, rng.normal(0, 1.0, filters), 0.3, values=heads)


def random_position(n: int, stones: int, seed: int) -> HexState:
    rng = random.Random(seed)
    state = make_game(f"hex(size={n})").new_initial_state()
    for _ in range(stones):
        state.apply_action(rng.choice(state.legal_actions()))
    assert isinstance(state, HexState)
    return state


@pytest.mark.parametrize("stones", [0, 1, 6, 13])
def test_the_prior_is_the_softmax_of_the_logits_over_the_empty_cells(stones: int) -> None:
    policy = random_policy(5)
    state = random_position(5, stones, seed=stones)
    logits = policy.logits(state).astype(np.float64)
    prior = policy.probabilities(state)
    empty = np.zeros(25, bool)
    empty[state.legal_actions()] = True
    assert (prior[~empty] == 0).all()
    expected = np.exp(logits[empty] - logits[empty].max())
    assert prior[empty] == pytest.approx(expected / expected.sum(), rel=1e-5)
    assert prior.sum() == pytest.approx(1.0, rel=1e-6)


def test_white_to_move_is_read_as_black_on_the_transposed_board() -> None:
    """A position and its mirror (each stone transposed, its colour exchanged, the other
    side to move) are the same position for the player to move: the network sees the
    same input, so the logits are each other's transposes. Black one stone up with White
    to move mirrors into White one stone up with Black to move, which the swap rule
    reaches: Black's first stone, swapped, is White's on the transposed cell."""
    n = 6
    policy = random_policy(n, seed=4)
    transpose = [(c % n) * n + c // n for c in range(n * n)]
    for seed in range(6):
        rng = random.Random(seed)
        k = rng.randrange(0, 6)
        cells = rng.sample(range(n * n), 2 * k + 1)
        black, white = cells[0::2], cells[1::2]               # k + 1 and k stones
        state = make_game(f"hex(size={n})").new_initial_state()
        for i in range(k):
            state.apply_action(black[i])
            state.apply_action(white[i])
        state.apply_action(black[k])
        mirror = make_game(f"hex(size={n},swap=true)").new_initial_state()
        mirror.apply_action(black[0])
        mirror.apply_action(n * n)                            # the swap
        for i in range(k):
            mirror.apply_action(transpose[white[i]])
            mirror.apply_action(transpose[black[i + 1]])
        assert isinstance(mirror, HexState)
        assert (state.current_player(), mirror.current_player()) == (1, 0)
        assert policy.logits(state) == pytest.approx(policy.logits(mirror)[transpose],
                                                     rel=1e-6, abs=1e-6)


def test_weights_that_are_not_a_tower_are_refused() -> None:
    rng = np.random.default_rng(0)
    good = [(rng.normal(size=(4, 3, 3, 3)), np.zeros(4))]
    with pytest.raises(ValueError, match="reads 2 planes"):
        HexPolicy(5, [(rng.normal(size=(4, 2, 3, 3)), np.zeros(4))], np.ones(4), 0.0)
    with pytest.raises(ValueError, match="not a 3x3 convolution"):
        HexPolicy(5, [(rng.normal(size=(4, 3, 5, 5)), np.zeros(4))], np.ones(4), 0.0)
    with pytest.raises(ValueError, match="the head reads 3 planes"):
        HexPolicy(5, good, np.ones(3), 0.0)
    with pytest.raises(ValueError, match="residual tower"):
        HexPolicy(5, good + [(rng.normal(size=(4, 4, 3, 3)), np.zeros(4))], np.ones(4), 0.0,
                  residual=True)
    policy = HexPolicy(5, good, np.ones(4), 0.0)
    with pytest.raises(ValueError, match="cannot read a 6x6 board"):
        policy.probabilities(random_position(6, 2, 0))
