"""Dice chess rules from an independent reference built on python-chess: the bench's
reference rate (``descent bench rules``) and the differential tests' oracle.

The reference knows the rules only from docs/rules.md ("Dice chess"): python-chess's
pseudo-legal moves filtered by the rolled piece type, with the dice-chess adjustments
(castling ignores attacked squares, pawns on the seventh rank promote to the rolled
piece on rolls 2..5, never to a king, castling also on a roll of 4 with
castle=king-or-rook), the nomove options, king capture, and the draws (100 plies, threefold
repetition, bare kings). It shares no code with the Cython kernel. python-chess is not a
dependency of the engine: importing this module without it raises ImportError.

Perft counts leaves after ``depth`` player moves from a chance node: every die outcome
is expanded (unweighted) and does not use depth; a pass counts as a move; a finished game
before the horizon has no leaves.
"""

from __future__ import annotations

import chess

NOMOVE_MODES = ("reroll", "pass", "free")
CASTLE_MODES = ("king", "king-or-rook")

_CASTLES = (
    # (right's rook square, king from, king to, squares that must be empty)
    (chess.H1, chess.E1, chess.G1, (chess.F1, chess.G1)),
    (chess.A1, chess.E1, chess.C1, (chess.B1, chess.C1, chess.D1)),
    (chess.H8, chess.E8, chess.G8, (chess.F8, chess.G8)),
    (chess.A8, chess.E8, chess.C8, (chess.B8, chess.C8, chess.D8)),
)


def castling_moves(board: chess.Board) -> list[chess.Move]:
    """Castling under dice chess rules: right, king and rook at home, squares between
    empty; attacked squares do not matter."""
    moves = []
    for rook_sq, king_from, king_to, between in _CASTLES:
        colour = chess.square_rank(king_from) == 0
        if colour != board.turn or not board.castling_rights & chess.BB_SQUARES[rook_sq]:
            continue
        if board.piece_at(king_from) != chess.Piece(chess.KING, colour):
            continue
        if board.piece_at(rook_sq) != chess.Piece(chess.ROOK, colour):
            continue
        if any(board.piece_at(sq) for sq in between):
            continue
        moves.append(chess.Move(king_from, king_to))
    return moves


def moves_by_die(board: chess.Board, castle: str = "king") -> dict[int, list[chess.Move]]:
    """Die value 1..6 -> its moves; key 0: every move (what nomove=free allows)."""
    by_die: dict[int, list[chess.Move]] = {d: [] for d in range(7)}
    for move in board.generate_pseudo_legal_moves():
        if board.is_castling(move):
            continue  # python-chess refuses castling through attacked squares: redone below
        piece = board.piece_type_at(move.from_square)
        assert piece is not None
        by_die[0].append(move)
        by_die[piece].append(move)
        if move.promotion is not None and piece == chess.PAWN:
            # python-chess numbers N B R Q as 2..5, the same as the die
            by_die[move.promotion].append(move)
    castles = castling_moves(board)
    by_die[0] += castles
    by_die[chess.KING] += castles
    if castle == "king-or-rook":
        by_die[chess.ROOK] += castles
    return by_die


def player_moves(by_die: dict[int, list[chess.Move]], die: int, nomove: str) -> list[chess.Move]:
    """The moves at the player node after rolling die; Move.null() is the pass."""
    moves = by_die[die]
    if not moves and nomove == "free":
        moves = by_die[0]
    return moves if moves else [chess.Move.null()]


def outcomes(by_die: dict[int, list[chess.Move]], nomove: str) -> list[int]:
    """Die values the chance node can produce (uniform over them)."""
    if nomove == "reroll":
        rollable = [d for d in range(1, 7) if by_die[d]]
        if rollable:
            return rollable
    return list(range(1, 7))


def uci(move: chess.Move) -> str:
    """UCI of a move as the kernel spells it (the pass is ``0000``)."""
    return move.uci() if move else "0000"


def position_key(board: chess.Board) -> tuple[object, ...]:
    """What the repetition rule compares: board, side, castling rights, and the en
    passant square only when a pawn could take en passant (pseudo-legally)."""
    ep = board.ep_square if board.has_pseudo_legal_en_passant() else None
    return (board.board_fen(), board.turn, board.castling_rights, ep)


def is_over(board: chess.Board, keys: list[tuple[object, ...]]) -> bool:
    """King captured, bare kings, 100 plies without capture or pawn move, threefold."""
    if board.king(chess.WHITE) is None or board.king(chess.BLACK) is None:
        return True
    if board.occupied == board.kings:
        return True
    if board.halfmove_clock >= 100:
        return True
    window = keys[-1 - board.halfmove_clock:]
    return window.count(keys[-1]) >= 3


def _perft(board: chess.Board, depth: int, keys: list[tuple[object, ...]], nomove: str,
           castle: str) -> int:
    by_die = moves_by_die(board, castle)
    total = 0
    for die in outcomes(by_die, nomove):
        total += _perft_moves(board, player_moves(by_die, die, nomove), depth, keys, nomove,
                              castle)
    return total


def _perft_moves(board: chess.Board, moves: list[chess.Move], depth: int,
                 keys: list[tuple[object, ...]], nomove: str, castle: str) -> int:
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        keys.append(position_key(board))
        if not is_over(board, keys):
            total += _perft(board, depth - 1, keys, nomove, castle)
        keys.pop()
        board.pop()
    return total


def reference_perft_per_die(fen: str, depth: int, nomove: str = "reroll",
                            castle: str = "king") -> dict[int, int]:
    """{die outcome: leaves after depth player moves} at the chance node of a FEN."""
    board = chess.Board(fen)
    keys = [position_key(board)]
    if depth < 1 or is_over(board, keys):
        raise ValueError(f"reference perft needs depth >= 1 and a running game: {fen}")
    by_die = moves_by_die(board, castle)
    return {die: _perft_moves(board, player_moves(by_die, die, nomove), depth, keys, nomove,
                              castle)
            for die in outcomes(by_die, nomove)}


def reference_moves(fen: str, die: int, nomove: str = "reroll",
                    castle: str = "king") -> list[str]:
    """Sorted UCI moves after rolling die in the position of a FEN (the player node)."""
    board = chess.Board(fen)
    return sorted(uci(m) for m in player_moves(moves_by_die(board, castle), die, nomove))
