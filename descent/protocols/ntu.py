"""EinStein wurfelt nicht! in the line format of the NTU "Theory of Computer Games" referee.

Selected with ``--protocol ntu``. The referee sends one command a line and reads one
answer line; it tells the whole position with every move request, so the engine keeps no
game record of its own.

==================  =====================================================================
``name``            the engine name (``descent``)
``version``         its version, search and evaluator
``time_setting T``  ``ok``; T seconds of thinking for all our moves of a game
``board_setting``   ``ok``; accepted with no arguments or ``5``, ``5 5``, ``5 5 6`` (rows,
                    columns, cubes a side); other boards are refused
``ini R|B``         a new game; the answer is our arrangement for that side, six cells,
                    cube 1 first, e.g. ``A1 A2 B1 B2 C1 A3`` (Red) or ``E5 E4 D5 D4 C5
                    E3`` (Blue): the arrangement ``gensetup`` of the ``ewn`` dialect plays
``get R|B D P*12``  the move of side R|B for the die D in position P; answer ``B2 C3``
``exit``            ends the session (no answer); ``quit`` is taken as a synonym
==================  =====================================================================

``descent-strength [LEVEL]`` is an extension (strength levels are an option in every
protocol); it answers ``ok`` or the current level. Bad input is answered ``? message``
on one line and changes nothing. Empty lines and ``#`` comments get no answer;
``# interrupt`` stops a running search.

Assumptions (no public description of the referee's exact format could be found; this is
the most plausible reading of the command list, and it is what the tests pin down):

* Cells are named like ``A1``..``E5`` in any case: column letter, then row, row 1 at the
  top; Red starts on A1 B1 C1 A2 B2 A3 and heads for E5, Blue the other way. ``R`` is Red,
  ``B`` Blue (``red``/``blue`` are accepted too).
* The 12 tokens of ``get`` are the cells of Red's cubes 1..6 and then Blue's cubes 1..6.
  A cube that has been captured is written ``0``, ``-1``, ``-``, ``--``, ``x``, ``xx`` or
  ``00``. The die is the real die 1..6 (with ``merge_dice`` the kernel maps it).
* ``time_setting``'s argument is in seconds (fractions allowed). Without it every move gets
  ``DEFAULT_MOVE_TIME`` seconds; ``--nodes-per-second`` turns budgets into node budgets.
* The settings commands are acknowledged with ``ok`` so that every request has exactly one
  answer line.
"""

from __future__ import annotations

from typing import ClassVar

from descent import __version__
from descent.engine.engine import Engine, EngineError
from descent.protocols.base import LineProtocol, ProtocolError, Send, parse_seconds
from descent.protocols.ewn import (
    BLUE,
    ENGINE_NAME,
    RED,
    SIDE_NAMES,
    Clock,
    einstein_state,
    parse_die,
    search_seconds,
    strong_setup_cells,
)
from descent.search_cy.games.einstein import cell_name, parse_cell
from descent.search_cy.search.strength import valid_levels

SIDES = {"r": RED, "red": RED, "b": BLUE, "blue": BLUE}
CAPTURED = frozenset({"0", "-1", "-", "--", "x", "xx", "00"})
OK = "ok"


def parse_side(text: str) -> int:
    side = SIDES.get(text.lower())
    if side is None:
        raise ProtocolError(f"unknown side {text!r}: expected R or B")
    return side


def position_text(side: int, die: int, tokens: list[str]) -> str:
    """The kernel's position text (einstein.pyx) for ``get``'s 12 cube tokens."""
    codes = [0] * 25
    for index, token in enumerate(tokens):
        if token.lower() in CAPTURED:
            continue
        try:
            if not token.isascii():   # the kernel's cell parser would read 'A٣' as A3
                raise ValueError(f"malformed cell {token!r}")
            cell = parse_cell(token)
        except ValueError as exc:
            raise ProtocolError(f"cube token {index + 1} ({SIDE_NAMES[index // 6]} cube "
                                f"{index % 6 + 1}): {exc}; captured cubes are written 0") from None
        if codes[cell]:
            raise ProtocolError(f"two cubes on {cell_name(cell).upper()}")
        codes[cell] = index + 1
    rows = []
    for r in range(5):
        row, empty = "", 0
        for c in range(5):
            code = codes[r * 5 + c]
            if not code:
                empty += 1
                continue
            if empty:
                row, empty = row + str(empty), 0
            row += chr(ord("A") + code - 1) if code <= 6 else chr(ord("a") + code - 7)
        rows.append(row + (str(empty) if empty else ""))
    return f"{'/'.join(rows)} {'rb'[side]} d{die}"


