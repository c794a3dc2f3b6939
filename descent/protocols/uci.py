"""Dice chess over UCI, with the roll in ``go`` (PROTOCOLS.md, "Dice chess: UCI with the
roll in go"), as python-chess's engine client and UCI GUIs speak it.

Commands (a table, ``commands``; names are case-insensitive, arguments are not)::

    uci                    id name descent <version>, id author ..., option lines, uciok
    isready                readyok (urgent: answered at once, even during a search)
    setoption name N [value V]    nothing, or one ``info string error: ...`` line
    ucinewgame             nothing; a new game at the start position
    position startpos|fen <FEN or DFEN> [moves M ...]    nothing, or one error line
    go [dice N] [wtime T] [btime T] [winc T] [binc T] [movestogo N] [movetime T]
       [nodes N] [depth N] [infinite]     info ... lines, then exactly one bestmove
    stop                   nothing; the running search ends and prints its bestmove
    d                      the position as ``info string`` lines, ending ``info string fen``
    debug on|off           nothing (accepted for GUIs; logs go to stderr anyway)
    quit                   ends the session
    # interrupt            as ``stop``; other ``#`` lines and empty lines are ignored

Bad input (unknown command or option, malformed argument, illegal move) gets one
``info string error: <what was wrong>`` line and changes nothing.

Dice. UCI move lists carry no dice, while the kernel has a die chance node before every
move. ``position ... moves`` therefore infers each roll from the move: the lowest roll,
among those the chance node allows, whose piece type makes that move (so a pawn that
promotes to N, B, R or Q reads as a pawn roll, castling under ``castle=king-or-rook`` as a
rook roll); a roll whose moves include it only through the ``nomove`` rule (``free``: any
piece) is the fallback. The position after the move is the same whichever roll allowed it.
``0000`` (a passed turn) takes the first roll that leaves only the pass: under
``nomove=pass`` a roll of a piece type with no legal move, under ``reroll`` only a position
where no piece can move at all, under ``free`` only one where nothing moves. The position
and its moves may start from DFEN (a seventh FEN field with the rolled piece letter); then
the first move is played with that pending roll.

``go dice N`` (N = 1 pawn, 2 knight, 3 bishop, 4 rook, 5 queen, 6 king) applies the roll at
the root chance node and searches the position after it. The engine keeps the position
before the roll (it takes the roll back before the next ``go``), so managers may send
``go`` again or a new ``position``. ``go`` without ``dice`` is accepted only at a DFEN
position whose roll is already pending (``dice`` then must agree with it). Every ``go``
gets exactly one ``bestmove``: a refused ``go`` (no roll, an impossible roll -- under
``nomove=reroll`` a piece type that cannot move is never rolled -- a finished game, a
search already running, a malformed argument, ``depth`` as the only limit of a search
other than expectiminimax, which counts no depth) answers ``info string error: ...`` then
``bestmove 0000``, so that a client waiting for a bestmove never hangs. ``bestmove 0000``
after a normal search means the roll gives no move (the pass). With ``infinite`` the
bestmove waits for ``stop`` even when the search ends first, as UCI requires; ``go`` with
no limit at all searches until ``stop`` too, but prints its bestmove when it ends.

``info`` lines: ``info depth D nodes N nps X time T score cp S pv M ...``. ``score cp`` is
the root's expected value for the side to move times 1000, so -1000 is a sure loss, 0 even
and +1000 a sure win (dice chess values are win expectations, not material). The pv leaves
the rolls out, as ``position ... moves`` does, so a client can play it back. In
nodes-as-time mode (``--nodes-per-second R``) ``time`` and ``nps`` are the virtual clock
(``nodes / R``): what the time manager used, and reproducible in transcripts.

Options (``uci`` prints them with the current settings as defaults): ``UCI_Variant``
(combo: ``dicechess``, or ``chess``, which python-chess sends for a plain board: the same
game), ``NoMoveRule`` (reroll | pass | free) and ``CastleRule``
(king | king-or-rook): the RULES.md options, changing either starts a new game at the
start position; ``Hash`` (MiB), ``Threads``, ``Strength`` (Rminimax levels; UCI spells the
unrandomised level ``maximum`` because ``max`` is a keyword of option lines, ``max`` is
read too), ``Move Overhead`` (ms), ``Seed``, ``SearchAlgorithm``, and ``Roll`` (0..6): the
die of every ``go`` that names none, so a client passes the roll as an option
(python-chess: ``engine.play(board, limit, options={"Roll": 3})``); it stays until changed,
0 means none. A refused ``go`` is also logged on stderr (as a warning), which python-chess
shows, where an ``info string`` would go unseen.

Threads: ``isready``, ``stop`` and ``# interrupt`` are urgent only when no earlier line is
still queued (``is_urgent`` counts the queued lines), so ``go infinite`` followed at once by
``stop`` cannot be stopped before it started, and ``readyok`` still means that every
earlier command was processed. The bestmove is printed by the search's ``on_done``; a
watcher thread per search prints a fallback (the first legal move) with an error line if
the search thread dies, and a per-search ticket makes sure the bestmove is printed once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from descent import __version__
from descent.engine.engine import Decision, Engine, EngineError, Info
from descent.engine.limits import MAX_COUNT, Limits
from descent.engine.logsetup import get_logger
from descent.engine.options import Option, available_memory_mb, number_text
from descent.protocols.base import LineProtocol, ProtocolError, Send
from descent.search_cy.games.dicechess import PIECE_NAMES, DiceChessState
from descent.search_cy.games.state import GameState
from descent.search_cy.search.strength import STRENGTH_LEVELS

ENGINE_NAME = "descent"
ENGINE_AUTHOR = "the descent developers"
VARIANT = "dicechess"
# python-chess sends the variant of its board: a plain chess.Board says "chess", which is the
# board dice chess is played on
VARIANT_NAMES = (VARIANT, "chess")
SCORE_SCALE = 1000          # score cp = round(SCORE_SCALE * value for the side to move)
NOMOVE_CHOICES = ("reroll", "pass", "free")
CASTLE_CHOICES = ("king", "king-or-rook")
SEARCH_CHOICES = ("expectiminimax", "descent", "ubfms", "mcts")
# "max" is a keyword of UCI option lines (python-chess would misparse "default max")
STRENGTH_MAX = "maximum"
STRENGTH_CHOICES = (STRENGTH_MAX, *sorted(STRENGTH_LEVELS, key=lambda k: -STRENGTH_LEVELS[k]),
                    *(str(k) for k in range(21)))
URGENT = frozenset({"isready", "stop", "# interrupt"})
GO_INTEGERS = ("dice", "wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes",
               "depth")
GO_FLAGS = ("infinite",)
NO_MOVE = "0000"


def _version() -> str:

    return __version__


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


# -- translating dice-free UCI move lists into the kernel's chance + move sequence ----------

def roll_for_move(state: DiceChessState, move: str) -> int | None:
    """The roll (1..6) under which ``move`` is played at the chance node ``state``: the
    rolled piece type's own move first, else any roll whose moves include it (nomove=free,
    the pass). None when no possible roll allows it. NotationError (a ValueError) for a
    malformed move. The state is unchanged."""
    fallback: int | None = None
    for die, _ in state.chance_outcomes():
        state.apply_action(die)
        try:
            action = state.string_to_action(move)
            legal = action in state.legal_actions()
            own = action != 0 and action in state.moves_for_die(die)
        finally:
            state.undo()
        if own:
            return die
        if legal and fallback is None:
            fallback = die
    return fallback


def expand_moves(state: GameState, moves: list[str]) -> list[str]:
    """Plays ``moves`` (UCI, ``0000`` = pass) on ``state`` with their inferred rolls and
    returns the kernel's token list (``d1 e2e4 d2 g8f6 ...``); ProtocolError names the
    first move that is malformed or illegal."""
    if not isinstance(state, DiceChessState):
        raise ProtocolError("position: the engine does not play dice chess")
    tokens: list[str] = []
    for number, move in enumerate(moves, 1):
        if state.is_terminal():
            raise ProtocolError(f"position: move {number} {move!r}: the game is already over")
        try:
            if state.is_chance_node():
                die = roll_for_move(state, move)
                if die is None:
                    raise ProtocolError(f"position: move {number} {move!r} is not legal here: "
                                        "no possible roll allows it")
                tokens.append(state.action_to_string(die))
                state.apply_action(die)
            action = state.string_to_action(move)
            text = state.action_to_string(action)
            state.apply_action(action)
        except ProtocolError:
            raise
        except ValueError as exc:
            raise ProtocolError(f"position: move {number} {move!r}: {exc}") from exc
        tokens.append(text)
    return tokens


def moves_only(root: GameState, pv: list[str]) -> list[str]:
    """The moves of a principal variation without its rolls (as ``position ... moves``)."""
    state = root.clone()
    out: list[str] = []
    for text in pv:
        chance = state.is_chance_node()
        try:
            state.apply_move(text)
        except ValueError:
            break
        if not chance:
            out.append(text)
    return out


def score_cp(mover_value: float) -> int:
    return round(SCORE_SCALE * max(-1.0, min(1.0, mover_value)))


# -- options ----------------------------------------------------------------------------

@dataclass(frozen=True)
class UciOption:
    """One ``option`` line. ``setting`` names the engine option it shows and sets (its
    range comes from the engine's table); the game-rule options have none and start a new
    game through ``setter``, a UciProtocol method."""

    name: str
    kind: str                      # spin | combo
    setting: str = ""
    setter: str = ""
    choices: tuple[str, ...] = ()
    bounds: tuple[int, int] = (0, 0)   # a spin of the protocol's own (no engine option)

    def line(self, default: str, engine_option: Option | None) -> str:
        text = f"option name {self.name} type {self.kind} default {default}"
        if self.kind == "spin":
            low, high = ((engine_option.minimum, engine_option.maximum)
                         if engine_option is not None else self.bounds)
            if self.setting == "hash_mb":      # never more than this machine can give
                high = min(high or 0, available_memory_mb() or high or 0)
            return f"{text} min {number_text(low)} max {number_text(high)}"
        return text + "".join(f" var {c}" for c in self.choices)


OPTIONS: tuple[UciOption, ...] = (
    UciOption("UCI_Variant", "combo", setter="_set_variant", choices=VARIANT_NAMES),
    UciOption("NoMoveRule", "combo", setter="_set_nomove", choices=NOMOVE_CHOICES),
    UciOption("CastleRule", "combo", setter="_set_castle", choices=CASTLE_CHOICES),
    UciOption("Hash", "spin", "hash_mb"),
    UciOption("Threads", "spin", "threads"),
    UciOption("Strength", "combo", "strength", choices=STRENGTH_CHOICES),
    UciOption("Move Overhead", "spin", "move_overhead_ms"),
    UciOption("Seed", "spin", "seed"),
    UciOption("SearchAlgorithm", "combo", "search", choices=SEARCH_CHOICES),
    UciOption("Roll", "spin", setter="_set_roll", bounds=(0, 6)),
)
OPTIONS_BY_NAME = {o.name.lower(): o for o in OPTIONS}


# -- one search: its bestmove is printed exactly once -------------------------------------

class _Ticket:
    """A running ``go``: the root it searches and whether its bestmove went out. ``hold``
    (go infinite) keeps the bestmove back until ``stop``."""

    def __init__(self, root: GameState, hold: bool) -> None:
        self.root = root
        self.hold = hold
        self.held: str | None = None
        self.done = False
        self.lock = threading.Lock()


class UciProtocol(LineProtocol):
    name: ClassVar[str] = "uci"
    new_game_commands: ClassVar[frozenset[str]] = frozenset({"ucinewgame"})
    asynchronous_search: ClassVar[bool] = True
    commands: ClassVar[dict[str, str]] = {
        "uci": "_cmd_uci",
        "isready": "_cmd_isready",
        "setoption": "_cmd_setoption",
        "ucinewgame": "_cmd_ucinewgame",
        "position": "_cmd_position",
        "go": "_cmd_go",
        "stop": "_cmd_stop",
        "d": "_cmd_display",
        "debug": "_cmd_debug",
        "quit": "_cmd_quit",
    }

    def __init__(self, engine: Engine, send: Send) -> None:
        super().__init__(engine, send)
        self.log = get_logger(component="uci")
        self._lock = threading.Lock()
        self._pending = 0                   # lines queued by the transport, not handled yet
        self._base: str | None = None       # FEN/DFEN of the position, None = start position
        self._tokens: list[str] = []        # its moves with their rolls, kernel notation
        self._die_applied = False           # engine.state is one roll past the position
        self._ticket: _Ticket | None = None
        self._watcher: threading.Thread | None = None
        if engine.game.name != VARIANT:
            raise ValueError(f"UCI speaks {VARIANT} only, not {engine.game.spec}")
        self._roll = 0         # the Roll option: the die of a go without dice (0: none)

    # -- framing ------------------------------------------------------------------------

    def is_urgent(self, line: str) -> bool:
        key = _one_line(line).lower()
        key = key if key.startswith("#") else key.split(" ", 1)[0]
        with self._lock:
            if key in URGENT and self._pending == 0:
                return True
            self._pending += 1
            return False

    def handle_urgent(self, line: str) -> None:
        self._process(line)

    def handle(self, line: str) -> bool:
        try:
            return self._process(line)
        finally:
            with self._lock:
                self._pending = max(0, self._pending - 1)

    def _process(self, line: str) -> bool:
        text = _one_line(line)
        if not text:
            return True
        if text.startswith("#"):
            if text.lower() == "# interrupt":
                self._cmd_stop([])
            return True
        name, *args = text.split(" ")
        method = self.commands.get(name.lower())
        try:
            if method is None:
                raise ProtocolError(f"unknown command {name!r}; known: "
                                    f"{', '.join(self.commands)}")
            handler: Callable[[list[str]], bool | None] = getattr(self, method)
            return handler(args) is not False
        except (ProtocolError, EngineError, ValueError) as exc:
            self._error(exc)
        except Exception as exc:   # a bug here must cost one error line, not the game
            self.log.error("uci_failure", line=text, error=repr(exc))
            self._error(f"internal error: {exc!r}")
        return True

    def _error(self, message: object) -> None:
        self.send(f"info string error: {_one_line(message)}")

    def close(self) -> None:
        self._settle(stop=True)

    # -- search bookkeeping ------------------------------------------------------------

    @property
    def searching(self) -> bool:
        """A search whose bestmove has not gone out yet (a finished one may still be
        winding down its thread: ``_settle`` waits for that)."""
        watcher, ticket = self._watcher, self._ticket
        return (watcher is not None and watcher.is_alive() and ticket is not None
                and not ticket.done)

    def _settle(self, stop: bool) -> None:
        """Ends (stop) or awaits the running search and its watcher, so that the engine
        calls that follow never race the watcher's ``engine.wait``. Blocks."""
        if stop:
            self.engine.stop()
            ticket = self._ticket
            if ticket is not None:
                self._release(ticket)
        watcher = self._watcher
        if watcher is not None:
            watcher.join()
            self._watcher = None

    def _restore(self) -> None:
        """Takes back the roll the last ``go`` applied: the position before the roll."""
        if self._die_applied:
            self.engine.undo()
            self._die_applied = False

    def _finish(self, ticket: _Ticket, move: str) -> None:
        with ticket.lock:
            if ticket.done:
                return
            if ticket.hold:
                ticket.held = move
                return
            ticket.done = True
            self.send(f"bestmove {move}")

    def _release(self, ticket: _Ticket) -> None:
        with ticket.lock:
            ticket.hold = False
            if ticket.held is not None and not ticket.done:
                ticket.done = True
                self.send(f"bestmove {ticket.held}")

    def _fail(self, ticket: _Ticket, message: str) -> None:
        with ticket.lock:
            if ticket.done:
                return
            ticket.done = True
            legal = [] if ticket.root.is_terminal() or ticket.root.is_chance_node() \
                else ticket.root.legal_actions()
            move = ticket.root.action_to_string(legal[0]) if legal else NO_MOVE
            self._error(message)
            self.send(f"bestmove {move}")

    def _watch(self, ticket: _Ticket) -> None:
        try:
            decision = self.engine.wait()
        except Exception as exc:   # the search thread died: its bestmove must still go out
            self.log.error("search_failed", error=repr(exc))
            self._fail(ticket, f"search failed: {exc}")
            return
        if decision is None:
            self._fail(ticket, "search failed: no decision")

    def _info_line(self, ticket: _Ticket, info: Info) -> str:
        rate = self.engine.settings.nodes_per_second
        if rate > 0:
            ms, nps = round(info.nodes * 1000 / rate), round(rate)
        else:
            ms, nps = round(info.time * 1000), round(info.nps)
        line = (f"info depth {info.depth} nodes {info.nodes} nps {nps} time {ms} "
                f"score cp {score_cp(info.mover_value)}")
        pv = moves_only(ticket.root, info.pv)
        return line + (" pv " + " ".join(pv) if pv else "")

    def _on_info(self, ticket: _Ticket, info: Info) -> None:
        line = self._info_line(ticket, info)
        with ticket.lock:
            if not ticket.done:
                self.send(line)

    def _on_done(self, ticket: _Ticket, decision: Decision) -> None:
        self._finish(ticket, decision.move)

    # -- commands ---------------------------------------------------------------------

    def _cmd_uci(self, args: list[str]) -> None:
        lines = [f"id name {ENGINE_NAME} {_version()}", f"id author {ENGINE_AUTHOR}"]
        lines += [option.line(self._option_default(option),
                              self.engine.options.get(option.setting)) for option in OPTIONS]
        lines.append("uciok")
        self.send("\n".join(lines))

    def _option_default(self, option: UciOption) -> str:
        if option.setting == "search":
            return self.engine.search_name
        if option.setting:
            value = str(self.engine.option_value(option.setting))
            return STRENGTH_MAX if option.setting == "strength" and value == "max" else value
        if option.name == "Roll":
            return str(self._roll)
        return VARIANT if option.name == "UCI_Variant" else str(
            self.engine.game.params[option.name.removesuffix("Rule").lower()])

    def _cmd_isready(self, args: list[str]) -> None:
        if args:
            raise ProtocolError("isready takes no arguments")
        self.send("readyok")

    def _cmd_debug(self, args: list[str]) -> None:
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            raise ProtocolError("debug: expected on or off")

    def _cmd_quit(self, args: list[str]) -> bool:
        self._settle(stop=True)
        return False

    def _cmd_stop(self, args: list[str]) -> None:
        if args:
            raise ProtocolError("stop takes no arguments")
        self.engine.stop()
        ticket = self._ticket
        if ticket is not None:
            self._release(ticket)

    def _cmd_ucinewgame(self, args: list[str]) -> None:
        if args:
            raise ProtocolError("ucinewgame takes no arguments")
        self._settle(stop=True)
        self.engine.new_game()
        self._reset_position()

    def _reset_position(self) -> None:
        self._base, self._tokens, self._die_applied = None, [], False

    def _cmd_setoption(self, args: list[str]) -> None:
        if not args or args[0].lower() != "name" or len(args) < 2:
            raise ProtocolError("setoption: expected setoption name <option> value <value>")
        lowered = [a.lower() for a in args]
        cut = lowered.index("value") if "value" in lowered[1:] else len(args)
        name = " ".join(args[1:cut])
        option = OPTIONS_BY_NAME.get(name.lower())
        if option is None:
            raise ProtocolError(f"setoption: unknown option {name!r}; known: "
                                f"{', '.join(o.name for o in OPTIONS)}")
        value = " ".join(args[cut + 1:])
        if not value:
            raise ProtocolError(f"setoption: option {option.name} needs a value")
        if option.setter:
            setter: Callable[[str], None] = getattr(self, option.setter)
            setter(value)
            return
        if option.kind == "spin":
            value = str(_parse_int(value, f"setoption {option.name}"))
        elif option.setting == "strength":
            value = "max" if value.strip().lower() == STRENGTH_MAX else value
        else:
            value = self._choice(option.name, value, option.choices)
        self._settle(stop=True)
        try:
            self.engine.set_option(option.setting, value)
        except ValueError as exc:
            if option.setting == "strength":
                raise ProtocolError(f"setoption: Strength: {exc}; UCI spells max as "
                                    f"{STRENGTH_MAX}") from exc
            # the engine's message names its own setting: say it with the UCI name
            text = str(exc).replace(option.setting, option.name, 1)
            raise ProtocolError(f"setoption: {text}") from exc

    def _choice(self, option_name: str, value: str, choices: tuple[str, ...]) -> str:
        key = value.lower()
        if key not in choices:
            raise ProtocolError(f"setoption: {option_name} must be one of "
                                f"{', '.join(choices)}, got {value!r}")
        return key

    def _set_variant(self, value: str) -> None:
        self._choice("UCI_Variant", value, VARIANT_NAMES)

    def _set_roll(self, value: str) -> None:
        roll = _parse_int(value, "setoption Roll")
        if not 0 <= roll <= 6:
            raise ProtocolError(f"setoption: Roll must be in 0..6 (0: none), got {roll}")
        self._roll = roll

    def _set_rules(self, nomove: str, castle: str) -> None:
        params = self.engine.game.params
        if (nomove, castle) == (params["nomove"], params["castle"]):
            return
        self._settle(stop=True)
        self.engine.new_game(f"{VARIANT}(nomove={nomove},castle={castle})")
        self._reset_position()

    def _set_nomove(self, value: str) -> None:
        self._set_rules(self._choice("NoMoveRule", value, NOMOVE_CHOICES),
                        str(self.engine.game.params["castle"]))

    def _set_castle(self, value: str) -> None:
        self._set_rules(str(self.engine.game.params["nomove"]),
                        self._choice("CastleRule", value, CASTLE_CHOICES))

    def _cmd_position(self, args: list[str]) -> None:
        lowered = [a.lower() for a in args]
        cut = lowered.index("moves") if "moves" in lowered else len(args)
        head, moves = args[:cut], args[cut + 1:]
        if not head or head[0].lower() not in ("startpos", "fen"):
            raise ProtocolError("position: expected startpos or fen <FEN or DFEN>, "
                                "then optionally moves ...")
        text: str | None = None
        if head[0].lower() == "startpos":
            if len(head) > 1:
                raise ProtocolError(f"position startpos: unexpected {head[1]!r} "
                                    "(expected moves ...)")
        else:
            if len(head) == 1:
                raise ProtocolError("position fen: the FEN or DFEN is missing")
            text = " ".join(head[1:])
        self._settle(stop=True)
        try:
            state = self.engine.game.new_initial_state() if text is None \
                else self.engine.game.state_from_text(text)
        except ValueError as exc:
            raise ProtocolError(f"position fen: {exc}") from exc
        tokens = expand_moves(state, moves)
        self.engine.set_position(text, tokens)
        self._base, self._tokens, self._die_applied = text, tokens, False

    def _cmd_display(self, args: list[str]) -> None:
        state = self.engine.game.new_initial_state() if self._base is None \
            else self.engine.game.state_from_text(self._base)
        for token in self._tokens:
            state.apply_move(token)
        lines = [f"info string {row}" for row in str(state).splitlines()]
        lines.append(f"info string fen {state.to_text()}")
        self.send("\n".join(lines))

    def _cmd_go(self, args: list[str]) -> None:
        try:
            self._start_search(args)
        except (ProtocolError, EngineError, ValueError) as exc:
            self._error(exc)
            # on stderr too: clients such as python-chess show stderr, not info strings
            self.log.warning("go_refused", error=str(exc))
            self.send(f"bestmove {NO_MOVE}")

    def _start_search(self, args: list[str]) -> None:
        given = parse_go(args)
        if self.searching:
            raise ProtocolError("go: a search is already running (send stop first)")
        self._settle(stop=False)
        self._restore()
        state = self.engine.state
        if not isinstance(state, DiceChessState):
            raise ProtocolError("go: the engine does not play dice chess")
        die = given.get("dice") or self._roll or None
        if state.is_terminal():
            raise ProtocolError("go: the game is over")
        if state.is_chance_node() and die is None:
            raise ProtocolError("go: the roll is missing: go dice N (1 pawn, 2 knight, "
                                "3 bishop, 4 rook, 5 queen, 6 king)")
        if not state.is_chance_node() and die is not None and die != state.pending_die:
            raise ProtocolError(f"go: the position already has the roll {state.pending_die}"
                                f", not {die}")
        limits = self._limits(given, state.side_to_move)
        if limits.depth is not None and self.engine.search_name != "expectiminimax" \
                and not (limits.infinite or limits.nodes or limits.time_left is not None
                         or limits.move_time is not None):
            # only expectiminimax counts depth: the others would search until stop
            raise ProtocolError(f"go: depth alone does not limit the "
                                f"{self.engine.search_name} search; add nodes or movetime")
        if state.is_chance_node() and die is not None:
            self._apply_roll(die)
        ticket = _Ticket(self.engine.state.clone(), hold=limits.infinite)
        self._ticket = ticket
        self.engine.go(limits, on_info=lambda info: self._on_info(ticket, info),
                       on_done=lambda decision: self._on_done(ticket, decision))
        self._watcher = threading.Thread(target=self._watch, args=(ticket,),
                                         name="uci-watcher", daemon=True)
        self._watcher.start()

    @staticmethod
    def _limits(given: dict[str, int], mover: int) -> Limits:
        """UCI clock arguments -> Limits for the side to move (times in ms -> s)."""
        clock = given.get("wtime" if mover == 0 else "btime")
        increment = given.get("winc" if mover == 0 else "binc", 0)
        move_time = given.get("movetime")
        return Limits(
            time_left=None if clock is None else max(0, clock) / 1000.0,
            increment=max(0, increment) / 1000.0,
            moves_to_go=given.get("movestogo") or None,
            move_time=None if move_time is None else move_time / 1000.0,
            nodes=given.get("nodes"), depth=given.get("depth"),
            infinite=bool(given.get("infinite")))

    def _apply_roll(self, die: int) -> None:
        try:
            self.engine.play(f"d{die}")
        except EngineError as exc:
            nomove = self.engine.game.params["nomove"]
            why = (f": under nomove={nomove} a {PIECE_NAMES[die]} that cannot move is never "
                   "rolled") if nomove == "reroll" else f": {exc}"
            raise ProtocolError(f"go dice {die}: this roll is not possible here{why}") from exc
        self._die_applied = True


def _parse_int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError as exc:
        raise ProtocolError(f"{what}: expected an integer, got {text!r}") from exc


def parse_go(args: list[str]) -> dict[str, int]:
    """``go`` arguments -> {keyword: value} (flags map to 1); ProtocolError names the
    first bad one."""
    given: dict[str, int] = {}
    i = 0
    while i < len(args):
        key = args[i].lower()
        if key in given:
            raise ProtocolError(f"go: {key} given twice")
        if key in GO_FLAGS:
            given[key] = 1
            i += 1
            continue
        if key not in GO_INTEGERS:
            hint = " (pondering is not supported)" if key == "ponder" else ""
            raise ProtocolError(f"go: unknown or unsupported argument {args[i]!r}{hint}; "
                                f"known: {', '.join(GO_INTEGERS + GO_FLAGS)}")
        if i + 1 >= len(args):
            raise ProtocolError(f"go: {key} needs a number")
        # clamped, not refused: a manager's "infinite" clock of 30 digits still gets a move
        given[key] = min(_parse_int(args[i + 1], f"go {key}"), MAX_COUNT)
        i += 2
    if "dice" in given and not 1 <= given["dice"] <= 6:
        raise ProtocolError(f"go: dice must be 1..6 (1 pawn .. 6 king), got {given['dice']}")
    for key in ("winc", "binc", "movestogo", "movetime"):
        if given.get(key, 0) < 0:
            raise ProtocolError(f"go: {key} must be >= 0, got {given[key]}")
    for key in ("nodes", "depth"):
        if key in given and given[key] < 1:
            raise ProtocolError(f"go: {key} must be >= 1, got {given[key]}")
    return given
