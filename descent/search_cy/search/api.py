"""One Python API over every search: parameters, results, and the registry by name.

    search = make_search("ubfms", evaluator, SearchParams(hash_mb=64, seed=1))
    result = search.run(state, Stopper(time=1.0))

A search object keeps its tables between calls, so a game's tree survives from one move
to the next where the table allows. ``run`` blocks until the stopper fires (or the root is
solved) and leaves ``state`` exactly as it found it.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.state import GameState
from descent.search_cy.search.result import ChildStat, SearchResult
from descent.search_cy.search.stopper import Stopper
from descent.search_cy.search.terminal import KINDS as TERMINAL_NAMES

if TYPE_CHECKING:
    from descent.search_cy.search.bestfirst import BestFirstSearch

__all__ = ["BEST_FIRST", "CHANCE_SAMPLING", "TERMINAL_KINDS", "ChildStat", "SearchParams",
           "SearchResult", "SearchRunner", "make_search", "registered_searches", "search_plays"]

# terminal.pxd's TerminalKind codes by name, in terminal.pyx's order
TERMINAL_KINDS = {name: code for code, name in enumerate(TERMINAL_NAMES)}
CHANCE_SAMPLING = ("all", "unresolved")


@dataclass(frozen=True)
class SearchParams:
    """Every tunable of every search; each search reads the fields it understands."""

    hash_mb: int = 64            # memory budget of the search's table(s), MiB
    seed: int = 0                # RNG seed: chance sampling, tie-breaks, MCTS
    completion: bool = True      # best-first: order children by (completion, value)
    resolution_stop: bool = True  # best-first: stop once the root is solved
    terminal: str = "gain"       # terminal evaluation (terminal.pxd): gain | depth_add |
    #                              depth_mul | presence | score | mobility
    max_plies: int = 0           # P of the depth heuristics (0: the game's own bound)
    keep_tree: bool = True       # reuse the table from the previous run (same game)
    star: int = 2                # expectiminimax at chance nodes: 0 plain, 1 Star1, 2 Star2
    max_depth: int = 64          # expectiminimax: deepest iteration
    exploration: float = 1.4     # mcts: UCT exploration constant C
    determinize_seed: int = 0    # tree searches: > 0 plays a determinized game, each chance
    #                              state's outcome fixed by a hash of (state, seed)
    threads: int = 1             # search threads over the one tree (1: the serial search,
    #                              deterministic by seed)
    gather: bool = False         # threads > 1 with a batch evaluator: the threads' expansions
    #                              share backend calls (search/gather.py; GPU backends)
    chance_sampling: str = "all"  # best-first at chance nodes: "all" draws among every
    #                              outcome by probability (the stochastic paper's Descent
    #                              Expectiminimax; a solved outcome drawn ends the iteration),
    #                              "unresolved" among the unsolved ones only (renormalised)

    def __post_init__(self) -> None:
        if self.hash_mb < 1:
            raise ValueError("hash_mb must be >= 1")
        if self.terminal not in TERMINAL_KINDS:
            raise ValueError(f"terminal must be one of {sorted(TERMINAL_KINDS)}")
        if self.star not in (0, 1, 2):
            raise ValueError("star must be 0, 1 or 2")
        if self.max_depth < 1:
            raise ValueError("max_depth must be >= 1")
        if not 0 <= self.determinize_seed < 1 << 64:
            raise ValueError("determinize_seed must be in [0, 2**64)")
        if not 1 <= self.threads <= 1024:
            raise ValueError("threads must be in 1..1024")
        if self.chance_sampling not in CHANCE_SAMPLING:
            raise ValueError(f"chance_sampling must be one of {', '.join(CHANCE_SAMPLING)}")


class Search(Protocol):
    def run(self, state: GameState, stopper: Stopper) -> SearchResult: ...
    def clear(self) -> None: ...


# name -> (module, class, keyword arguments)
_SEARCHES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "ubfm": ("descent.search_cy.search.bestfirst", "BestFirstSearch", {"mode": "ubfm"}),
    "ubfms": ("descent.search_cy.search.bestfirst", "BestFirstSearch", {"mode": "ubfms"}),
    "descent": ("descent.search_cy.search.bestfirst", "BestFirstSearch", {"mode": "descent"}),
    "expectiminimax": ("descent.search_cy.search.expectimax", "Expectiminimax", {}),
    "mcts": ("descent.search_cy.search.bestfirst", "BestFirstSearch", {"mode": "mcts"}),
    "rave": ("descent.search_cy.search.rave", "RaveSearch", {}),
}


# the searches over bestfirst.pyx's tree (they value every child of an expansion)
BEST_FIRST: tuple[str, ...] = tuple(
    name for name, (module, _, _) in _SEARCHES.items() if module.endswith(".bestfirst"))


# searches that play only some games (by the game's name); the others play every game
_GAMES: dict[str, frozenset[str]] = {"rave": frozenset({"hex"})}


def registered_searches() -> list[str]:
    return sorted(_SEARCHES)


def search_plays(name: str, game: str) -> bool:
    """Whether the registered search ``name`` plays the game named ``game``."""
    games = _GAMES.get(name)
    return games is None or game in games


def check_rave_value(network: Evaluator) -> None:
    """ValueError unless ``rave`` can read ``network`` as its value network: as odds, a
    value within [-1, 1] (a network trained in depth units is not)."""
    if network.lo < -1.0 - 1e-9 or network.hi > 1.0 + 1e-9:
        raise ValueError("rave reads a value network as odds: it needs a model valued by "
                         "the gain (descent distill fit writes one), not one in "
                         f"[{network.lo:g}, {network.hi:g}]")


class SearchRunner:
    """A named search bound to an evaluator and parameters; ``run`` returns SearchResult."""

    def __init__(self, name: str, evaluator: Evaluator, params: SearchParams) -> None:
        if name not in _SEARCHES:
            raise ValueError(f"unknown search {name!r}; known: {', '.join(registered_searches())}")
        module, cls, kwargs = _SEARCHES[name]
        self.name = name
        self.params = params
        self.evaluator = evaluator
        self.impl: Search = getattr(importlib.import_module(module), cls)(
            evaluator, params, **kwargs)

    def run(self, state: GameState, stopper: Stopper) -> SearchResult:
        """Searches ``state`` until ``stopper`` fires. Blocks; ``stopper.stop()`` from
        another thread ends it at the next poll. The state is restored on return."""
        if state.is_terminal():
            raise ValueError("cannot search a terminal state")
        return self.impl.run(state, stopper)

    def clear(self) -> None:
        """Forgets the tables (a new game)."""
        self.impl.clear()

    # -- the tree, for learning (best-first searches and MCTS) ---------------------------

    def walk_tree(self, state: GameState, terminal_value: Callable[[GameState], float],
                  emit: Callable[[GameState, float, bool], None], *, recompute: bool,
                  completion: bool = True, terminals: bool = True,
                  fixed: Mapping[int, int] | None = None,
                  limit: int = 1 << 60) -> float | None:
        """(state, value, resolved) of every state of the tree below ``state`` to
        ``emit``, in post-order, values backed up again from ``terminal_value`` with
        ``recompute`` (BestFirstSearch.walk_tree). Returns the root's value, or None when
        the root is not in the tree. Blocks; the state is restored."""
        value: float | None = self._tree().walk_tree(
            state, terminal_value, emit, recompute=recompute, completion=completion,
            terminals=terminals, fixed=fixed, limit=limit)
        return value

    def learning_data(self, state: GameState, limit: int = 1000000, terminals: bool = True,
                      symmetries: list[int] | None = None) -> tuple[Any, Any, Any]:
        """The tree's stored values as arrays (BestFirstSearch.learning_data). Blocks."""
        return self._tree().learning_data(state, limit, terminals, symmetries)

    def _tree(self) -> BestFirstSearch:
        from descent.search_cy.search.bestfirst import BestFirstSearch

        if not isinstance(self.impl, BestFirstSearch):
            raise ValueError(f"the {self.name} search keeps no tree")
        return self.impl


def make_search(
    name: str, evaluator: Evaluator, params: SearchParams | None = None
) -> SearchRunner:
    return SearchRunner(name, evaluator, params or SearchParams())
