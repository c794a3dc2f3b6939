"""Type stubs of _worker.pyx (its C functions are cimported by bestfirst.pyx)."""

from descent.search_cy.games.state import GameState

def fixed_outcome(state: GameState, seed: int) -> int: ...
