"""The dice-chess NNUE (search_cy/eval/nnue_eval.pyx, games/dicechess_nnue.h): the
accumulator the position keeps equals one summed afresh after every move and take-back of
random games (castling, promotion and en passant among them), values equal the torch
module's, malformed weights are refused, searches on it are deterministic."""

from __future__ import annotations

import random

import numpy as np
import pytest

from descent.nets.arch import NNUE_Q, init_weights, preset, quantise_nnue
from descent.search_cy.eval.nnue_eval import NNUEEvaluator
from descent.search_cy.games.registry import make_game
from descent.search_cy.search.api import SearchParams, make_search
from descent.search_cy.search.stopper import Stopper

ARCH = preset("dicechess", "nnue")
SHAPE = (24, 8, 8)


def evaluator(seed: int = 1, arch=ARCH, **kw) -> NNUEEvaluator:
    w = init_weights(arch, SHAPE, seed)
    head = [(w[f"fc.{j}.weight"], w[f"fc.{j}.bias"]) for j in range(len(arch.fc) - 1)]
    head.append((w["head.weight"], w["head.bias"]))
    return NNUEEvaluator(w["ft.weight"], w["ft.bias"], head, tanh_output=True, **kw)


def kinds(state, action: int) -> set[str]:
    """What the move ``action`` of ``state`` does that the accumulator must follow."""
    frm, to, promo = action & 63, (action >> 6) & 63, action >> 12
    piece = state.piece_at(frm)
    out = set()
    if promo:
        out.add("promotion")
    if piece and piece.upper() == "K" and abs(to - frm) == 2:
        out.add("castling")
    if piece and piece.upper() == "P" and to == state.ep_square and to % 8 != frm % 8:
        out.add("en passant")
    if state.piece_at(to):
        out.add("capture")
    return out


def random_games(seed: int, games: int):
    """(state, kinds of the move just played) after every move of random games, then
    after every take-back."""
    rng = random.Random(seed)
    g = make_game("dicechess")
    for _ in range(games):
        s = g.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(rng.choice([a for a, _ in s.chance_outcomes()]))
                continue
            action = rng.choice(s.legal_actions())
            done = kinds(s, action)
            s.apply_action(action)
            yield s, done
        while s.history_length:
            s.undo()
            yield s, set()


def test_the_kept_accumulator_equals_a_fresh_one_after_every_move_and_take_back():
    ev = evaluator()
    seen: set[str] = set()
    checked = 0
    first = True
    for s, done in random_games(seed=3, games=40):
        if first:
            ev.accumulator(s)             # attached once; every move after that is kept
            first = False
        seen |= done
        kept = ev.accumulator(s)
        assert np.array_equal(kept, ev.accumulator(s, fresh=True))
        checked += 1
    assert {"promotion", "castling", "en passant", "capture"} <= seen
    assert checked > 1000


def test_a_clone_keeps_the_accumulator_and_a_new_position_drops_it():
    ev = evaluator()
    s = make_game("dicechess").new_initial_state()
    s.set_fen("r3k2r/pPp2ppp/8/3pP3/8/8/PPP2PPP/R3K2R w KQkq d6 0 1")
    before = ev.accumulator(s)
    c = s.clone()
    assert np.array_equal(ev.accumulator(c), before)
    s.set_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    assert np.array_equal(ev.accumulator(s), ev.accumulator(s, fresh=True))
    assert not np.array_equal(ev.accumulator(s), before)


def decision_states(seed: int, count: int):
    rng = random.Random(seed)
    g = make_game("dicechess")
    s = g.new_initial_state()
    out = []
    while len(out) < count:
        if s.is_terminal():
            s = g.new_initial_state()
        if s.is_chance_node():
            s.apply_action(rng.choice([a for a, _ in s.chance_outcomes()]))
            continue
        out.append(s.clone())
        s.apply_action(rng.choice(s.legal_actions()))
    return out


def test_values_equal_the_torch_module_through_the_kept_accumulator_and_the_planes():
    torch = pytest.importorskip("torch")
    from descent.nets.models import module_from_weights

    w = init_weights(ARCH, SHAPE, 5)
    net = module_from_weights(ARCH, SHAPE, w).eval()
    ev = evaluator(seed=5)
    states = decision_states(seed=8, count=120)
    planes = np.stack([np.asarray(s.encode(), np.float32) for s in states])
    with torch.no_grad():
        reference = net(torch.from_numpy(planes)).numpy()
    assert np.allclose(ev.forward(planes), reference, atol=1e-5)
    # the search's value: the side to move's output in player 0's view
    player0 = np.where([s.current_player() == 0 for s in states], reference, -reference)
    assert np.allclose([ev.value(s) for s in states], player0, atol=1e-5)


def test_malformed_weights_are_refused_by_what_is_wrong():
    w = init_weights(ARCH, SHAPE, 1)
    head = [(w["fc.0.weight"], w["fc.0.bias"]), (w["head.weight"], w["head.bias"])]
    unquantised = w["ft.weight"] + 0.3 / NNUE_Q
    with pytest.raises(ValueError, match="not whole multiples of 1/1024"):
        NNUEEvaluator(unquantised, w["ft.bias"], head, tanh_output=True)
    with pytest.raises(ValueError, match="do not map 768 features"):
        NNUEEvaluator(w["ft.weight"][:, :700], w["ft.bias"], head, tanh_output=True)
    with pytest.raises(ValueError, match="do not take 267 inputs"):
        NNUEEvaluator(w["ft.weight"], w["ft.bias"], head[1:], tanh_output=True)
    wide = quantise_nnue({"ft.weight": np.zeros((24, 768)), "ft.bias": np.zeros(24)})
    with pytest.raises(ValueError, match="a multiple of 16"):
        NNUEEvaluator(wide["ft.weight"], wide["ft.bias"], head, tanh_output=True)
    with pytest.raises(ValueError, match="values dice chess states"):
        evaluator().value(make_game("einstein").new_initial_state())


def test_expectiminimax_on_the_nnue_is_deterministic_and_threads_share_it():
    states = decision_states(seed=2, count=6)
    results = []
    for _ in range(2):
        search = make_search("expectiminimax", evaluator(seed=4), SearchParams(seed=1))
        results.append([(r.action, r.value, r.nodes) for r in
                        (search.run(s, Stopper(nodes=4000)) for s in states)])
    assert results[0] == results[1]
    threaded = make_search("expectiminimax", evaluator(seed=4),
                           SearchParams(seed=1, threads=2))
    for s in states:
        result = threaded.run(s, Stopper(nodes=4000))
        assert result.action in s.legal_actions()


def test_the_planes_it_reads_are_the_encodings():
    from descent.nets.encoding import DICECHESS_PLANES
    from descent.search_cy.eval.nnue_eval import PLANES

    assert PLANES == DICECHESS_PLANES
