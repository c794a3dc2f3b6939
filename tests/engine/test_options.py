"""The engine's option table: each option's change handler rebuilds what it must and
nothing more, a refused value changes nothing, values read at go need no rebuild."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

import descent.engine.engine as engine_module
from descent.engine.engine import Engine, EngineError
from descent.engine.limits import Limits
from descent.engine.options import OPTIONS, available_memory_mb
from descent.engine.settings import Settings


def hex_engine() -> Engine:
    return Engine(Settings(game="hex(size=5)", hash_mb=8, seed=1, model="none"))


def parts(e: Engine) -> dict[str, object]:
    return {"game": e.game, "state": e.state, "evaluator": e.evaluator, "search": e.search}


def test_every_option_is_a_setting_and_documented() -> None:
    names = {f.name for f in fields(Settings)}
    docs = (Path(__file__).resolve().parents[2] / "docs" / "options.md").read_text()
    for name, option in OPTIONS.items():
        assert name in names and option.help
        assert f"`{name}`" in docs, f"docs/options.md does not list the option {name}"


@pytest.mark.parametrize(("name", "value", "replaced"), [
    ("search", "mcts", {"search"}),
    ("hash_mb", "4", {"search"}),
    ("seed", "7", {"search"}),
    ("model", "none", {"evaluator", "search"}),
    ("backend", "onnxruntime", {"evaluator", "search"}),
    ("game", "hex(size=4)", {"game", "state", "evaluator", "search"}),
    ("strength", "expert", set()),
    ("resign_threshold", "0.9", set()),
    ("move_overhead_ms", "20", set()),
    ("nodes_per_second", "1000.0", set()),
    ("threads", "2", {"search"}),
])
def test_a_change_rebuilds_its_depth_only(name: str, value: str, replaced: set[str]) -> None:
    e = hex_engine()
    before = parts(e)
    e.set_option(name, value)
    after = parts(e)
    assert {k for k in before if before[k] is not after[k]} == replaced
    assert str(e.option_value(name)) == value
    e.think(Limits(nodes=200))      # the engine still plays


@pytest.mark.parametrize(("name", "value", "message"), [
    ("hash_mb", "0", "hash_mb must be in 1..131072"),
    ("hash_mb", "lots", "expected an integer"),
    ("search", "alphabeta", "search must be one of"),
    ("strength", "godlike", "unknown strength level"),
    ("model", "missing.dnet", "does not exist"),
    ("game", "chess", "unknown game"),
    ("resign_threshold", "nan", "finite"),
    ("colour", "1", "unknown option"),
])
def test_a_refused_value_changes_nothing(name: str, value: str, message: str) -> None:
    e = hex_engine()
    e.play("c3")
    before, settings = parts(e), e.settings
    with pytest.raises(ValueError, match=message):
        e.set_option(name, value)
    assert parts(e) == before and e.settings is settings
    assert e.state.to_text() == "c3"


def test_a_table_that_cannot_be_allocated_keeps_the_old_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    e = hex_engine()
    before, settings = parts(e), e.settings

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError("no room")

    monkeypatch.setattr(engine_module, "make_search", no_memory)
    with pytest.raises(EngineError, match="hash_mb=64: not enough memory"):
        e.set_option("hash_mb", 64)
    assert parts(e) == before and e.settings is settings and e.settings.hash_mb == 8


def test_values_read_at_go_take_effect_on_the_next_search() -> None:
    e = hex_engine()
    e.set_option("move_overhead_ms", 300)
    e.set_option("nodes_per_second", 10000)
    decision = e.think(Limits(move_time=1.0))
    assert e.time_manager.overhead == pytest.approx(0.3)
    # nodes-as-time: 0.7 s at 10,000 nodes a second
    assert decision.budget is not None and decision.nodes <= 7000 + 200
    e.set_option("strength", "random")
    moves = {e.think(Limits(nodes=300)).move for _ in range(8)}
    assert len(moves) > 1          # a randomised level, without a rebuild of the search


def test_a_table_larger_than_the_memory_is_refused_at_start_and_on_change() -> None:
    """``--hash-mb 131072`` started, then every search failed with MemoryError."""
    available = available_memory_mb()
    assert available is not None
    too_big = available + 1024
    with pytest.raises(ValueError, match="more than the .* MiB of memory available"):
        Engine(Settings(game="dicechess", hash_mb=too_big))
    e = hex_engine()
    before = parts(e)
    with pytest.raises(ValueError, match=f"hash_mb={too_big} MiB is more than"):
        e.set_option("hash_mb", too_big)
    assert parts(e) == before and e.settings.hash_mb == 8


def test_a_folder_given_as_the_model_is_named_as_a_folder(tmp_path: Path) -> None:
    """It said "does not exist"."""
    e = hex_engine()
    with pytest.raises(ValueError, match="is a directory, not a model file"):
        e.set_option("model", str(tmp_path))
