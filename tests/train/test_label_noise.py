"""The labels' retest: the labels' own player searches again, by seed at any number of
processes, and the attenuation arithmetic is the textbook one."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from descent.search_cy.games.registry import make_game
from descent.stats import correlation
from descent.train.label_noise import (
    Retest,
    chosen_positions,
    recorded_player,
    retest,
)
from descent.train.labels import Player, generate, load, player_budget, player_searches
from descent.train.policy import network_values


@pytest.fixture(scope="module")
def policy_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 6x6 folder whose player searches with a (random) policy_value network."""
    from descent.nets.arch import policy_preset
    from descent.nets.modelfile import make_model, save_model

    where = tmp_path_factory.mktemp("retest")
    model = save_model(make_model("hex(size=6)", policy_preset("hex", "tiny_value"), seed=2),
                       where / "pv.dnet")
    player = Player.with_policy(str(model), 20, size=6, sims=300, branch=0.5,
                                action_visits=4)
    generate(where / "hex6", player, games=1, shard_games=5)
    return where / "hex6", model


def test_the_recorded_player_is_the_one_that_made_the_labels(
        policy_folder: tuple[Path, Path], tmp_path: Path) -> None:
    from descent.nets.arch import policy_preset, preset
    from descent.nets.modelfile import make_model, save_model

    folder, model = policy_folder
    player = recorded_player(folder, str(model))
    assert (player.size, player.sims, player.policy_at, player.action_visits) == (6, 300, 20, 4)
    with pytest.raises(ValueError, match="give its file"):
        recorded_player(folder)
    other = save_model(make_model("hex(size=6)", policy_preset("hex", "tiny_value"), seed=3),
                       tmp_path / "other.dnet")
    with pytest.raises(ValueError, match="other.dnet: its weights are not those"):
        recorded_player(folder, str(other))
    plain = tmp_path / "plain"
    generate(plain, Player(size=5, sims=100), games=1)
    assert recorded_player(plain) == Player(size=5, sims=100)
    with pytest.raises(ValueError, match="searched without a policy network"):
        recorded_player(plain, str(model))
    nnue = save_model(make_model("hex(size=5)", preset("hex", "nnue_tiny"), seed=4),
                      tmp_path / "nnue.dnet")
    valued = tmp_path / "valued"
    generate(valued, Player(size=5, sims=100).with_value(str(nnue), 0.5, 50.0, 0), games=1)
    assert recorded_player(valued, value=str(nnue)) == \
        Player(size=5, sims=100).with_value(str(nnue), 0.5, 50.0, 0)
    with pytest.raises(ValueError, match="the value network of weights .*: give its file "
                                         r"\(--value\)"):
        recorded_player(valued)
    with pytest.raises(ValueError, match="searched without a value network"):
        recorded_player(plain, value=str(nnue))
    ewn = tmp_path / "ewn"
    generate(ewn, Player.for_game("einstein", sims=50, branch=0.0), games=1)
    with pytest.raises(ValueError, match="rave's Hex labels"):
        recorded_player(ewn)


def test_a_retest_is_the_players_fresh_searches_by_seed_at_any_jobs(
        policy_folder: tuple[Path, Path]) -> None:
    folder, model = policy_folder
    one = retest(folder, 4, policy=str(model), seed=5, deep=600)
    two = retest(folder, 4, policy=str(model), seed=5, deep=600, jobs=2)
    for name in ("positions", "label", "first", "second", "deep"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    labels = load(folder)
    assert np.array_equal(one.label, labels.arrays["value"][one.positions])
    assert not labels.arrays["proven"][one.positions].any()
    # the first fresh search of the first position is the player's search with its seed
    player = recorded_player(folder, str(model))
    state = make_game(player.game).new_initial_state()
    for m in labels.moves(int(one.positions[0])):
        state.apply_action(m)
    (search,) = player_searches(player, state, [1_000_003 * 5])
    assert one.first[0] == search.run(state, player_budget(player, state)).value
    assert not np.array_equal(one.first, one.second)     # two seeds, two searches
    other = retest(folder, 4, policy=str(model), seed=6)
    assert len(other.deep) == 0 and "label_vs_deep" not in other.summary()
    given = retest(folder, 4, policy=str(model), seed=6, labels=labels)   # loaded once
    assert np.array_equal(given.label, other.label) and np.array_equal(given.first,
                                                                        other.first)
    summary = one.summary(network_values(model, labels, one.positions))
    assert summary["positions"] == 4 and -1.0 <= summary["predictor_vs_deep"] <= 1.0
    with pytest.raises(ValueError, match="held-out unproven positions"):
        chosen_positions(labels, 10_000, 1)


def test_the_ceiling_and_the_corrected_correlation() -> None:
    rng = np.random.default_rng(1)
    truth = rng.normal(size=2000)
    first, second = truth + rng.normal(size=2000), truth + rng.normal(size=2000)
    label = truth + rng.normal(size=2000)
    result = Retest(np.arange(2000), label, first, second, truth)
    predictor = truth + 0.5 * rng.normal(size=2000)
    s = result.summary(predictor)
    assert s["reliability"] == pytest.approx(correlation(first, second))
    assert s["ceiling"] == pytest.approx(math.sqrt(s["reliability"]))
    assert s["predictor_vs_average"] == pytest.approx(
        correlation(predictor, label) / math.sqrt(s["reliability"]))
    # noise of the labels' size: reliability about 1/2, and the correction recovers the
    # predictor's correlation with the truth (1/sqrt(1.25) = 0.894)
    assert s["reliability"] == pytest.approx(0.5, abs=0.05)
    assert s["predictor_vs_average"] == pytest.approx(1 / math.sqrt(1.25), abs=0.05)
    assert s["predictor_vs_deep"] == pytest.approx(correlation(predictor, truth))
