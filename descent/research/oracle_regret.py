"""What a stronger engine thinks of each candidate's moves: a paired, low-variance screen.

A 40-game match against MoHex moves by chance as much as most levers are worth (three
matches of one configuration spread from 27.5% to 42.5%, docs/results/hex.md).
This tool compares Hex players move by move instead: on the same positions (taken from
recorded games) each candidate chooses a move under its clock, an oracle engine values the
position after each distinct move, and the candidates' mean values are compared pairwise,
position by position. Two candidates that choose the same move get the same value, so the
comparison's noise comes only from the positions where they differ.

    python -m descent.research.oracle_regret m19v/games.jsonl --plies 12:40:4 --positions 120 \\
        --oracle "gtp:mohex --quiet --use-logfile=false --config=mohex-oracle.htp" \\
        --dialect mohex \\
        --player "default@gtp[time=1]:env PYTHONPATH=/tmp/a python -P -m descent play" \\
        --player "lever@gtp[time=1]:env PYTHONPATH=/tmp/b python -P -m descent play"

Dialects, how the oracle's value of a position (for its side to move) is read:

- ``mohex``: ``genmove`` then ``mohex-search-statistics``'s ``Score`` (a win rate); when
  the statistics did not change the oracle played without a search (a decided position)
  and the value comes from our H-search's proof, or the position is dropped.
- ``descent``: ``descent-gfx``'s ``value`` (-1..1, mapped to 0..1), our own engine as the
  oracle (for tests, or a long search judging short ones).

Positions are Hex positions of the records without the swap, from the plies asked for,
sampled with ``--seed``. A candidate's value on a position is the oracle's value for the
mover after the candidate's move (1 when it connects). Prints each candidate's mean value
and each one's paired difference from the first with its standard error; ``--out``
keeps every position's moves and values as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import lzma
import math
import random
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from descent.search_cy.games.registry import make_game
from descent.search_cy.games.state import GameState
from descent.tools.arena import parse_player
from descent.tools.referee import EngineFailure, EngineProcess, GtpDriver

DIALECTS = ("mohex", "descent")
SCORE = re.compile(r"^Score\s+([-+0-9.eE]+)", re.M)
RESIGN = "resign"                    # a candidate that resigns: the mover's value is 0
GFX_VALUE = re.compile(r"TEXT value ([-+0-9.eE]+)")


@dataclass
class Position:
    """A position of a recorded game: the game's spec and the moves that lead to it."""

    game: str
    moves: list[str]
    source: str = ""

    def state(self) -> GameState:
        s = make_game(self.game).new_initial_state()
        for m in self.moves:
            s.apply_move(m)
        return s


@dataclass
class Outcome:
    """One position's verdicts: each candidate's move and the oracle's value of it."""

    position: Position
    moves: dict[str, str] = field(default_factory=dict)
    values: dict[str, float | None] = field(default_factory=dict)


def arena_records(path: Path) -> Iterator[dict[str, object]]:
    """The games of a ``descent arena`` records file (``games.jsonl``, ``.xz`` read as such)."""
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def positions_from_records(paths: Sequence[Path], plies: range, count: int,
                           seed: int) -> list[Position]:
    """Up to ``count`` positions at ``plies`` of the Hex games in ``paths`` (games with the
    swap played are left out: their colours no longer follow the plies), drawn by seed."""
    found: list[Position] = []
    for path in paths:
        for i, record in enumerate(arena_records(path)):
            spec = str(record.get("game", ""))
            moves = [str(m) for m in record.get("moves", [])]   # type: ignore[attr-defined]
            if not spec.startswith("hex") or "swap" in moves:
                continue
            for k in plies:
                if k < len(moves):
                    found.append(Position(spec, moves[:k], f"{path.name}#{i + 1}@{k}"))
    random.Random(seed).shuffle(found)
    return found[:count] if count > 0 else found


