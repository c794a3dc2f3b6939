"""Type stubs of _expectimax_nodes.pyx."""

from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.search.ttable import TranspositionTable

@disjoint_base
class ExpectiNodes:
    evaluator: Evaluator
    heuristic_path: bool
    tt: TranspositionTable
    use_tt: bool
    exact_depth: bool
