"""The engine with a real model file: loaded through a real backend, searched with, and its
terminal scale taken from the model's metadata."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch  # noqa: F401

from descent.engine.engine import Engine  # noqa: E402
from descent.engine.limits import Limits  # noqa: E402
from descent.engine.settings import Settings  # noqa: E402
from descent.nets.modelfile import ModelFileError, save_model  # noqa: E402


def test_engine_plays_with_a_model_file(hex5_model_file: Path) -> None:
    e = Engine(Settings(game="hex(size=5)", model=str(hex5_model_file), backend="onnxruntime",
                        hash_mb=16, seed=1))
    assert e.describe()["evaluator"].startswith("network:")
    assert e.search_name == "ubfms"          # Hex's search for a network (rave is for none)
    d = e.think(Limits(iterations=30))
    assert d.move in [e.state.action_to_string(a) for a in e.state.legal_actions()]
    assert e.evaluator.positions > 0 and e.terminal == "gain"


def test_a_model_of_another_game_is_refused(hex5_model_file: Path) -> None:
    with pytest.raises((ModelFileError, ValueError), match="hex"):
        Engine(Settings(game="hex(size=7)", model=str(hex5_model_file), hash_mb=16))


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        Engine(Settings(game="hex(size=5)", model=str(tmp_path / "none.dnet"), hash_mb=16))


@pytest.mark.parametrize("game", ["einstein", "dicechess"])
def test_engine_plays_an_mlp_model_with_the_native_evaluator(game: str,
                                                             tmp_path: Path) -> None:
    from descent.nets.arch import preset
    from descent.nets.modelfile import make_model
    from descent.search_cy.eval.mlp_eval import MLPEvaluator

    path = save_model(make_model(game, preset(game, "mlp"), seed=3), tmp_path / "mlp.dnet")
    e = Engine(Settings(game=game, model=str(path), hash_mb=16, seed=1))   # backend auto
    assert isinstance(e.evaluator, MLPEvaluator)
    while e.state.is_chance_node():
        e.state.apply_action(e.state.chance_outcomes()[0][0])
    d = e.think(Limits(depth=2))
    assert d.move in [e.state.action_to_string(a) for a in e.state.legal_actions()]
    assert e.evaluator.positions > 0


def test_rave_with_a_model_keeps_its_knowledge_and_reads_the_network(
        hex5_model_file: Path, tmp_path: Path) -> None:
    from descent.engine.engine import EngineError
    from descent.nets.arch import preset
    from descent.nets.modelfile import ValueSpec, make_model
    from descent.search_cy.eval.evaluator import BatchEvaluator
    from descent.search_cy.eval.hex_eval import HexVCEvaluator
    from descent.search_cy.eval.mlp_eval import MLPEvaluator
    from descent.search_cy.search.rave import (
        DEFAULT_VALUE_AT,
        DEFAULT_VALUE_AT_BATCH,
        DEFAULT_VALUE_MIX,
        DEFAULT_VALUE_VISITS,
    )

    game = "hex(size=5)"
    path = save_model(make_model(game, preset("hex", "mlp"), seed=3), tmp_path / "mlp.dnet")
    e = Engine(Settings(game=game, model=str(path), search="rave", hash_mb=16, seed=1))
    rave = e.search.impl
    assert isinstance(rave.value, MLPEvaluator) and isinstance(rave.evaluator, HexVCEvaluator)
    assert rave.value_at == DEFAULT_VALUE_AT
    assert rave.value_visits == Settings().value_visits == DEFAULT_VALUE_VISITS
    d = e.think(Limits(iterations=400))
    assert d.move in [e.state.action_to_string(a) for a in e.state.legal_actions()]
    assert rave.value.positions > 0          # the root's children, valued in C
    assert rave.value_mix == Settings().value_mix == DEFAULT_VALUE_MIX == 0.0
    assert e.describe()["value_mix"] == 0.0 and e.describe()["evaluator"] == f"network:{path}"
    # value_mix: the network in C also values every simulation's leaf
    mixed = Engine(Settings(game=game, model=str(path), search="rave", hash_mb=16, seed=1,
                            value_mix=0.5))
    assert mixed.search.impl.value_mix == 0.5 and mixed.describe()["value_mix"] == 0.5
    assert mixed.describe()["value_fade"] == 0.0
    mixed.think(Limits(iterations=400))
    assert mixed.search.impl.value.positions > rave.value.positions + 100
    faded = Engine(Settings(game=game, model=str(path), search="rave", hash_mb=16, seed=1,
                            value_mix=0.5, value_fade=200.0))
    assert faded.search.impl.value_fade == 200.0 and faded.describe()["value_fade"] == 200.0
    # value_visits=0: the network reads the leaves only, none of a node's children
    leaves = Engine(Settings(game=game, model=str(path), search="rave", hash_mb=16, seed=1,
                             value_mix=0.5, value_visits=0))
    assert leaves.describe()["value_visits"] == 0 and mixed.describe()["value_visits"] == 8
    leaves.think(Limits(iterations=400))
    assert leaves.search.impl.value.positions < mixed.search.impl.value.positions
    assert leaves.search.impl.value.positions > 100       # one a new leaf
    # a convolutional network is called in batches, at nodes of more visits, and
    # values no leaf (value_mix does nothing with it)
    e = Engine(Settings(game=game, model=str(hex5_model_file), search="rave", hash_mb=16, seed=1,
                        backend="onnxruntime", value_mix=0.5))
    rave = e.search.impl
    assert isinstance(rave.value, BatchEvaluator) and rave.value_at == DEFAULT_VALUE_AT_BATCH
    e.think(Limits(iterations=DEFAULT_VALUE_AT_BATCH + 50))
    assert rave.value.positions > 0 and rave.value.batches > 0
    assert rave.value_mix == 0.0 and e.describe()["value_mix"] == 0.0
    # without a network there is nothing to mix
    assert Engine(Settings(game=game, model="none", hash_mb=16, value_mix=0.5)
                  ).describe()["value_mix"] == 0.0
    with pytest.raises(ValueError, match="value_mix"):
        Settings(value_mix=-0.1)
    with pytest.raises(ValueError, match="value_fade"):
        Settings(value_fade=-1.0)
    with pytest.raises(ValueError, match="value_visits"):
        Settings(value_visits=-1)
    # a network valued in depth units is not odds: refused by name
    depth = ValueSpec(scale=26.0, lo=-26.0, hi=26.0, heuristic="depth_add", max_plies=25)
    path = save_model(make_model(game, preset("hex", "mlp"), value=depth, seed=3),
                      tmp_path / "depth.dnet")
    with pytest.raises(EngineError, match="gain"):
        Engine(Settings(game=game, model=str(path), search="rave", hash_mb=16))


def test_rave_takes_a_policy_network_and_other_searches_refuse_one(
        hex5_model_file: Path, tmp_path: Path) -> None:
    from descent.engine.engine import EngineError
    from descent.nets.arch import policy_preset
    from descent.nets.modelfile import make_model
    from descent.search_cy.eval.hex_policy import HexPolicy
    from descent.search_cy.search.rave import (
        DEFAULT_ACTION_VISITS,
        DEFAULT_MINIMAX_WEIGHT,
        DEFAULT_POLICY_AT,
        DEFAULT_POLICY_WEIGHT,
    )

    # the engine's defaults are the search's
    assert (Settings().policy_at, Settings().policy_weight, Settings().action_visits,
            Settings().minimax_weight) == (
        DEFAULT_POLICY_AT, DEFAULT_POLICY_WEIGHT, DEFAULT_ACTION_VISITS, DEFAULT_MINIMAX_WEIGHT)
    path = save_model(make_model("hex(size=5)", policy_preset("hex", "tiny"), seed=2),
                      tmp_path / "policy.dnet")
    e = Engine(Settings(game="hex(size=5)", policy=str(path), hash_mb=16, seed=1))
    impl = e.search.impl
    assert e.search_name == "rave" and isinstance(getattr(impl, "policy", None), HexPolicy)
    assert e.describe()["action_visits"] == 0          # no value heads to read
    assert e.describe()["minimax_weight"] == 0.0
    first = e.think(Limits(iterations=300)).move
    again = Engine(Settings(game="hex(size=5)", policy=str(path), hash_mb=16, seed=1))
    assert again.think(Limits(iterations=300)).move == first       # deterministic by seed
    again.set_option("policy_at", 7)
    again.set_option("policy_weight", 0.5)
    again.set_option("action_visits", 12)
    again.set_option("minimax_weight", 0.25)
    assert getattr(again.search.impl, "policy_at", 0) == 7
    assert getattr(again.search.impl, "policy_weight", 0) == 0.5
    assert getattr(again.search.impl, "action_visits", 0) == 12
    assert getattr(again.search.impl, "minimax_weight", 0) == 0.25
    with pytest.raises(ValueError, match="action_visits"):
        Settings(action_visits=-1)
    with pytest.raises(ValueError, match="minimax_weight"):
        Settings(minimax_weight=1.5)
    e.set_option("policy", "none")
    assert getattr(e.search.impl, "policy", "absent") is None
    with pytest.raises(EngineError, match="value network"):
        e.set_option("policy", str(hex5_model_file))
    assert getattr(e.search.impl, "policy", "absent") is None       # the engine as it was
    with pytest.raises(EngineError, match="no value heads"):
        Engine(Settings(game="hex(size=5)", policy=str(path), search="ubfms", hash_mb=16))
    with pytest.raises(ValueError, match="does not exist"):
        e.set_option("policy", str(tmp_path / "missing.dnet"))


def test_best_first_searches_value_children_by_a_policys_action_values(
        hex5_model_file: Path, tmp_path: Path) -> None:
    from descent.engine.engine import EngineError
    from descent.nets.arch import policy_preset
    from descent.nets.modelfile import make_model
    from descent.search_cy.eval.evaluator import HeuristicEvaluator
    from descent.search_cy.eval.hex_actions import HexActionEvaluator

    path = save_model(make_model("hex(size=5)", policy_preset("hex", "tiny_value"), seed=2),
                      tmp_path / "values.dnet")
    for search in ("ubfms", "ubfm", "descent", "mcts"):
        e = Engine(Settings(game="hex(size=5)", policy=str(path), search=search,
                            hash_mb=16, seed=1))
        assert isinstance(e.search.evaluator, HexActionEvaluator)
        assert e.describe()["evaluator"] == "action-values:values.dnet+heuristic:vc"
        assert e.describe()["policy"] == "values.dnet"
    first = e.think(Limits(iterations=200)).move
    again = Engine(Settings(game="hex(size=5)", policy=str(path), search="mcts",
                            hash_mb=16, seed=1))
    assert again.think(Limits(iterations=200)).move == first       # deterministic by seed
    # rave reads the same file as its move prior, over the heuristic evaluator
    e.set_option("search", "rave")
    assert type(e.search.evaluator) is not HexActionEvaluator
    assert isinstance(e.search.evaluator, HeuristicEvaluator)
    assert e.describe()["evaluator"] == "heuristic:vc" and e.describe()["action_visits"] > 0
    e.set_option("minimax_weight", 0.3)
    assert e.describe()["minimax_weight"] == 0.3
    e.set_option("search", "ubfms")
    e.set_option("policy", "none")
    assert e.describe()["evaluator"] == "heuristic:vc" and e.describe()["policy"] == ""
    e.set_option("policy", str(path))
    with pytest.raises(EngineError, match="not expectiminimax"):
        e.set_option("search", "expectiminimax")
    assert e.search_name == "ubfms"                                 # the engine as it was
    assert isinstance(e.search.evaluator, HexActionEvaluator)
    with pytest.raises(EngineError, match="a network model's search"):
        Engine(Settings(game="hex(size=5)", model=str(hex5_model_file), policy=str(path),
                        search="ubfms", hash_mb=16))


def test_a_native_network_model_values_the_best_first_searches_children_itself(
        tmp_path: Path) -> None:
    """The action values are for the heuristic's searches: a model computed in C (here
    the Hex nnue, with the VC evaluator's proofs beside it) values the children itself."""
    from descent.engine.engine import EngineError
    from descent.nets.arch import preset
    from descent.nets.modelfile import make_model
    from descent.search_cy.eval.hex_nnue_eval import HexNNUEEvaluator

    path = save_model(make_model("hex(size=5)", preset("hex", "nnue_tiny"), seed=2),
                      tmp_path / "nnue.dnet")
    e = Engine(Settings(game="hex(size=5)", model=str(path), search="ubfms", hash_mb=16,
                        seed=1))
    assert type(e.search.evaluator) is HexNNUEEvaluator and e.search.evaluator.know is not None
    assert e.describe()["evaluator"] == f"network:{path}" and e.describe()["policy"] == ""
    assert e.think(Limits(iterations=200)).action in e.state.legal_actions()
    with pytest.raises(EngineError, match="a network model's search"):
        e.set_option("policy", "descent/nets/shipped/policy/hex-size11.dnet")
