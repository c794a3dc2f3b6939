"""Hex GTP as MoHex and HexGui speak it ("HTP"), PROTOCOLS.md, Hex table.

Framing is plain GTP 2: an optional numeric id, the command and its arguments; replies
``=[id] result`` or ``?[id] message``, then a blank line. Multi-line results start on the
``=`` line (``showboard`` and ``param_game`` start with a newline, as MoHex's do).
Empty lines and ``#`` comments get no reply; ``# interrupt`` stops a running search.

Swap. The kernel plays the swap canonically (RULES.md): Black's stone on (r, c) becomes a
White stone on (c, r) and Black moves next. MoHex and HexGui mean ``swap-pieces``: the
board stays and the players exchange colours, so White moves next. After a swap the GUI's
board is the kernel's board transposed with the colours exchanged, so every incoming
``(colour, cell)`` becomes ``(other colour, transpose(cell))`` and every outgoing move,
board and score is mapped back. ``transposed`` is derived from the kernel's move history
(a swap in it) rather than kept as a separate flag, so ``undo`` cannot desynchronise it.

Out-of-turn stones. GUIs set up positions with several ``play`` of one colour (and may
``genmove`` for either colour). The kernel records such a stone as a set-up pass of the
side to move followed by the stone (``a1 pass b1`` in its position text), so side to move,
hash and undo stay exact; ``undo`` takes the stone and its pass back together.

``descent-analyze [interval]`` streams like Leela Zero's ``lz-analyze``: the ``=`` line
comes at once, then ``info`` lines (value for the side to move, nodes, nps, time, depth,
pv), and the blank line that ends the reply comes when the next command arrives, when a
``# interrupt`` stops the search (what HexGui's stop button sends), or when the search has
proved the result. The interval is in centiseconds (as lz-analyze's); the engine reports
about every half second, so smaller intervals change nothing. ``Engine.stop()`` also ends
an analysis between two of its slices, so one stop is enough.

Options: ``param_descent`` lists the engine's option table (docs/options.md) in GoGui's
parameter format, with this protocol's ``move_time``, and sets any of them by name.

Clocks: ``time_settings``, ``kgs-time_settings`` and ``time_left`` (GTP's ``C T S`` and
MoHex's ``[C [T]]``) keep a clock per colour; ``genmove`` turns it into ``Limits`` and
charges its own clock afterwards (in nodes-as-time mode by nodes / rate, so tests stay
deterministic), as MoHex does; a manager's ``time_left`` overrides it. Without a clock a
move gets ``param_descent move_time`` seconds.
"""

from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from descent import __version__
from descent.engine.engine import Decision, Engine, EngineError, Info
from descent.engine.limits import Limits
from descent.engine.options import Option
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
from descent.protocols.sgf import sgf_main_line
from descent.search_cy.games.hex import HexState, cell_name, parse_move

COLOURS = {"b": 0, "black": 0, "w": 1, "white": 1}
COLOUR_NAMES = ("black", "white")
SCORE_LETTERS = ("B", "W")
SWAP_OUT = "swap-pieces"          # the spelling MoHex and HexGui understand
DEFAULT_MOVE_TIME = 5.0           # seconds per move when no clock is given
ENGINE_NAME = "descent"


HEXGUI_ANALYZE_COMMANDS = (
    "param/Game Param/param_game",
    "param/Descent Param/param_descent",
    "string/Show Board/showboard",
    "string/Final Score/final_score",
    "string/Time Left/time_left",
    "string/Analyze (stop with interrupt)/descent-analyze",
    "pspairs/Move Values/descent-values",
    "var/Principal Variation/descent-pv",
    "gfx/Values and Variation/descent-gfx",
    "string/Version/version",
)


def parse_colour(token: str) -> int:
    colour = COLOURS.get(token.lower())
    if colour is None:
        raise ProtocolError(f"invalid colour {token!r}: expected b, black, w or white")
    return colour


def parse_bool(token: str, what: str) -> bool:
    low = token.lower()
    if low in ("1", "true", "on", "yes"):
        return True
    if low in ("0", "false", "off", "no"):
        return False
    raise ProtocolError(f"{what}: expected 0 or 1, got {token!r}")


