"""Which first stones of Hex to swap: the swap map, measured by self-play.

The map holds, per board size, Black's wins and the games played by ``rave`` against
itself from each first stone (one stone per class of the half turn, which keeps the
colours; ``descent swapmap`` writes and builds it). A first stone whose Black score is
above one half is worth more than a move, so the second player swaps it; the first
player, who knows that, opens with the stone whose score is nearest one half: whichever
the opponent then chooses, it is left the least. (Swapping every stone unless its score
was below one half at 95%, which most scores of 48 games are not, scored the same
against MoHex: docs/results/hex.md, tried and rejected.)

The shipped map is ``hex_swap.json`` beside this module: 9x9 and 11x11, built from the
records in ``data/swap/`` (docs/results/hex.md, the swap map, says how they were played).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SHIPPED_FILE = "hex_swap.json"


class SwapMap:
    """Black's self-play score of each first stone, per board size."""

    def __init__(self, data: dict[str, Any], source: str = "swap map") -> None:
        self.source = source
        self._scores: dict[int, dict[int, tuple[int, int]]] = {}
        try:
            for size_text, entry in data.items():
                size = int(size_text)
                scores: dict[int, tuple[int, int]] = {}
                for cell_text, games in entry["games"].items():
                    cell, n = int(cell_text), int(games)
                    wins = int(entry["black_wins"][cell_text])
                    if not 0 <= cell < size * size or n < 1 or not 0 <= wins <= n:
                        raise ValueError(f"bad entry {cell_text}: {wins} of {n}")
                    scores[min(cell, size * size - 1 - cell)] = (wins, n)
                self._scores[size] = scores
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"{source}: not a swap map ({e})") from None

    @classmethod
    def load(cls, path: Path) -> SwapMap:
        """The map in a JSON file (``descent swapmap build``); a file that cannot be read
        or is not a map is a ValueError naming it."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: cannot read a swap map ({e})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: not a swap map (a JSON object expected)")
        return cls(data, str(path))

    def sizes(self) -> list[int]:
        return sorted(self._scores)

    def black_score(self, size: int, cell: int) -> float | None:
        """Black's share of the self-play games from its first stone on ``cell``, or None
        when the map has no games of it."""
        entry = self._scores.get(size, {}).get(min(cell, size * size - 1 - cell))
        if entry is None:
            return None
        return entry[0] / entry[1]

    def swaps(self, size: int, cell: int) -> bool | None:
        """Whether the second player should swap Black's first stone on ``cell`` (None:
        the map does not say)."""
        score = self.black_score(size, cell)
        return None if score is None else score > 0.5

    def opening(self, size: int) -> int | None:
        """The first stone to play under the swap rule: the one whose score is nearest one
        half (ties: more games, then the smaller cell); None without a complete map of
        ``size`` (a stone the map lacks might be the better opening)."""
        scores = self._scores.get(size)
        if not scores or len(scores) < (size * size + 1) // 2:
            return None

        def rank(cell: int) -> tuple[float, int, int]:
            wins, n = scores[cell]
            return (abs(wins / n - 0.5), -n, cell)

        return min(scores, key=rank)


_shipped: SwapMap | None = None


def shipped_swap_map() -> SwapMap:
    """The map shipped beside this module (loaded once)."""
    global _shipped
    if _shipped is None:
        _shipped = SwapMap.load(Path(__file__).with_name(SHIPPED_FILE))
    return _shipped
