"""What every line protocol shares: the framing of one request line -> its reply, a command
table instead of an if/else chain, and the urgent lines a transport must deliver even while
a blocking command (a GTP genmove) runs."""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable
from typing import ClassVar

from descent.engine.engine import Engine
from descent.engine.logsetup import get_logger

Send = Callable[[str], None]

_CONTROL = {i: None for i in (*range(0, 9), *range(10, 32), 127)}
_ID = re.compile(r"[0-9]+\Z")


class ProtocolError(ValueError):
    """A bad request: the protocol answers it with its error reply; nothing changes."""


def parse_seconds(token: str, what: str) -> float:
    """A number of seconds >= 0, or ProtocolError naming ``what``."""
    try:
        value = float(token)
    except ValueError:
        raise ProtocolError(f"{what}: expected a number of seconds, got {token!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ProtocolError(f"{what}: expected seconds >= 0, got {token!r}")
    return value


def parse_count(token: str, what: str) -> int:
    """An integer >= 0 in ASCII digits (str.isdigit() would also take '²')."""
    if not re.fullmatch(r"[0-9]{1,9}", token):
        raise ProtocolError(f"{what}: expected an integer >= 0, got {token!r}")
    return int(token)


class LineProtocol:
    """Base of the protocols. Subclasses fill ``commands`` (name -> method name) and
    implement ``dispatch``; replies go through ``send`` (one call per output line group,
    already framed). ``handle`` returns False when the session ends (quit)."""

    name: ClassVar[str] = ""
    commands: ClassVar[dict[str, str]] = {}
    # the commands that start a new game: a transport's memory of answered requests
    # (MQTT's duplicate-id cache) ends with the game
    new_game_commands: ClassVar[frozenset[str]] = frozenset()
    # the commands that end the session
    quit_commands: ClassVar[frozenset[str]] = frozenset({"quit"})
    # whether a search runs in the background of the command loop (UCI's ``go``): then a
    # quit or the end of input stops it at once, as Stockfish does. The synchronous
    # protocols (GTP and its dialects) run every command in order at full strength: a
    # quit or the end of input behind a genmove takes effect once the move is answered.
    asynchronous_search: ClassVar[bool] = False

    def __init__(self, engine: Engine, send: Send) -> None:
        self.engine = engine
        self.send = send
        self.running = True
        self.log = get_logger(component=self.name or "protocol")

    def execute(self, command: str, args: list[str], line: str,
                *extra: str) -> tuple[bool, str | None]:
        """Runs ``command`` from the table: ``(True, reply text or None)``, or ``(False,
        error text)``. Unknown commands and ValueErrors (ProtocolError, EngineError, the
        kernels' notation errors) are the client's mistakes; any other exception is a bug,
        logged, and still costs only this one reply, never the game."""
        method = self.commands.get(command)
        if method is None:
            return False, f"unknown command: {command}"
        try:
            result: str | None = getattr(self, method)(args, *extra)
        except ValueError as exc:
            return False, str(exc)
        except Exception as exc:
            self.log.error("command_failed", line=one_line(line), error=repr(exc))
            return False, f"internal error: {exc!r}"
        return True, result

    def handle(self, line: str) -> bool:
        """Processes one input line, sending its reply. May block (GTP genmove)."""
        raise NotImplementedError

    def starts_new_game(self, line: str) -> bool:
        """Whether ``line`` is a command that starts a new game. Must not block."""
        return command_word(line) in self.new_game_commands

    def is_quit(self, line: str) -> bool:
        """Whether ``line`` ends the session. Must not block."""
        return command_word(line) in self.quit_commands

    def is_urgent(self, line: str) -> bool:
        """Whether the transport must handle this line at once, even during a blocking
        command (``# interrupt``, UCI ``stop``/``isready``)."""
        return False

    def handle_urgent(self, line: str) -> None:
        """Handles an urgent line from the transport's reader. Must not block."""
        self.handle(line)

    def close(self) -> None:
        """End of input: stop any search. Blocks until it has stopped."""
        self.engine.stop()
        self.engine.wait()

    @staticmethod
    def split(line: str) -> list[str]:
        try:
            return shlex.split(line, comments=False, posix=True)
        except ValueError:
            return line.split()


def command_word(line: str) -> str:
    """The command of a line, lower case, after GTP's optional numeric id ("" for none)."""
    words = clean(line).split()
    if words and words[0].isdigit():
        words = words[1:]
    return words[0].lower() if words else ""


def settable_options(engine: Engine) -> list[str]:
    """The engine options a protocol shows and sets by name: the whole table but the game,
    which each protocol changes through its own commands (boardsize, rule options)."""
    return [name for name in engine.options if name != "game"]


def option_text(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def set_named_option(engine: Engine, name: str, value: str, extra: tuple[str, ...] = ()) -> None:
    """Sets an engine option named by a client; an unknown name is a ProtocolError that
    lists the known ones (``extra``: the protocol's own parameters)."""
    names = settable_options(engine)
    if name not in names:
        raise ProtocolError(f"param_descent: unknown parameter {name!r} "
                            f"(known: {', '.join([*names, *extra])})")
    engine.set_option(name, value)


def is_interrupt(line: str) -> bool:
    """GoGui's interrupt line: ``# interrupt`` (spacing and case forgiven)."""
    text = line.strip()
    return text.startswith("#") and text[1:].strip().lower() == "interrupt"


def clean(line: str) -> str:
    """GTP pre-processing: control characters dropped, tabs made spaces, the ``#``
    comment cut off, surrounding blanks stripped ("" means: no reply)."""
    text = line.replace("\t", " ").translate(_CONTROL)
    return text.split("#", 1)[0].strip()


def one_line(text: str) -> str:
    """Echoed user text must not break the framing: escape what is not printable."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


class GtpFramedProtocol(LineProtocol):
    """GTP's framing, shared by Hex GTP and the EinStein HTP dialect: ``[id] command
    args`` in; ``=id reply`` or ``?id error`` and a blank line out. A reply's own blank
    lines are squeezed out (one would end it early), an error is one escaped line.
    ``# interrupt`` goes to ``handle_urgent``. Subclasses fill ``commands``; their
    handlers take ``(args)``, or ``(args, ident)`` with ``pass_ident``, and return the
    reply text, or None when they answer by themselves (a streaming analysis)."""

    fold_case: ClassVar[bool] = False     # command names read case-insensitively
    pass_ident: ClassVar[bool] = False    # handlers also receive the request's id

    def handle(self, line: str) -> bool:
        if is_interrupt(line):     # a transport that does not deliver it urgently
            self.handle_urgent(line)
            return self.running
        tokens = clean(line).split()
        if not tokens:
            return self.running
        ident = self.normalise_id(tokens.pop(0)) if _ID.match(tokens[0]) else ""
        self.before_command()
        if not tokens:
            self.reply(ident, False, "missing command")
            return self.running
        command = tokens[0].lower() if self.fold_case else tokens[0]
        if command not in self.commands:
            self.reply(ident, False, f"unknown command: {tokens[0]}")
            return self.running
        extra = (ident,) if self.pass_ident else ()
        ok, text = self.execute(command, tokens[1:], line, *extra)
        if text is not None:
            self.reply(ident, ok, text)
        return self.running

    def normalise_id(self, token: str) -> str:
        """The id as echoed in the reply (GTP: as sent)."""
        return token

    def before_command(self) -> None:
        """Runs before each command (GTP ends a streaming analysis). Must not block."""

    def reply(self, ident: str, ok: bool, text: str) -> None:
        if ok:
            lines = [ln.rstrip() for ln in text.split("\n")]
            body = "\n".join(ln for i, ln in enumerate(lines) if ln or i == 0)
        else:
            body = one_line(" ".join(ln.strip() for ln in text.split("\n") if ln.strip()))
        self.send(f"{'=' if ok else '?'}{ident} {body}\n\n")


PROTOCOLS: dict[str, tuple[str, str]] = {
    "gtp": ("descent.protocols.gtp", "GtpProtocol"),
    "ewn": ("descent.protocols.ewn", "EwnProtocol"),
    "ntu": ("descent.protocols.ntu", "NtuProtocol"),
    "uci": ("descent.protocols.uci", "UciProtocol"),
}


def protocol_class(name: str) -> type[LineProtocol]:
    import importlib

    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}")
    module, cls = PROTOCOLS[name]
    found: type[LineProtocol] = getattr(importlib.import_module(module), cls)
    return found
