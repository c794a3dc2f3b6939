"""Type stubs of hex_actions.pyx."""

from typing import Self

from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.eval.hex_policy import HexPolicy
from descent.search_cy.games.state import GameState

@disjoint_base
class HexActionEvaluator(HeuristicEvaluator):
    policy: HexPolicy
    base: HeuristicEvaluator
    def __new__(cls, policy: HexPolicy, base: HeuristicEvaluator) -> Self: ...
    def spawn(self) -> HexActionEvaluator: ...
    def move_priors(self, s: GameState) -> list[float]: ...
