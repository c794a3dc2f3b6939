"""Type stubs of dicechess_eval.pyx."""

from descent.search_cy.games.dicechess import DiceChessState
from descent.search_cy.search.evaluator import HeuristicEvaluator

FEATURE_NAMES: tuple[str, ...]

class DiceChessEvaluator(HeuristicEvaluator):
    def __init__(self) -> None: ...

class DiceChessFeatureEvaluator(HeuristicEvaluator):
    def __init__(self) -> None: ...
    def features(self, state: DiceChessState) -> list[float]: ...
