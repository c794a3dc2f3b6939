"""Hex game descriptor (RULES.md, Hex)."""

from __future__ import annotations

from typing import ClassVar

from descent.search_cy.games.hex import HexState
from descent.search_cy.games.registry import ChanceMode, Game, Param, register_game
from descent.search_cy.games.state import GameState


@register_game
class HexGame(Game):
    name: ClassVar[str] = "hex"
    params_spec: ClassVar[tuple[Param, ...]] = (
        Param("size", int, 11, lo=2, hi=25, doc="board side, 2..25"),
        Param("swap", bool, False, doc="pie rule: White's first move may be swap"),
    )
    test_specs: ClassVar[tuple[str, ...]] = (
        "hex(size=2,swap=true)",
        "hex(size=5,swap=false)",
        "hex(size=11,swap=true)",
        "hex(size=11,swap=false)",
        "hex(size=25,swap=true)",
    )

    chance_mode: ClassVar[ChanceMode] = "deterministic"
    protocols: ClassVar[tuple[str, ...]] = ("gtp",)
    # MCTS with RAVE and playouts, knowing the VC evaluator's proofs (docs/results/hex.md,
    # what each lever bought: 90% against UBFM_s with the same heuristic at 1 s a move);
    # with a network, the Descent paper's UBFM_s
    default_search: ClassVar[str] = "rave"
    network_search: ClassVar[str | None] = "ubfms"

    @property
    def max_game_length(self) -> int:
        """Every cell once, plus the swap."""
        size: int = self.params["size"]
        return size * size + (1 if self.params["swap"] else 0)

    def new_initial_state(self) -> GameState:
        state: GameState = HexState(self, self.params["size"], self.params["swap"])
        return state

    def state_from_text(self, text: str) -> GameState:
        """A space-separated move list, e.g. ``a1 swap c3`` (checked move by move)."""
        state = self.new_initial_state()
        for token in text.split():
            state.apply_move(token)
        return state