def fmt_seconds(value: float | None) -> str:
    return "none" if value is None else f"{round(value, 3):g}"


# -- clocks ------------------------------------------------------------------------------

@dataclass
class SideClock:
    left: float | None = None     # main time, or the time of the current byo-yomi period
    in_byoyomi: bool = False
    count: int = 0                # Canadian: stones left in the block; Japanese: periods


@dataclass
class GtpClock:
    """Time control as the manager announced it, and each colour's clock.

    kind: ``unset`` (no time_settings: time_left alone is trusted as absolute time),
    ``none`` (explicitly no limits), ``absolute``, ``byoyomi`` (Japanese) or ``canadian``.
    """

    kind: str = "unset"
    main: float = 0.0
    period: float = 0.0
    periods: int = 0
    stones: int = 0
    move_time: float = DEFAULT_MOVE_TIME
    sides: list[SideClock] = field(default_factory=lambda: [SideClock(), SideClock()])

    def set_control(self, kind: str, main: float = 0.0, period: float = 0.0,
                    periods: int = 0, stones: int = 0) -> None:
        self.kind, self.main, self.period = kind, main, period
        self.periods, self.stones = periods, stones
        self.reset()

    def reset(self) -> None:
        """A fresh clock per colour at the start of a game."""
        for side in self.sides:
            side.in_byoyomi, side.count = False, 0
            if self.kind in ("unset", "none"):
                side.left = None
            elif self.main > 0:
                side.left = self.main
            else:
                side.left, side.in_byoyomi = self.period, True
                side.count = self.stones if self.kind == "canadian" else self.periods

    def set_left(self, colour: int, left: float, stones: int | None) -> None:
        """time_left: ``stones`` None (MoHex's form) or 0 mean main time."""
        side = self.sides[colour]
        side.left = left
        side.in_byoyomi = bool(stones)
        side.count = stones or 0

    def limits(self, colour: int) -> Limits:
        side = self.sides[colour]
        if self.kind == "none" or side.left is None:
            return Limits(move_time=self.move_time)
        if self.kind == "byoyomi":
            if side.in_byoyomi:
                return Limits(time_left=side.left, byoyomi=self.period,
                              byoyomi_periods=side.count, in_byoyomi=True)
            return Limits(time_left=side.left, byoyomi=self.period,
                          byoyomi_periods=self.periods)
        if self.kind == "canadian":
            if side.in_byoyomi:
                return Limits(time_left=side.left, byoyomi=self.period,
                              byoyomi_stones=max(1, side.count), in_byoyomi=True)
            return Limits(time_left=side.left, byoyomi=self.period,
                          byoyomi_stones=self.stones)
        if side.in_byoyomi:
            # a time_left with stones but no announced control: a Canadian block
            return Limits(time_left=side.left, byoyomi=side.left,
                          byoyomi_stones=max(1, side.count), in_byoyomi=True)
        return Limits(time_left=side.left)

    def spend(self, colour: int, seconds: float) -> None:
        """Charges our own move to our clock (MoHex does too; time_left corrects it)."""
        side = self.sides[colour]
        if side.left is None or self.kind == "none":
            return
        if not side.in_byoyomi:
            side.left -= seconds
            if side.left > 0 or self.kind in ("unset", "absolute"):
                side.left = max(0.0, side.left)
                return
            side.in_byoyomi, side.left = True, self.period
            side.count = self.stones if self.kind == "canadian" else self.periods
            return
        if self.kind == "byoyomi":
            if seconds > side.left:
                side.count = max(0, side.count - 1)
            side.left = self.period
            return
        side.left = max(0.0, side.left - seconds)
        side.count -= 1
        if side.count <= 0 and self.kind == "canadian":
            side.left, side.count = self.period, self.stones

    def describe(self, colour: int) -> str:
        side = self.sides[colour]
        if side.in_byoyomi and side.left is not None:
            return f"{fmt_seconds(side.left)} {side.count}"
        return fmt_seconds(side.left)


# -- streaming analysis ---------------------------------------------------------------------

@dataclass
class Analysis:
    """One running ``descent-analyze`` reply: its lines go out under ``lock``; ``closed``
    once the blank line that ends it was sent."""

    interval: float
    transposed: bool
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False
    last: float = -math.inf
    last_nodes: int = -1


