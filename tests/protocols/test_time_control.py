"""Games under short clocks through the real protocols, kept by the test as a manager keeps
them. The engine runs in nodes-as-time mode, so the clock is charged the time the engine
allowed itself (nodes / rate) and the checks are deterministic: no move passes its
maximum and no game is lost on time. The same games' wall-clock figures (share of the
clock, slowest search against its maximum) are printed, never asserted; run with -s."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from descent.search_cy.games.registry import make_game
from descent.tools.referee import EngineProcess

RATE = 20000.0    # nodes per virtual second


def engine(args: list[str], log: Path, virtual: bool) -> EngineProcess:
    rate = ["--nodes-per-second", f"{RATE:g}"] if virtual else []
    cmd = " ".join([sys.executable, "-m", "descent", "play", "--hash-mb", "32", "--seed", "1",
                    *rate, "--log-level", "info", "--log-file", str(log), *args])
    return EngineProcess(cmd, "descent")


def moves_logged(log: Path) -> list[dict[str, object]]:
    """The engine's structured "move" events, in order."""
    return [event for event in map(json.loads, log.read_text().splitlines())
            if event.get("event") == "move"]


def charge(log: Path, seen: int, virtual: bool) -> tuple[float, float, float]:
    """(seconds charged, maximum, wall seconds) of the move logged after ``seen`` moves:
    in virtual mode the engine is charged nodes / rate, else its own search time."""
    events = moves_logged(log)
    assert len(events) == seen + 1, "one move event per search"
    event = events[-1]
    budget = event["budget"]
    assert isinstance(budget, list)
    wall = float(str(event["time"]))
    charged = float(str(event["nodes"])) / RATE if virtual else wall
    return charged, float(budget[2]), wall


def report(name: str, start: float, moves: int, wall: list[tuple[float, float]],
           clocks: list[float]) -> None:
    worst = max((t / m for t, m in wall), default=0.0)
    used = sum(t for t, _ in wall)
    print(f"\n{name}: {moves} moves, {used:.2f} s of wall time searching, slowest search "
          f"{worst:.2f} x its maximum, lowest clock left {min(clocks):.2f} s of {start:g}")


def check(virtual: bool, charged: float, maximum: float, clock: float, move: int) -> None:
    """Only the virtual (deterministic) mode asserts; the real one only reports."""
    if virtual:
        assert charged <= maximum + 1.0 / RATE, f"move {move} passed its maximum"
        assert clock > 0, f"lost on time at move {move}"


@pytest.mark.parametrize("virtual", [True, False], ids=["nodes-as-time", "real-time"])
def test_dice_chess_game_under_two_seconds_plus_increment(tmp_path: Path,
                                                         virtual: bool) -> None:
    start, inc = 2.0, 0.05
    log = tmp_path / "uci.log"
    p = engine(["--game", "dicechess"], log, virtual)
    state = make_game("dicechess").new_initial_state()
    rng = random.Random(3)
    clocks = [start, start]
    wall: list[tuple[float, float]] = []
    moves: list[str] = []
    try:
        p.send("uci")
        while p.readline(60) != "uciok":
            pass
        p.send("isready")
        while p.readline(60) != "readyok":
            pass
        while not state.is_terminal() and len(moves) < 60:
            outcomes = state.chance_outcomes()
            roll = rng.choices([a for a, _ in outcomes], [q for _, q in outcomes])[0]
            die = int(state.action_to_string(roll)[1:])
            state.apply_action(roll)
            side = state.current_player()
            p.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
            p.send(f"go dice {die} wtime {int(clocks[0] * 1000)} btime {int(clocks[1] * 1000)}"
                   f" winc {int(inc * 1000)} binc {int(inc * 1000)}")
            line = ""
            while not line.startswith("bestmove"):
                line = p.readline(30)
            charged, maximum, spent = charge(log, len(moves), virtual)
            wall.append((spent, maximum))
            clocks[side] -= charged
            check(virtual, charged, maximum, clocks[side], len(moves) + 1)
            clocks[side] += inc
            move = line.split()[1]
            state.apply_action(state.string_to_action(move))
            moves.append(move)
    finally:
        p.close()
    report("dice chess, 2 s + 0.05 s", start, len(moves), wall, clocks)
    assert len(moves) >= 10


@pytest.mark.parametrize("virtual", [True, False], ids=["nodes-as-time", "real-time"])
def test_hex_game_under_an_absolute_clock(tmp_path: Path, virtual: bool) -> None:
    start = 4.0
    log = tmp_path / "gtp.log"
    p = engine(["--game", "hex(size=7)"], log, virtual)
    state = make_game("hex(size=7)").new_initial_state()
    clocks = [start, start]
    wall: list[tuple[float, float]] = []
    colours = ("b", "w")

    def command(line: str) -> str:
        p.send(line)
        reply = p.readline(60)
        while p.readline(60) != "":
            pass
        assert reply.startswith("="), reply
        return reply[1:].strip()

    try:
        command(f"time_settings {start:g} 0 0")
        while not state.is_terminal():
            side = state.current_player()
            command(f"time_left {colours[side]} {clocks[side]:.3f} 0")
            move = command(f"genmove {colours[side]}")
            charged, maximum, spent = charge(log, state.ply, virtual)
            wall.append((spent, maximum))
            clocks[side] -= charged
            check(virtual, charged, maximum, clocks[side], state.ply + 1)
            state.apply_move(move)
    finally:
        p.close()
    report("hex 7x7, 4 s absolute", start, state.ply, wall, clocks)
