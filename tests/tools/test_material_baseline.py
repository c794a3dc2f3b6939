"""The dice-chess study's baseline (tools/material_baseline.py): material values read off
the encoding, and the depth-2 player taking the material a roll offers."""

from __future__ import annotations

import pytest

from descent.nets.encoding import encode_batch
from descent.search_cy.games.registry import make_game
from descent.tools.material_baseline import material_player, material_values


def _state(fen: str):  # type: ignore[no-untyped-def]
    state = make_game("dicechess").new_initial_state()
    state.set_fen(fen)
    return state


def test_material_values_count_both_sides_for_white() -> None:
    start = make_game("dicechess").new_initial_state()
    no_black_queen = _state("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    no_white_rook = _state("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/1NBQKBNR b Kkq - 0 1")
    values = material_values(encode_batch([start, no_black_queen, no_white_rook]))
    assert values.tolist() == pytest.approx([0.0, 9 / 64, -5 / 64])


def test_the_depth_two_player_takes_the_queen_its_roll_allows() -> None:
    # White rolled a knight (die 2): Nxd5 wins the queen; every other move wins nothing
    state = _state("4k3/8/8/3q4/8/4N3/8/4K3 w - - 0 1 N")
    player = material_player(state, depth=2)
    player.new_game(0)
    assert state.action_to_string(player.choose(state)) == "e3d5"


def test_the_material_evaluator_refuses_other_games() -> None:
    with pytest.raises(ValueError, match="dice chess"):
        material_player(make_game("einstein").new_initial_state())
