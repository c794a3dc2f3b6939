"""What a search returns: one typed result for every search (best-first, MCTS,
expectiminimax), built by the search itself at the end of ``run``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ChildStat:
    action: int
    value: float      # v'(s, a), player 0's view
    visits: int
    resolved: bool
    # the resolved outcome, from the search's resolution flags: +1 player 0 wins, -1
    # player 1 wins, 0 neither (a draw, or chance outcomes that differ); None where the
    # search does not say (the value then tells: +-1 with the gain terminal)
    outcome: int | None = None


@dataclass(frozen=True)
class SearchResult:
    """What a search decided, with the statistics protocols print and tests check."""

    action: int                  # -1 when the root is terminal
    value: float                 # root value, player 0's view
    pv: list[int]
    nodes: int                   # states visited (applied) by this run
    iterations: int              # best-first iterations, ID depths or MCTS simulations
    depth: int                   # deepest path (best-first, MCTS) or last full depth (ID)
    time: float                  # seconds
    stop_reason: str
    resolved: bool               # the root value is exact
    evaluations: int = 0         # states valued by the evaluator during this run
    children: list[ChildStat] = field(default_factory=list)

    @property
    def nps(self) -> float:
        return self.nodes / self.time if self.time > 0 else 0.0
