"""Type stubs of einstein_eval.pyx."""

from descent.search_cy.eval.evaluator import HeuristicEvaluator

class EinsteinEvaluator(HeuristicEvaluator):
    def __init__(self) -> None: ...
