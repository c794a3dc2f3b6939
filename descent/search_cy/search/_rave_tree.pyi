"""Type stubs of _rave_tree.pyx."""

from typing import Self

from typing_extensions import disjoint_base

from descent.search_cy.games.hex_playout import HexPlayout

@disjoint_base
class RaveTree(HexPlayout):
    sims: int
    max_depth: int
    vc_calls: int
    full: bool
    def __new__(cls, n: int, budget_bytes: int, seed: int, K: float, c_uct: float,
                expand_at: int) -> Self: ...
