"""Type stubs of rave.pyx."""

from typing import Any

from typing_extensions import disjoint_base

from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.eval.hex_policy import HexPolicy
from descent.search_cy.games.hex import HexState
from descent.search_cy.games.hex_swap import SwapMap
from descent.search_cy.games.state import GameState
from descent.search_cy.search.result import SearchResult
from descent.search_cy.search.stopper import Stopper

DEFAULT_RAVE_K: float
DEFAULT_EXPLORATION: float
DEFAULT_EXPAND: int
DEFAULT_KNOW_AT: int
DEFAULT_PROGRESSIVE_BIAS: float
DEFAULT_PRUNE_RATIO: float
DEFAULT_INFERIOR: bool
DEFAULT_PLAYOUT_GAMMA_CAP: float
DEFAULT_PLAYOUT_FILL_IN: bool
DEFAULT_PLAYOUT_NODE_FILL_IN: bool
DEFAULT_VC_AT: int
DEFAULT_VCM_BONUS: float
DEFAULT_RAVE_PRIOR: int
DEFAULT_PLAIN_EVERY: int
DEFAULT_EXTEND_UNSTABLE: float
DEFAULT_STOP_DECIDED: bool
DEFAULT_VALUE_AT: int
DEFAULT_VALUE_VISITS: int
DEFAULT_VALUE_AT_BATCH: int
DEFAULT_ROUTE_AT: int
DEFAULT_POLICY_AT: int
DEFAULT_POLICY_WEIGHT: float
DEFAULT_ACTION_VISITS: int
DEFAULT_MINIMAX_WEIGHT: float
DEFAULT_VALUE_MIX: float
SHIPPED: object

@disjoint_base
class RaveSearch:
    params: Any
    evaluator: Evaluator
    trees: list[Any]
    K: float
    exploration: float
    expand_at: int
    know_at: int
    progressive_bias: float
    prune_ratio: float
    pattern_weights: Any
    swap_map: SwapMap | None
    inferior: bool
    playout_gamma_cap: float
    playout_fill_in: bool
    playout_node_fill_in: bool
    vc_at: int
    vcm_bonus: float
    rave_prior: int
    plain_every: int
    extend_unstable: float
    stop_decided: bool
    value: Evaluator | None
    value_at: int
    value_visits: int
    value_mix: float
    value_fade: float
    route_at: int
    policy: HexPolicy | None
    policy_at: int
    policy_weight: float
    action_visits: int
    minimax_weight: float
    def __init__(self, evaluator: Evaluator, params: Any, *, rave_k: float = ...,
                 exploration: float = ..., expand_at: int = ..., know_at: int = ...,
                 progressive_bias: float = ..., prune_ratio: float = ...,
                 pattern_weights: Any = ..., swap_map: Any = ...,
                 inferior: bool = ..., playout_gamma_cap: float = ...,
                 playout_fill_in: bool = ..., playout_node_fill_in: bool = ...,
                 vc_at: int = ...,
                 vcm_bonus: float = ..., rave_prior: int = ...,
                 plain_every: int = ..., extend_unstable: float = ...,
                 stop_decided: bool = ..., value: Evaluator | None = ...,
                 value_at: int = ..., value_visits: int = ...,
                 route_at: int = ..., policy: HexPolicy | None = ...,
                 policy_at: int = ..., policy_weight: float = ...,
                 action_visits: int = ..., minimax_weight: float = ...,
                 value_mix: float = ..., value_fade: float = ...) -> None: ...
    def clear(self) -> None: ...
    def root_lead(self) -> tuple[int, bool]: ...
    def run(self, state: GameState, stopper: Stopper) -> SearchResult: ...

def playout(state: HexState, seed: int, fill_in: bool = False,
            node_fill_in: bool = False) -> tuple[list[int], bool]: ...
