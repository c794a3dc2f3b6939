"""A referee: complete games between two engines run as subprocesses, each move checked by
our kernels.

Each engine speaks its game's protocol (Hex GTP, EinStein's HTP-like dialect, dice-chess
UCI with the roll in ``go``); the referee rolls the dice itself from a seeded generator
(engines never roll for a real game), tells each engine what the other played, and ends a
game on a win, an illegal or malformed move, a crash, a timeout or the ply cap, recording
the reason. The arena builds its matches on this module.

Moves in a GameRecord are in the kernel's notation (RULES.md): Hex cells and ``swap`` (the
canonical swap), EinStein set-ups (six cells), rolls ``d3`` and moves ``b2c3``, dice-chess
rolls ``d1``..``d6`` and UCI moves. On the wire the Hex driver speaks the MoHex/HexGui swap
convention (``swap-pieces``: the board stays, the players exchange colours), mapping
colours and cells as protocols/gtp.py does. EinStein set-ups are drawn by the referee from
the seed for every set-up mode (also ``mirror`` and ``free``, where an engine would
otherwise choose), so both games of a pair start alike.

    python -m descent.tools.referee --game "hex(size=5)" \\
        --first "python -m descent play --game hex(size=5)" \\
        --second "python -m tests.helpers.bots.hex_openspiel_gtp" --games 2 --movetime 0.2
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import IO

from descent.search_cy.games.registry import make_game
from descent.search_cy.games.sampling import sample_outcome
from descent.search_cy.games.state import GameState

STDERR_TAIL = 600   # characters of a failing engine's stderr kept in the record


class EngineFailure(RuntimeError):
    """The engine crashed, timed out or broke its protocol (it loses the game)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


