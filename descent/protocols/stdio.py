"""The stdio transport: lines from stdin to the protocol, replies to stdout.

A reader thread takes lines off stdin. Urgent lines (``# interrupt``, ``stop``,
``isready``) are handled on the reader thread at once, so they work while the main thread
sits in a blocking command such as GTP ``genmove``; every other line is queued and handled
in order on the main thread.

Input is read as bytes and decoded as UTF-8 with replacement, whatever the locale: a byte
that is not UTF-8 becomes U+FFFD in its line (which the protocol then answers, usually
with an error), never an exception that ends the reader. SIGTERM ends the session as the
end of input does: the running search stops, the process exits with status 0.
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
        """Runs the session until quit or end of input. Blocks."""
        protocol = protocol_cls(engine, self.send)
        lines: queue.Queue[str | None] = queue.Queue()

        def reader() -> None:
            try:
                for line in decoded_lines(self.stdin):
                    if protocol.is_urgent(line):
                        try:
                            protocol.handle_urgent(line)
                        except Exception as exc:   # the reader must outlive any line
                            self.log.error("protocol_failure", line=line, error=repr(exc))
                        continue
                    if protocol.is_quit(line):
                        engine.end_session()  # a genmove before it answers at once
                    lines.put(line)
            except Exception as exc:     # an unreadable stdin ends the session, never hangs it
                self.log.error("stdin_failed", error=repr(exc))
            finally:
                engine.end_session()     # end of input: a running search ends at once
                lines.put(None)

        def terminate(signum: int, frame: object) -> None:
            engine.end_session()
            lines.put(None)

        with contextlib.suppress(ValueError):      # only the main thread may set handlers
            signal.signal(signal.SIGTERM, terminate)
        threading.Thread(target=reader, name="stdin-reader", daemon=True).start()
        while True:
            line = lines.get()
            if line is None:
                break
            try:
                if not protocol.handle(line):
                    break
            except Exception as exc:   # a protocol bug must not kill a tournament game
                self.log.error("protocol_failure", line=line, error=repr(exc))
        protocol.close()
        return 0
