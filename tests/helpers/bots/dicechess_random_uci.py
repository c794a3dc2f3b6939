"""A tiny, independent dice-chess UCI engine: a sparring partner for the referee.

It shares no code with our kernels: moves come from python-chess's pseudo-legal move
generator filtered by the rolled piece type (the rules of ``descent/tools/dicechess_reference.py``,
built from RULES.md), and the choice is seeded: with ``greedy`` (the default) it takes the
enemy king when it can, else the most valuable capture (promotions count as captures of
the promoted piece's value), else a random move; without it, a random move.

It speaks the dialect of ``protocols/uci.py``: ``uci``, ``isready``, ``setoption``
(``UCI_Variant`` dicechess, ``NoMoveRule``, ``CastleRule``, ``Seed``, ``Greedy``),
``ucinewgame``, ``position startpos|fen <FEN or DFEN> [moves ...]`` (``0000`` = pass),
``go dice N [...]`` (other ``go`` arguments are accepted and ignored), ``stop``, ``quit``.
Errors answer ``info string error: ...``; a ``go`` always answers one ``bestmove``.

    python -m tests.helpers.bots.dicechess_random_uci [--seed N] [--random]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from typing import TextIO

import chess

from descent.tools.dicechess_reference import (
    CASTLE_MODES,
    NOMOVE_MODES,
    moves_by_die,
    player_moves,
    uci,
)

NAME = "dicechess-random"
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9,
          chess.KING: 1000}
PIECE_DIE = "pnbrqk"


class RandomDiceChessBot:
    def __init__(self, seed: int = 0, greedy: bool = True,
                 out: TextIO | None = None) -> None:
        self.seed = seed
        self.greedy = greedy
        self.out = out or sys.stdout
        self.nomove = "reroll"
        self.castle = "king"
        self.rng = random.Random(seed)
        self.board = chess.Board()
        self.pending_die: int | None = None     # a DFEN position's roll
        self.commands: dict[str, Callable[[list[str]], bool | None]] = {
            "uci": self.cmd_uci, "isready": self.cmd_isready, "setoption": self.cmd_setoption,
            "ucinewgame": self.cmd_ucinewgame, "position": self.cmd_position,
            "go": self.cmd_go, "stop": self.cmd_stop, "quit": self.cmd_quit,
        }

    def say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def handle(self, line: str) -> bool:
        """One input line; False on quit."""
        words = line.split()
        if not words or words[0].startswith("#"):
            return True
        command = self.commands.get(words[0].lower())
        try:
            if command is None:
                raise ValueError(f"unknown command {words[0]!r}")
            return command(words[1:]) is not False
        except ValueError as exc:
            self.say(f"info string error: {exc}")
            if words[0].lower() == "go":
                self.say("bestmove 0000")
            return True

    def cmd_uci(self, args: list[str]) -> None:
        self.say(f"id name {NAME}")
        self.say("id author the descent developers")
        self.say("option name UCI_Variant type combo default dicechess var dicechess")
        self.say("option name NoMoveRule type combo default reroll"
                 + "".join(f" var {m}" for m in NOMOVE_MODES))
        self.say("option name CastleRule type combo default king"
                 + "".join(f" var {m}" for m in CASTLE_MODES))
        self.say(f"option name Seed type spin default {self.seed} min 0 max 2147483647")
        self.say(f"option name Greedy type check default {str(self.greedy).lower()}")
        self.say("uciok")

    def cmd_isready(self, args: list[str]) -> None:
        self.say("readyok")

    def cmd_stop(self, args: list[str]) -> None:
        """Nothing to stop: ``go`` answers at once."""

    def cmd_quit(self, args: list[str]) -> bool:
        return False

    def cmd_setoption(self, args: list[str]) -> None:
        lowered = [a.lower() for a in args]
        if not lowered or lowered[0] != "name" or "value" not in lowered:
            raise ValueError("setoption: expected setoption name <option> value <value>")
        cut = lowered.index("value")
        name, value = "".join(lowered[1:cut]), " ".join(lowered[cut + 1:])
        if name == "uci_variant" and value == "dicechess":
            return
        if name == "nomoverule" and value in NOMOVE_MODES:
            self.nomove = value
        elif name == "castlerule" and value in CASTLE_MODES:
            self.castle = value
        elif name == "seed" and value.isdigit():
            self.seed = int(value)
            self.rng = random.Random(self.seed)
        elif name == "greedy" and value in ("true", "false"):
            self.greedy = value == "true"
        else:
            raise ValueError(f"setoption: bad option or value: {' '.join(args)}")

    def cmd_ucinewgame(self, args: list[str]) -> None:
        self.board = chess.Board()
        self.pending_die = None
        self.rng = random.Random(self.seed)

    def cmd_position(self, args: list[str]) -> None:
        cut = args.index("moves") if "moves" in args else len(args)
        head, moves = args[:cut], args[cut + 1:]
        pending: int | None = None
        if head[:1] == ["startpos"] and len(head) == 1:
            board = chess.Board()
        elif head[:1] == ["fen"] and len(head) in (7, 8):
            if len(head) == 8 and head[7] != "-":
                if head[7].lower() not in PIECE_DIE:
                    raise ValueError(f"position: bad DFEN roll {head[7]!r}")
                pending = PIECE_DIE.index(head[7].lower()) + 1
            board = chess.Board(" ".join(head[1:7]))
        else:
            raise ValueError("position: expected startpos or fen <FEN or DFEN> [moves ...]")
        for move in moves:
            # the referee checks the moves with its own kernel: no need to check them here
            board.push(chess.Move.from_uci(move) if move != "0000" else chess.Move.null())
            pending = None
        self.board, self.pending_die = board, pending

    def cmd_go(self, args: list[str]) -> None:
        die = self.pending_die
        if "dice" in args:
            index = args.index("dice") + 1
            if index >= len(args) or args[index] not in "123456" or len(args[index]) != 1:
                raise ValueError("go: dice must be 1..6")
            die = int(args[index])
        if die is None:
            raise ValueError("go: the roll is missing: go dice N")
        moves = player_moves(moves_by_die(self.board, self.castle), die, self.nomove)
        self.say(f"bestmove {uci(self.choose(moves))}")

    def choose(self, moves: list[chess.Move]) -> chess.Move:
        if self.greedy:
            gains = [self.gain(m) for m in moves]
            best = max(gains)
            if best > 0:
                moves = [m for m, g in zip(moves, gains, strict=True) if g == best]
        return self.rng.choice(moves)

    def gain(self, move: chess.Move) -> int:
        if not move:
            return 0
        victim = self.board.piece_type_at(move.to_square)
        gain = VALUES[victim] if victim else 0
        if move.promotion:
            gain += VALUES[move.promotion] - 1
        return gain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--random", action="store_true", help="uniform moves, no greed")
    ns = parser.parse_args(argv)
    bot = RandomDiceChessBot(ns.seed, greedy=not ns.random)
    for line in sys.stdin:
        if not bot.handle(line):
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
