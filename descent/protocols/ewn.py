"""EinStein wurfelt nicht! over the HTP-like dialect of PROTOCOLS.md.

Framing is GTP's: an optional numeric id, a command, its arguments; the reply is
``=[id] result`` or ``?[id] message`` followed by a blank line. Empty lines and ``#``
comments get no reply; ``# interrupt`` stops a running search. Colours are ``red``/``r``
and ``blue``/``b`` in any case; cells are ``a1``..``e5`` (row 1 at the top, RULES.md).

Commands (the table ``EwnProtocol.commands``):

* ``protocol_version``, ``name``, ``version``, ``list_commands``, ``known_command C``,
  ``quit``.
* ``clear_board``: a new game in the set-up phase (time settings are kept, clocks reset).
* ``setup C CELLS...`` / ``setup C RANK``: C's six cells, cube 1 first (``a1 b1 c1 a2 b2
  a3``, also ``a1b1c1a2b2a3`` or comma separated), or the rank 0..719. The arrangement is
  applied as the set-up node's action whatever the game's ``setup`` option makes that node:
  a chance outcome (``setup=random``) or a player's choice (``free``, ``mirror``). Blue may
  set up before Red (secret placement): its arrangement is held and applied right after
  Red's. With ``setup=mirror`` Red's set-up places Blue's cubes too; ``setup blue`` is then
  accepted only when it names the arrangement already on the board. Re-sending an
  arrangement that already stands on the board (no cube of that side moved) is a no-op.
* ``gensetup C``: the engine's arrangement (``STRONG_SETUP``), applied and answered as six
  cells. See ``STRONG_SETUP`` for how it was chosen.
* ``play C DIE MOVE`` (``play red 3 b2c3``): the die is applied as the roll's chance outcome
  (with ``merge_dice`` the kernel maps the real die to its group's outcome), then the move.
  An illegal move is refused with the legal moves for that die; the position, die
  included, is unchanged.
* ``genmove C DIE``: applies the die, searches, plays and answers the move (``b2c3``).
* ``undo``: takes back the last ``play``/``genmove`` (the move and its die) or ``setup``/
  ``gensetup``; ``?`` when there is nothing to undo.
* ``final_score``: ``R+``, ``B+`` or ``cannot score``.
* ``showboard``: a newline, then the board, the side to act and the position text.
* ``time_settings M B S`` (GTP: main time, Canadian byo-yomi block time and stones;
  ``B > 0, S = 0`` or no time at all means no limit) and ``time_left C T S`` (GTP) or
  MoHex's ``time_left [C [T]]`` (no time: report the clocks).
* ``descent-strength [LEVEL]``: the playing strength (``search_cy/search/strength.py``:
  max, master, ..., random, or 0..20).
* ``param_descent [NAME VALUE]``: the engine's option table (docs/options.md), every
  ``NAME VALUE`` line, or one option set.

Without time settings (or with "no limit" ones) a move gets ``DEFAULT_MOVE_TIME`` seconds;
with ``--nodes-per-second`` every time budget becomes a node budget, which makes games
reproducible. When the manager sends no ``time_left``, the engine counts its own clock down
by the time each search took (nodes / nodes-per-second in nodes-as-time mode).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from descent import __version__
from descent.engine.engine import Engine, EngineError
from descent.engine.limits import Limits
from descent.protocols.base import (
    GtpFramedProtocol,
    ProtocolError,
    Send,
    is_interrupt,
    option_text,
    parse_count,
    parse_seconds,
    set_named_option,
    settable_options,
)
from descent.search_cy.games.einstein import (
    EinsteinState,
    cell_name,
    home_cells,
    parse_arrangement,
    parse_cell,
    rank_to_cells,
)
from descent.search_cy.search.strength import valid_levels

RED, BLUE = 0, 1
SIDE_NAMES = ("red", "blue")
COLOURS = {"red": RED, "r": RED, "blue": BLUE, "b": BLUE}

# Red's cubes 1..6 on a1 a2 b1 b2 c1 a3 (Blue: the point mirror, e5 e4 d5 d4 c5 e3): the
# cubes 1 and 6, which moved most often in engine self-play (end numbers inherit the dice
# of captured neighbours), stand on the corners a1 and a3, 5 on the corner c1, the middle
# numbers in the middle. Chosen from a least-squares fit of (cell, cube) effects over 24000
# self-play games with random arrangements, then checked against uniformly random
# arrangements (both colours, both first movers, expectiminimax): it won 55.5% of 6000
# games at 2000 nodes a move, where the natural order a1 b1 c1 a2 b2 a3 won 52.9%, and
# 55.5% of 2000 games at 10000 nodes.
STRONG_SETUP = ("a1", "a2", "b1", "b2", "c1", "a3")

DEFAULT_MOVE_TIME = 1.0   # seconds a move when the manager gives no clock
PROTOCOL_VERSION = "2"
ENGINE_NAME = "descent"


def parse_colour(text: str) -> int:
    side = COLOURS.get(text.lower())
    if side is None:
        raise ProtocolError(f"unknown colour {text!r}: expected red, r, blue or b")
    return side


def parse_die(text: str) -> int:
    if not (len(text) == 1 and text in "123456"):
        raise ProtocolError(f"bad die {text!r}: expected 1..6")
    return int(text)


def strong_setup_cells(side: int) -> tuple[int, ...]:
    """``STRONG_SETUP`` for a side as cell ids, cube 1 first (Blue: point mirror)."""
    red = tuple(parse_cell(name) for name in STRONG_SETUP)
    return red if side == RED else tuple(24 - cell for cell in red)


def strong_setup_rank(side: int) -> int:
    return parse_arrangement(side, " ".join(cell_name(c) for c in strong_setup_cells(side)))


def einstein_state(engine: Engine) -> EinsteinState:
    state = engine.state
    if not isinstance(state, EinsteinState):
        raise ProtocolError(f"the ewn and ntu protocols play EinStein wurfelt nicht!, not "
                            f"{engine.game.spec}: start the engine with --game einstein")
    return state


def format_seconds(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if math.isfinite(value) else str(value)


@dataclass
class Clock:
    """What the manager said about time, turned into Limits for one side's next move."""

    main: float | None = None          # None: no time settings
    byoyomi: float = 0.0
    stones: int = 0
    reported: dict[int, tuple[float, int]] = field(default_factory=dict)  # time_left C T S
    used: dict[int, float] = field(default_factory=lambda: {RED: 0.0, BLUE: 0.0})

    @property
    def unlimited(self) -> bool:
        if self.main is None:
            return True
        # GTP: byo-yomi time with zero stones means no time limit
        return (self.byoyomi > 0 and self.stones == 0) or (self.main <= 0 and
                                                            self.byoyomi <= 0)

    def limits(self, side: int) -> Limits:
        if self.unlimited:
            return Limits(move_time=DEFAULT_MOVE_TIME)
        if side in self.reported:
            left, stones = self.reported[side]
            in_byoyomi = stones > 0
            return Limits(time_left=left, byoyomi=self.byoyomi,
                          byoyomi_stones=stones if in_byoyomi else self.stones,
                          in_byoyomi=in_byoyomi)
        main = self.main if self.main is not None else 0.0
        return Limits(time_left=max(0.0, main - self.used[side]), byoyomi=self.byoyomi,
                      byoyomi_stones=self.stones)

    def spend(self, side: int, seconds: float) -> None:
        self.used[side] += seconds
        if side in self.reported:
            left, stones = self.reported[side]
            self.reported[side] = (max(0.0, left - seconds), stones)

    def left(self, side: int) -> tuple[float, int] | None:
        """(seconds, stones) on a side's clock; None without time settings."""
        if side in self.reported:
            return self.reported[side]
        if self.unlimited or self.main is None:
            return None
        return (max(0.0, self.main - self.used[side]), 0)

    def new_game(self) -> None:
        self.reported.clear()
        self.used = {RED: 0.0, BLUE: 0.0}


