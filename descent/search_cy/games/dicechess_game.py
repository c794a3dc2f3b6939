"""Dice chess game descriptor (RULES.md, Dice chess)."""

from __future__ import annotations

from typing import ClassVar

from descent.search_cy.games.dicechess import DiceChessState
from descent.search_cy.games.registry import ChanceMode, Game, Param, register_game
from descent.search_cy.games.state import GameState


@register_game
class DiceChessGame(Game):
    name: ClassVar[str] = "dicechess"
    params_spec: ClassVar[tuple[Param, ...]] = (
        Param("nomove", str, "reroll", choices=("reroll", "pass", "free"),
              doc="a roll whose piece cannot move: reroll (never rolled, brainking), "
                  "pass (the turn passes, 0000) or free (any piece may move)"),
        Param("castle", str, "king", choices=("king", "king-or-rook"),
              doc="the rolls that allow castling: king (6) or king-or-rook (6 or 4)"),
    )
    test_specs: ClassVar[tuple[str, ...]] = (
        "dicechess(nomove=reroll,castle=king)",
        "dicechess(nomove=pass,castle=king)",
        "dicechess(nomove=free,castle=king)",
        "dicechess(nomove=reroll,castle=king-or-rook)",
        "dicechess(nomove=pass,castle=king-or-rook)",
    )

    chance_mode: ClassVar[ChanceMode] = "explicit_stochastic"
    protocols: ClassVar[tuple[str, ...]] = ("uci",)
    default_search: ClassVar[str] = "expectiminimax"

    @property
    def max_game_length(self) -> int:
        """A bound the 100-ply rule and threefold repetition keep every game under."""
        return 1000

    def new_initial_state(self) -> GameState:
        state: GameState = DiceChessState(self, self.params["nomove"], self.params["castle"])
        return state

    def state_from_text(self, text: str) -> GameState:
        """FEN (6 fields: the die is not rolled yet) or DFEN (a seventh field with the
        rolled piece letter, upper case for White, ``-`` for none), e.g.
        ``rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 n``; raises
        NotationError naming the problem."""
        state = DiceChessState(self, self.params["nomove"], self.params["castle"])
        state.set_fen(text)
        return state
