"""Self-play: one match of the learner against itself, and the learning data it yields.

Each move: the learning search (descent by default) runs from the current state with the
per-move budget, keeping its tree between moves of the match; the data of the move is
collected (tree, root or terminal learning); the move is then drawn by the action
selection (ordinal by default, epsilon annealed by the trainer) over the root's
children. Chance nodes of the real match are drawn with the trainer's seeded generator.

Stochastic games (``stochastic``):

* ``expectiminimax`` (default): Descent Expectiminimax - the descent search values a
  chance node by the expectation of its outcomes (search_cy/search/bestfirst.pyx);
* ``determinization``: the match is played on a determinized game - each chance state's
  outcome is drawn lazily, once, the first time the match or a search reaches it, and
  then fixed for the rest of the match and both players' searches. The draw is
  ``bestfirst.fixed_outcome(state, match seed)``, a function of the chance state's hash
  and the match's seed, so the searches (``SearchParams.determinize_seed``: a chance
  node has one child, its fixed outcome, and takes that child's value) and the match
  itself meet the same outcome with no shared table (``fixed`` records the match's own
  draws, chance-state hash -> outcome). At the end of the match the chance states the
  match jumped through are added to the data, each labelled with the value of its
  realised successor (the next search's root value, or the final result).

Chance learning (``learning = "chance"``, stochastic games, expectiminimax): the chance
state before each move (the roll) is searched as a root of its own, expectiminimax's
expectation over the outcomes, and labelled with that value; the move is then chosen by
a search of the realised outcome, as usual. Root learning labels the states after the
roll, with the die known; a play search values its leaves right after a move, before the
next roll, so those are the states this mode learns.

``outcome_weight`` (root and chance learning) moves each unresolved label that share of
the way to the game's outcome: the search's value holds what its evaluation knows, the
outcome what it does not, with less noise than the outcome alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.registry import Game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import ChildStat, SearchParams, SearchResult, make_search
from descent.search_cy.search.bestfirst import fixed_outcome
from descent.search_cy.search.selection import select_action
from descent.search_cy.search.stopper import Stopper
from descent.train.config import SelfPlayConfig
from descent.train.data import ByteStore, StateStore, draw_outcome, symmetry_list
from descent.train.heuristics import Reinforcement


@dataclass
class GameRecord:
    """One self-play match: its learning data and what it cost."""

    planes: npt.NDArray[np.float32]
    values: npt.NDArray[np.float32]
    resolved: npt.NDArray[np.bool_]
    result: float                  # the game's result, player 0's view (-1, 0, 1)
    plies: int                     # actions applied (chance outcomes included)
    moves: int                     # searched decisions
    search_nodes: int = 0
    search_iterations: int = 0
    evaluations: int = 0           # states the evaluator valued for the searches
    root_values: list[float] = field(default_factory=list)
    chance_events: list[tuple[int, int]] = field(default_factory=list)  # (hash, outcome)
    fixed: dict[int, int] = field(default_factory=dict)  # determinization: fixed outcomes
    actions: list[int] = field(default_factory=list)


def search_params(cfg: SelfPlayConfig, reinforcement: Reinforcement, seed: int,
                  determinize: int = 0) -> SearchParams:
    return SearchParams(hash_mb=cfg.hash_mb, seed=seed, completion=cfg.completion,
                        resolution_stop=cfg.resolution_stop,
                        terminal=reinforcement.search_terminal,
                        max_plies=reinforcement.max_plies, keep_tree=True,
                        determinize_seed=determinize, chance_sampling=cfg.chance_sampling)


def determinize_seed(seed: int) -> int:
    """The determinized game of the match with search seed ``seed`` (never 0: off)."""
    return ((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64)) | 1


def move_stopper(iterations: int, seconds: float, nodes: int) -> Stopper:
    """The per-move budget: seconds when > 0, else iterations; nodes as an extra cap."""
    return Stopper(time=seconds if seconds > 0 else None,
                   iterations=iterations if seconds <= 0 and iterations > 0 else None,
                   nodes=nodes if nodes > 0 else None)


def selection_view(result: SearchResult, scale: float, deterministic: bool) -> SearchResult:
    """The result as action selection should see it: values divided by the heuristic's
    scale (softmax temperatures then mean the same for every heuristic) and, in
    deterministic games, resolved non-draw children pushed beyond [-1, 1] by their sign
    (``sign * (1 + |v|)``: with a depth heuristic a proven win is worth less than 1,
    yet the completed selection must take it; quicker wins still rank first)."""
    children = []
    for child in result.children:
        v = child.value / scale
        if deterministic and child.resolved and v != 0.0:
            v = math.copysign(1.0 + abs(v), v)
        children.append(ChildStat(child.action, v, child.visits, child.resolved,
                                  child.outcome))
    return replace(result, children=children, value=result.value / scale)


class SelfPlayer:
    """Plays self-play matches with one evaluator (the learner's network)."""

    def __init__(self, game: Game, cfg: SelfPlayConfig, reinforcement: Reinforcement,
                 evaluator: Evaluator, *, symmetries: bool = True) -> None:
        self.game = game
        self.cfg = cfg
        self.reinforcement = reinforcement
        self.evaluator = evaluator
        self.augment = symmetries
        prototype = game.new_initial_state()
        self.shape = tuple(prototype.encoding_shape)
        self.stochastic = game.has_chance
        self.determinize = self.stochastic and cfg.stochastic == "determinization"
        self.chance_roots = cfg.learning == "chance"
        if self.chance_roots and not self.stochastic:
            raise ValueError("selfplay.learning = \"chance\" needs a game with chance nodes")

    def play(self, rng: np.random.Generator, epsilon: float, seed: int) -> GameRecord:
        """One match. ``rng`` draws chance outcomes and moves; ``epsilon`` is the
        selection's exploration parameter; ``seed`` seeds the searches. Blocks."""
        cfg = self.cfg
        reinf = self.reinforcement
        state = self.game.new_initial_state()
        syms = symmetry_list(state, self.augment)
        det_seed = determinize_seed(seed) if self.determinize else 0
        runner = make_search(cfg.search, self.evaluator,
                             search_params(cfg, reinf, seed, det_seed))
        byte_store = ByteStore(self.shape)
        tree_store = StateStore(state, syms)
        path_store = StateStore(state, syms)
        path: list[tuple[str, int, float]] = []     # (kind, hash, label)
        record = GameRecord(planes=np.zeros(0, np.float32), values=np.zeros(0, np.float32),
                            resolved=np.zeros(0, np.bool_), result=0.0, plies=0, moves=0)
        fixed: dict[int, int] = {}
        while not state.is_terminal():
            key = state.hash
            if state.is_chance_node():
                if self.determinize:
                    outcome = fixed.setdefault(key, fixed_outcome(state, det_seed))
                else:
                    outcome = draw_outcome(state.chance_outcomes(), rng.random())
                if self.chance_roots and before_move(state):
                    result = runner.run(state, move_stopper(cfg.iterations, cfg.seconds,
                                                            cfg.nodes))
                    record.search_nodes += result.nodes
                    record.search_iterations += result.iterations
                    record.evaluations += result.evaluations
                    tree_store.put(state, result.value, result.resolved)
                record.chance_events.append((key, outcome))
                if cfg.learning == "terminal" or self.determinize:
                    path_store.put(state, math.nan, False)
                    path.append(("chance", key, math.nan))
                state.apply_action(outcome)
                record.actions.append(outcome)
                record.plies += 1
                continue
            result = runner.run(state, move_stopper(cfg.iterations, cfg.seconds, cfg.nodes))
            record.moves += 1
            record.search_nodes += result.nodes
            record.search_iterations += result.iterations
            record.evaluations += result.evaluations
            root_value = result.value
            if cfg.learning == "tree":
                planes, values, resolved = runner.learning_data(
                    state, cfg.max_pairs_per_search, cfg.terminals, syms)
                byte_store.add(planes, values, resolved)
            if cfg.learning == "root":
                tree_store.put(state, root_value, result.resolved)
            elif cfg.learning == "terminal":
                path_store.put(state, math.nan, False)
            path.append(("decision", key, root_value))
            record.root_values.append(root_value)
            view = selection_view(result, reinf.scale, not self.stochastic)
            action = select_action(view, state.current_player(), cfg.selection, rng,
                                   epsilon=epsilon, temperature=cfg.temperature,
                                   completed=cfg.completed)
            state.apply_action(action)
            record.actions.append(action)
            record.plies += 1

        final = reinf.terminal(state)
        record.result = float(state.terminal_value())
        record.fixed = fixed
        if cfg.outcome_weight:
            # the search's value carries the teacher's knowledge, the outcome what the
            # teacher does not know; resolved values are exact and kept
            tree_store.mix_unresolved(final, cfg.outcome_weight)
        if cfg.learning == "terminal":
            path_store.put(state, final, True)
            for _, key, _ in path:
                path_store.label(key, final, False)
        elif self.determinize:
            # the jumped chance states: the value of their realised successor
            label = final
            for kind, key, value in reversed(path):
                if kind == "chance":
                    path_store.label(key, label, False)
                else:   # root learning stores every decision state, mixed with the outcome
                    label = tree_store.value(key) if cfg.outcome_weight else value
        if cfg.learning in ("root", "chance"):
            parts = [path_store.arrays(), tree_store.arrays(exclude=set(path_store.index))]
        elif self.determinize:
            byte_store.add(*path_store.arrays())    # the path's labels win over the tree's
            parts = [byte_store.arrays()]
        else:
            parts = [path_store.arrays(), byte_store.arrays()]
        record.planes = np.concatenate([p[0] for p in parts]).astype(np.float32, copy=False)
        record.values = np.concatenate([p[1] for p in parts]).astype(np.float32, copy=False)
        record.resolved = np.concatenate([p[2] for p in parts])
        return record


def before_move(state: GameState) -> bool:
    """Whether the chance state ``state`` leads straight to a move (a roll, not a set-up
    draw followed by another chance state). Its first outcome decides: a game's chance
    states of one kind lead to states of one kind."""
    state.apply_action(state.chance_outcomes()[0][0])
    try:
        return not state.is_terminal() and not state.is_chance_node()
    finally:
        state.undo()
