"""``descent distill`` (tools/distill.py): which positions are labelled, that proven labels
are the exact values, resumption and independence from ``-j``, the symmetries' signs, and
a network fitted end to end that reproduces its labels through a real backend."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from descent.nets.encoding import encode_batch
from descent.research.distill import (
    Game,
    encode,
    fit,
    label,
    positions,
    read_games,
    read_labels,
    selfplay,
)
from descent.search_cy.games.registry import make_game
from tests.train.conftest import solve


def random_games(size: int, count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        state = make_game(f"hex(size={size})").new_initial_state()
        moves = []
        while not state.is_terminal():
            action = rng.choice(state.legal_actions())
            state.apply_action(action)
            moves.append(action)
        out.append({"size": size, "moves": moves, "visits": [None] * len(moves)})
    return out


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_positions_follow_every_min_ply_and_branch() -> None:
    game = Game(4, (5, 0, 10, 1, 6, 2, 15))
    plain = positions(game, every=2, min_ply=1, branch=0.0, rng=random.Random(1))
    assert plain == [game.moves[:1], game.moves[:3], game.moves[:5]]
    branched = positions(game, every=1, min_ply=0, branch=1.0, rng=random.Random(2))
    record = [game.moves[:k] for k in range(len(game.moves))]
    assert set(record) <= set(branched) and len(record) < len(branched) <= 2 * len(record)
    for extra in branched[1:]:
        # one legal move after a position on the record, never a decided position
        assert extra[:-1] == game.moves[:len(extra) - 1]
        state = make_game("hex(size=4)").new_initial_state()
        for action in extra[:-1]:
            state.apply_action(action)
        assert extra[-1] in state.legal_actions()
        state.apply_action(extra[-1])
        assert not state.is_terminal()


def test_read_games_takes_pattern_and_arena_records(tmp_path: Path) -> None:
    patterns = write_jsonl(tmp_path / "p.jsonl", random_games(4, 2, seed=3))
    arena = write_jsonl(tmp_path / "a.jsonl", [
        {"game": "hex(size=4,swap=false)", "moves": ["a1", "b2", "d4"]},
        {"game": "hex(size=4,swap=true)", "moves": ["a1", "swap"]},
        {"game": "einstein(setup=random)", "moves": ["d5"]}])
    games = list(read_games([patterns, arena]))
    assert len(games) == 3 and games[2] == Game(4, (0, 5, 15))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"size": 4}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        list(read_games([bad]))


def test_labels_resume_do_not_depend_on_jobs_and_proofs_are_exact(tmp_path: Path) -> None:
    records = write_jsonl(tmp_path / "r.jsonl", random_games(4, 4, seed=5))
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert label([records], one, 300, branch=0.5, seed=7, limit=2) > 0
    written = label([records], one, 300, branch=0.5, seed=7)       # resumes at game 2
    assert written > 0 and label([records], one, 300, branch=0.5, seed=7) == 0
    label([records], two, 300, branch=0.5, seed=7, jobs=2)
    assert one.read_text() == two.read_text()
    rows = read_labels([one])
    assert sorted({r["game"] for r in rows}) == [0, 1, 2, 3]
    assert any(r["branch"] for r in rows) and not all(r["branch"] for r in rows)
    memo: dict[int, float] = {}
    proven = 0
    for row in rows:
        state = make_game("hex(size=4)").new_initial_state()
        for action in row["moves"]:
            state.apply_action(action)
        assert -1.0 <= row["value"] <= 1.0
        if row["proven"]:
            proven += 1
            assert row["value"] == solve(state, memo)
    assert proven >= 5


def test_selfplay_labels_each_searched_position_and_resumes(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert selfplay(one, 2, 300, size=4, seed=3) > 0
    assert selfplay(one, 3, 300, size=4, seed=3) > 0                 # game 2 only
    assert selfplay(one, 3, 300, size=4, seed=3) == 0
    selfplay(two, 3, 300, size=4, seed=3, jobs=2)
    assert one.read_text() == two.read_text()
    rows = read_labels([one])
    games: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        games.setdefault(row["game"], []).append(row)
    assert sorted(games) == [0, 1, 2]
    memo: dict[int, float] = {}
    for played in games.values():
        # the game's own positions, one a ply, and branches one random move off them
        on_record = [r["moves"] for r in played if not r["branch"]]
        longest = on_record[-1]
        assert on_record == [longest[:k] for k in range(1, len(longest) + 1)]
        assert any(r["branch"] for r in played)
        for row in played:
            assert row["moves"][:-1] == longest[:len(row["moves"]) - 1]
            state = make_game("hex(size=4)").new_initial_state()
            for action in row["moves"]:
                state.apply_action(action)
            assert not state.is_terminal()
            if row["proven"]:
                assert row["value"] == solve(state, memo)


def test_encode_turns_the_value_with_the_colours() -> None:
    rows = [{"game": 0, "size": 4, "moves": [5, 0], "value": 0.25}]
    labels = encode(rows)
    state = make_game("hex(size=4)").new_initial_state()
    state.apply_action(5)
    state.apply_action(0)
    assert len(labels.values) == state.num_symmetries == 4
    for s in range(state.num_symmetries):
        np.testing.assert_array_equal(labels.planes[s], encode_batch([state], s)[0])
        assert labels.values[s] == (-0.25 if state.symmetry_swaps_colours(s) else 0.25)


def test_fit_then_the_model_file_values_its_positions(tmp_path: Path) -> None:
    from descent.nets.evaluator import network_evaluator
    from descent.nets.modelfile import load_model

    # exact values of random 4x4 positions: a function the network must learn to follow
    memo: dict[int, float] = {}
    rows: list[dict[str, Any]] = []
    for g, record in enumerate(random_games(4, 60, seed=9)):
        state = make_game("hex(size=4)").new_initial_state()
        for ply, action in enumerate(record["moves"]):
            if ply >= 2 and not state.is_terminal():
                rows.append({"game": g, "size": 4, "moves": list(record["moves"][:ply]),
                             "value": solve(state, memo)})
            state.apply_action(action)
    out = tmp_path / "net.dnet"
    report = fit(rows, out, "tiny", steps=1500, batch_size=64, holdout=0.1, seed=3)
    assert report.losses[-1] < 0.5 * report.losses[0]
    assert report.holdout_positions > 0 and report.holdout_mse < report.holdout_variance
    model = load_model(out, "hex(size=4)")
    assert model.value.heuristic == "gain" and "descent distill fit" in model.training.note
    # the undecided positions alone: the proven ones (every 4x4 value here is exact, so
    # mark the decided ones by a rule) are left out of both the training and the holdout
    for row in rows:
        row["proven"] = len(row["moves"]) >= 6
    fewer = fit(rows, tmp_path / "undecided.dnet", "tiny", steps=64, batch_size=64,
                holdout=0.1, seed=3, skip_proven=True)
    undecided = [r for r in rows if not r["proven"]]
    assert fewer.train_positions + fewer.holdout_positions * 4 == 4 * len(undecided)
    assert "unproven positions only" in load_model(tmp_path / "undecided.dnet",
                                                    "hex(size=4)").training.note
    with pytest.raises(ValueError, match="proven"):
        fit([dict(r, proven=True) for r in rows], tmp_path / "none.dnet", "tiny", steps=1,
            skip_proven=True)
    train = [r for r in rows if r["game"] < 54][:200]
    states = []
    for row in train:
        state = make_game("hex(size=4)").new_initial_state()
        for action in row["moves"]:
            state.apply_action(action)
        states.append(state)
    values = network_evaluator(model, states[0], backend="torch").evaluate(states)
    targets = np.array([r["value"] for r in train])
    assert np.corrcoef(np.asarray(values, dtype=float), targets)[0, 1] > 0.6


def test_the_command_line_labels_and_fits(tmp_path: Path) -> None:
    records = write_jsonl(tmp_path / "r.jsonl", random_games(4, 3, seed=11))
    labels, model = tmp_path / "l.jsonl", tmp_path / "m.dnet"
    run = [sys.executable, "-m", "descent", "distill"]
    done = subprocess.run(run + ["label", str(records), str(labels), "--sims", "200"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "positions labelled" in done.stdout
    done = subprocess.run(run + ["fit", str(labels), str(model), "--preset", "tiny",
                                 "--steps", "50", "--holdout", "0.34"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "held out" in done.stdout and model.exists()
    refused = subprocess.run(run + ["fit", str(records), str(model)],
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and "not a label" in refused.stderr