class EngineProcess:
    """A subprocess with line I/O and timeouts (a reader thread feeds a queue). Its stderr
    goes to a temporary file whose tail is quoted when the engine fails."""

    def __init__(self, command: str, name: str) -> None:
        self.name = name
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        try:
            argv = shlex.split(command)
            if not argv:
                raise ValueError("empty command")
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self.stderr, text=True, bufsize=1)
        except (OSError, ValueError) as exc:
            self.stderr.close()
            raise EngineFailure("crash", f"{name} did not start ({command!r}): {exc}") \
                from exc
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                self.lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):  # the pipe was closed under us
            pass
        self.lines.put(None)

    def send(self, line: str) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise EngineFailure("crash", f"{self.name} closed its input") from exc

    def readline(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty as exc:
            raise EngineFailure("timeout", f"{self.name} did not answer in {timeout:.1f} s") \
                from exc
        if line is None:
            self.proc.poll()
            raise EngineFailure("crash", f"{self.name} exited (code {self.proc.poll()})")
        return line

    def stderr_tail(self) -> str:
        """The last lines the engine wrote to stderr (for the record of a failure)."""
        try:
            self.stderr.flush()
            size = self.stderr.seek(0, 2)
            self.stderr.seek(max(0, size - STDERR_TAIL))
            return self.stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self.stderr.close()


class Driver:
    """Speaks one protocol to one engine. Moves given to and returned by a driver are in
    the kernel's notation; ``ask`` returns the engine's raw reply, ``to_kernel`` maps it.
    ``ask`` is told the roll (dice games)."""

    def __init__(self, process: EngineProcess, timeout: float) -> None:
        self.p = process
        self.timeout = timeout

    def start(self, state: GameState) -> None: ...
    def set_time(self, movetime: float, stones: int = 1) -> None:
        if stones != 1:
            raise ValueError(f"{self.p.name}: a clock of {stones} stones needs a GTP engine")

    def setup(self, state: GameState, player: int, text: str) -> None: ...
    def ask(self, state: GameState, player: int, die: int | None, movetime: float) -> str:
        raise NotImplementedError

    def to_kernel(self, reply: str) -> str:
        """The engine's move in kernel notation (ValueError if it cannot be one)."""
        return reply.strip()

    def tell(self, state: GameState, player: int, die: int | None, move: str,
             own: bool) -> None:
        """Every move is told to both engines; ``own`` says this engine played it."""


class GtpDriver(Driver):
    """GTP framing: ``=`` / ``?`` reply ending with a blank line. Hex swaps follow MoHex
    (``swap-pieces``): after one, wire colours are exchanged and cells transposed."""

    colours = ("b", "w")

    def __init__(self, process: EngineProcess, timeout: float) -> None:
        super().__init__(process, timeout)
        self.size = 0
        self.transposed = False

    def command(self, line: str, timeout: float | None = None) -> str:
        self.p.send(line)
        first = ""
        while not first:
            first = self.p.readline(timeout or self.timeout)
        body = [first]
        while True:
            reply = self.p.readline(timeout or self.timeout)
            if reply == "":
                break
            body.append(reply)
        text = "\n".join(body)
        if not text.startswith("="):
            raise EngineFailure("protocol", f"{self.p.name} answered {line!r} with {text!r}")
        return text[1:].strip()

    def optional(self, line: str) -> None:
        """A command some engines lack (MoHex has no time_settings): ``?`` is fine."""
        try:
            self.command(line)
        except EngineFailure as exc:
            if exc.reason != "protocol":
                raise

    def start(self, state: GameState) -> None:
        params = state.game.params
        self.size = int(params["size"])      # (state.height is the padded encoding's)
        self.transposed = False
        self.command(f"boardsize {self.size}")
        swap = bool(params.get("swap"))
        self.optional(f"param_game allow_swap {int(swap)}")
        self.command("clear_board")

    def set_time(self, movetime: float, stones: int = 1) -> None:
        # a clock that gives about `movetime` per move: byo-yomi of one stone, or a
        # Canadian block of `stones` moves in `stones` x `movetime` (time moves between
        # the block's moves; the engine keeps its own clock)
        self.optional(f"time_settings 0 {movetime * stones:g} {stones}")

    def _colour(self, player: int) -> str:
        return self.colours[player ^ int(self.transposed)]

    def _transpose(self, move: str) -> str:
        from descent.search_cy.games.hex import cell_name, parse_move

        n = self.size
        action = parse_move(move, n)
        if action >= n * n:
            return move
        row, col = divmod(action, n)
        return str(cell_name(col * n + row, n))

    def ask(self, state: GameState, player: int, die: int | None, movetime: float) -> str:
        return self.command(f"genmove {self._colour(player)}", movetime * 3 + self.timeout)

    def to_kernel(self, reply: str) -> str:
        move = reply.strip().lower()
        if move in ("swap", "swap-pieces", "swap-sides"):
            return "swap"
        return self._transpose(move) if self.transposed else move

    def tell(self, state: GameState, player: int, die: int | None, move: str,
             own: bool) -> None:
        if not own:
            wire = "swap-pieces" if move == "swap" else \
                (self._transpose(move) if self.transposed else move)
            self.command(f"play {self._colour(player)} {wire}")
        if move == "swap":
            self.transposed = True


class EwnDriver(GtpDriver):
    colours = ("red", "blue")

    def start(self, state: GameState) -> None:
        self.command("clear_board")

    def setup(self, state: GameState, player: int, text: str) -> None:
        self.command(f"setup {self.colours[player]} {text}")

    def ask(self, state: GameState, player: int, die: int | None, movetime: float) -> str:
        return self.command(f"genmove {self.colours[player]} {die}", movetime * 3 + self.timeout)

    def to_kernel(self, reply: str) -> str:
        return reply.strip().lower()

    def tell(self, state: GameState, player: int, die: int | None, move: str,
             own: bool) -> None:
        if not own:
            self.command(f"play {self.colours[player]} {die} {move}")


class UciDriver(Driver):
    """UCI with ``go dice N``; the position is sent in full before every search."""

    def __init__(self, process: EngineProcess, timeout: float) -> None:
        super().__init__(process, timeout)
        self.moves: list[str] = []
        self.start_fen = "startpos"
        self.movetime_ms = 1000

    def wait_for(self, token: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            line = self.p.readline(max(0.001, deadline - time.monotonic()))
            if line.split()[:1] == [token]:
                return line

    def start(self, state: GameState) -> None:
        self.p.send("uci")
        self.wait_for("uciok", self.timeout)
        self.p.send("setoption name UCI_Variant value dicechess")
        params = state.game.params
        if "nomove" in params:
            self.p.send(f"setoption name NoMoveRule value {params['nomove']}")
        if "castle" in params:
            self.p.send(f"setoption name CastleRule value {params['castle']}")
        self.p.send("isready")
        self.wait_for("readyok", self.timeout)
        self.p.send("ucinewgame")
        self.moves = []

    def ask(self, state: GameState, player: int, die: int | None, movetime: float) -> str:
        moves = " moves " + " ".join(self.moves) if self.moves else ""
        self.p.send(f"position {self.start_fen}{moves}")
        self.p.send(f"go dice {die} movetime {max(1, round(movetime * 1000))}")
        line = self.wait_for("bestmove", movetime * 3 + self.timeout)
        parts = line.split()
        if len(parts) < 2:
            raise EngineFailure("protocol", f"{self.p.name}: malformed {line!r}")
        return parts[1]

    def tell(self, state: GameState, player: int, die: int | None, move: str,
             own: bool) -> None:
        self.moves.append(move)


DRIVERS: dict[str, type[Driver]] = {"hex": GtpDriver, "einstein": EwnDriver,
                                    "dicechess": UciDriver}


@dataclass
class GameRecord:
    game: str
    first: str                    # engine playing player 0 (Black / Red / White)
    second: str
    winner: int | None            # 0, 1, or None for a draw
    reason: str                   # "normal", "resign", "illegal", "timeout", "crash",
    #                               "protocol", "ply cap"
    moves: list[str] = field(default_factory=list)
    detail: str = ""
    plies: int = 0
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])
    seed: int = 0                 # the referee's die / set-up stream
    opening: list[str] = field(default_factory=list)   # forced first moves (in `moves` too)
    movetime: list[float] = field(default_factory=lambda: [0.0, 0.0])
    stones: list[int] = field(default_factory=lambda: [1, 1])


