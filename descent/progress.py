"""Progress bars on a stream that is no terminal: tqdm redraws its bar after a carriage
return, which piles every state on one line of a log file or a pipe. ``LineStream`` turns
the redraws into whole lines, a state that repeats the line before it dropped. Like
``descent.stats`` it imports nothing from the package, so any layer may use it."""

from __future__ import annotations

from typing import IO


class LineStream:
    """What tqdm writes to ``stream``, as whole lines."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> int:
        line = text.replace("\r", "").rstrip()
        if line and line != self.last:
            self.stream.write(line + "\n")
            self.last = line
        return len(text)

    def flush(self) -> None:
        self.stream.flush()
