"""The dice-chess study agent's features (DiceChessFeatureEvaluator): each of the 37
against a second reading written with python-chess from the features' definitions, on
random positions; colour symmetry; a position worked by hand; the value's form."""

from __future__ import annotations

import math

import chess as pychess
import numpy as np
import pytest

from descent.search_cy.eval.dicechess_eval import FEATURE_NAMES, DiceChessFeatureEvaluator
from descent.search_cy.eval.heuristics import heuristic_for, heuristic_names
from descent.search_cy.games.state import GameState
from tests.search_cy.eval.test_heuristics import chess, flip_fen, random_states, value

VALUES = {pychess.PAWN: 1, pychess.KNIGHT: 3, pychess.BISHOP: 3, pychess.ROOK: 5,
          pychess.QUEEN: 9, pychess.KING: 0}
TYPES = (pychess.PAWN, pychess.KNIGHT, pychess.BISHOP, pychess.ROOK, pychess.QUEEN,
         pychess.KING)
CENTRE4 = pychess.SquareSet([pychess.D4, pychess.E4, pychess.D5, pychess.E5])


def side_features(board: pychess.Board, colour: bool) -> dict[str, float]:
    """One side's features, read off the definitions with python-chess."""
    enemy = not colour
    own = board.occupied_co[colour]
    theirs = board.occupied_co[enemy]
    pawns = board.pieces(pychess.PAWN, colour)
    enemy_pawns = board.pieces(pychess.PAWN, enemy)

    def rel(sq: int) -> int:
        rank = pychess.square_rank(sq)
        return rank if colour else 7 - rank

    def attacks_of(c: bool, piece_type: int) -> pychess.SquareSet:
        out = pychess.SquareSet()
        for sq in board.pieces(piece_type, c):
            out |= board.attacks(sq)
        return out

    att = {t: attacks_of(colour, t) for t in TYPES}
    mine = pychess.SquareSet()
    for t in TYPES:
        mine |= att[t]
    his = pychess.SquareSet()
    for t in TYPES:
        his |= attacks_of(enemy, t)
    f: dict[str, float] = dict.fromkeys(FEATURE_NAMES, 0.0)
    for name, t in zip(("pawns", "knights", "bishops", "rooks", "queens"), TYPES, strict=False):
        f[name] = len(board.pieces(t, colour))
    for name, t in zip(("knight_moves", "bishop_moves", "rook_moves", "queen_moves",
                        "king_moves"), TYPES[1:], strict=True):
        f[name] = sum(len(board.attacks(sq) & ~pychess.SquareSet(own))
                      for sq in board.pieces(t, colour))
    files = [sum(1 for sq in pawns if pychess.square_file(sq) == x) for x in range(8)]
    for x in range(8):
        f["doubled_pawns"] += max(files[x] - 1, 0)
        beside = (files[x - 1] if x > 0 else 0) + (files[x + 1] if x < 7 else 0)
        if files[x] and not beside:
            f["isolated_pawns"] += files[x]
    for sq in pawns:
        blockers = [e for e in enemy_pawns
                    if abs(pychess.square_file(e) - pychess.square_file(sq)) <= 1
                    and rel(e) > rel(sq)]
        if not blockers:
            f["passed_pawns"] += 1
            f["passed_advance"] += rel(sq) - 1
    # weak squares: on the side's third and fourth ranks, no pawn of its own on a file
    # beside, behind the square, that could one day attack it
    f["weak_squares"] = sum(
        1 for sq in pychess.SQUARES if rel(sq) in (2, 3)
        and not any(abs(pychess.square_file(p) - pychess.square_file(sq)) == 1
                    and rel(p) < rel(sq) for p in pawns))
    f["centre_pawns"] = len(pawns & CENTRE4)
    f["pawn_chain"] = len(pawns & att[pychess.PAWN])
    f["knights_centre"] = sum(1 for sq in board.pieces(pychess.KNIGHT, colour)
                              if 2 <= pychess.square_rank(sq) <= 5
                              and 2 <= pychess.square_file(sq) <= 5)
    f["bishop_pair"] = float(len(board.pieces(pychess.BISHOP, colour)) >= 2)
    for sq in board.pieces(pychess.ROOK, colour):
        x = pychess.square_file(sq)
        if not files[x]:
            if any(pychess.square_file(e) == x for e in enemy_pawns):
                f["rooks_semi_open"] += 1
            else:
                f["rooks_open"] += 1
        if rel(sq) == 6:
            f["rooks_seventh"] += 1
    f["rook_pair"] = float(len(board.pieces(pychess.ROOK, colour)) >= 2)
    king = board.king(colour)
    if king is not None:
        kf = pychess.square_file(king)
        f["king_shield"] = sum(1 for sq in pawns if abs(pychess.square_file(sq) - kf) <= 1
                               and 1 <= rel(sq) - rel(king) <= 2)
        f["king_zone_attacks"] = sum(1 for sq in pychess.SQUARES
                                     if pychess.square_distance(sq, king) == 1 and sq in his)
        f["king_open_files"] = sum(1 for x in range(max(kf - 1, 0), min(kf + 1, 7) + 1)
                                   if not files[x])
        f["king_home"] = float(rel(king) == 0)
        # squares beside the king that a piece of its own (not the king) attacks
        f["king_zone_defended"] = sum(
            1 for sq in pychess.SQUARES if pychess.square_distance(sq, king) == 1
            and any(t != pychess.KING and sq in att[t] for t in TYPES))
    f["squares_attacked"] = len(mine)
    f["centre_control"] = len(mine & CENTRE4)
    f["enemy_half_control"] = sum(1 for sq in mine if rel(sq) >= 4)
    for sq in pychess.SquareSet(own):
        piece_type = board.piece_type_at(sq)
        if piece_type == pychess.KING:
            continue
        if sq in his:
            f["pieces_attacked"] += 1
            if sq not in mine:
                f["hanging_material"] += VALUES[piece_type]  # type: ignore[index]
        if sq in mine:
            f["pieces_defended"] += 1
    enemy_king = board.king(enemy)
    f["king_attack_types"] = sum(1 for t in TYPES
                                 if enemy_king is not None and enemy_king in att[t])
    step = 8 if colour else -8
    pushes = any(0 <= sq + step < 64 and board.piece_at(sq + step) is None for sq in pawns)
    movable = int(pushes or bool(att[pychess.PAWN] & pychess.SquareSet(theirs)))
    for t in TYPES[1:]:
        movable += any(board.attacks(sq) & ~pychess.SquareSet(own)
                       for sq in board.pieces(t, colour))
    f["movable_types"] = movable
    targets = [VALUES[board.piece_type_at(sq)] for sq in mine  # type: ignore[index]
               if sq in pychess.SquareSet(theirs) and board.piece_type_at(sq) != pychess.KING]
    f["best_capture"] = max(targets, default=0)
    return f


