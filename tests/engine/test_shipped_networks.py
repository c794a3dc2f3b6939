"""The networks committed under nets/shipped (the engine's defaults) and nets/trained (the
others): each loads through ONNX Runtime for the game its name says, is picked up (shipped)
or not (trained) by default, and an engine plays a legal move with it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from descent.engine.engine import Engine
from descent.engine.limits import Limits
from descent.engine.models import (
    SHIPPED_POLICIES,
    model_file_name,
    resolve_model,
    shipped_model,
    shipped_policy,
)
from descent.engine.settings import Settings
from descent.nets.modelfile import load_model, read_metadata
from descent.search_cy.games.registry import make_game

NETS = Path(str(resources.files("descent.nets")))
SHIPPED_DIR = NETS / "shipped"
TRAINED_DIR = NETS / "trained"
FILES = sorted([*SHIPPED_DIR.glob("*.dnet"), *TRAINED_DIR.glob("*.dnet")])


def test_there_are_committed_networks() -> None:
    assert FILES, "no network under nets/shipped or nets/trained"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_committed_network_loads_plays_and_names_its_game(path: Path) -> None:
    spec = read_metadata(path)["game"]["spec"]
    game = make_game(spec)
    model = load_model(path, spec)
    assert model.training.games > 0 and "descent train" in model.training.note
    # the file is named for its game spec; only shipped files become the default
    assert (shipped_model(game) == path) == (path.parent == SHIPPED_DIR)
    assert path.stem == model_file_name(game)
    engine = Engine(Settings(game=spec, model=str(path), backend="onnxruntime",
                             hash_mb=16, seed=1))
    assert engine.describe()["evaluator"].startswith("network:")
    state = engine.state
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    decision = engine.think(Limits(nodes=2000))
    assert decision.move in [state.action_to_string(a) for a in state.legal_actions()]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_package_data_is_named_as_in_the_source_tree(path: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``--model nets/trained/<name>.dnet`` finds the packaged file from any folder."""
    monkeypatch.chdir(tmp_path)
    game = make_game("hex")
    assert resolve_model(f"nets/{path.parent.name}/{path.name}", game) == path
    with pytest.raises(ValueError, match="does not exist"):
        resolve_model(f"nets/{path.parent.name}/missing.dnet", game)
    with pytest.raises(ValueError, match="does not exist"):
        resolve_model(f"nets/../nets/{path.parent.name}/{path.name}", game)


POLICIES = sorted((SHIPPED_DIR / "policy").glob("*.dnet"))


def test_every_shipped_policy_serves_a_board_size() -> None:
    assert sorted(set(SHIPPED_POLICIES.values())) == [p.name for p in POLICIES]
    # a size no network was measured at has none
    assert shipped_policy(make_game("hex(size=5)")) is None


@pytest.mark.parametrize("size", sorted(SHIPPED_POLICIES))
def test_a_shipped_policy_is_the_default_of_its_board_size_with_or_without_swap(
        size: int) -> None:
    from descent.engine.models import resolve_policy
    from descent.nets.policy import load_policy

    path = SHIPPED_DIR / "policy" / SHIPPED_POLICIES[size]
    spec = read_metadata(path)["game"]["spec"]
    model = load_model(path, spec)
    assert model.arch.is_policy and model.training.games > 0
    assert path.name == f"hex-size{model.game.params['size']}.dnet"  # named for its training
    for swap in ("false", "true"):
        game = make_game(f"hex(size={size},swap={swap})")
        assert shipped_policy(game) == path == resolve_policy("", game)
        assert resolve_policy("none", game) is None
        assert load_policy(path, game).n == size
    engine = Engine(Settings(game=f"hex(size={size})", hash_mb=16, seed=1))
    assert engine.describe()["policy"] == path.name
    # the shipped network's value heads are read (version says so), unless asked not to
    assert engine.describe()["action_visits"] == Settings().action_visits > 0
    assert model.arch.output == "policy_value"
    assert Engine(Settings(game=f"hex(size={size})", hash_mb=16, action_visits=0)
                  ).describe()["action_visits"] == 0
    decision = engine.think(Limits(iterations=500))
    assert decision.move in [engine.state.action_to_string(a)
                             for a in engine.state.legal_actions()]
    assert Engine(Settings(game=f"hex(size={size})", policy="none", hash_mb=16)
                  ).describe()["policy"] == ""


@pytest.mark.parametrize("text", ["A4/5/5/5/4a r roll", "A4/5/5/5/4a r d3",
                                  "5/1A3/5/3b1/4c b roll"])
def test_the_shipped_einstein_network_leaves_endgames_their_exact_values(text: str) -> None:
    # a learned leaf never makes a solved value wrong: two- and three-cube endgames
    # searched to their ends give the exhaustive expectimax, whatever the network says
    from descent.nets.evaluator import network_evaluator
    from descent.search_cy.search.api import SearchParams, make_search
    from descent.search_cy.search.stopper import Stopper
    from tests.search_cy.search.test_expectimax import brute_force

    game = make_game("einstein")
    path = shipped_model(game)
    assert path is not None
    state = game.state_from_text(text)
    search = make_search("expectiminimax", network_evaluator(path, state),
                         SearchParams(max_depth=40))
    result = search.run(state, Stopper())
    assert result.resolved and result.value == brute_force(state)