def _proven_value(state: GameState) -> float | None:
    """The mover's value of a decided position by our H-search (1, 0), or None."""
    from descent.search_cy.games.hex import HexState
    from descent.search_cy.games.hex_vc import HexVC

    if not isinstance(state, HexState) or state.size * state.size > 256:
        return None
    code, _ = HexVC(state.size).knowledge(state)
    return 1.0 if code == "win" else 0.0 if code == "loss" else None


def _load(driver: GtpDriver, state: GameState, moves: Sequence[str]) -> None:
    """A fresh board on the engine, then ``moves`` (which lead to ``state``) told to it."""
    driver.start(state)
    replay = make_game(state.game.spec).new_initial_state()
    for m in moves:
        driver.tell(replay, replay.current_player(), None, m, own=False)
        replay.apply_move(m)


class Oracle:
    """An engine that values positions for their side to move, in 0..1."""

    def __init__(self, command: str, dialect: str, timeout: float) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"dialect {dialect!r}: expected one of {', '.join(DIALECTS)}")
        self.dialect = dialect
        self.process = EngineProcess(command, "oracle")
        self.driver = GtpDriver(self.process, timeout)
        self.last_statistics = ""

    def close(self) -> None:
        self.process.close()

    def value(self, state: GameState, moves: Sequence[str]) -> float | None:
        """The oracle's value of ``state`` (reached by ``moves``) for its side to move;
        None when it cannot say (a decided position that our H-search does not prove)."""
        if state.is_terminal():
            return 0.0                       # the side to move has lost
        _load(self.driver, state, moves)
        if self.dialect == "descent":
            match = GFX_VALUE.search(self.driver.command("descent-gfx", 600.0))
            if match is None:
                raise EngineFailure("protocol", "oracle: descent-gfx gave no value")
            return (float(match.group(1)) + 1.0) / 2.0
        self.driver.ask(state, state.current_player(), None, 600.0)
        statistics = self.driver.command("mohex-search-statistics")
        fresh = statistics != self.last_statistics
        self.last_statistics = statistics
        match = SCORE.search(statistics)
        if fresh and match is not None:
            return float(match.group(1))
        return _proven_value(state)          # played without a search: decided


class Candidate:
    """A player (an arena spec with a GTP command) choosing moves under its clock."""

    def __init__(self, spec: str, game: str, default_time: float, timeout: float) -> None:
        player = parse_player(spec, game, default_time)
        if player.kind not in ("gtp", "descent"):
            raise ValueError(f"candidate {spec!r}: a Hex GTP engine is needed (gtp: or descent:)")
        self.name = player.name
        self.movetime = player.movetime or default_time
        self.process = EngineProcess(player.command, player.name)
        self.driver = GtpDriver(self.process, timeout)

    def close(self) -> None:
        self.process.close()

    def choose(self, state: GameState, moves: Sequence[str]) -> str:
        _load(self.driver, state, moves)
        self.driver.set_time(self.movetime)
        reply = self.driver.ask(state, state.current_player(), None, self.movetime)
        move = self.driver.to_kernel(reply)
        if move == RESIGN:
            return move
        state.clone().apply_move(move)       # ValueError on an illegal move
        return move