def _die_of(state: GameState, action: int) -> int:
    text = state.action_to_string(action)
    return int(text.lstrip("d"))


def _setup_side(state: GameState) -> int | None:
    """The side whose EinStein set-up is due (chance or decision node), else None."""
    from descent.search_cy.games.einstein import EinsteinState

    if isinstance(state, EinsteinState) and state.phase_name == "setup":
        return int(state.side_to_act)
    return None


def check_opening(spec: str, opening: Sequence[str]) -> list[str]:
    """The opening's moves in canonical notation; ValueError when one is not legal."""
    state = make_game(spec).new_initial_state()
    out = []
    for move in opening:
        if state.is_terminal() or state.is_chance_node():
            raise ValueError(f"opening {' '.join(opening)!r}: {move!r} is not at a "
                             "player's turn (openings are for games without chance)")
        action = state.string_to_action(move)
        if action not in state.legal_actions():
            raise ValueError(f"opening {' '.join(opening)!r}: {move!r} is not legal")
        out.append(state.action_to_string(action))
        state.apply_action(action)
    return out


def play_game(spec: str, commands: tuple[str, str], seed: int,
              movetime: float | tuple[float, float] = 0.2,
              timeout: float = 30.0, max_plies: int = 2000,
              names: tuple[str, str] | None = None,
              opening: Sequence[str] | None = None,
              start_timeout: float = 60.0,
              stones: int | tuple[int, int] = 1) -> GameRecord:
    """One game: commands[0] plays player 0. Every move is checked with our kernel.

    ``movetime`` is the time per move, one for both or one per player. ``opening`` is a
    list of moves played first, as if by the players, and told to both engines (Hex
    opening suites). ``timeout`` is how long an answer may take beyond 3 x the move time;
    ``start_timeout`` how long the answers while an engine starts (loads its network) may.
    ``stones`` (GTP engines): the clock's block, one for both or one per player; 1 is a
    byo-yomi of ``movetime`` a move, N a Canadian block of N moves in N x ``movetime``.
    """
    game = make_game(spec)
    state = game.new_initial_state()
    kind = game.name
    names = names or commands
    times = (float(movetime), float(movetime)) if isinstance(movetime, (int, float)) \
        else (float(movetime[0]), float(movetime[1]))
    forced = check_opening(spec, opening or [])
    rng = random.Random(seed)
    record = GameRecord(game.spec, names[0], names[1], None, "normal", seed=seed,
                        opening=list(forced), movetime=list(times))
    blocks = (stones, stones) if isinstance(stones, int) else stones
    record.stones = [int(blocks[0]), int(blocks[1])]
    procs: list[EngineProcess] = []
    drivers: list[Driver] = []
    current = 0
    try:
        for i in (0, 1):
            current = i
            procs.append(EngineProcess(commands[i], names[i]))
        drivers = [DRIVERS[kind](p, max(timeout, start_timeout)) for p in procs]
        for i, d in enumerate(drivers):
            current = i
            d.start(state)
            d.set_time(times[i], record.stones[i])
            d.timeout = timeout
        for text in forced:
            player = state.current_player()
            state.apply_move(text)
            record.moves.append(text)
            record.plies += 1
            for i, d in enumerate(drivers):
                current = i
                d.tell(state, player, None, text, own=False)
        die: int | None = None
        while not state.is_terminal() and record.plies < max_plies:
            side = _setup_side(state)
            if side is not None:
                # a set-up (chance or choice): the referee draws it from the seed and
                # tells both engines, so both games of a pair start from the same one
                if state.is_chance_node():
                    action = sample_outcome(state, rng)
                else:
                    action = rng.choices(state.legal_actions())[0]
                text = state.action_to_string(action)
                state.apply_action(action)
                for i, d in enumerate(drivers):
                    current = i
                    d.setup(state, side, text)
                record.moves.append(text)
                continue
            if state.is_chance_node():
                action = sample_outcome(state, rng)
                die = _die_of(state, action)
                state.apply_action(action)
                record.moves.append(f"d{die}")
                continue
            player = state.current_player()
            current = player
            started = time.perf_counter()
            reply = drivers[player].ask(state, player, die, times[player])
            record.seconds[player] += time.perf_counter() - started
            if reply.strip().lower() == "resign":
                record.winner, record.reason = 1 - player, "resign"
                return record
            try:
                move = drivers[player].to_kernel(reply)
                action = state.string_to_action(move)
                if action not in state.legal_actions():
                    raise ValueError("not legal here")
            except ValueError as exc:
                record.winner, record.reason = 1 - player, "illegal"
                record.detail = f"{names[player]} played {reply!r}: {exc}"
                return record
            text = state.action_to_string(action)
            state.apply_action(action)
            record.moves.append(text)
            record.plies += 1
            for i in (1 - player, player):
                current = i
                drivers[i].tell(state, player, die, text, own=i == player)
        if state.is_terminal():
            value = state.terminal_value()
            record.winner = 0 if value > 0 else (1 if value < 0 else None)
        else:
            record.reason = "ply cap"
        return record
    except EngineFailure as exc:
        record.winner, record.reason, record.detail = 1 - current, exc.reason, str(exc)
        if current < len(procs):
            procs[current].kill()
            tail = procs[current].stderr_tail()
            if tail:
                record.detail += f"\nstderr: {tail}"
        return record
    finally:
        for p in procs:
            p.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m descent.tools.referee", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", required=True)
    ap.add_argument("--first", required=True, help="command of the first engine")
    ap.add_argument("--second", required=True, help="command of the second engine")
    ap.add_argument("--games", type=int, default=2,
                    help="games; colours alternate and each pair shares its dice")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--movetime", type=float, default=0.2)
    args = ap.parse_args(argv)
    for g in range(args.games):
        swap = g % 2 == 1
        commands = (args.second, args.first) if swap else (args.first, args.second)
        record = play_game(args.game, commands, seed=args.seed + g // 2,
                           movetime=args.movetime)
        print(json.dumps(asdict(record)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
