"""Move-policy model files: the C evaluator computes the torch module's logits (and, with
value heads, its action values and value), a policy file is refused where a value network
is wanted and the other way round, and a policy architecture is a convolutional tower
without fully connected layers (with value heads, one: their hidden layer)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from descent.nets.arch import Architecture, policy_preset, preset
from descent.nets.modelfile import ModelFileError, make_model, save_model
from descent.nets.policy import load_policy, policy_from_model
from descent.search_cy.games.registry import make_game

ARCHS = [Architecture("conv", 12, convs=3, output="policy"),
         Architecture("resnet", 8, blocks=2, output="policy"),
         policy_preset("hex", "tiny")]
VALUE_ARCHS = [Architecture("conv", 12, convs=3, fc=(7,), output="policy_value"),
               Architecture("resnet", 8, blocks=1, fc=(5,), output="policy_value"),
               policy_preset("hex", "tiny_value")]


@pytest.mark.parametrize("size", [7, 5, 9])
@pytest.mark.parametrize("arch", ARCHS + VALUE_ARCHS,
                         ids=lambda a: f"{a.family}-{a.filters}-{a.output}")
def test_the_c_evaluator_computes_the_torch_modules_logits(arch: Architecture,
                                                           size: int) -> None:
    # a network saved for 7x7 reads 5x5 and 9x9 boards as well: it is fully convolutional
    import torch

    from descent.nets.models import PolicyNet, module_from_weights
    from descent.train.policy import canonical_symmetry

    model = make_model("hex(size=7)", arch, seed=2)
    rng = np.random.default_rng(3)
    for name in model.weights:            # biases too, lest a wrong one go unseen
        if name.endswith("bias"):
            model.weights[name][:] = rng.normal(0, 0.2, model.weights[name].shape)
    policy = policy_from_model(model, size)
    assert policy.n == size
    net = module_from_weights(model.arch, model.input_shape, model.weights).eval()
    assert isinstance(net, PolicyNet)
    game = make_game(f"hex(size={size})")
    moves = random.Random(4)
    for stones in range(0, size * size * 3 // 5, 3):
        state = game.new_initial_state()
        for _ in range(stones):
            state.apply_action(moves.choice(state.legal_actions()))
        side = state.current_player()
        x = np.zeros(state.encoding_shape, np.float32)
        state.encode(x, canonical_symmetry(side))
        with torch.inference_mode():
            want = net(torch.from_numpy(x)[None])[0].numpy()
        if side == 1:                      # back from the transposed frame
            want = want.reshape(size, size).T.reshape(-1)
        got = policy.logits(state)
        assert float(np.std(want)) > 1e-3
        assert got == pytest.approx(want, rel=1e-4, abs=1e-4)
        assert policy.has_values == (arch.output == "policy_value")
        if not policy.has_values:
            with pytest.raises(ValueError, match="no value heads"):
                policy.values(state)
            continue
        with torch.inference_mode():
            logits, actions, value = net.heads(torch.from_numpy(x)[None])
            plain = net(torch.from_numpy(x)[None])
        assert logits[0].numpy() == pytest.approx(plain[0].numpy())
        q = actions[0].numpy()
        if side == 1:
            q = q.reshape(size, size).T.reshape(-1)
        got_q, got_v = policy.values(state)
        assert float(np.std(q)) > 1e-3 and (np.abs(q) <= 1).all()
        assert got_q == pytest.approx(q, rel=1e-4, abs=1e-4)
        assert got_v == pytest.approx(float(value[0]), rel=1e-4, abs=1e-4)


def test_a_policy_file_loads_and_a_value_file_is_refused_by_name(tmp_path: Path) -> None:
    from descent.nets.evaluator import network_function

    state = make_game("hex(size=5)").new_initial_state()
    policy_file = save_model(make_model("hex(size=5)", policy_preset("hex", "tiny")),
                             tmp_path / "policy.dnet")
    value_file = save_model(make_model("hex(size=5)", preset("hex", "tiny")),
                            tmp_path / "value.dnet")
    assert load_policy(policy_file, "hex(size=5)").probabilities(state).sum() == \
        pytest.approx(1.0)
    with pytest.raises(ModelFileError, match="value.dnet: a value network"):
        load_policy(value_file)
    with pytest.raises(ModelFileError, match="policy.dnet: a move-policy network"):
        network_function(policy_file, state, backend="numpy")
    # another board size is read by the same network; another game is refused
    assert load_policy(policy_file, "hex(size=7)").n == 7
    assert load_policy(policy_file).n == 5
    with pytest.raises(ModelFileError, match="policy.dnet: a move-policy network guides Hex"):
        load_policy(policy_file, "einstein")


def test_value_heads_that_do_not_fit_the_tower_are_refused_by_name(tmp_path: Path) -> None:
    from descent.nets.modelfile import load_model
    from descent.search_cy.eval.hex_policy import HexPolicy

    model = make_model("hex(size=5)", policy_preset("hex", "tiny_value"), seed=1)
    path = save_model(model, tmp_path / "pv.dnet")
    assert load_policy(path, "hex(size=5)").has_values
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF                         # a flipped byte in the weights
    bad = tmp_path / "damaged.dnet"
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="damaged.dnet"):
        load_model(bad)
    w = model.weights
    convs = [(w[f"convs.{i}.weight"], w[f"convs.{i}.bias"]) for i in range(2)]
    heads = {k: v for k, v in w.items() if not k.startswith(("convs", "head"))}
    HexPolicy(5, convs, w["head.weight"], 0.0, values=heads)
    with pytest.raises(ValueError, match="do not fit a tower of 4 planes"):
        HexPolicy(5, convs, w["head.weight"], 0.0, values=heads | {
            "vconv.weight": np.zeros((3, 3, 1, 1), np.float32)})
    with pytest.raises(ValueError, match="do not fit a tower of 4 planes"):
        HexPolicy(5, convs, w["head.weight"], 0.0,
                  values={k: v for k, v in heads.items() if k != "vhead.bias"})
    with pytest.raises(ValueError, match="does not read the 8 pooled features"):
        HexPolicy(5, convs, w["head.weight"], 0.0, values=heads | {
            "vfc.weight": np.zeros((8, 6), np.float32)})


def test_a_policy_is_a_tower_without_fully_connected_layers() -> None:
    with pytest.raises(ValueError, match="without fully connected layers"):
        Architecture("conv", 8, convs=2, fc=(16,), output="policy")
    with pytest.raises(ValueError, match="without fully connected layers"):
        Architecture("mlp", 0, fc=(16,), output="policy")
    with pytest.raises(ValueError, match="fc holds one width"):
        Architecture("conv", 8, convs=2, output="policy_value")
    with pytest.raises(ValueError, match="fc holds one width"):
        Architecture("conv", 8, convs=2, fc=(16, 8), output="policy_value")
    assert policy_preset("hex", "policy_value").is_policy
    with pytest.raises(ValueError, match="no policy preset"):
        policy_preset("hex", "paper")
    with pytest.raises(ValueError, match="no policy presets for game"):
        policy_preset("einstein", "policy")
