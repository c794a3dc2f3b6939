"""A tiny EinStein wurfelt nicht! engine backed by OpenSpiel, independent of descent's own
rules and search, so that a referee can play our engine against a program that shares
none of its code. It speaks the EWN dialect's subset (PROTOCOLS.md): protocol_version,
name, version, list_commands, known_command, clear_board, setup, gensetup, play, genmove,
final_score, showboard, quit (``time_settings``/``time_left`` are acknowledged and
ignored: it thinks for a fixed few milliseconds).

Moves come from OpenSpiel's ``expectiminimax`` (``open_spiel.python.algorithms.minimax``)
at depth 2 with a zero evaluation (it takes a winning move, avoids moves that let the
opponent win at once), ties broken by a seeded generator; ``--policy mcts`` runs
OpenSpiel's ``MCTSBot`` (UCT with chance nodes, random rollouts, MCTS-Solver) for
``--simulations`` simulations a move; ``--policy random`` plays uniformly among
OpenSpiel's legal actions. ``gensetup`` draws a seeded random arrangement.

Orientation (tests/search_cy/games/test_einstein_openspiel.py): OpenSpiel's player 0
(Black) starts top-left like our Red, its player 1 (White) bottom-right, and White always
moves first. The bot learns who moves first from the first ``play``/``genmove`` and only
then builds its OpenSpiel state: when Blue moves first, cells and colours are taken as
they are (Red = Black); when Red moves first, the board is turned: our Red is its White and
our cell (r, c) its (4-r, 4-c). Set-up ranks are read off the (turned) board, dice 1..6
are its outcomes 0..5. A Blue arrangement never given is Red's point mirror
(``setup=mirror``, where the manager sends Red's set-up only).

    python -m tests.helpers.bots.einstein_openspiel_ewn --seed 1 [--policy random|mcts] [--depth 2]
        [--simulations 1000]
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts
from open_spiel.python.algorithms.minimax import expectiminimax

NAME = "openspiel-ewn"
VERSION = "1"
RED, BLUE = 0, 1
COLOURS = {"r": RED, "red": RED, "b": BLUE, "blue": BLUE}
COLOUR_NAMES = ("red", "blue")
PERMS = list(itertools.permutations(range(1, 7)))   # lexicographic: rank -> cube sequence
# home cells in row-major order, (row, col), row 0 = row "1" at the top
HOME = ([(r, c) for r in range(5) for c in range(5) if r + c <= 2],
        [(r, c) for r in range(5) for c in range(5) if r + c >= 6])
OS_OFFSETS = ((1, 1), (1, 0), (0, 1), (-1, 0), (-1, -1), (0, -1))   # its direction ids
_CELL = re.compile(r"([a-e])([1-5])\Z")

Cell = tuple[int, int]


class EwnError(ValueError):
    """Answered with ``?``."""


def parse_cell(text: str) -> Cell:
    match = _CELL.match(text.lower())
    if not match:
        raise EwnError(f"bad cell {text!r}: expected a1..e5")
    return int(match.group(2)) - 1, ord(match.group(1)) - ord("a")


def cell_text(cell: Cell) -> str:
    return f"{chr(ord('a') + cell[1])}{cell[0] + 1}"


def parse_arrangement(side: int, args: list[str]) -> list[Cell]:
    """Six cells (cube 1 first) or a rank 0..719 -> the cells of cubes 1..6."""
    text = "".join(" ".join(args).replace(",", " ").split())
    if re.fullmatch(r"[0-9]+", text):
        rank = int(text)
        if not 0 <= rank < len(PERMS):
            raise EwnError(f"set-up rank {rank} out of range 0..719")
        cells: list[Cell] = [(0, 0)] * 6
        for home_cell, cube in zip(HOME[side], PERMS[rank], strict=True):
            cells[cube - 1] = home_cell
        return cells
    if len(text) != 12:
        raise EwnError("expected six cells, cube 1 first, or a rank 0..719")
    cells = [parse_cell(text[i:i + 2]) for i in range(0, 12, 2)]
    if sorted(cells) != sorted(HOME[side]):
        raise EwnError(f"{COLOUR_NAMES[side]}'s cubes must fill its home cells "
                       + " ".join(cell_text(c) for c in HOME[side]))
    return cells


class OpenSpielEwn:
    """One session: the set-ups, then an OpenSpiel state once the first mover is known."""

    def __init__(self, seed: int = 0, policy: str = "expectiminimax", depth: int = 2,
                 simulations: int = 1000, uct_c: float = 2.0) -> None:
        self.rng = random.Random(seed)
        self.policy = policy
        self.depth = depth
        self.game = pyspiel.load_game("einstein_wurfelt_nicht")
        rollouts = np.random.RandomState(seed)
        self.mcts = mcts.MCTSBot(
            self.game, uct_c=uct_c, max_simulations=simulations,
            evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rollouts),
            random_state=rollouts, solve=True)
        self.running = True
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda args: "2",
            "name": lambda args: NAME,
            "version": lambda args: f"{VERSION} (OpenSpiel {self._os_version()}, "
                                    f"{self.policy})",
            "list_commands": lambda args: "\n".join(self.commands),
            "known_command": lambda args: str(bool(args) and args[0] in self.commands)
            .lower(),
            "quit": self.cmd_quit,
            "clear_board": self.cmd_clear_board,
            "setup": self.cmd_setup,
            "gensetup": self.cmd_gensetup,
            "play": self.cmd_play,
            "genmove": self.cmd_genmove,
            "final_score": self.cmd_final_score,
            "showboard": self.cmd_showboard,
            "time_settings": lambda args: "",
            "time_left": lambda args: "",
        }
        self.cmd_clear_board([])

    @staticmethod
    def _os_version() -> str:
        try:
            return version("open_spiel")
        except PackageNotFoundError:
            return "?"

    # -- orientation --------------------------------------------------------------

    def to_os(self, cell: Cell) -> Cell:
        return (4 - cell[0], 4 - cell[1]) if self.turned else cell

    def from_os(self, cell: Cell) -> Cell:
        return self.to_os(cell)   # the point reflection is its own inverse

    def os_player(self, side: int) -> int:
        return 1 - side if self.turned else side

    def decode(self, action: int) -> str:
        """OpenSpiel move id -> our ``b2c3`` text."""
        rest = action // 2
        direction, cell = rest % 6, rest // 6
        row, col = divmod(cell, 5)
        dr, dc = OS_OFFSETS[direction]
        return cell_text(self.from_os((row, col))) + cell_text(self.from_os((row + dr,
                                                                             col + dc)))

    # -- game ---------------------------------------------------------------------

    def cmd_clear_board(self, args: list[str]) -> str:
        self.arrangement: list[list[Cell] | None] = [None, None]
        self.state: Any = None
        self.turned = False
        return ""

    def cmd_setup(self, args: list[str]) -> str:
        if len(args) < 2:
            raise EwnError("expected setup COLOUR CELLS... or setup COLOUR RANK")
        side = self._colour(args[0])
        if self.state is not None:
            raise EwnError("the game has started")
        self.arrangement[side] = parse_arrangement(side, args[1:])
        return ""

    def cmd_gensetup(self, args: list[str]) -> str:
        if len(args) != 1:
            raise EwnError("expected gensetup COLOUR")
        side = self._colour(args[0])
        if self.state is not None:
            raise EwnError("the game has started")
        rank = self.rng.randrange(len(PERMS))
        cells = parse_arrangement(side, [str(rank)])
        self.arrangement[side] = cells
        return " ".join(cell_text(c) for c in cells)

    def _start(self, first: int) -> None:
        """Builds the OpenSpiel state once the first mover is known (module docstring)."""
        red = self.arrangement[RED]
        if red is None:
            raise EwnError("red has not set up")
        blue = self.arrangement[BLUE] or [(4 - r, 4 - c) for r, c in red]
        self.turned = first == RED
        cube_at = {}   # home triangles are disjoint: the cell tells the colour
        for cells in (red, blue):
            for cube, cell in enumerate(cells, start=1):
                cube_at[self.to_os(cell)] = cube
        state = self.game.new_initial_state()
        for os_colour in (0, 1):
            state.apply_action(PERMS.index(tuple(cube_at[c] for c in HOME[os_colour])))
        self.state = state

    def _rolled(self, side: int, die: int) -> Any:
        """A clone of the game with ``side``'s die applied (the state itself unchanged)."""
        if self.state is None:
            self._start(side)
        state = self.state
        if state.is_terminal():
            raise EwnError("the game is over")
        child = state.clone()
        child.apply_action(die - 1)
        if child.current_player() != self.os_player(side):
            raise EwnError(f"it is not {COLOUR_NAMES[side]}'s turn")
        return child

    def cmd_play(self, args: list[str]) -> str:
        if len(args) != 3:
            raise EwnError("expected play COLOUR DIE MOVE")
        side, die = self._colour(args[0]), self._die(args[1])
        fresh = self.state is None
        child = self._rolled(side, die)
        for action in child.legal_actions():
            if self.decode(action) == args[2].lower():
                child.apply_action(action)
                self.state = child
                return ""
        if fresh:
            self.state = None
        raise EwnError(f"illegal move {args[2]} for {COLOUR_NAMES[side]} with die {die}")

    def cmd_genmove(self, args: list[str]) -> str:
        if len(args) != 2:
            raise EwnError("expected genmove COLOUR DIE")
        side, die = self._colour(args[0]), self._die(args[1])
        child = self._rolled(side, die)
        action = self._choose(child)
        text = self.decode(action)
        child.apply_action(action)
        self.state = child
        return text

    def _choose(self, state: Any) -> int:
        legal: list[int] = state.legal_actions()
        if self.policy == "random":
            return self.rng.choice(legal)
        if self.policy == "mcts":
            return int(self.mcts.step(state))
        me = state.current_player()
        best: list[int] = []
        best_value = -float("inf")
        for action in legal:
            child = state.clone()
            child.apply_action(action)
            value, _ = expectiminimax(child, self.depth - 1, lambda s: 0.0, me)
            if value > best_value + 1e-12:
                best, best_value = [action], value
            elif abs(value - best_value) <= 1e-12:
                best.append(action)
        return self.rng.choice(best)

    def cmd_final_score(self, args: list[str]) -> str:
        if self.state is None or not self.state.is_terminal():
            return "cannot score"
        winner = RED if self.state.returns()[self.os_player(RED)] > 0 else BLUE
        return "R+" if winner == RED else "B+"

    def cmd_showboard(self, args: list[str]) -> str:
        if self.state is None:
            return "\n(not started) " + " / ".join(
                f"{COLOUR_NAMES[s]}: " + (" ".join(cell_text(c) for c in cells)
                                           if cells else "-")
                for s, cells in enumerate(self.arrangement))
        turned = " (turned: red is its white)" if self.turned else ""
        return f"\nOpenSpiel board{turned}:\n{str(self.state).rstrip()}"

    def cmd_quit(self, args: list[str]) -> str:
        self.running = False
        return ""

    @staticmethod
    def _colour(text: str) -> int:
        side = COLOURS.get(text.lower())
        if side is None:
            raise EwnError(f"unknown colour {text!r}")
        return side

    @staticmethod
    def _die(text: str) -> int:
        if not (len(text) == 1 and text in "123456"):
            raise EwnError(f"bad die {text!r}: expected 1..6")
        return int(text)

    # -- framing ------------------------------------------------------------------

    def handle(self, line: str) -> str | None:
        """One request line -> its framed reply (None for empty and comment lines)."""
        text = line.split("#", 1)[0].strip()
        if not text:
            return None
        tokens = text.split()
        cid = tokens.pop(0) if re.fullmatch(r"[0-9]+", tokens[0]) else ""
        if not tokens:
            return f"?{cid} missing command\n\n"
        handler = self.commands.get(tokens[0].lower())
        if handler is None:
            return f"?{cid} unknown command: {tokens[0]}\n\n"
        try:
            result = handler(tokens[1:])
        except (EwnError, ValueError) as exc:
            return f"?{cid} {exc}\n\n"
        return f"={cid} {result}\n\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", choices=["expectiminimax", "mcts", "random"],
                        default="expectiminimax")
    parser.add_argument("--depth", type=int, default=2,
                        help="expectiminimax depth in moves (chance nodes not counted)")
    parser.add_argument("--simulations", type=int, default=1000,
                        help="MCTS simulations a move (--policy mcts)")
    args = parser.parse_args(argv)
    bot = OpenSpielEwn(seed=args.seed, policy=args.policy, depth=max(1, args.depth),
                       simulations=max(1, args.simulations))
    for line in sys.stdin:
        reply = bot.handle(line)
        if reply is not None:
            sys.stdout.write(reply)
            sys.stdout.flush()
        if not bot.running:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
