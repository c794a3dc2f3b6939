"""EinStein wurfelt nicht! game descriptor (RULES.md, EinStein wurfelt nicht!)."""

from __future__ import annotations

from typing import ClassVar

from descent.search_cy.games.einstein import EinsteinState
from descent.search_cy.games.registry import ChanceMode, Game, Param, register_game
from descent.search_cy.games.state import GameState


@register_game
class EinsteinGame(Game):
    name: ClassVar[str] = "einstein"
    params_spec: ClassVar[tuple[Param, ...]] = (
        Param("setup", str, "random", choices=("random", "mirror", "free"),
              doc="random: both arrangements drawn by chance; mirror: Red chooses, Blue's "
                  "is its point mirror; free: Red chooses, then Blue"),
        Param("first", str, "red", choices=("red", "blue"),
              doc="the side that rolls and moves first after the set-up"),
        Param("merge_dice", bool, False,
              doc="merge die values that leave the same movable cubes into one chance "
                  "outcome (the smallest value, probabilities summed)"),
    )
    test_specs: ClassVar[tuple[str, ...]] = (
        "einstein(setup=random,first=red,merge_dice=false)",
        "einstein(setup=random,first=blue,merge_dice=true)",
        "einstein(setup=mirror,first=red,merge_dice=true)",
        "einstein(setup=mirror,first=blue,merge_dice=false)",
        "einstein(setup=free,first=red,merge_dice=false)",
        "einstein(setup=free,first=blue,merge_dice=true)",
    )

    chance_mode: ClassVar[ChanceMode] = "explicit_stochastic"
    protocols: ClassVar[tuple[str, ...]] = ("ewn", "ntu")
    default_search: ClassVar[str] = "expectiminimax"

    @property
    def max_game_length(self) -> int:
        """Each of the twelve cubes moves at most eight times (moves only go forward),
        plus the two set-up choices, rounded up."""
        return 100

    def new_initial_state(self) -> GameState:
        state: GameState = EinsteinState(
            self, self.params["setup"], self.params["first"], self.params["merge_dice"])
        return state

    def state_from_text(self, text: str) -> GameState:
        """A one-line position ``board side phase`` (einstein.pyx docstring), e.g.
        ``ABC2/DE3/F3a/3bc/2def r roll``; raises NotationError naming the problem."""
        state = EinsteinState(
            self, self.params["setup"], self.params["first"], self.params["merge_dice"])
        state.set_position(text)
        return state
