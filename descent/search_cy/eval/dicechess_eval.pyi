"""Type stubs of dicechess_eval.pyx."""

from descent.search_cy.eval.evaluator import HeuristicEvaluator
from descent.search_cy.games.dicechess import DiceChessState

FEATURE_NAMES: tuple[str, ...]

class DiceChessEvaluator(HeuristicEvaluator):
    def __init__(self) -> None: ...

class DiceChessFeatureEvaluator(HeuristicEvaluator):
    def __init__(self) -> None: ...
    def features(self, state: DiceChessState) -> list[float]: ...
