"""Complete refereed games for all three games: ours against ours, and ours against an
independent engine behind the same protocol (OpenSpiel's MCTS for Hex, OpenSpiel's
expectiminimax for EinStein, a python-chess bot for dice chess, which OpenSpiel lacks).
Every move is checked by the kernels; a game must end normally."""

from __future__ import annotations

import sys

import pytest

from descent.tools.referee import play_game

PY = sys.executable
OURS = f"{PY} -m descent play --hash-mb 16 --log-level warning --nodes-per-second 20000"
GAMES = {
    "hex(size=5)": f"{PY} -m tests.helpers.bots.hex_openspiel_gtp",
    "einstein": f"{PY} -m tests.helpers.bots.einstein_openspiel_ewn",
    "dicechess": f"{PY} -m tests.helpers.bots.dicechess_random_uci",
}


@pytest.mark.parametrize("spec", sorted(GAMES))
def test_ours_against_ours(spec: str) -> None:
    a = f'{OURS} --game "{spec}" --seed 1'
    b = f'{OURS} --game "{spec}" --seed 2'
    record = play_game(spec, (a, b), seed=5, movetime=0.05, max_plies=300)
    assert record.reason in ("normal", "ply cap"), record.detail
    assert record.plies > 0 and record.moves


@pytest.mark.parametrize("spec", sorted(GAMES))
def test_ours_against_an_independent_engine(spec: str) -> None:
    ours = f'{OURS} --game "{spec}" --seed 1'
    for commands, us in (((ours, GAMES[spec]), 0), ((GAMES[spec], ours), 1)):
        record = play_game(spec, commands, seed=7, movetime=0.05, max_plies=300)
        assert record.reason in ("normal", "ply cap"), record.detail
        print(f"\n{spec}: ours as player {us}: winner {record.winner}, {record.plies} plies")


def test_a_canadian_block_is_the_engines_to_share(tmp_path) -> None:
    """``stones``: the referee announces a block of N moves in N x the move time; our
    engine keeps its own clock and its budgets leave room past the target (the time a
    clear move does not spend goes to the unclear ones), while a one-stone byo-yomi
    leaves none."""
    import json

    logs = [tmp_path / "block.log", tmp_path / "byoyomi.log"]
    # on the real clock (not nodes-as-time, which turns budgets into node counts)
    commands = tuple(f'{PY} -m descent play --hash-mb 16 --game "hex(size=5)" --seed {i} '
                     f'--log-level info --log-file {log}' for i, log in enumerate(logs))
    record = play_game("hex(size=5)", commands, seed=3, movetime=0.05, stones=(10, 1))
    assert record.reason == "normal", record.detail
    assert record.stones == [10, 1]
    budgets = []
    for log in logs:
        moves = [json.loads(line) for line in log.read_text().splitlines()
                 if '"move"' in line]
        budgets.append([m["budget"] for m in moves if m.get("event") == "move"])
    assert budgets[0] and budgets[1]
    assert all(b[2] > b[1] for b in budgets[0])      # maximum past the target
    assert all(b[2] == b[1] for b in budgets[1])
