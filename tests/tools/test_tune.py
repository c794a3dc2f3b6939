"""``descent tune`` end to end on EinStein: a short SPSA run writes its history and
result, prints weights that ``descent play --heuristic-weights`` accepts, and refuses bad
configs by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from descent.engine.engine import Engine
from descent.engine.settings import Settings
from descent.search_cy.eval.heuristics import format_weights, parse_weights
from descent.search_cy.games.registry import make_game
from descent.tools.cli import main
from descent.tools.tune import MatchRunner, load_params


def test_a_short_spsa_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "einstein.toml"
    config.write_text('[weights.tempo]\nlo = 0.0\nhi = 1.0\nstep = 0.1\n'
                      '[weights.cube_weight]\nstep = 0.02\n', encoding="utf-8")
    out = tmp_path / "run"
    assert main(["tune", "--game", "einstein", "--config", str(config), "--iterations", "3",
                 "--games", "4", "--depth", "1", "--verify", "4", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    weights = parse_weights(printed)
    assert set(weights) == {"tempo", "cube_weight"}
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert [h["iteration"] for h in history] == [1, 2, 3]
    assert history[-1]["weights"] == weights and history[-1]["games"] == 12
    result = json.loads((out / "result.json").read_text())
    assert result["tuned"] == weights and result["start"] == {"tempo": 0.5, "cube_weight": 0.05}
    assert result["verify"]["games"] == 4 and result["games"] == 12
    engine = Engine(Settings(game="einstein", hash_mb=16, model="none",
                             heuristic_weights=printed))
    assert engine.evaluator.weights["tempo"] == weights["tempo"]


def test_a_genetic_run_on_a_named_heuristic(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # the study agent's way: the features heuristic, named on the command line, tuned by
    # the genetic algorithm whose answer is the mean of its final population
    config = tmp_path / "features.toml"
    config.write_text("[weights.pawns]\n[weights.hanging_material]\n", encoding="utf-8")
    out = tmp_path / "ga"
    assert main(["tune", "--game", "dicechess", "--heuristic", "features", "--config",
                 str(config), "--method", "genetic", "--population", "4", "--rounds", "1",
                 "--iterations", "2", "--games", "2", "--depth", "1", "--out",
                 str(out)]) == 0
    weights = parse_weights(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(weights) == {"pawns", "hanging_material"}
    result = json.loads((out / "result.json").read_text())
    assert result["heuristic"] == "features" and result["method"] == "genetic"
    # each generation: 4 chromosomes start 1 match of 2 games
    assert result["games"] == 2 * 4 * 2 and result["tuned"] == weights
    assert 50.0 <= weights["pawns"] <= 200.0
    engine = Engine(Settings(game="dicechess", hash_mb=16, model="none", heuristic="features",
                             heuristic_weights=format_weights(weights)))
    assert engine.evaluator.weights["pawns"] == weights["pawns"]


def test_a_genetic_run_with_the_studys_settings(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # round robin, parents from the best half, one cut point, elites, a mutation rate;
    # the answer the mean of the last 2 generations' winners, result.json the means of
    # the last 1 and 3
    config = tmp_path / "features.toml"
    config.write_text("[weights.pawns]\n[weights.weak_squares]\n[weights.rook_pair]\n",
                      encoding="utf-8")
    out = tmp_path / "ga"
    assert main(["tune", "--game", "dicechess", "--heuristic", "features", "--config",
                 str(config), "--method", "genetic", "--population", "4", "--rounds", "0",
                 "--selection", "truncation", "--parents", "2", "--crossover", "point",
                 "--crossover-point", "0.25", "--elite", "1", "--mutation-rate", "0.5",
                 "--answer", "winners:2", "--winner-means", "1,3", "--iterations", "3",
                 "--games", "2", "--depth", "1", "--out", str(out)]) == 0
    weights = parse_weights(capsys.readouterr().out.strip().splitlines()[-1])
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    result = json.loads((out / "result.json").read_text())
    # each generation: the 6 pairs of 4 chromosomes play a match of 2 games
    assert result["games"] == 3 * 6 * 2 and result["tuned"] == weights
    assert result["winner_means"]["1"] == history[-1]["best"]
    for name in weights:
        assert weights[name] == pytest.approx((history[-1]["best"][name]
                                               + history[-2]["best"][name]) / 2)
        assert result["winner_means"]["3"][name] == pytest.approx(
            sum(h["best"][name] for h in history) / 3)
    with pytest.raises(SystemExit, match="winner-means"):
        main(["tune", "--game", "dicechess", "--method", "spsa", "--winner-means", "5"])


def test_matches_are_paired_and_deterministic() -> None:
    game = make_game("einstein")
    _, params = load_params(game, {})
    start = {p.name: p.start for p in params}
    results = []
    for _ in range(2):
        runner = MatchRunner(game, None, "expectiminimax", 4, 0, 1, seed=3)
        results.append([runner(start, {**start, "tempo": 1.5}) for _ in range(2)])
    assert results[0] == results[1]
    # the same weights on both sides of a pair: every pair is split or drawn
    same = MatchRunner(game, None, "expectiminimax", 6, 0, 1, seed=4)
    assert same(start, start) == 0.0


def test_bad_configs_are_refused_by_name() -> None:
    game = make_game("dicechess")
    with pytest.raises(ValueError, match="no weight 'tempo'"):
        load_params(game, {"weights": {"tempo": {}}})
    with pytest.raises(ValueError, match="leaves the heuristic's bounds"):
        load_params(game, {"weights": {"scale_cp": {"lo": 0.0}}})
    heuristic, params = load_params(game, {})
    assert heuristic is None and len(params) == 8
    assert all(p.step == pytest.approx((p.hi - p.lo) / 20) for p in params)
