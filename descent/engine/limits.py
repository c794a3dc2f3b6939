"""Protocol-neutral search limits and the time manager that turns them into a per-move
budget (minimum, target, maximum) and a Stopper.

Every clock protocol (GTP time_settings/time_left, KGS byo-yomi and Canadian, UCI
wtime/winc/movestogo/movetime/nodes) is translated into ``Limits`` by its protocol
module; only this module decides how long to think.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from descent.search_cy.search.stopper import Stopper

# Bounds every limit is clamped to, whatever a manager sends (UCI ``nodes`` of 20 digits,
# GTP ``time_left b 1e300``): far beyond any real game, and within the C types of the
# searches (a 64-bit node count, an int depth), so no budget overflows.
MAX_SECONDS = 1.0e9
MAX_COUNT = 1 << 62
MAX_DEPTH = 10_000
# Below this much usable time (what is left after the move overhead) a move is answered at
# once from one iteration (the shallowest depth): a search's fixed costs would outrun the
# clock (dice chess under 3 s sudden death spent 5.6 ms with 1.5 ms left). It was 0.1 s,
# which turned a 150 ms byo-yomi (100 ms usable after the overhead, rounded below 0.1)
# into one-iteration play: Hex moves of 2 ms where a search had 75 ms.
HURRY_SECONDS = 0.02


@dataclass(frozen=True)
class Limits:
    """What the manager allows for the next move. Times in seconds; None = not given."""

    time_left: float | None = None     # main time left on the mover's clock
    increment: float = 0.0             # Fischer increment per move
    byoyomi: float = 0.0               # byo-yomi period (or Canadian block) length
    byoyomi_periods: int = 0           # periods left (Japanese byo-yomi)
    byoyomi_stones: int = 0            # moves to play within one block (Canadian)
    in_byoyomi: bool = False           # main time is spent: time_left is the period's time
    moves_to_go: int | None = None     # moves until the next time control
    move_time: float | None = None     # exactly this long for this move
    nodes: int | None = None           # node budget (deterministic)
    depth: int | None = None           # depth budget (iterative deepening)
    iterations: int | None = None      # iteration budget (best-first)
    infinite: bool = False             # until stop()

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or value is None:
                continue
            if isinstance(value, float):
                bound: float = MAX_SECONDS
            else:
                bound = MAX_DEPTH if f.name == "depth" else MAX_COUNT
            if value > bound:
                object.__setattr__(self, f.name, type(value)(bound))

    def with_clock(self, time_left: float | None) -> Limits:
        return replace(self, time_left=time_left)


@dataclass(frozen=True)
class Budget:
    """Seconds for one move: stop at ``target``; never pass ``maximum``. ``hurry``: the
    clock is almost out, answer from one iteration at once."""

    minimum: float
    target: float
    maximum: float
    hurry: bool = False


class TimeManager:
    """Splits the clock into per-move budgets, keeping a safety margin for transport latency.

    ``overhead`` is subtracted from every allowance (process start-up, the protocol round
    trip, an MQTT broker hop); ``expected_moves`` is how many moves of ours a game is
    assumed to still need when no moves-to-go is given (Hex 11: about 40, dice games more).
    """

    def __init__(self, overhead: float = 0.05, expected_moves: int = 40,
                 min_moves_left: int = 10) -> None:
        if overhead < 0:
            raise ValueError("overhead must be >= 0")
        self.overhead = overhead
        self.expected_moves = expected_moves
        self.min_moves_left = min_moves_left

    def budget(self, limits: Limits, moves_played: int = 0) -> Budget | None:
        """The budget of the next move, or None when time does not limit it."""
        if limits.infinite:
            return None
        if limits.move_time is not None:
            t = max(0.001, limits.move_time - self.overhead)
            return Budget(t, t, t)
        if limits.time_left is None:
            return None
        left = max(0.0, limits.time_left)
        if limits.byoyomi_stones > 0 and (limits.in_byoyomi or left <= 0):
            # Canadian: the block's time for the block's stones, evenly
            block = left if limits.in_byoyomi else limits.byoyomi
            per = block / limits.byoyomi_stones
            if limits.byoyomi_stones == 1:
                # a block of one stone is renewed by every move: all of it but the
                # overhead (the search's clock covers its own setup, so it ends there)
                return self._clamp(per * 0.5, per, per, block)
            return self._clamp(per * 0.5, per * 0.9, per * 1.5, block)
        if limits.byoyomi > 0 and (limits.in_byoyomi or left <= 0):
            # Japanese: a period is renewed by every move made within it, so a move may
            # use all of it but the overhead
            per = limits.byoyomi
            return self._clamp(per * 0.5, per, per, per)
        moves_left = limits.moves_to_go or max(
            self.min_moves_left, self.expected_moves - moves_played // 2)
        target = left / moves_left + 0.8 * limits.increment
        if limits.byoyomi > 0:
            # the byo-yomi that follows main time is extra time for every move
            target += 0.5 * limits.byoyomi
        hard = left + (limits.byoyomi * 0.9 if limits.byoyomi > 0 else 0.0)
        return self._clamp(target * 0.3, target, min(target * 3.0, left * 0.3 +
                                                      limits.increment), hard)

    def _clamp(self, minimum: float, target: float, maximum: float, available: float) -> Budget:
        cap = max(0.001, available - self.overhead)
        maximum = min(max(maximum, target), cap)
        target = min(target, maximum)
        return Budget(max(0.001, min(minimum, target)), max(0.001, target), max(0.001, maximum),
                      hurry=available - self.overhead < HURRY_SECONDS)

    def stopper(self, limits: Limits, moves_played: int = 0,
                nodes_per_second: float | None = None) -> tuple[Stopper, Budget | None]:
        """A Stopper for the next move. With ``nodes_per_second`` (nodes-as-time mode) the
        time budget becomes a node budget, so tests under a clock are deterministic."""
        budget = self.budget(limits, moves_played)
        if budget is not None and budget.hurry and limits.move_time is None:
            return Stopper(iterations=1), budget
        time_limit = budget.target if budget else None
        nodes = limits.nodes
        if nodes_per_second and time_limit is not None:
            nodes = max(1, int(min(time_limit * nodes_per_second, MAX_COUNT))) \
                if nodes is None else nodes
            time_limit = None
        # the budget's maximum is how far a search may extend an unstable move
        max_time = max(budget.maximum, time_limit) if budget and time_limit is not None else None
        return Stopper(time=time_limit, nodes=nodes, iterations=limits.iterations,
                       max_time=max_time), budget
