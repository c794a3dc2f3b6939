"""``descent patterns`` (tools/patterns.py): self-play records, and the MM fit checked on
data drawn from a known pattern model (it must recover the gammas)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from descent.research.patterns import (
    Dataset,
    dataset,
    fit,
    fit_route,
    log_likelihood,
    read_records,
    top1,
)
from descent.search_cy.games.hex_patterns import HexPatterns, load_weights
from descent.search_cy.games.registry import make_game


def test_selfplay_then_fit_through_the_command_line(tmp_path) -> None:
    records = tmp_path / "r.jsonl"
    run = [sys.executable, "-m", "descent", "patterns"]
    subprocess.run(run + ["selfplay", str(records), "--games", "3", "--sims", "300",
                          "--size", "5", "--seed", "4", "-j", "2"], check=True, timeout=300)
    lines = [json.loads(x) for x in records.read_text().splitlines()]
    assert len(lines) == 3
    for record in lines:
        state = make_game("hex(size=5)").new_initial_state()
        for move, visits in zip(record["moves"], record["visits"], strict=True):
            assert (visits is None) == (len(state.history()) == 0)
            if visits:
                assert all(a in state.legal_actions() for a, _ in visits)
            state.apply_action(move)
        assert state.is_terminal()
    out = tmp_path / "w.npz"
    done = subprocess.run(run + ["fit", str(records), str(out), "--min-visits", "100",
                                 "--holdout", "0.34", "--iterations", "5"],
                          check=True, timeout=300, capture_output=True, text=True)
    assert "held out" in done.stdout
    gp, gl, gr = load_weights(out)
    assert np.sum(gp != 1.0) > 10 and gl[0] == 1.0 and gr[0] == 1.0
    assert "with the route factor" in done.stdout


def test_compressed_records_read_as_plain_ones(tmp_path) -> None:
    import lzma

    line = '{"size": 5, "moves": [12], "visits": [null]}\n'
    (tmp_path / "a.jsonl").write_text(line)
    with lzma.open(tmp_path / "a.jsonl.xz", "wt") as f:
        f.write(line)
    assert list(read_records([tmp_path / "a.jsonl.xz"])) == \
        list(read_records([tmp_path / "a.jsonl"]))


def test_bad_records_are_refused_by_name(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"size": 5}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        list(read_records([bad]))
    with pytest.raises(ValueError, match="missing.jsonl"):
        list(read_records([tmp_path / "missing.jsonl"]))


def synthetic(rng: np.random.Generator, positions: int, gk: np.ndarray, gl: np.ndarray,
              gr: np.ndarray | None = None, codes: list[int] | None = None) -> Dataset:
    """Positions of 20 candidates with random keys and codes (and route codes drawn
    from ``codes``), each target a one-hot move drawn from the Bradley-Terry model with
    gammas gk, gl (and gr)."""
    pos, key, local, route, target = [], [], [], [], []
    for j in range(positions):
        k = rng.integers(0, len(gk), 20)
        c = rng.integers(0, len(gl), 20)
        r = np.zeros(20, np.int64) if gr is None else rng.choice(codes or [0], 20)
        g = gk[k] * gl[c] * (1.0 if gr is None else gr[r])
        y = np.zeros(20)
        y[rng.choice(20, p=g / g.sum())] = 1.0
        pos.append(np.full(20, j))
        key.append(k)
        local.append(c)
        route.append(r)
        target.append(y)
    return Dataset(np.concatenate(pos), np.concatenate(key), np.concatenate(local),
                   np.concatenate(target), positions,
                   None if gr is None else np.concatenate(route))


def test_mm_recovers_known_gammas() -> None:
    rng = np.random.default_rng(5)
    gk = np.array([1.0, 4.0, 0.25, 10.0, 1.0])
    gl = np.array([1.0, 3.0, 0.5])
    data = synthetic(rng, 4000, gk, gl)
    gp, fl, history = fit(data, iterations=60)
    ratio = gp[:5] / gp[0]
    assert np.all(np.abs(np.log(ratio / gk)) < 0.3)
    assert np.all(np.abs(np.log(fl / gl)) < 0.3)
    assert all(b >= a - 1e-9 for a, b in zip(history, history[1:], strict=False))
    model = gp[data.key].astype(np.float64) * fl[data.local]
    uniform = np.ones(len(data.key))
    assert log_likelihood(data, model) > log_likelihood(data, uniform)
    assert top1(data, model) > top1(data, uniform)


def test_mm_recovers_known_route_gammas_over_fixed_pattern_gammas() -> None:
    from descent.search_cy.games.hex_patterns import ROUTE_COUNT

    rng = np.random.default_rng(7)
    gk = np.array([1.0, 4.0, 0.25, 10.0, 1.0])
    gl = np.array([1.0, 3.0, 0.5])
    gr = np.ones(ROUTE_COUNT)
    gr[[1, 6, 7, 35]] = [0.5, 0.2, 2.0, 0.05]
    data = synthetic(rng, 6000, gk, gl, gr, [0, 1, 6, 7, 35])
    got, history = fit_route(data, gk.astype(np.float32), gl.astype(np.float32), 40)
    assert got.shape == (ROUTE_COUNT,) and got[0] == 1.0
    for code in (1, 6, 7, 35):
        assert abs(np.log(got[code] / gr[code])) < 0.3
    assert got[2] == 1.0                              # never seen: left at 1
    assert all(b >= a - 1e-9 for a, b in zip(history, history[1:], strict=False))


def test_route_gammas_stay_finite_when_code_0_never_wins() -> None:
    # code 0 on candidates with gamma 0 in the model that drew the targets: no share of
    # any target ever falls on it, and the fit must still give finite gammas (relative to
    # the largest) whose ratios are the model's
    from descent.search_cy.games.hex_patterns import ROUTE_COUNT

    rng = np.random.default_rng(9)
    gk = np.ones(3)
    gl = np.ones(2)
    gr = np.ones(ROUTE_COUNT)
    gr[[0, 3, 4]] = [0.0, 1.0, 4.0]
    data = synthetic(rng, 3000, gk, gl, gr, [0, 3, 4])
    assert data.target[data.routes() == 0].sum() == 0
    got, history = fit_route(data, gk.astype(np.float32), gl.astype(np.float32), 30)
    assert np.all(np.isfinite(got)) and np.all(np.isfinite(history))
    assert got.max() == 1.0 and got[0] == pytest.approx(1e-6)
    assert abs(np.log(got[4] / got[3] / 4.0)) < 0.3


def test_dataset_reads_positions_in_the_mover_frame() -> None:
    record = {"size": 5, "moves": [12, 7, 8], "visits": [None, [[7, 900], [0, 100]],
                                                        [[8, 1000]]]}
    data = dataset([record], min_visits=1000)
    assert data.positions == 2
    state = make_game("hex(size=5)").new_initial_state()
    state.apply_action(12)
    table = HexPatterns(5)
    first = data.target[data.pos == 0]
    assert first.sum() == pytest.approx(1.0)
    keys = data.key[data.pos == 0]
    assert keys[np.argmax(first)] == table.key(state, 7)
    assert data.local[data.pos == 0][np.argmax(first)] == 1       # beside the last move
    # each candidate's route code is the evaluator's for its cell
    from descent.search_cy.eval.hex_eval import HexEvaluator

    codes = HexEvaluator().move_codes(state)
    assert codes is not None
    cells = [c for c in range(25) if c != 12]
    assert list(data.routes()[data.pos == 0]) == [codes[c] for c in cells]
