"""Differential test: our Hex kernel against OpenSpiel's ``hex`` (an independent C++ one).

Action ids agree (row * n + col, swap = n * n) and OpenSpiel's swap is the canonical one
(RULES.md), so moves pass through unchanged. After every move: same legal set, same
terminal flag, same winner.
"""

from __future__ import annotations

import random

import pyspiel
import pytest

from descent.search_cy.games.registry import make_game  # noqa: E402

GAMES = 2000


@pytest.mark.slow
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("size", [5, 7, 11, 13])
def test_hex_matches_openspiel(size: int, swap: bool) -> None:
    game = make_game(f"hex(size={size},swap={str(swap).lower()})")
    peer = pyspiel.load_game("hex", {"board_size": size, "swap": swap})
    rng = random.Random(1000 * size + swap)
    swaps_played = 0
    for _ in range(GAMES):
        ours = game.new_initial_state()
        theirs = peer.new_initial_state()
        while True:
            legal = ours.legal_actions()
            assert legal == theirs.legal_actions()
            assert ours.is_terminal() == theirs.is_terminal()
            if ours.is_terminal():
                assert ours.terminal_value() == theirs.returns()[0]
                assert ours.current_player() < 0
                break
            assert ours.current_player() == theirs.current_player()
            action = rng.choice(legal)
            swaps_played += action == size * size
            ours.apply_action(action)
            theirs.apply_action(action)
    # With swap on, the random games must have exercised it.
    assert (swaps_played > 0) == swap
