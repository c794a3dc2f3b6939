"""Type stubs of dicechess_eval.pyx."""

from descent.search_cy.search.evaluator import HeuristicEvaluator

class DiceChessEvaluator(HeuristicEvaluator):
    def __init__(self) -> None: ...
