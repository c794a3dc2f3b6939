"""An engine subprocess read line by line: a reader thread queues its output lines, so a
test waits for a line with a timeout instead of blocking on a pipe."""

from __future__ import annotations

import queue
import subprocess
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class EngineProcess:
    """``argv`` started in the repository's root, stdin and stdout as text pipes, stderr
    discarded."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def next_line(self, timeout: float) -> str | None:
        """The next output line; None once the output has ended; TimeoutError."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no output within {timeout} s") from None
