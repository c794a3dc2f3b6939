"""The dice-chess study's baselines (tools/dicechess_baselines.py): material values read
off the encoding, the depth-2 players taking the material a roll offers, and a short
match from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from descent.nets.encoding import encode_batch
from descent.research.dicechess_baselines import (
    load_weights,
    main,
    material_player,
    material_values,
    study_player,
)
from descent.search_cy.games.registry import make_game


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


@pytest.mark.parametrize("make", [material_player, study_player])
def test_the_depth_two_players_take_the_queen_their_roll_allows(make) -> None:  # type: ignore[no-untyped-def]
    # White rolled a knight (die 2): Nxd5 wins the queen; every other move wins nothing
    state = _state("4k3/8/8/3q4/8/4N3/8/4K3 w - - 0 1 N")
    player = make(state, depth=2)
    player.new_game(0)
    assert state.action_to_string(player.choose(state)) == "e3d5"


def test_the_baselines_refuse_other_games() -> None:
    for make in (material_player, study_player):
        with pytest.raises(ValueError, match="dice chess"):
            make(make_game("einstein").new_initial_state())


def test_a_short_match_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--player", "heuristic", "--baseline", "study", "--depth", "1",
                 "--tc", "0.01", "--games", "2", "--seed", "3"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("heuristic (expectiminimax, 0.01 s a move) vs study-depth1:")
    assert "over 2 games" in line
    assert main(["--player", "heuristic", "--heuristic", "features", "--baseline",
                 "material", "--depth", "1", "--tc", "0.01", "--games", "2"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("heuristic features (expectiminimax, 0.01 s a move) vs "
                           "material-depth1:")
    # at a fixed depth: the default heuristic against the study agent, both at depth 1
    assert main(["--player", "heuristic", "--player-depth", "1", "--baseline", "study",
                 "--depth", "1", "--games", "4", "--seed", "5"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("heuristic (expectiminimax, depth 1) vs study-depth1:")


def test_weights_from_text_or_a_tune_runs_result(tmp_path: Path) -> None:
    assert load_weights("pawns=120, rook_pair=-3") == {"pawns": 120.0, "rook_pair": -3.0}
    assert load_weights("") == {}
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"tuned": {"pawns": 90},
                                  "winner_means": {"50": {"pawns": 101.5}}}))
    assert load_weights(f"{result}:winner_means.50") == {"pawns": 101.5}
    assert load_weights(f"{result}:tuned") == {"pawns": 90.0}
    with pytest.raises(ValueError, match="no key '150'"):
        load_weights(f"{result}:winner_means.150")
    with pytest.raises(ValueError, match="not a mapping"):
        load_weights(f"{result}:tuned.pawns")
    start = make_game("dicechess").new_initial_state()
    player = study_player(start, 1, {"pawns": 101.5})
    assert player.runner.evaluator.weights["pawns"] == 101.5  # type: ignore[attr-defined]
    assert study_player(start, 1).runner.evaluator.weights["pawns"] != 101.5  # type: ignore[attr-defined]


def test_weights_on_the_command_line(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"winner_means": {"50": {"pawns": 101.5}}}))
    assert main(["--player", "heuristic", "--heuristic", "features", "--player-weights",
                 f"{result}:winner_means.50", "--player-depth", "1", "--baseline", "study",
                 "--baseline-weights", "pawns=80", "--depth", "1", "--games", "2"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("heuristic features (expectiminimax, depth 1) vs study-depth1:")
    with pytest.raises(SystemExit):
        main(["--player", "heuristic", "--baseline", "material", "--baseline-weights",
              "pawns=80", "--games", "2"])
    with pytest.raises(SystemExit):
        main(["--model", "x.dnet", "--player-weights", "pawns=80", "--games", "2"])
