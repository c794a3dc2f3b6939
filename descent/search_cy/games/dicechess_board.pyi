"""Type stubs of dicechess_board.pyx: the position and make/unmake under DiceChessState
(C-level; no Python API of its own)."""

from typing_extensions import disjoint_base

from descent.search_cy.games.state import GameState

@disjoint_base
class DiceChessBoard(GameState): ...
