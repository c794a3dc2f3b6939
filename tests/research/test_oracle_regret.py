"""The oracle screen: positions from records, paired comparisons, and real engines end to
end on 4x4, where the oracle's values can be checked against the exact solution."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from descent.research.oracle_regret import (
    Candidate,
    Oracle,
    Outcome,
    Position,
    compare,
    evaluate,
    main,
    positions_from_records,
)
from tests.search_cy.search.test_bestfirst import wins

PY = sys.executable
OURS = f"{PY} -P -m descent play --hash-mb 16 --log-level warning"


def write_records(path: Path, games: list[tuple[str, list[str]]]) -> Path:
    path.write_text("".join(json.dumps({"game": g, "moves": m}) + "\n" for g, m in games),
                    encoding="utf-8")
    return path


def test_positions_come_from_the_plies_asked_for_without_swapped_games(tmp_path: Path) -> None:
    records = write_records(tmp_path / "games.jsonl", [
        ("hex(size=4,swap=false)", ["a1", "b2", "c3", "d4", "a2", "b3"]),
        ("hex(size=4,swap=true)", ["a1", "swap", "c3", "d4", "a2"]),
        ("einstein(setup=random)", ["x"] * 8),
        ("hex(size=4,swap=false)", ["d1", "c2"]),
    ])
    found = positions_from_records([records], range(2, 6, 2), 0, seed=1)
    assert sorted(len(p.moves) for p in found) == [2, 4]     # the last game is too short
    assert {tuple(p.moves) for p in found} == {("a1", "b2"), ("a1", "b2", "c3", "d4")}
    again = positions_from_records([records], range(2, 6, 2), 1, seed=1)
    assert len(again) == 1 and again[0] == found[0]           # the same draw by seed


def test_paired_differences_and_their_standard_error() -> None:
    pos = Position("hex(size=4)", [])
    outcomes = []
    for a, b in ((0.5, 0.7), (0.4, 0.4), (0.6, 0.5), (0.3, None)):
        o = Outcome(pos, {"ref": "a1", "alt": "a1" if a == b else "b2"}, {"ref": a, "alt": b})
        outcomes.append(o)
    ref, alt = compare(outcomes, ["ref", "alt"])
    # the position the oracle could not value is left out of both
    assert ref.positions == alt.positions == 3
    assert ref.mean == pytest.approx(0.5) and alt.mean == pytest.approx(1.6 / 3)
    assert alt.differs == 2
    diffs = [0.2, 0.0, -0.1]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    assert alt.diff == pytest.approx(mean) and alt.stderr == pytest.approx(sd / math.sqrt(3))
    assert ref.diff == 0.0 and ref.stderr == 0.0


def test_real_engines_on_4x4_get_the_exact_values_of_their_moves(tmp_path: Path) -> None:
    # two real candidates (our engine with rave and with UBFM_s) and our engine as the
    # oracle: on 4x4 the oracle's search proves every position, so the value it gives a
    # move must be the exact one, and two candidates with the same move share it
    records = write_records(tmp_path / "games.jsonl", [
        ("hex(size=4,swap=false)", ["b2", "c2", "b3", "a4", "c1", "d1"]),
        ("hex(size=4,swap=false)", ["a1", "c3", "b3", "b4", "d2", "d1"]),
    ])
    positions = positions_from_records([records], range(1, 5), 0, seed=2)
    candidates = [Candidate("rave@gtp[time=0.2]:" + OURS, "hex(size=4)", 0.2, 30.0),
                  Candidate("ubfms@descent:time=0.2,search=ubfms", "hex(size=4)", 0.2, 30.0)]
    oracle = Oracle(OURS, "descent", 30.0)
    try:
        outcomes = evaluate(positions, candidates, oracle)
    finally:
        for c in candidates:
            c.close()
        oracle.close()
    assert len(outcomes) == len(positions) == 8
    memo: dict[int, float] = {}
    for o in outcomes:
        state = o.position.state()
        for name, move in o.moves.items():
            after = state.clone()
            after.apply_move(move)
            exact = 1.0 if after.is_terminal() or not wins(after, memo) else 0.0
            assert o.values[name] == exact, (o.position.moves, name, move)
        if o.moves["rave"] == o.moves["ubfms"]:
            assert o.values["rave"] == o.values["ubfms"]


def test_a_candidate_that_resigns_scores_the_loss(tmp_path: Path) -> None:
    """A resignation is a move a candidate may make: the mover's value is 0, not an
    error. (On 4x4 after b2 c2 b3 White is lost: our engine with a resign threshold
    resigns there once its search proves it.)"""
    records = write_records(tmp_path / "games.jsonl", [
        ("hex(size=4,swap=false)", ["b2", "c2", "b3", "a4"])])
    positions = positions_from_records([records], range(3, 4), 0, seed=1)
    assert len(positions) == 1 and not wins(positions[0].state(), {})
    resigner = Candidate("quitter@descent:time=0.2,resign_threshold=0.5", "hex(size=4)",
                         0.2, 30.0)
    oracle = Oracle(OURS, "descent", 30.0)
    try:
        outcomes = evaluate(positions, [resigner], oracle)
    finally:
        resigner.close()
        oracle.close()
    assert outcomes and all(o.moves["quitter"] == "resign" for o in outcomes)
    assert all(o.values["quitter"] == 0.0 for o in outcomes)


def test_the_command_line_prints_the_table_and_keeps_every_position(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = write_records(tmp_path / "games.jsonl",
                            [("hex(size=4,swap=false)", ["b2", "c2", "b3", "a4", "c1"])])
    out = tmp_path / "verdicts.jsonl"
    assert main([str(records), "--plies", "2:4", "--oracle", OURS, "--dialect", "descent",
                 "--player", "a@gtp[time=0.1]:" + OURS, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2 positions valued by the oracle (of 2)" in printed
    assert "| a | " in printed
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2 and all(set(line["chosen"]) == {"a"} for line in lines)
    with pytest.raises(SystemExit):
        main([str(records), "--plies", "2:4", "--oracle", OURS])   # no --player
