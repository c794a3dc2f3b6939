# cython: language_level=3
"""The terminal evaluation of terminal.pxd for Python callers (the learning targets)."""
from descent.search_cy.games.state cimport GameState
from descent.search_cy.search.terminal cimport (TERMINAL_MOBILITY, terminal_bound,
                                                terminal_value)

# SearchParams.terminal names, in the order of terminal.pxd's TerminalKind
KINDS = ("gain", "depth_add", "depth_mul", "presence", "score", "mobility")


def prepare(GameState root, int kind) -> None:
    """What a search calls on its root before it values terminal states under ``kind``
    (a TerminalKind): cumulative mobility needs the root to track the counts."""
    if kind == TERMINAL_MOBILITY:
        root.track_mobility()


def bound(GameState state, str kind, double max_plies) -> float:
    """The largest magnitude a terminal value takes under ``kind`` in this game."""
    if kind not in KINDS:
        raise ValueError(f"unknown terminal kind {kind!r} (known: {', '.join(KINDS)})")
    return terminal_bound(state, KINDS.index(kind), max_plies)


def value(GameState state, str kind, double max_plies) -> float:
    """f_t(state) of a terminal state, player 0's view, in value units (depth kinds:
    plies). ValueError for a state that is not terminal or an unknown kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown terminal kind {kind!r} (known: {', '.join(KINDS)})")
    if not state.c_terminal():
        raise ValueError("terminal value of a state that is not terminal")
    if kind == "mobility":
        state.track_mobility()
    return terminal_value(state, KINDS.index(kind), max_plies)
