"""The stdio transport: lines from stdin to the protocol, replies to stdout.

A reader thread takes lines off stdin. Urgent lines (``# interrupt``, ``stop``,
``isready``) are handled on the reader thread at once, so they work while the main thread
sits in a blocking command such as GTP ``genmove``; every other line is queued and handled
in order on the main thread.

The synchronous protocols (GTP, EinStein's and the NTU referee's) execute every queued
command in turn at full strength: a ``quit`` or the end of input behind a ``genmove`` takes
effect when it is reached, after the move is answered, as GNU Go, MoHex and KataGo do; a
controller may write a whole script and close its end of the pipe. In UCI, whose ``go``
searches in the background, ``quit`` and the end of input stop the search at once (its
bestmove goes out), as Stockfish does.

Signals: SIGTERM stops the running search (it answers with its move so far), drops the
queued lines and ends the session with status 0. SIGINT cuts the running search as
``# interrupt`` does and the session goes on; with no search running it ends the session as
SIGTERM does (a second Ctrl-C in a terminal quits).

Input is read as bytes and decoded as UTF-8 with replacement, whatever the locale: a byte
that is not UTF-8 becomes U+FFFD in its line (which the protocol then answers, usually
with an error), never an exception that ends the reader.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any

from descent.engine.engine import Engine
from descent.engine.logsetup import get_logger
from descent.protocols.base import LineProtocol


def decoded_lines(stream: IO[Any]) -> Iterator[str]:
    """The lines of ``stream``, without their line ends: a binary stream (or a text
    stream's buffer) decoded as UTF-8 with replacement."""
    raw = getattr(stream, "buffer", stream)
    for chunk in raw:
        text = chunk.decode("utf-8", "replace") if isinstance(chunk, bytes) else chunk
        yield text.rstrip("\r\n")


class StdioTransport:
    def __init__(self, stdin: IO[Any] | None = None, stdout: IO[str] | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self._out_lock = threading.Lock()
        self.log = get_logger(component="stdio")

    def send(self, text: str) -> None:
        """Writes a framed reply and flushes (managers wait on it). Must not block long."""
        with self._out_lock:
            self.stdout.write(text if text.endswith("\n") else text + "\n")
            self.stdout.flush()

    def serve(self, protocol_cls: type[LineProtocol], engine: Engine) -> int:
        """Runs the session until quit, the end of input or SIGTERM. Blocks."""
        protocol = protocol_cls(engine, self.send)
        lines: queue.Queue[str | None] = queue.Queue()
        cuts = protocol.asynchronous_search      # quit and end of input stop a search
        ended = threading.Event()                 # SIGTERM: the queued lines are dropped

        def reader() -> None:
            try:
                for line in decoded_lines(self.stdin):
                    if protocol.is_urgent(line):
                        try:
                            protocol.handle_urgent(line)
                        except Exception as exc:   # the reader must outlive any line
                            self.log.error("protocol_failure", line=line, error=repr(exc))
                        continue
                    if cuts and protocol.is_quit(line):
                        engine.end_session()
                    lines.put(line)
            except Exception as exc:     # an unreadable stdin ends the session, never hangs it
                self.log.error("stdin_failed", error=repr(exc))
            finally:
                if cuts:
                    engine.end_session()
                lines.put(None)

        def end() -> None:
            ended.set()
            engine.end_session()
            # not from the handler itself: it may have interrupted lines.get() holding the
            # queue's lock
            threading.Thread(target=lines.put, args=(None,), daemon=True).start()

        def on_sigterm(signum: int, frame: object) -> None:
            end()

        def on_sigint(signum: int, frame: object) -> None:
            if engine.searching:
                self.log.info("sigint_interrupt")
                engine.stop()
            else:
                end()

        with contextlib.suppress(ValueError):      # only the main thread may set handlers
            signal.signal(signal.SIGTERM, on_sigterm)
            signal.signal(signal.SIGINT, on_sigint)
        threading.Thread(target=reader, name="stdin-reader", daemon=True).start()
        while not ended.is_set():
            line = lines.get()
            if line is None or ended.is_set():
                break
            try:
                if not protocol.handle(line):
                    break
            except Exception as exc:   # a protocol bug must not kill a tournament game
                self.log.error("protocol_failure", line=line, error=repr(exc))
        protocol.close()
        return 0
