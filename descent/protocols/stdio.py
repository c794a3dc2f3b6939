"""The stdio transport: lines from stdin to the protocol, replies to stdout.

A reader thread takes lines off stdin. Urgent lines (``# interrupt``, ``stop``,
``isready``) are handled on the reader thread at once, so they work while the main thread
sits in a blocking command such as GTP ``genmove``; every other line is queued and handled
in order on the main thread.
"""

from __future__ import annotations

import queue
import sys
import threading
from typing import IO

from descent.engine.engine import Engine
from descent.engine.logsetup import get_logger
from descent.protocols.base import LineProtocol


class StdioTransport:
    def __init__(self, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
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
            for raw in self.stdin:
                line = raw.rstrip("\r\n")
                if protocol.is_urgent(line):
                    protocol.handle_urgent(line)
                else:
                    lines.put(line)
            lines.put(None)

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
