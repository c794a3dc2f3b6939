"""The Engine facade: positions, errors that change nothing, non-blocking go/stop/wait,
determinism, strength, logging off stdout."""

from __future__ import annotations

import threading
import time

import pytest

from descent.engine.engine import Engine, EngineError
from descent.engine.limits import Limits
from descent.engine.settings import Settings


def hex_engine(**kw: object) -> Engine:
    return Engine(Settings(game="hex(size=5)", hash_mb=16, seed=1, **kw))  # type: ignore[arg-type]


def test_play_undo_and_errors_keep_the_position() -> None:
    e = hex_engine()
    e.play("c3")
    before = e.state.to_text()
    for bad in ("c3", "z9", "", "swap"):
        with pytest.raises(EngineError):
            e.play(bad)
        assert e.state.to_text() == before
    e.undo()
    with pytest.raises(EngineError, match="nothing to undo"):
        e.undo()
    with pytest.raises(EngineError):
        e.set_position("not a position")
    assert e.state.ply == 0


def test_think_is_deterministic_under_a_node_budget() -> None:
    moves = []
    for _ in range(2):
        e = hex_engine()
        d = e.think(Limits(nodes=3000))
        moves.append((d.move, d.nodes, d.pv))
    assert moves[0] == moves[1]


def test_go_does_not_block_and_stop_ends_the_search() -> None:
    e = Engine(Settings(game="hex(size=11)", hash_mb=64, seed=1))
    done = threading.Event()
    results = []
    e.go(Limits(infinite=True), on_done=lambda d: (results.append(d), done.set()))
    assert e.searching
    time.sleep(0.2)
    e.stop()
    assert done.wait(30)
    decision = e.wait()
    assert decision is results[0] and decision.move
    assert not e.searching


def test_infinite_analysis_streams_info() -> None:
    e = hex_engine()
    infos = []
    e.go(Limits(infinite=True), on_info=infos.append)
    time.sleep(1.2)
    e.stop()
    decision = e.wait()
    assert decision is not None and len(infos) >= 2
    assert infos[-1].nodes >= infos[0].nodes


def test_chance_nodes_need_their_outcome_first() -> None:
    e = Engine(Settings(game="einstein", hash_mb=16, seed=1))
    e.set_position("AB3/5/2a2/5/4b r roll")
    with pytest.raises(EngineError, match="chance"):
        e.go(Limits(nodes=100))
    e.play("d3")
    d = e.think(Limits(nodes=20000))
    assert d.move in [e.state.action_to_string(a) for a in e.state.legal_actions()]


def test_strength_levels_randomise_the_choice() -> None:
    e = hex_engine(strength="random")
    seen = {e.think(Limits(iterations=50)).move for _ in range(12)}
    assert len(seen) > 1
    # max plays the search's own decision: the same from a fresh engine every time (one
    # engine searching the same position again goes on with the tree it kept)
    assert len({hex_engine(strength="max").think(Limits(iterations=50)).move
                for _ in range(3)}) == 1


@pytest.mark.parametrize("game", ["hex(size=7)", "einstein", "dicechess"])
def test_strength_levels_and_the_clock_work_on_two_threads(game: str) -> None:
    e = Engine(Settings(game=game, hash_mb=16, seed=1, threads=2, strength="casual"))
    while e.state.is_chance_node():             # the set-up and the die of the dice games
        e.play(e.state.action_to_string(e.state.chance_outcomes()[0][0]))
    legal = {e.state.action_to_string(a) for a in e.state.legal_actions()}
    assert e.think(Limits(nodes=20_000)).move in legal
    e.set_option("strength", "max")
    d = e.think(Limits(time_left=5.0))          # the time manager's budget, two threads
    assert d.move in legal and d.budget is not None and not d.budget.hurry


def test_resign_threshold() -> None:
    e = hex_engine(resign_threshold=0.5)
    for move in ["a1", "e1", "a2", "e2", "a3", "e3", "a4"]:
        e.play(move)
    e.play("b5")               # White ignores the threat: Black wins at once with a5
    d = e.think(Limits(iterations=20))
    assert d.move == "a5" and not d.resign
    e.undo()
    d = e.think(Limits(iterations=2000))     # White to move is lost
    assert d.resign


def test_hex_plays_rave_by_default_and_rave_plays_hex_only() -> None:
    e = hex_engine()
    assert e.search_name == "rave" and e.describe()["search"] == "rave"
    e.set_option("search", "ubfms")
    assert e.search_name == "ubfms"
    e.set_option("search", "rave")
    with pytest.raises(EngineError, match="does not play einstein"):
        e.set_option("game", "einstein")
    assert e.game.spec.startswith("hex(size=5") and e.search_name == "rave"
    d = e.think(Limits(iterations=200))
    assert d.move in [e.state.action_to_string(a) for a in e.state.legal_actions()]


def test_options_switch_game_and_search() -> None:
    e = hex_engine()
    e.set_option("game", "dicechess")
    e.set_option("search", "descent")
    assert e.describe()["game"].startswith("dicechess") and e.search_name == "descent"
    e.new_game("hex(size=7)")
    assert e.game.spec.startswith("hex(size=7") and e.state.ply == 0


def test_logs_never_reach_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    e = hex_engine()
    e.think(Limits(nodes=500))
    assert capsys.readouterr().out == ""


def test_heuristic_weights_reach_the_evaluator_and_bad_ones_are_refused() -> None:
    e = Engine(Settings(game="einstein", hash_mb=16, seed=1, model="none",
                        heuristic_weights="tempo=0.7, scale=1.5"))
    assert e.evaluator.weights["tempo"] == 0.7 and e.evaluator.weights["scale"] == 1.5
    assert e.evaluator.weights["cube_weight"] == 0.05      # the others keep their defaults
    e.set_option("heuristic_weights", "tempo=0.2")
    assert e.evaluator.weights["tempo"] == 0.2
    with pytest.raises(Exception, match="no weight 'tmepo'"):
        e.set_option("heuristic_weights", "tmepo=0.2")
    assert e.evaluator.weights["tempo"] == 0.2             # a refused change loses nothing
    with pytest.raises(Exception, match="outside"):
        Engine(Settings(game="einstein", hash_mb=16, model="none", heuristic_weights="tempo=9"))
    # the shipped EinStein network has no such weights: the setting is refused, not ignored
    with pytest.raises(Exception, match="model=none"):
        Engine(Settings(game="einstein", hash_mb=16, heuristic_weights="tempo=0.7"))
