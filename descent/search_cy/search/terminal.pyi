"""Type stubs of terminal.pyx."""

from descent.search_cy.games.state import GameState

KINDS: tuple[str, ...]

def value(state: GameState, kind: str, max_plies: float) -> float: ...