def search_seconds(engine: Engine, nodes: int, elapsed: float) -> float:
    """Clock time a search is charged: in nodes-as-time mode its nodes at the nominal rate,
    so that a replayed game charges the same and stays reproducible."""
    rate = engine.settings.nodes_per_second
    return nodes / rate if rate > 0 else elapsed


@dataclass(frozen=True)
class _Entry:
    """One undoable command: kernel actions it applied, and the held Blue arrangement
    before it."""

    actions: int
    pending: int | None


class EwnProtocol(GtpFramedProtocol):
    """The EinStein HTP dialect (module docstring)."""

    name: ClassVar[str] = "ewn"
    fold_case: ClassVar[bool] = True
    new_game_commands: ClassVar[frozenset[str]] = frozenset({"clear_board"})
    commands: ClassVar[dict[str, str]] = {
        "protocol_version": "cmd_protocol_version",
        "name": "cmd_name",
        "version": "cmd_version",
        "list_commands": "cmd_list_commands",
        "known_command": "cmd_known_command",
        "quit": "cmd_quit",
        "clear_board": "cmd_clear_board",
        "setup": "cmd_setup",
        "gensetup": "cmd_gensetup",
        "play": "cmd_play",
        "genmove": "cmd_genmove",
        "undo": "cmd_undo",
        "final_score": "cmd_final_score",
        "showboard": "cmd_showboard",
        "time_settings": "cmd_time_settings",
        "time_left": "cmd_time_left",
        "descent-strength": "cmd_strength",
        "param_descent": "cmd_param_descent",
    }

    def __init__(self, engine: Engine, send: Send) -> None:
        super().__init__(engine, send)
        self.clock = Clock()
        self._history: list[_Entry] = []
        self._pending_blue: int | None = None
        einstein_state(engine)

    # -- framing (protocols.base.GtpFramedProtocol) --------------------------------

    def is_urgent(self, line: str) -> bool:
        return is_interrupt(line)

    def handle_urgent(self, line: str) -> None:
        self.engine.stop()

    def normalise_id(self, token: str) -> str:
        return str(int(token))

    # -- helpers ------------------------------------------------------------------

    @property
    def state(self) -> EinsteinState:
        return einstein_state(self.engine)

    @staticmethod
    def _expect(args: list[str], low: int, high: int, usage: str) -> None:
        if not low <= len(args) <= high:
            raise ProtocolError(f"wrong number of arguments: expected {usage}")

    def _check_turn(self, side: int) -> None:
        """The position must wait for ``side``'s die roll."""
        state = self.state
        if state.is_terminal():
            raise ProtocolError(f"the game is over ({SIDE_NAMES[state.winner_colour()]} won)")
        if state.phase_name == "setup":
            raise ProtocolError(f"the set-up is not finished: {SIDE_NAMES[state.side_to_act]} "
                                "has not set up (setup or gensetup)")
        if state.phase_name != "roll":
            raise ProtocolError(f"the position waits for {SIDE_NAMES[state.side_to_act]}'s "
                                f"move with die {state.pending_die}")
        if state.side_to_act != side:
            raise ProtocolError(f"it is {SIDE_NAMES[state.side_to_act]}'s turn, "
                                f"not {SIDE_NAMES[side]}'s")

    def _cells_of(self, side: int) -> tuple[int, ...] | None:
        """The cells of a side's cubes 1..6 while they are all on its home cells."""
        state = self.state
        cells = tuple(state.cube_cell(side, cube) for cube in range(1, 7))
        home = set(home_cells(side))
        return cells if all(cell in home for cell in cells) else None

    def _set_up(self, side: int, rank: int) -> None:
        """Applies (or holds) a side's arrangement; see the module docstring."""
        if self._cells_of(side) == rank_to_cells(side, rank):
            return   # it stands so already (a manager re-sending it): nothing changes
        state = self.state
        mirror = state.setup == "mirror"
        if state.phase_name != "setup":
            if mirror and side == BLUE:
                raise ProtocolError("with setup=mirror Blue's arrangement is the point mirror "
                                    "of Red's: " + " ".join(cell_name(c) for c in
                                                            self._cells_of(BLUE) or ()))
            raise ProtocolError(f"the set-up is over: {SIDE_NAMES[side]} has set up")
        acting = state.side_to_act
        before = self._pending_blue
        if side == acting:
            self.engine.play_action(rank)
            applied = 1
            if side == RED and self._pending_blue is not None:
                try:
                    self.engine.play_action(self._pending_blue)
                except EngineError:
                    self.engine.undo()
                    raise
                applied = 2
                self._pending_blue = None
            self._history.append(_Entry(applied, before))
        elif side == BLUE:
            if mirror:
                raise ProtocolError("with setup=mirror Red's set-up places Blue's cubes "
                                    "too (their point mirror): set up Red")
            self._pending_blue = rank
            self._history.append(_Entry(0, before))
        else:
            raise ProtocolError("the set-up is over: red has set up")

    def _arrangement_text(self, side: int, rank: int) -> str:
        return " ".join(cell_name(c) for c in rank_to_cells(side, rank))

    def _legal_text(self) -> str:
        state = self.state
        return " ".join(state.action_to_string(a) for a in state.legal_actions())

    # -- commands -----------------------------------------------------------------

    def cmd_protocol_version(self, args: list[str]) -> str:
        return PROTOCOL_VERSION

    def cmd_name(self, args: list[str]) -> str:
        return ENGINE_NAME

    def cmd_version(self, args: list[str]) -> str:

        info = self.engine.describe()
        return f"{__version__} ({info['search']}, {info['evaluator']})"

    def cmd_list_commands(self, args: list[str]) -> str:
        return "\n".join(self.commands)

    def cmd_known_command(self, args: list[str]) -> str:
        self._expect(args, 1, 1, "known_command NAME")
        return "true" if args[0].lower() in self.commands else "false"

    def cmd_quit(self, args: list[str]) -> str:
        self.running = False
        return ""

    def cmd_clear_board(self, args: list[str]) -> str:
        self.engine.new_game()
        self._history.clear()
        self._pending_blue = None
        self.clock.new_game()
        return ""

    def cmd_setup(self, args: list[str]) -> str:
        if len(args) < 2:
            raise ProtocolError("wrong number of arguments: expected setup COLOUR CELLS... "
                                "(six cells, cube 1 first) or setup COLOUR RANK")
        side = parse_colour(args[0])
        text = " ".join(args[1:])
        if not text.isascii():   # the kernel's parser would read '٣' as the rank 3
            raise ProtocolError(f"malformed arrangement {text!r}: expected six cells a1..e5, "
                                "cube 1 first, or a rank 0..719")
        rank = parse_arrangement(side, text)
        self._set_up(side, rank)
        return ""

    def cmd_gensetup(self, args: list[str]) -> str:
        self._expect(args, 1, 1, "gensetup COLOUR")
        side = parse_colour(args[0])
        state = self.state
        standing = self._cells_of(side)
        if state.setup == "mirror" and side == BLUE and standing is not None:
            return " ".join(cell_name(c) for c in standing)   # Red's set-up chose it
        if side == BLUE and self._pending_blue is not None:
            raise ProtocolError("blue's arrangement is already given: "
                                + self._arrangement_text(BLUE, self._pending_blue))
        rank = strong_setup_rank(side)
        self._set_up(side, rank)
        return self._arrangement_text(side, rank)

    def cmd_play(self, args: list[str]) -> str:
        self._expect(args, 3, 3, "play COLOUR DIE MOVE (e.g. play red 3 b2c3)")
        side, die = parse_colour(args[0]), parse_die(args[1])
        self._check_turn(side)
        move = args[2]
        if not move.isascii():   # the kernel's cell parser would read 'c٢' as c2
            raise ProtocolError(f"malformed move {move!r}: expected from-cell + to-cell "
                                "like b2c3")
        self.engine.play(f"d{die}")
        try:
            self.engine.play(move)
        except EngineError:
            legal = self._legal_text()
            try:
                self.state.string_to_action(move)
                why = ""
            except ValueError as exc:   # malformed, or not a step of this side's cubes
                why = f" ({exc})"
            self.engine.undo()
            raise ProtocolError(f"illegal move {move} for {SIDE_NAMES[side]} with die "
                                f"{die}{why}; legal: {legal}") from None
        self._history.append(_Entry(2, self._pending_blue))
        return ""

    def cmd_genmove(self, args: list[str]) -> str:
        self._expect(args, 2, 2, "genmove COLOUR DIE")
        side, die = parse_colour(args[0]), parse_die(args[1])
        self._check_turn(side)
        self.engine.play(f"d{die}")
        try:
            decision = self.engine.think(self.clock.limits(side))
            self.engine.play_action(decision.action)
        except BaseException:
            self.engine.undo()
            raise
        self._history.append(_Entry(2, self._pending_blue))
        self.clock.spend(side, search_seconds(self.engine, decision.nodes, decision.time))
        return decision.move

    def cmd_undo(self, args: list[str]) -> str:
        self._expect(args, 0, 0, "undo (no arguments)")
        if not self._history:
            raise ProtocolError("nothing to undo")
        entry = self._history.pop()
        for _ in range(entry.actions):
            self.engine.undo()
        self._pending_blue = entry.pending
        return ""

    def cmd_final_score(self, args: list[str]) -> str:
        state = self.state
        if not state.is_terminal():
            return "cannot score"
        return "R+" if state.winner_colour() == RED else "B+"

    def cmd_showboard(self, args: list[str]) -> str:
        state = self.state
        lines = ["", str(state)]
        if self._pending_blue is not None:
            lines.append("blue's arrangement (held until red sets up): "
                         + self._arrangement_text(BLUE, self._pending_blue))
        lines.append(f"position: {state.to_text()}")
        return "\n".join(lines)

    def cmd_time_settings(self, args: list[str]) -> str:
        self._expect(args, 3, 3, "time_settings MAIN BYOYOMI STONES")
        main = parse_seconds(args[0], "main time")
        byoyomi = parse_seconds(args[1], "byo-yomi time")
        stones = parse_count(args[2], "byo-yomi stones")
        self.clock.main, self.clock.byoyomi, self.clock.stones = main, byoyomi, stones
        self.clock.new_game()
        return ""

    def cmd_time_left(self, args: list[str]) -> str:
        self._expect(args, 0, 3, "time_left COLOUR SECONDS STONES (or time_left [COLOUR "
                     "[SECONDS]])")
        sides = [parse_colour(args[0])] if args else [RED, BLUE]
        if len(args) >= 2:
            seconds = parse_seconds(args[1], "time left")
            stones = parse_count(args[2], "stones left") if len(args) == 3 else 0
            self.clock.reported[sides[0]] = (seconds, stones)
            return ""
        parts = []
        for side in sides:
            left = self.clock.left(side)
            shown = "none" if left is None else (format_seconds(left[0]) if left[1] == 0 else
                                                 f"{format_seconds(left[0])} {left[1]}")
            parts.append(f"{SIDE_NAMES[side]} {shown}")
        return " ".join(parts)

    def _set_strength(self, level: str) -> None:
        self.engine.set_option("strength", level)   # ValueError names the valid levels

    def cmd_strength(self, args: list[str]) -> str:
        self._expect(args, 0, 1, "descent-strength [LEVEL] with LEVEL one of "
                     + ", ".join(valid_levels()))
        if args:
            self._set_strength(args[0])
            return ""
        return str(self.engine.option_value("strength"))

    def cmd_param_descent(self, args: list[str]) -> str:
        """The engine's option table (docs/options.md): every ``NAME VALUE``, or one set."""
        if not args:
            return "\n".join(f"{name} {option_text(self.engine.option_value(name))}"
                             for name in settable_options(self.engine))
        if len(args) != 2:
            raise ProtocolError("expected param_descent or param_descent NAME VALUE")
        set_named_option(self.engine, args[0], args[1])
        return ""