class NtuProtocol(LineProtocol):
    """The NTU referee's line format (module docstring)."""

    name: ClassVar[str] = "ntu"
    new_game_commands: ClassVar[frozenset[str]] = frozenset({"ini"})
    quit_commands: ClassVar[frozenset[str]] = frozenset({"exit", "quit"})
    commands: ClassVar[dict[str, str]] = {
        "name": "cmd_name",
        "version": "cmd_version",
        "time_setting": "cmd_time_setting",
        "board_setting": "cmd_board_setting",
        "ini": "cmd_ini",
        "get": "cmd_get",
        "exit": "cmd_exit",
        "quit": "cmd_exit",
        "descent-strength": "cmd_strength",
    }

    def __init__(self, engine: Engine, send: Send) -> None:
        super().__init__(engine, send)
        self.clock = Clock()
        einstein_state(engine)

    def is_urgent(self, line: str) -> bool:
        return line.strip().lower().replace(" ", "") == "#interrupt"

    def handle_urgent(self, line: str) -> None:
        self.engine.stop()

    def handle(self, line: str) -> bool:
        text = line.strip()
        if self.is_urgent(text):
            self.engine.stop()
            return self.running
        if not text or text.startswith("#"):
            return self.running
        tokens = text.split()
        if tokens[0].lower() not in self.commands:
            self._answer(f"? unknown command: {tokens[0]}")
            return self.running
        ok, answer = self.execute(tokens[0].lower(), tokens[1:], line)
        if answer is not None:
            self._answer(answer if ok else f"? {answer}")
        return self.running

    def _answer(self, text: str) -> None:
        self.send(" ".join(text.split()) + "\n")

    @staticmethod
    def _expect(args: list[str], low: int, high: int, usage: str) -> None:
        if not low <= len(args) <= high:
            raise ProtocolError(f"wrong number of arguments: expected {usage}")

    # -- commands -----------------------------------------------------------------

    def cmd_name(self, args: list[str]) -> str:
        return ENGINE_NAME

    def cmd_version(self, args: list[str]) -> str:

        info = self.engine.describe()
        return f"{__version__} ({info['search']}, {info['evaluator']})"

    def cmd_time_setting(self, args: list[str]) -> str:
        self._expect(args, 1, 1, "time_setting SECONDS")
        seconds = parse_seconds(args[0], "time")
        self.clock.main, self.clock.byoyomi, self.clock.stones = seconds, 0.0, 0
        self.clock.new_game()
        return OK

    def cmd_board_setting(self, args: list[str]) -> str:
        self._expect(args, 0, 3, "board_setting [5 [5 [6]]]")
        if args != ["5", "5", "6"][:len(args)]:
            raise ProtocolError(f"board {' '.join(args)} is not supported: only the 5x5 "
                                "board with 6 cubes a side")
        return OK

    def cmd_ini(self, args: list[str]) -> str:
        self._expect(args, 1, 1, "ini R|B")
        side = parse_side(args[0])
        self.engine.new_game()
        self.clock.new_game()
        return " ".join(cell_name(c).upper() for c in strong_setup_cells(side))

    def cmd_get(self, args: list[str]) -> str:
        if len(args) != 14:
            raise ProtocolError("wrong number of arguments: expected get R|B DIE and 12 "
                                f"cube cells (Red 1..6, Blue 1..6), 14 in all, not "
                                f"{len(args)}")
        side, die = parse_side(args[0]), parse_die(args[1])
        text = position_text(side, die, args[2:])
        try:
            self.engine.set_position(text)
        except EngineError as exc:
            # the kernel's advice to write the phase 'over' means nothing to a referee
            why = str(exc).removesuffix("; write 'over'")
            raise ProtocolError(f"bad position: {why}") from None
        decision = self.engine.think(self.clock.limits(side))
        self.clock.spend(side, search_seconds(self.engine, decision.nodes, decision.time))
        return f"{decision.move[:2].upper()} {decision.move[2:].upper()}"

    def cmd_exit(self, args: list[str]) -> None:
        self.running = False
        return None

    def cmd_strength(self, args: list[str]) -> str:
        self._expect(args, 0, 1, "descent-strength [LEVEL] with LEVEL one of "
                     + ", ".join(valid_levels()))
        if not args:
            return str(self.engine.option_value("strength"))
        self.engine.set_option("strength", args[0])   # ValueError names the valid levels
        return OK