# -- the protocol --------------------------------------------------------------------------

def _param_line(option: Option, value: object) -> str:
    """One line of GoGui's parameter list: ``[list/a/b] name value`` for a choice, else
    ``[string] name value``."""
    if option.kind == "combo":
        return f"[list/{'/'.join(option.choices)}] {option.name} {option_text(value)}"
    return f"[string] {option.name} {option_text(value)}"


class GtpProtocol(GtpFramedProtocol):
    """Hex GTP (see the module docstring)."""

    name: ClassVar[str] = "gtp"
    pass_ident: ClassVar[bool] = True     # genmove and the analysis echo the request's id
    new_game_commands: ClassVar[frozenset[str]] = frozenset({"clear_board", "boardsize"})
    commands: ClassVar[dict[str, str]] = {
        "protocol_version": "cmd_protocol_version",
        "name": "cmd_name",
        "version": "cmd_version",
        "list_commands": "cmd_list_commands",
        "known_command": "cmd_known_command",
        "quit": "cmd_quit",
        "boardsize": "cmd_boardsize",
        "clear_board": "cmd_clear_board",
        "play": "cmd_play",
        "genmove": "cmd_genmove",
        "reg_genmove": "cmd_reg_genmove",
        "undo": "cmd_undo",
        "showboard": "cmd_showboard",
        "time_settings": "cmd_time_settings",
        "kgs-time_settings": "cmd_kgs_time_settings",
        "time_left": "cmd_time_left",
        "final_score": "cmd_final_score",
        "param_game": "cmd_param_game",
        "param_descent": "cmd_param_descent",
        "descent-strength": "cmd_descent_strength",
        "hexgui-analyze_commands": "cmd_hexgui_analyze_commands",
        "gogui-interrupt": "cmd_gogui_interrupt",
        "descent-analyze": "cmd_descent_analyze",
        "descent-values": "cmd_descent_values",
        "descent-pv": "cmd_descent_pv",
        "descent-gfx": "cmd_descent_gfx",
        "all_legal_moves": "cmd_all_legal_moves",
        "loadsgf": "cmd_loadsgf",
        "board_id": "cmd_board_id",
    }

    def __init__(self, engine: Engine, send: Send) -> None:
        super().__init__(engine, send)
        self.clock = GtpClock()
        self.resigned: int | None = None      # GUI colour that resigned (final_score)
        self._analysis: Analysis | None = None

    # -- framing (protocols.base.GtpFramedProtocol) -------------------------------------

    def before_command(self) -> None:
        self._end_analysis()

    def is_urgent(self, line: str) -> bool:
        return is_interrupt(line)

    def handle_urgent(self, line: str) -> None:
        self.engine.stop()    # reaches the search even between two analysis slices
        analysis = self._analysis
        if analysis is not None:
            threading.Thread(target=self._close_when_stopped, args=(analysis,),
                             name="gtp-interrupt", daemon=True).start()

    def close(self) -> None:
        self._end_analysis()
        super().close()

    # -- position helpers -----------------------------------------------------------------

    def _hex(self) -> HexState:
        state = self.engine.state
        if not isinstance(state, HexState):
            raise ProtocolError(f"the gtp protocol plays hex; this engine plays "
                                f"{self.engine.game.spec}")
        return state

    @property
    def transposed(self) -> bool:
        """Whether a swap was played: the GUI's view is then the kernel's transposed with
        the colours exchanged."""
        state = self._hex()
        return state.size * state.size in state.history()

    @staticmethod
    def _map_action(action: int, size: int, transposed: bool) -> int:
        """GUI cell <-> kernel cell (the transpose is its own inverse); swap unchanged."""
        if not transposed or action == size * size:
            return action
        row, col = divmod(action, size)
        return col * size + row

    def _gui_move(self, action: int, size: int, transposed: bool) -> str:
        if action == size * size:
            return SWAP_OUT
        return str(cell_name(self._map_action(action, size, transposed), size))

    def _gui_line(self, moves: list[str], size: int, transposed: bool) -> list[str]:
        """A kernel move list (a pv) in the GUI's view; a swap inside it flips the map."""
        out = []
        for move in moves:
            try:
                action = parse_move(move, size)
            except ValueError:
                break
            out.append(self._gui_move(action, size, transposed))
            if action == size * size:
                transposed = True
        return out

    def _spec(self, size: int | None = None, swap: bool | None = None) -> str:
        params = self.engine.game.params
        size = params["size"] if size is None else size
        swap = params["swap"] if swap is None else swap
        return f"hex(size={size},swap={'true' if swap else 'false'})"

    def _new_game(self) -> None:
        self.resigned = None
        self.clock.reset()

    def _bring_to_move(self, state: HexState, colour: int, transposed: bool,
                       what: str) -> bool:
        """Makes ``colour`` the side to move, with a set-up pass when it is not; returns
        whether a pass was inserted (the caller takes it back if its move fails)."""
        if state.is_terminal():
            raise ProtocolError(f"{what}: the game is over")
        if state.current_player() ^ int(transposed) == colour:
            return False
        try:
            self.engine.play("pass")
        except EngineError as exc:
            raise ProtocolError(f"{what}: {exc}") from None
        return True

    def _take_back_pass(self) -> None:
        state = self._hex()
        history = state.history()
        if history and state.action_to_string(history[-1]) == "pass":
            self.engine.undo()

    @staticmethod
    def _need(args: list[str], count: int, usage: str) -> None:
        if len(args) < count:
            raise ProtocolError(f"missing argument: {usage}")
        if len(args) > count:
            raise ProtocolError(f"too many arguments: {usage}")

    # -- identification ------------------------------------------------------------------

    def cmd_protocol_version(self, args: list[str], ident: str) -> str:
        self._need(args, 0, "protocol_version")
        return "2"

    def cmd_name(self, args: list[str], ident: str) -> str:
        self._need(args, 0, "name")
        return ENGINE_NAME

    def cmd_version(self, args: list[str], ident: str) -> str:
        self._need(args, 0, "version")

        facts = self.engine.describe()
        policy = f" policy={facts['policy']}" if facts.get("policy") else ""
        if facts.get("action_visits"):
            policy += f" action_visits={facts['action_visits']}"
        if facts.get("minimax_weight"):
            policy += f" minimax_weight={facts['minimax_weight']:g}"
        if facts.get("value_mix"):
            policy += f" value_visits={facts['value_visits']}"
            policy += f" value_mix={facts['value_mix']:g}"
        if facts.get("value_fade"):
            policy += f" value_fade={facts['value_fade']:g}"
        return (f"{__version__} search={facts['search']} evaluator={facts['evaluator']}"
                f"{policy} strength={facts['strength']}")

    def cmd_list_commands(self, args: list[str], ident: str) -> str:
        self._need(args, 0, "list_commands")
        return "\n".join(self.commands)

    def cmd_known_command(self, args: list[str], ident: str) -> str:
        self._need(args, 1, "known_command COMMAND")
        return "true" if args[0] in self.commands else "false"

    def cmd_quit(self, args: list[str], ident: str) -> str:
        self.running = False
        return ""

    # -- game set-up ---------------------------------------------------------------------

    def cmd_boardsize(self, args: list[str], ident: str) -> str:
        if not 1 <= len(args) <= 2:
            raise ProtocolError("boardsize: expected N or N N")
        sizes = []
        for token in args:
            if not re.fullmatch(r"[0-9]{1,4}", token):
                raise ProtocolError(f"boardsize: expected an integer, got {token!r}")
            sizes.append(int(token))
        if len(sizes) == 2 and sizes[0] != sizes[1]:
            raise ProtocolError(f"unacceptable size: {sizes[0]}x{sizes[1]} "
                                "(only square boards)")
        try:
            self.engine.new_game(self._spec(size=sizes[0]))
        except ValueError as exc:
            raise ProtocolError(f"unacceptable size: {exc}") from exc
        self._new_game()
        return ""

    def cmd_clear_board(self, args: list[str], ident: str) -> str:
        self._need(args, 0, "clear_board")
        self.engine.new_game()
        self._new_game()
        return ""

    def cmd_loadsgf(self, args: list[str], ident: str) -> str:
        """``loadsgf FILE [MOVE]``: the game of a Hex SGF file (HexGui's, ours), up to the
        position before move number MOVE (1 = the empty board; default: every move). The
        moves are played as ``play`` would play them, swap included; on any error the
        position is left as it was."""
        if not 1 <= len(args) <= 2:
            raise ProtocolError("loadsgf: expected FILE [MOVE_NUMBER]")
        limit = parse_count(args[1], "move number") - 1 if len(args) == 2 else None
        try:
            text = Path(args[0]).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ProtocolError(f"loadsgf: cannot read {args[0]}: {exc.strerror}") from None
        nodes = sgf_main_line(text)
        root = dict(nodes[0]) if nodes else {}
        if root.get("GM", "11") != "11":
            raise ProtocolError(f"loadsgf: GM[{root['GM']}] is not Hex")
        size = root.get("SZ", "11").split(":", 1)[0]
        moves = [(k, v.strip()) for node in nodes for k, v in node if k in ("B", "W")]
        moves = [(k, v) for k, v in moves if v.lower() != "resign"]
        if limit is not None:
            moves = moves[:max(0, limit)]
        swap = any(v.lower().startswith("swap") for _, v in moves)
        saved = (self.engine.game.spec, self.engine.state.to_text())
        try:
            self.engine.new_game(self._spec(size=int(size), swap=swap or None))
            self._new_game()
            for colour, move in moves:
                self.cmd_play([colour.lower(), move], ident)
        except (ValueError, ProtocolError) as exc:
            self.engine.new_game(saved[0])
            self.engine.set_position(saved[1])
            self._new_game()
            raise ProtocolError(f"loadsgf: {exc}") from None
        return ""

    def cmd_param_game(self, args: list[str], ident: str) -> str:
        if not args:
            return f"\n[bool] allow_swap {int(bool(self.engine.game.params['swap']))}"
        if len(args) != 2:
            raise ProtocolError("param_game: expected no argument or NAME VALUE")
        if args[0] != "allow_swap":
            raise ProtocolError(f"param_game: unknown parameter {args[0]!r} "
                                "(known: allow_swap)")
        swap = parse_bool(args[1], "allow_swap")
        if swap == bool(self.engine.game.params["swap"]):
            return ""
        state = self._hex()
        if not swap and self.transposed:
            raise ProtocolError("allow_swap 0: a swap was already played in this game")
        # the game spec carries the rule: a new game of the new spec, same moves
        moves = state.to_text()
        self.engine.new_game(self._spec(swap=swap))
        self.engine.set_position(moves or None)
        return ""

    # -- moves ---------------------------------------------------------------------------

    def cmd_play(self, args: list[str], ident: str) -> str:
        self._need(args, 2, "play COLOUR MOVE")
        colour = parse_colour(args[0])
        move = args[1]
        if move.lower() == "resign":
            self.resigned = colour
            return ""
        state = self._hex()
        size, transposed = state.size, self.transposed
        try:
            gui_action = parse_move(move, size)
        except ValueError as exc:
            raise ProtocolError(f"illegal move: {exc}") from exc
        action = self._map_action(gui_action, size, transposed)
        passed = self._bring_to_move(state, colour, transposed,
                                     f"illegal move: {args[0]} {move}")
        state = self._hex()
        try:
            self.engine.play_action(action)
        except EngineError:
            if passed:
                self._take_back_pass()
            occupied = action < size * size and state.cell(*divmod(action, size)) != 0
            why = "occupied" if occupied else "not legal here"
            raise ProtocolError(f"illegal move: {args[0]} {move} ({why})") from None
        self.resigned = None
        return ""

    def cmd_genmove(self, args: list[str], ident: str) -> str:
        return self._generate(args, play=True)

    def cmd_reg_genmove(self, args: list[str], ident: str) -> str:
        return self._generate(args, play=False)

    def _generate(self, args: list[str], play: bool) -> str:
        self._need(args, 1, ("genmove" if play else "reg_genmove") + " COLOUR")
        colour = parse_colour(args[0])
        state = self._hex()
        if state.is_terminal():
            return "resign"      # as MoHex answers arbiters that ask after the end
        size, transposed = state.size, self.transposed
        passed = self._bring_to_move(state, colour, transposed, "cannot generate a move")
        self.engine.go(self.clock.limits(colour))
        decision = self.engine.wait()      # `# interrupt` (reader thread) ends it early
        if decision is None:
            if passed:
                self._take_back_pass()
            raise ProtocolError("the search returned no move")
        if passed and (decision.resign or not play):
            self._take_back_pass()
        if decision.resign:
            if play:
                self.resigned = colour
            return "resign"
        move = self._gui_move(decision.action, size, transposed)
        if play:
            self.engine.play_action(decision.action)
            self.clock.spend(colour, self._seconds_used(decision))
        return move

    def _seconds_used(self, decision: Decision) -> float:
        rate = self.engine.settings.nodes_per_second
        return decision.nodes / rate if rate > 0 else decision.time

    def cmd_undo(self, args: list[str], ident: str) -> str:
        self._need(args, 0, "undo")
        try:
            self.engine.undo()
        except EngineError as exc:
            raise ProtocolError(f"cannot undo: {exc}") from None
        self._take_back_pass()           # a set-up stone goes back with its pass
        self.resigned = None
        return ""

    # -- board and result ------------------------------------------------------------------

    def cmd_showboard(self, args: list[str], ident: str) -> str:
        self._need(args, 0, "showboard")
        state = self._hex()
        n, transposed = state.size, self.transposed
        letters = "  ".join(chr(ord("a") + c) for c in range(n))
        lines = ["", "  " + letters]
        for r in range(n):
            row = []
            for c in range(n):
                value = state.cell(c, r) if transposed else state.cell(r, c)
                if transposed and value:
                    value = 3 - value
                row.append(".BW"[value])
            lines.append(" " * r + f"{r + 1:2d}\\" + "  ".join(row) + f"\\{r + 1}")
        lines.append(" " * (n + 3) + letters)
        if state.is_terminal():
            lines.append(f"{COLOUR_NAMES[state.winner_colour() ^ int(transposed)]} wins")
        else:
            lines.append(f"{COLOUR_NAMES[state.current_player() ^ int(transposed)]} to move"
                         + (" (after swap-pieces)" if transposed else ""))
        return "\n".join(lines)

    def cmd_final_score(self, args: list[str], ident: str) -> str:
        self._need(args, 0, "final_score")
        if self.resigned is not None:
            return f"{SCORE_LETTERS[1 - self.resigned]}+"
        state = self._hex()
        if not state.is_terminal():
            return "cannot score"
        return f"{SCORE_LETTERS[state.winner_colour() ^ int(self.transposed)]}+"

    # -- time ----------------------------------------------------------------------------

    def cmd_time_settings(self, args: list[str], ident: str) -> str:
        self._need(args, 3, "time_settings MAIN BYOYOMI STONES")
        main = parse_seconds(args[0], "main time")
        period = parse_seconds(args[1], "byo-yomi time")
        stones = parse_count(args[2], "byo-yomi stones")
        if (period > 0 and stones == 0) or (main == 0 and period == 0):
            self.clock.set_control("none")     # GTP 2: byo-yomi without stones = no limit
        elif period == 0:
            self.clock.set_control("absolute", main)
        else:
            self.clock.set_control("canadian", main, period, stones=stones)
        return ""

    def cmd_kgs_time_settings(self, args: list[str], ident: str) -> str:
        usage = "kgs-time_settings none | absolute M | byoyomi M B P | canadian M B S"
        if not args:
            raise ProtocolError(f"missing argument: {usage}")
        kind = args[0].lower()
        counts = {"none": 1, "absolute": 2, "byoyomi": 4, "canadian": 4}
        if kind not in counts:
            raise ProtocolError(f"unknown time system {args[0]!r}: {usage}")
        if len(args) != counts[kind]:
            raise ProtocolError(f"wrong number of arguments: {usage}")
        if kind == "none":
            self.clock.set_control("none")
            return ""
        main = parse_seconds(args[1], "main time")
        if kind == "absolute":
            self.clock.set_control("absolute" if main > 0 else "none", main)
            return ""
        period = parse_seconds(args[2], "byo-yomi time")
        count = parse_count(args[3], "periods" if kind == "byoyomi" else "stones")
        if kind == "canadian" and count == 0 and period > 0:
            raise ProtocolError("canadian: the block needs at least one stone")
        if period == 0 or count == 0:
            self.clock.set_control("absolute" if main > 0 else "none", main)
        elif kind == "byoyomi":
            self.clock.set_control("byoyomi", main, period, periods=count)
        else:
            self.clock.set_control("canadian", main, period, stones=count)
        return ""

    def cmd_time_left(self, args: list[str], ident: str) -> str:
        if not args:
            return f"Black: {self.clock.describe(0)}, White: {self.clock.describe(1)}"
        if len(args) > 3:
            raise ProtocolError("time_left: expected [COLOUR [SECONDS [STONES]]]")
        colour = parse_colour(args[0])
        if len(args) == 1:
            return self.clock.describe(colour)
        left = parse_seconds(args[1], "time left")
        stones = parse_count(args[2], "stones") if len(args) == 3 else None
        self.clock.set_left(colour, left, stones)
        return ""

    # -- parameters ----------------------------------------------------------------------

    def cmd_param_descent(self, args: list[str], ident: str) -> str:
        """GoGui's parameter command over the engine's option table (the game excepted:
        ``boardsize`` and ``swap-pieces`` set it) plus this protocol's ``move_time``."""
        if not args:
            lines = [_param_line(self.engine.options[name], self.engine.option_value(name))
                     for name in settable_options(self.engine)]
            return "\n" + "\n".join([*lines, f"[string] move_time {self.clock.move_time:g}"])
        if len(args) != 2:
            raise ProtocolError("param_descent: expected no argument or NAME VALUE")
        name, value = args
        if name == "move_time":
            seconds = parse_seconds(value, "move_time")
            if seconds <= 0:
                raise ProtocolError("move_time: expected seconds > 0")
            self.clock.move_time = seconds
        else:
            set_named_option(self.engine, name, value, extra=("move_time",))
        return ""

    def cmd_descent_strength(self, args: list[str], ident: str) -> str:
        if not args:
            return str(self.engine.option_value("strength"))
        self._need(args, 1, "descent-strength LEVEL")
        self.engine.set_option("strength", args[0])
        return ""

    def cmd_hexgui_analyze_commands(self, args: list[str], ident: str) -> str:
        return "\n".join(HEXGUI_ANALYZE_COMMANDS)

    def cmd_gogui_interrupt(self, args: list[str], ident: str) -> str:
        return ""

    # -- analysis ------------------------------------------------------------------------

    def cmd_descent_analyze(self, args: list[str], ident: str) -> str | None:
        if len(args) > 1:
            raise ProtocolError("descent-analyze: expected [INTERVAL] (centiseconds)")
        interval = parse_seconds(args[0], "interval") / 100.0 if args else 0.0
        state = self._hex()
        if state.is_terminal():
            raise ProtocolError("descent-analyze: the game is over")
        size = state.size
        analysis = Analysis(interval, self.transposed)

        def on_info(info: Info) -> None:
            with analysis.lock:
                now = time.monotonic()
                # the search's closing report repeats its last slice's: skip repeats
                if (analysis.closed or info.nodes == analysis.last_nodes
                        or now - analysis.last < analysis.interval):
                    return
                analysis.last, analysis.last_nodes = now, info.nodes
                pv = " ".join(self._gui_line(info.pv, size, analysis.transposed))
                self.send(f"info value {info.mover_value:.4f} nodes {info.nodes} "
                          f"nps {info.nps:.0f} time {info.time:.2f} depth {info.depth} "
                          f"pv {pv}".rstrip() + "\n")

        def on_done(decision: Decision) -> None:
            self._close_analysis(analysis)

        def on_error(exc: BaseException) -> None:
            self.log.error("analysis_failed", error=repr(exc))
            self._close_analysis(analysis)

        # the lock holds the search's first lines back until the `=` line is out
        with analysis.lock:
            self.engine.go(Limits(infinite=True), on_info=on_info, on_done=on_done,
                           on_error=on_error)
            self._analysis = analysis
            self.send(f"={ident} \n")
        return None

    # -- time-limited analysis for HexGui's board (pspairs, var, gfx) --------------------

    def _analyse(self, args: list[str], what: str) -> tuple[Decision, list[tuple[str, float]],
                                                             list[str], str]:
        """Searches the position for ``[SECONDS]`` (default: ``move_time``) without playing:
        (decision, (cell, value for the side to move) of the searched moves, best first,
        the pv as ``colour move`` tokens, the mover's colour letter). ``# interrupt``
        ends it early."""
        if len(args) > 1:
            raise ProtocolError(f"{what}: expected [SECONDS]")
        seconds = parse_seconds(args[0], "seconds") if args else self.clock.move_time
        if seconds <= 0:
            raise ProtocolError(f"{what}: expected seconds > 0")
        state = self._hex()
        if state.is_terminal():
            raise ProtocolError(f"{what}: the game is over")
        size, transposed = state.size, self.transposed
        mover = state.current_player() ^ int(transposed)
        decision = self.engine.think(Limits(move_time=seconds))
        sign = 1.0 if state.current_player() == 0 else -1.0
        result = decision.result
        values = sorted(((self._gui_move(c.action, size, transposed), sign * c.value)
                         for c in (result.children if result is not None else [])
                         if c.action != size * size), key=lambda cv: -cv[1])
        colours, line = "bw", []
        for k, move in enumerate(self._gui_line(decision.pv, size, transposed)):
            line.append(f"{colours[(mover + k) % 2]} {move}")
        return decision, values, line, colours[mover]

    def cmd_descent_values(self, args: list[str], ident: str) -> str:
        """pspairs: each searched cell with its value for the side to move (-1..1)."""
        _, values, _, _ = self._analyse(args, "descent-values")
        return " ".join(f"{cell} {value:.3f}" for cell, value in values)

    def cmd_descent_pv(self, args: list[str], ident: str) -> str:
        """var: the principal variation, ``b c3 w d4 ...``."""
        return " ".join(self._analyse(args, "descent-pv")[2])

    def cmd_descent_gfx(self, args: list[str], ident: str) -> str:
        """gfx: the values as influence, the pv as a variation, the search as text."""
        decision, values, line, _ = self._analyse(args, "descent-gfx")
        out = []
        if values:
            out.append("INFLUENCE " + " ".join(f"{cell} {value:.3f}" for cell, value in values))
        if line:
            out.append("VAR " + " ".join(line))
        out.append(f"TEXT value {decision.mover_value:+.3f} nodes {decision.nodes} "
                   f"depth {decision.depth}")
        return "\n".join(out)

    def cmd_all_legal_moves(self, args: list[str], ident: str) -> str:
        """Every legal move of the side to move, in the GUI's view (cells, swap-pieces)."""
        if args:
            parse_colour(args[0])      # MoHex takes an optional colour: checked, then moot
        state = self._hex()
        if state.is_terminal():
            return ""
        size, transposed = state.size, self.transposed
        return " ".join(self._gui_move(a, size, transposed) for a in state.legal_actions())

    def cmd_board_id(self, args: list[str], ident: str) -> str:
        """A key of the position: the kernel's 64-bit hash (side to move and swap state
        included), as 16 hex digits; equal positions have equal keys."""
        return f"{self._hex().hash:016x}"

    def _close_analysis(self, analysis: Analysis) -> None:
        with analysis.lock:
            if not analysis.closed:
                analysis.closed = True
                self.send("\n")

    def _end_analysis(self) -> None:
        """Stops a running descent-analyze and ends its reply. Blocks until it stopped."""
        analysis, self._analysis = self._analysis, None
        if analysis is None:
            return
        try:
            self.engine.stop()
            self.engine.wait()
        except Exception as exc:   # its failure must not fail the next command
            self.log.error("analysis_failed", error=repr(exc))
        self._close_analysis(analysis)

    def _close_when_stopped(self, analysis: Analysis) -> None:
        """Ends the reply of an interrupted analysis once its search has stopped, on its
        own thread (the reader must not block)."""
        while True:
            with analysis.lock:
                if analysis.closed:
                    return
                if not self.engine.searching:     # ended without on_done/on_error
                    analysis.closed = True
                    self.send("\n")
                    return
            time.sleep(0.02)
