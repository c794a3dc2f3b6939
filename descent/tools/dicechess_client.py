"""Dice chess for python-chess users: a board that knows the dice-chess moves of a roll,
and ``play``/``analyse`` that pass the roll to the engine's UCI (its ``Roll`` option).

    import chess.engine
    from descent.tools.dicechess_client import DiceBoard, play

    with chess.engine.SimpleEngine.popen_uci(["descent", "play", "--game", "dicechess"]) as e:
        board = DiceBoard()
        result = play(e, board, roll=1, limit=chess.engine.Limit(time=0.5))
        board.push(result.move or chess.Move.null())     # None: the roll gives no move

Importing this module also registers ``DiceBoard`` as python-chess's "Dice Chess"
variant, so ``chess.pgn.read_game`` reads the arena's dice-chess PGN records (their
``[Variant "Dice Chess"]`` tag, king captures, castling through attacked squares, passed
turns as ``--``) without errors. python-chess is not a dependency of the engine: importing
this module without it raises ImportError.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import chess
import chess.engine
import chess.variant

from descent.tools.dicechess_reference import castling_moves, moves_by_die

ROLLS = range(1, 7)


class DiceBoard(chess.Board):
    """A python-chess board that accepts what dice chess allows: the moves of ``roll``
    (1 pawn .. 6 king; 0: any roll's), no check rule, castling through attacked squares
    (docs/rules.md). The engine reads it as ``UCI_Variant dicechess``."""

    uci_variant = "dicechess"
    aliases = ["Dice Chess", "dicechess", "Dice-Chess"]

    def __init__(self, fen: str | None = chess.STARTING_FEN, *, roll: int = 0,
                 castle: str = "king", **kwargs: Any) -> None:
        super().__init__(fen, **kwargs)
        self.roll = roll
        self.castle = castle

    def is_legal(self, move: chess.Move) -> bool:
        return move in moves_by_die(self, self.castle)[self.roll]

    def generate_legal_moves(self, from_mask: chess.Bitboard = chess.BB_ALL,
                             to_mask: chess.Bitboard = chess.BB_ALL) -> Iterator[chess.Move]:
        """The dice-chess moves of the roll (no check rule): what python-chess's SAN
        parser and its PGN reader look moves up in."""
        for move in moves_by_die(self, self.castle)[self.roll]:
            if chess.BB_SQUARES[move.from_square] & from_mask and \
                    chess.BB_SQUARES[move.to_square] & to_mask:
                yield move

    def generate_castling_moves(self, from_mask: chess.Bitboard = chess.BB_ALL,
                                to_mask: chess.Bitboard = chess.BB_ALL) -> Iterator[chess.Move]:
        for move in castling_moves(self):
            if chess.BB_SQUARES[move.from_square] & from_mask and \
                    chess.BB_SQUARES[move.to_square] & to_mask:
                yield move

    def copy(self, *, stack: bool | int = True) -> DiceBoard:
        board = super().copy(stack=stack)
        board.roll, board.castle = self.roll, self.castle
        return board


if DiceBoard not in chess.variant.VARIANTS:
    chess.variant.VARIANTS.append(DiceBoard)


def _check_roll(roll: int) -> None:
    if roll not in ROLLS:
        raise ValueError(f"a roll is 1..6 (1 pawn, 2 knight, 3 bishop, 4 rook, 5 queen, "
                         f"6 king), not {roll}")


def play(engine: chess.engine.SimpleEngine, board: DiceBoard, roll: int,
         limit: chess.engine.Limit, **kwargs: Any) -> chess.engine.PlayResult:
    """The engine's move for ``board`` after ``roll``; ``result.move`` is None when the
    roll gives no move (a passed turn). Blocks."""
    _check_roll(roll)
    board.roll = roll
    options = {**kwargs.pop("options", {}), "Roll": roll}
    return engine.play(board, limit, options=options, **kwargs)


def analyse(engine: chess.engine.SimpleEngine, board: DiceBoard, roll: int,
            limit: chess.engine.Limit, **kwargs: Any) -> chess.engine.InfoDict:
    """The engine's analysis of ``board`` after ``roll``. Blocks."""
    _check_roll(roll)
    board.roll = roll
    options = {**kwargs.pop("options", {}), "Roll": roll}
    info: chess.engine.InfoDict = engine.analyse(board, limit, options=options, **kwargs)
    return info
