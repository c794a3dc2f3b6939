"""Differential test: our EinStein kernel against OpenSpiel's ``einstein_wurfelt_nicht``.

Correspondence (OpenSpiel 2.0.2):

* OpenSpiel player 0 is Black, top-left {a1 b1 c1 a2 b2 a3}, heading for e5; player 1 is
  White, bottom-right, heading for a1; White always moves first.
* Its set-up is two chance nodes (Black's arrangement, then White's), outcome = the rank
  0..719 of the cube sequence over the home cells in row-major order: the same ranks as
  ours, with our Red = its Black.
* Its die outcomes are 0..5 for dice 1..6.
* Its move id = ((row * 5 + col) * 6 + dir) * 2 + capture, with dir 0..5 the offsets
  (+1,+1) (+1,0) (0,+1) for Black and (-1,0) (-1,-1) (0,-1) for White, and capture = 1
  when the target cell is occupied (own or enemy cube).

So ``first=blue`` is OpenSpiel's game cell for cell (Red = Black = player 0). For
``first=red`` the bridge turns the board around: our Red is its White (player 1), our
cell (r, c) is its (4-r, 4-c), and our ranks are read off the mirrored board.

OpenSpiel's set-up and dice are forced from ours (set-up ranks computed from our board,
the real die applied to both; with merge_dice ours gets the group's outcome). Its
apply_action accepts illegal ids silently, so legal move SETS are compared, mapped
independently of our kernel's own ids: from our move text, never from our action ids.
After every step: same legal set, same player, same board, same terminal flag and winner.
"""

from __future__ import annotations

import itertools
import random

import pyspiel
import pytest

from descent.search_cy.games.einstein import EinsteinState  # noqa: E402
from descent.search_cy.games.registry import make_game  # noqa: E402

PERMS = list(itertools.permutations(range(1, 7)))
OS_DIRS = {(1, 1): 0, (1, 0): 1, (0, 1): 2, (-1, 0): 3, (-1, -1): 4, (0, -1): 5}
OS_HOME = (
    [(r, c) for r in range(5) for c in range(5) if r + c <= 2],  # Black
    [(r, c) for r in range(5) for c in range(5) if r + c >= 6],  # White
)
CONFIGS = [
    # setup, first, merge_dice, games
    ("random", "blue", False, 1500),
    ("random", "red", False, 1500),
    ("mirror", "red", True, 1500),
    ("free", "blue", True, 1500),
]


class Bridge:
    """Our cells/players <-> OpenSpiel's; `turned` when our Red is its White."""

    def __init__(self, turned: bool) -> None:
        self.turned = turned

    def cell(self, name: str) -> tuple[int, int]:
        r, c = int(name[1]) - 1, ord(name[0]) - ord("a")
        return (4 - r, 4 - c) if self.turned else (r, c)

    def player(self, ours: int) -> int:
        return 1 - ours if self.turned else ours

    def move_id(self, state: EinsteinState, text: str) -> int:
        (r1, c1), (r2, c2) = self.cell(text[:2]), self.cell(text[2:])
        capture = state.piece_at((int(text[3]) - 1) * 5 + ord(text[2]) - ord("a")) is not None
        return ((r1 * 5 + c1) * 6 + OS_DIRS[(r2 - r1, c2 - c1)]) * 2 + int(capture)

    def board(self, state: EinsteinState) -> str:
        """Our board in OpenSpiel's ToString() form (its Black 'b', White 'w')."""
        rows = []
        for r in range(5):
            row = []
            for c in range(5):
                rr, cc = (4 - r, 4 - c) if self.turned else (r, c)
                piece = state.piece_at(rr * 5 + cc)
                if piece is None:
                    row.append("|__|")
                else:
                    row.append(f"|{'bw'[self.player(piece[0])]}{piece[1]}|")
            rows.append("".join(row) + "\n")
        return "".join(rows)

    def setup_ranks(self, state: EinsteinState) -> list[int]:
        """OpenSpiel's two set-up outcomes (Black's, White's) read off our board."""
        ranks = []
        for os_colour in (0, 1):
            seq = []
            for r, c in OS_HOME[os_colour]:
                rr, cc = (4 - r, 4 - c) if self.turned else (r, c)
                piece = state.piece_at(rr * 5 + cc)
                assert piece is not None and self.player(piece[0]) == os_colour
                seq.append(piece[1])
            ranks.append(PERMS.index(tuple(seq)))
        return ranks


def play_pair(setup: str, first: str, merge: bool, rng: random.Random,
              bridge: Bridge) -> tuple[int, int]:
    """One random game on both kernels; returns (moves, winner)."""
    ours = make_game(f"einstein(setup={setup},first={first},merge_dice={merge})") \
        .new_initial_state()
    assert isinstance(ours, EinsteinState)
    theirs = pyspiel.load_game("einstein_wurfelt_nicht").new_initial_state()
    applied = []
    while ours.phase_name == "setup":
        rank = rng.randrange(720)
        ours.apply_action(rank)
        applied.append(rank)
    os_ranks = bridge.setup_ranks(ours)
    if setup == "random" and not bridge.turned:
        assert os_ranks == applied  # ranks exchange unchanged
    for rank in os_ranks:
        assert theirs.is_chance_node() and len(theirs.chance_outcomes()) == 720
        theirs.apply_action(rank)
    moves = 0
    while True:
        assert str(theirs) == bridge.board(ours)
        assert ours.is_terminal() == theirs.is_terminal()
        if ours.is_terminal():
            winner = ours.winner_colour()
            assert theirs.returns()[bridge.player(winner)] == 1.0
            assert ours.terminal_value() == (1.0 if winner == 0 else -1.0)
            return moves, winner
        assert ours.is_chance_node() and theirs.is_chance_node()
        die = rng.randint(1, 6)
        theirs.apply_action(die - 1)
        outcome = ours.string_to_action(f"d{die}")
        assert outcome in [a for a, _ in ours.chance_outcomes()]
        ours.apply_action(outcome)
        assert theirs.current_player() == bridge.player(ours.current_player())
        texts = [ours.action_to_string(a) for a in ours.legal_actions()]
        mapped = {bridge.move_id(ours, t): t for t in texts}
        assert len(mapped) == len(texts)
        assert set(mapped) == set(theirs.legal_actions()), (ours.to_text(), die)
        choice = rng.choice(sorted(mapped))
        ours.apply_move(mapped[choice])
        theirs.apply_action(choice)
        moves += 1


@pytest.mark.slow
@pytest.mark.parametrize("setup, first, merge, games", CONFIGS)
def test_einstein_matches_openspiel(setup: str, first: str, merge: bool, games: int) -> None:
    rng = random.Random(f"{setup}-{first}-{merge}")
    bridge = Bridge(turned=first == "red")
    wins = [0, 0]
    total_moves = 0
    for _ in range(games):
        moves, winner = play_pair(setup, first, merge, rng, bridge)
        wins[winner] += 1
        total_moves += moves
    # the random games must have covered both winners and real game lengths
    assert min(wins) > games // 5
    assert total_moves > 10 * games


def test_total_games_at_least_2000() -> None:
    assert sum(games for *_, games in CONFIGS) >= 2000


def test_a_wrong_bridge_is_caught() -> None:
    """The comparison can fail: with the board not turned for first=red it must."""
    rng = random.Random(9)
    with pytest.raises(AssertionError):
        for _ in range(20):
            play_pair("random", "red", False, rng, Bridge(turned=False))
