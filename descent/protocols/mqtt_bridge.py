"""``descent mqtt-bridge -- COMMAND ARGS...``: any stdio engine (MoHex, another build of
descent, a referee bot) on the same MQTT topics as ``descent play --transport mqtt``, so a
manager drives every engine the same way.

The bridge starts COMMAND with pipes, connects like the engine does (same topics, status,
last will, request format, duplicate-id cache, reconnection with backoff and outbox; see
protocols/mqtt.py), writes each request's line to the engine's stdin, in arrival order,
and publishes what the engine prints. The engine's stderr passes through to ours.

Framing (``--framing``):

- ``gtp`` (default; GTP, HTP, the EinStein dialect): a reply starts with a line beginning
  ``=`` or ``?`` and ends with the blank line that GTP puts after every reply. Each reply
  is matched to the oldest request still waiting (GTP engines answer in order) and
  published as one message, exactly the bytes the engine printed: ``{"id": ID, "reply":
  "= c3\\n\\n"}`` for a request with an id, the bare text otherwise. Empty lines and ``#``
  comment lines (``# interrupt``) get no reply from a GTP engine, so the bridge forwards
  them and answers ``{"id": ID, "reply": ""}`` itself. Lines the engine prints outside a
  reply (analysis output) are published one by one as ``{"id": ID, "output": LINE}`` with
  the id of the last request forwarded (plain text when it had none).
- ``line`` (UCI and anything else without reply framing): the bridge cannot tell where a
  reply ends, so there are no ``reply`` messages: every line the engine prints is
  published on its own as ``{"id": ID, "output": LINE}``, ID being that of the last
  request forwarded (plain text when it had none).

A duplicate request id is not forwarded again; the messages already published for it are
published again (as for the engine). When the engine exits (``quit``), the bridge
publishes what is left, sets its status ``offline`` and exits with the engine's status.
SIGTERM/SIGINT close the engine's stdin, wait up to 5 s, then kill it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections import deque
from typing import Any

from descent.engine.logsetup import get_logger
from descent.protocols.base import command_word
from descent.protocols.mqtt import MqttLink, MqttOptions, Request

NEW_GAME_GTP = frozenset({"clear_board", "boardsize"})
NEW_GAME_LINE = frozenset({"ucinewgame"})

STDOUT_LINE_LIMIT = 1 << 20
ENGINE_EXIT_GRACE_S = 5.0
SETTINGS_FLAGS = ("broker", "engine_id", "topic_prefix", "mqtt_username", "mqtt_password",
                  "mqtt_tls", "mqtt_ca_file", "log_level", "log_file")


class MqttBridge:
    """One external engine process behind one MqttLink."""

    def __init__(self, command: list[str], options: MqttOptions, framing: str = "gtp") -> None:
        if not command:
            raise ValueError("mqtt-bridge: no engine command given (descent mqtt-bridge "
                             "[options] -- COMMAND ARGS...)")
        if framing not in ("gtp", "line"):
            raise ValueError("framing must be gtp or line")
        self.command = command
        self.framing = framing
        self.log = get_logger(component="mqtt-bridge")
        self.link = MqttLink(options, self._on_request, self.log, self._starts_new_game)
        self._proc: asyncio.subprocess.Process | None = None
        self._waiting: deque[Request] = deque()   # requests whose reply is due
        self._last_request: Request | None = None

    def _starts_new_game(self, line: str) -> bool:
        """The commands that start a game in the wrapped engine's protocol (the bridge
        knows only the framing: GTP's clear_board and boardsize, UCI's ucinewgame)."""
        names = NEW_GAME_GTP if self.framing == "gtp" else NEW_GAME_LINE
        return command_word(line) in names

    def _on_request(self, request: Request) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            self.link.emit(request, "error", "the engine process has exited")
            return
        stripped = request.line.strip()
        if self.framing == "gtp":
            if not stripped or stripped.startswith("#"):
                if request.id is not None:
                    self.link.emit(request, "reply", "")
            else:
                self._waiting.append(request)
                self._last_request = request
        else:
            self._last_request = request
        try:
            proc.stdin.write(request.line.encode("utf-8") + b"\n")
        except (BrokenPipeError, ConnectionResetError) as exc:
            self.log.warning("bridge_stdin_closed", error=repr(exc))

    def _reply(self, text: str) -> None:
        request = self._waiting.popleft() if self._waiting else None
        self.link.emit(request, "reply", text)

    async def _pump_stdout(self, stream: asyncio.StreamReader) -> None:
        block: list[str] = []
        while True:
            raw = await stream.readline()
            if not raw:
                break
            line = raw.decode("utf-8", "replace")
            if self.framing == "line":
                self.link.emit(self._last_request, "output", line)
            elif block:
                block.append(line)
                if not line.strip():
                    self._reply("".join(block))
                    block = []
            elif line[:1] in ("=", "?"):
                block = [line]
            elif line.strip():
                self.link.emit(self._last_request, "output", line)
        if block:   # the engine died in the middle of a reply: pass on what it said
            self._reply("".join(block))

    async def run(self) -> int:
        """Runs the engine and the link until the engine exits or a signal. Blocks."""
        loop = asyncio.get_running_loop()
        try:
            proc = self._proc = await asyncio.create_subprocess_exec(
                *self.command, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, limit=STDOUT_LINE_LIMIT)
        except OSError as exc:   # reported as one clear line by the command line
            raise ValueError(f"cannot start {self.command[0]!r}: {exc.strerror}") from exc
        self.log.info("bridge_start", command=self.command, pid=proc.pid,
                      framing=self.framing)
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.link.stop)
        assert proc.stdout is not None
        link = asyncio.create_task(self.link.run())
        engine = asyncio.create_task(self._engine_lifetime(proc, proc.stdout))
        done, _ = await asyncio.wait({link, engine}, return_when=asyncio.FIRST_COMPLETED)
        if engine in done:          # quit or crash: deliver what it said, then go offline
            self.link.stop()
            await link
            status = _exit_status(engine.result())
        else:                       # signal or refused credentials: end the engine too
            await self._end_engine(proc)
            await engine
            status = link.result() or _exit_status(proc.returncode or 0)
        self.log.info("bridge_stop", status=status)
        return status

    async def _engine_lifetime(self, proc: asyncio.subprocess.Process,
                               stdout: asyncio.StreamReader) -> int:
        await self._pump_stdout(stdout)
        code = await proc.wait()
        self.log.info("bridge_engine_exit", status=code)
        return code

    async def _end_engine(self, proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is not None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), ENGINE_EXIT_GRACE_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def _exit_status(code: int) -> int:
    """A child killed by signal N (-N here) reads as 128+N, as shells report it."""
    return 128 - code if code < 0 else code


def configure(p: argparse.ArgumentParser) -> None:
    from descent.engine.settings import settings_help

    helps = {name: (text, default) for name, text, default in settings_help()}
    for name in SETTINGS_FLAGS:
        text, default = helps[name]
        shown = f" (default: {default})" if default not in ("", None) else ""
        flag = "--" + name.replace("_", "-")
        if name == "mqtt_tls":
            p.add_argument(flag, dest=name, default=None, nargs="?", const="true",
                           metavar="BOOL", help=text + shown)
        else:
            p.add_argument(flag, dest=name, default=None,
                           metavar=name.upper().replace("_", "-"), help=text + shown)
    p.add_argument("--framing", choices=("gtp", "line"), default="gtp",
                   help="gtp: group output into replies ending with a blank line, one per "
                        "request (GTP, HTP); line: publish every output line on its own (UCI)")
    p.add_argument("--config", default=None, metavar="FILE.toml",
                   help="TOML file with any of the settings above (flags win over it)")
    # not "command": the top-level parser keeps the subcommand's name there
    p.add_argument("engine_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS",
                   help="the stdio engine to run, after --")


def run(args: argparse.Namespace) -> int:
    from descent.engine.logsetup import configure_logging
    from descent.engine.settings import load_settings

    command: list[str] = list(args.engine_command)
    if command and command[0] == "--":
        command = command[1:]
    cli: dict[str, Any] = {name: getattr(args, name) for name in SETTINGS_FLAGS}
    settings = load_settings(cli, args.config)
    configure_logging(settings.log_level, settings.log_file or None)
    bridge = MqttBridge(command, MqttOptions.from_settings(settings), args.framing)
    return asyncio.run(bridge.run())