def evaluate(positions: Sequence[Position], candidates: Sequence[Candidate], oracle: Oracle,
             on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Every candidate's move on every position, and the oracle's value of each distinct
    move for the mover (a move's value is shared by the candidates that chose it)."""
    outcomes = []
    for position in positions:
        state = position.state()
        if state.is_terminal():
            continue
        out = Outcome(position)
        for c in candidates:
            out.moves[c.name] = c.choose(state, position.moves)
        judged: dict[str, float | None] = {}
        for move in dict.fromkeys(out.moves.values()):
            if move == RESIGN:
                judged[move] = 0.0           # a resignation loses the position
                continue
            after = state.clone()
            after.apply_move(move)
            v = oracle.value(after, [*position.moves, move])
            judged[move] = None if v is None else 1.0 - v
        out.values = {name: judged[move] for name, move in out.moves.items()}
        outcomes.append(out)
        if on_outcome is not None:
            on_outcome(out)
    return outcomes


@dataclass
class Comparison:
    name: str
    positions: int
    mean: float
    differs: int = 0            # positions where its move was not the reference's
    diff: float = 0.0           # mean of (its value - the reference's)
    stderr: float = 0.0


def compare(outcomes: Sequence[Outcome], names: Sequence[str]) -> list[Comparison]:
    """Each candidate's mean value over the positions every candidate's value is known on,
    and its paired difference from the first candidate's (mean and standard error)."""
    rows = [o for o in outcomes if all(o.values.get(n) is not None for n in names)]
    out = []
    for name in names:
        vals = [float(o.values[name]) for o in rows]   # type: ignore[arg-type]
        diffs = [float(o.values[name]) - float(o.values[names[0]])  # type: ignore[arg-type]
                 for o in rows]
        n = len(rows)
        mean_d = sum(diffs) / n if n else 0.0
        var = sum((d - mean_d) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
        out.append(Comparison(name, n, sum(vals) / n if n else 0.0,
                              sum(o.moves[name] != o.moves[names[0]] for o in rows),
                              mean_d, math.sqrt(var / n) if n else 0.0))
    return out


def _plies(text: str) -> range:
    parts = [int(x) for x in text.split(":")]
    if len(parts) not in (2, 3) or parts[0] < 0 or parts[1] <= parts[0]:
        raise argparse.ArgumentTypeError(f"plies {text!r}: expected FROM:TO or FROM:TO:STEP")
    return range(*parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="+", type=Path,
                        help="games.jsonl (or .jsonl.xz) records to take positions from")
    parser.add_argument("--player", dest="players", action="append", default=[],
                        help="a candidate (arena spec); the first is the reference")
    parser.add_argument("--oracle", required=True, help="the oracle's GTP command")
    parser.add_argument("--dialect", choices=DIALECTS, default="mohex")
    parser.add_argument("--plies", type=_plies, default=range(12, 40, 4))
    parser.add_argument("--positions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time", type=float, default=1.0,
                        help="seconds a move of candidates without time=")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds an engine may take beyond its clock")
    parser.add_argument("--out", type=Path, help="JSON lines, one per position")
    args = parser.parse_args(argv)
    if len(args.players) < 1:
        parser.error("give at least one --player")
    positions = positions_from_records(args.records, args.plies, args.positions, args.seed)
    if not positions:
        parser.error("no Hex position at those plies in the records")
    game = positions[0].game
    candidates = [Candidate(spec, game, args.time, args.timeout) for spec in args.players]
    names = [c.name for c in candidates]
    if len(set(names)) != len(names):
        parser.error("candidates need distinct names (name@...)")
    oracle = Oracle(args.oracle.removeprefix("gtp:"), args.dialect, args.timeout)
    sink = args.out.open("w", encoding="utf-8") if args.out else None

    def record(o: Outcome) -> None:
        if sink is not None:
            sink.write(json.dumps({"position": o.position.source, "game": o.position.game,
                                   "moves": o.position.moves, "chosen": o.moves,
                                   "values": o.values}) + "\n")
            sink.flush()
        print(f"{o.position.source}: " + ", ".join(
            f"{n} {o.moves[n]} {'-' if o.values[n] is None else format(o.values[n], '.3f')}"
            for n in names), file=sys.stderr, flush=True)

    try:
        outcomes = evaluate(positions, candidates, oracle, record)
    finally:
        for c in candidates:
            c.close()
        oracle.close()
        if sink is not None:
            sink.close()
    rows = compare(outcomes, names)
    print(f"{rows[0].positions if rows else 0} positions valued by the oracle "
          f"(of {len(outcomes)})")
    print("| candidate | mean value after its move | moves unlike the first's "
          "| paired difference from the first | standard error |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.name} | {r.mean:.4f} | {r.differs} | {r.diff:+.4f} | {r.stderr:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