def reference(state: GameState) -> list[float]:
    board = pychess.Board(state.to_text().split(" ")[0] + " w - - 0 1")
    white = side_features(board, pychess.WHITE)
    black = side_features(board, pychess.BLACK)
    return [white[name] - black[name] for name in FEATURE_NAMES]


def test_features_match_their_definitions_read_with_python_chess() -> None:
    evaluator = DiceChessFeatureEvaluator()
    states = random_states("dicechess", 300, seed=17, max_steps=300)
    seen = np.zeros(len(FEATURE_NAMES), bool)
    for state in states:
        got = evaluator.features(state)
        want = reference(state)
        for name, a, b in zip(FEATURE_NAMES, got, want, strict=True):
            assert a == b, (name, state.to_text())
        seen |= np.array(got) != 0
    # every feature took a nonzero value somewhere: none is read as a constant
    assert seen.all(), [n for n, s in zip(FEATURE_NAMES, seen, strict=True) if not s]


@pytest.mark.parametrize("spec", ["dicechess(nomove=reroll)", "dicechess(nomove=free)"])
def test_colour_flip_negates_features_and_value(spec: str) -> None:
    evaluator = heuristic_for(spec, "features")
    assert isinstance(evaluator, DiceChessFeatureEvaluator)
    for state in random_states(spec, 150, seed=23, max_steps=250):
        flipped = chess(flip_fen(state.to_text()), spec)
        assert evaluator.features(flipped) == [-x for x in evaluator.features(state)]
        assert value(evaluator, flipped) == pytest.approx(-value(evaluator, state), abs=1e-12)


def test_a_position_worked_by_hand() -> None:
    # 1. e4 e5 2. Nf3, Black to roll. White: Nf3 reaches d4 e5 g5 h4 g1, Nb1 a3 c3
    # (7 moves, Black's knights 5); the queen e2 (Black's d8: e7 f6 g5 h4); Rh1-g1. Nf3
    # attacks the undefended e5 pawn; the centre d4 e5 d5 for White, d4 for Black; every
    # White type can move, Black's rook cannot. Beside White's king, pieces attack d2 (Qd1,
    # Bc1, Nb1, Nf3), e2 (Qd1, Bf1) and f1 (Rh1), beside Black's d7 and e7: +1. Both
    # sides' pawns can reach every square of their third and fourth ranks: no weak square.
    state = chess("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2")
    evaluator = DiceChessFeatureEvaluator()
    got = dict(zip(FEATURE_NAMES, evaluator.features(state), strict=True))
    assert {k: v for k, v in got.items() if v} == {
        "knight_moves": 2.0, "rook_moves": 1.0, "queen_moves": -3.0, "knights_centre": 1.0,
        "king_zone_defended": 1.0, "squares_attacked": 2.0, "centre_control": 2.0,
        "enemy_half_control": 1.0, "pieces_attacked": -1.0, "hanging_material": -1.0,
        "movable_types": 1.0, "best_capture": 1.0}
    weights = evaluator.weights
    score = sum(weights[k] * v for k, v in got.items())
    assert value(evaluator, state) == pytest.approx(math.tanh(score / 1000.0), abs=1e-12)
    assert value(evaluator, chess("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")) \
        == 0.0


def test_weak_squares_rook_pair_and_king_defenders_by_hand() -> None:
    # White's pawns a2 b2 f2 g2 h2: no pawn on c or e can ever guard d3 or d4 (2 weak
    # squares); Black's full pawn row guards its third and fourth ranks. Two White rooks
    # (a pair); beside Ke1 the rook a1 guards d1 and the rook h1 f1: White 2, Black 0.
    state = chess("4k3/pppppppp/8/8/8/8/PP3PPP/R3K2R w KQ - 0 1")
    got = dict(zip(FEATURE_NAMES, DiceChessFeatureEvaluator().features(state), strict=True))
    assert got["weak_squares"] == 2.0
    assert got["rook_pair"] == 1.0
    assert got["king_zone_defended"] == 2.0


def test_registered_with_a_weight_for_each_feature() -> None:
    assert heuristic_names("dicechess") == ["material", "features"]
    evaluator = heuristic_for("dicechess", "features", "pawns=150")
    assert list(evaluator.weights) == list(FEATURE_NAMES) and len(FEATURE_NAMES) == 37
    assert evaluator.weights["pawns"] == 150.0
    # the default weights value the start's material and a queen up as the weights say
    queen_up = chess("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    assert value(heuristic_for("dicechess", "features"), queen_up) > 0.3
