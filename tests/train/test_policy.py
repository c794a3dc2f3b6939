"""Policy training on labels: examples in the side to move's view, a run that resumes, and
the accuracy and speed reports over a real labels folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from descent.search_cy.games.registry import make_game
from descent.train.labels import Player, generate, load
from descent.train.policy import (
    PolicyConfig,
    examples,
    held_out,
    prior_accuracy,
    search_speed,
    train,
    value_accuracy,
)

PLAYER = Player(size=5, sims=200, branch=0.5)


@pytest.fixture(scope="module")
def labels_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("labels") / "hex5"
    generate(folder, PLAYER, games=12, shard_games=12)
    return folder


def test_examples_are_the_positions_in_the_side_to_moves_view(labels_folder: Path) -> None:
    labels = load(labels_folder)
    positions = np.arange(labels.positions)
    data = examples(labels, positions)
    game = make_game("hex(size=5)")
    known = 0
    for row, p in enumerate(positions):
        state = game.new_initial_state()
        for m in labels.moves(int(p)):
            state.apply_action(m)
        side = state.current_player()
        policy = labels.policy(int(p))
        best = int(labels.arrays["best"][p])
        if side == 1:                       # the transposed frame
            policy = policy.reshape(5, 5).T.reshape(-1)
            best = (best % 5) * 5 + best // 5
        assert data.target[row] == pytest.approx(policy)
        assert data.best[row] == best and data.legal[row, best]
        assert (data.x[row, 2] == 1).all()  # the to-move plane: always the mover's
        assert int(data.legal[row].sum()) == len(state.legal_actions())
        sign = 1.0 if side == 0 else -1.0
        assert data.value[row] == pytest.approx(sign * labels.arrays["value"][p])
        assert data.proven[row] == labels.arrays["proven"][p]
        # the action values: the search's values of the positions one move on
        for cell, value in zip(data.action_cell[row], data.action_value[row], strict=True):
            if cell < 0:
                continue
            move = int(cell) if side == 0 else (int(cell) % 5) * 5 + int(cell) // 5
            after = [*labels.moves(int(p)), move]
            game_of = labels.arrays["pos_game"]
            child = [q for q in positions if game_of[q] == game_of[p]
                     and labels.moves(int(q)) == after]
            assert len(child) == 1
            assert value == pytest.approx(sign * labels.arrays["value"][child[0]])
            known += 1
    assert known > labels.positions // 2
    assert 0 < held_out(labels).sum() < labels.positions


def test_a_run_resumes_and_keeps_its_best_model(labels_folder: Path, tmp_path: Path) -> None:
    from descent.nets.policy import load_policy

    run = tmp_path / "run"
    cfg = PolicyConfig(preset="tiny", batch=32, lr=3e-3)
    first = train(labels_folder, run, 2, config=cfg)
    assert first["epoch"] == 2
    again = train(labels_folder, run, 3, config=PolicyConfig(preset="policy"))
    assert again["epoch"] == 3                # resumed: one more epoch, its own config kept
    assert json.loads((run / "config.json").read_text())["preset"] == "tiny"
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in lines] == [1, 2, 3]
    assert all(0.0 <= m["test_top1"] <= 1.0 for m in lines)
    policy = load_policy(run / "model.dnet", "hex(size=5)")
    state = make_game("hex(size=5)").new_initial_state()
    assert policy.probabilities(state).sum() == pytest.approx(1.0)
    scores = prior_accuracy(run / "model.dnet", labels_folder)
    assert set(scores) == {"patterns", "patterns_route", "network", "network_x_route",
                           "positions"}
    assert scores["positions"] == held_out(load(labels_folder)).sum()
    seen = prior_accuracy(run / "model.dnet", labels_folder, training_games=True)
    assert seen["positions"] == (~held_out(load(labels_folder))).sum() > 0
    rates = search_speed(run / "model.dnet", labels_folder, [1, 50], 0.02, positions=2)
    assert set(rates) == {"none", "policy_at=1", "policy_at=50"}
    assert all(rate > 0 for rate in rates.values())


def test_value_heads_learn_on_top_of_a_policy_they_start_from(labels_folder: Path,
                                                              tmp_path: Path) -> None:
    from descent.nets.arch import policy_preset
    from descent.nets.modelfile import load_model, make_model, save_model
    from descent.nets.policy import load_policy

    start = save_model(make_model("hex(size=5)", policy_preset("hex", "tiny"), seed=3),
                       tmp_path / "start.dnet")
    run = tmp_path / "run"
    cfg = PolicyConfig(preset="tiny_value", batch=32, lr=3e-3, init=str(start))
    metrics = train(labels_folder, run, 1, config=cfg)
    assert {"test_value_corr", "test_action_corr", "test_value_mse",
            "test_action_mse", "test_total"} <= set(metrics)
    assert -1.0 <= metrics["test_value_corr"] <= 1.0
    model = load_model(run / "model.dnet")
    assert model.arch.output == "policy_value"
    policy = load_policy(run / "model.dnet", "hex(size=5)")
    actions, value = policy.values(make_game("hex(size=5)").new_initial_state())
    assert actions.shape == (25,) and -1.0 <= value <= 1.0
    corr = value_accuracy(run / "model.dnet", labels_folder)
    assert set(corr) == {"vc", "two_distance", "network", "positions"}
    labels = load(labels_folder)
    assert corr["positions"] == (held_out(labels) & ~labels.arrays["proven"]).sum()
    seen = value_accuracy(run / "model.dnet", labels_folder, training_games=True)
    assert seen["positions"] == (~held_out(labels) & ~labels.arrays["proven"]).sum()
    assert corr["positions"] > 0
    assert all(-1.0 <= corr[k] <= 1.0 for k in ("vc", "two_distance", "network"))
    assert corr["vc"] > 0.2            # the heuristic knows who leads on a 5x5 board
    assert set(value_accuracy(start, labels_folder)) == {"vc", "two_distance", "positions"}
    # the run started from the policy's tower: one epoch moved it, not replaced it
    import torch

    first = torch.load(run / "checkpoint.pt", weights_only=True)["net"]["convs.0.weight"]
    began = load_model(start).weights["convs.0.weight"]
    fresh = make_model("hex(size=5)", policy_preset("hex", "tiny_value"), seed=1)
    assert float(np.abs(first.numpy() - began).mean()) < float(
        np.abs(fresh.weights["convs.0.weight"] - began).mean())
    wide = save_model(make_model("hex(size=5)", policy_preset("hex", "small")),
                      tmp_path / "wide.dnet")
    with pytest.raises(ValueError, match="wide.dnet: not a policy network of conv 4"):
        train(labels_folder, tmp_path / "other", 1, config=PolicyConfig(
            preset="tiny_value", init=str(wide)))


def test_the_value_weight_sets_what_the_value_heads_learn(labels_folder: Path,
                                                          tmp_path: Path) -> None:
    import torch

    from descent.nets.arch import init_weights, policy_preset

    cfg = PolicyConfig(preset="tiny_value", batch=32, lr=3e-3, value_weight=0.0)
    metrics = train(labels_folder, tmp_path / "w0", 1, config=cfg)
    assert metrics["test_total"] == pytest.approx(metrics["test_loss"])
    # no gradient reaches the value heads: AdamW's decay alone moves them
    state = torch.load(tmp_path / "w0" / "checkpoint.pt", weights_only=True)
    steps = state["opt"]["state"][0]["step"]
    shape = tuple(examples(load(labels_folder), np.arange(1)).x.shape[1:])
    begun = init_weights(policy_preset("hex", "tiny_value"), shape, cfg.seed)
    for name in ("vhead.weight", "vfc.weight", "qglobal.weight", "qhead.weight"):
        np.testing.assert_allclose(state["net"][name].numpy(),
                                   begun[name] * (1 - cfg.lr * cfg.weight_decay) ** float(steps),
                                   rtol=1e-5, err_msg=name)
    weighted = train(labels_folder, tmp_path / "w2", 1, config=PolicyConfig(
        preset="tiny_value", batch=32, lr=3e-3, value_weight=2.0))
    assert weighted["test_total"] > weighted["test_loss"]
    assert json.loads((tmp_path / "w2" / "config.json").read_text())["value_weight"] == 2.0


def test_a_smaller_network_starts_a_larger_one_computing_what_it_did(
        labels_folder: Path, tmp_path: Path) -> None:
    import torch

    from descent.nets.arch import Architecture, init_weights, policy_preset
    from descent.nets.modelfile import make_model, save_model
    from descent.nets.models import module_from_weights
    from descent.train.policy import POOLED_INPUTS, embedded, widened

    narrow = Architecture("conv", 2, convs=2, fc=(8,), output="policy_value")
    start = make_model("hex(size=5)", narrow, seed=5)
    wide = policy_preset("hex", "tiny_value")
    shape = tuple(examples(load(labels_folder), np.arange(1)).x.shape[1:])
    weights = init_weights(wide, shape, 1)
    weights |= {k: widened(v, weights[k], pooled=k in POOLED_INPUTS)
                for k, v in start.weights.items()}
    x = torch.from_numpy(examples(load(labels_folder), np.arange(20)).x.astype(np.float32))
    with torch.no_grad():
        before = module_from_weights(narrow, shape, start.weights).heads(x)
        after = module_from_weights(wide, shape, weights).heads(x)
    for a, b in zip(before, after, strict=True):
        assert torch.allclose(a, b, atol=1e-6)
        # three convolutions, the third the identity
        deep = Architecture("conv", 4, convs=3, fc=(8,), output="policy_value")
        deeper = embedded(start.weights, 2, init_weights(deep, shape, 1), 3)
        assert torch.allclose(module_from_weights(deep, shape, deeper).heads(x)[2],
                              before[2], atol=1e-6)
    # the new channels read every channel: they learn, the old ones do not read them
    assert np.abs(weights["convs.1.weight"][2:]).sum() > 0
    assert not weights["convs.1.weight"][:2, 2:].any()
    assert not weights["vfc.weight"][:, [2, 3, 6, 7]].any()
    path = save_model(start, tmp_path / "narrow.dnet")
    metrics = train(labels_folder, tmp_path / "run", 1, config=PolicyConfig(
        preset="tiny_value", batch=32, init=str(path)))
    assert metrics["epoch"] == 1
    shallow = save_model(make_model("hex(size=5)", Architecture(
        "conv", 2, convs=1, fc=(8,), output="policy_value"), seed=5), tmp_path / "one.dnet")
    assert train(labels_folder, tmp_path / "from_one", 1, config=PolicyConfig(
        preset="tiny_value", batch=32, init=str(shallow)))["epoch"] == 1
    for name, arch in (("deep", Architecture("conv", 2, convs=3, fc=(8,),
                                             output="policy_value")),
                       ("widefc", Architecture("conv", 2, convs=2, fc=(16,),
                                               output="policy_value"))):
        bigger = save_model(make_model("hex(size=5)", arch, seed=5), tmp_path / f"{name}.dnet")
        with pytest.raises(ValueError, match=f"{name}.dnet: not a policy network"):
            train(labels_folder, tmp_path / "other", 1, config=PolicyConfig(
                preset="tiny_value", init=str(bigger)))
        assert not (tmp_path / "other" / "config.json").exists()   # nothing left to resume


def test_the_next_generation_plays_with_the_policy_and_trains_on_both(
        labels_folder: Path, tmp_path: Path) -> None:
    from descent.nets.arch import policy_preset, preset
    from descent.nets.modelfile import make_model, save_model

    model = make_model("hex(size=5)", policy_preset("hex", "tiny"), seed=7)
    path = save_model(model, tmp_path / "policy.dnet")
    player = Player.with_policy(str(path), 5, size=5, sims=200, branch=0.5)
    assert player.to_json()["policy_sha256"] == model.weights_sha256
    assert "policy_sha256" not in PLAYER.to_json()      # earlier folders' players unchanged
    with pytest.raises(ValueError, match="one folder holds one player's games"):
        generate(labels_folder, player, games=1)
    nxt = tmp_path / "hex5-g1"
    generate(nxt, player, games=2)
    assert json.loads((nxt / "manifest.json").read_text())["shards"][0]["player"] == \
        player.to_json()
    both = load(labels_folder, nxt)
    assert both.positions == load(labels_folder).positions + load(nxt).positions
    value = save_model(make_model("hex(size=5)", preset("hex", "tiny")), tmp_path / "v.dnet")
    with pytest.raises(ValueError, match="not a move-policy network"):
        Player.with_policy(str(value), 5, size=5)
    run = tmp_path / "run"
    assert train([labels_folder, nxt], run, 1, config=PolicyConfig(preset="tiny"))["epoch"] == 1


def test_a_player_with_action_values_records_them_and_searches_with_them(
        tmp_path: Path) -> None:
    from descent.nets.arch import policy_preset
    from descent.nets.modelfile import make_model, save_model

    path = save_model(make_model("hex(size=5)", policy_preset("hex", "tiny_value"), seed=4),
                      tmp_path / "pv.dnet")
    visits = {}
    for av in (0, 50):
        player = Player.with_policy(str(path), 1, size=5, sims=200, branch=0.0,
                                    action_visits=av)
        assert ("action_visits" in player.to_json()) == (av > 0)
        folder = tmp_path / f"av{av}"
        generate(folder, player, games=1)
        shard = json.loads((folder / "manifest.json").read_text())["shards"][0]
        assert shard["player"] == player.to_json()
        visits[av] = load(folder).arrays["policy_visits"]
    assert not np.array_equal(visits[0][:25], visits[50][:25])   # the same game's root


def test_on_new_labels_the_best_model_is_chosen_anew(tmp_path: Path) -> None:
    import torch

    folder, run = tmp_path / "hex5", tmp_path / "run"
    generate(folder, PLAYER, games=4)
    train(folder, run, 1, config=PolicyConfig(preset="tiny"))
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    state["best_score"] = 2.0              # a best no epoch can beat on these labels
    torch.save(state, run / "checkpoint.pt")
    before = (run / "model.dnet").read_bytes()
    train(folder, run, 2)
    assert (run / "model.dnet").read_bytes() == before
    generate(folder, PLAYER, games=8)      # games 4-11: game 10 joins the held-out set
    train(folder, run, 3)
    assert (run / "model.dnet").read_bytes() != before
    assert torch.load(run / "checkpoint.pt", weights_only=True)["test_positions"] == \
        held_out(load(folder)).sum()
