"""Evaluation matches, in process: the learner's network against fixed baselines.

Games come in pairs with the colours reversed; both games of a pair share one seed, so
they have the same random opening (deterministic games) and the same dice stream (the
k-th chance event of either game reads the k-th number of the pair's stream). Every
evaluation of a run uses the same pair seeds, so successive win rates are comparable.
The win rate counts a draw as half a win; its 95% confidence interval is Wilson's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from descent.search_cy.eval.evaluator import Evaluator
from descent.search_cy.games.registry import Game
from descent.search_cy.games.state import GameState
from descent.search_cy.search.api import SearchParams, SearchRunner, make_search
from descent.search_cy.search.stopper import Stopper
from descent.stats import wilson_interval
from descent.train.data import draw_outcome


@dataclass(frozen=True)
class MatchStats:
    """Results of one player (the learner) over a set of games."""

    opponent: str
    games: int
    wins: int
    draws: int
    losses: int

    @property
    def win_rate(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson_interval(self.wins + 0.5 * self.draws, self.games)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self)
        out["win_rate"] = round(self.win_rate, 4)
        out["ci95"] = [round(x, 4) for x in self.ci95]
        return out


class Player(Protocol):
    name: str

    def new_game(self, seed: int) -> None: ...

    def choose(self, state: GameState) -> int: ...


class SearchPlayer:
    """A search with an evaluator and a per-move budget (nodes, or seconds)."""

    def __init__(self, name: str, evaluator: Evaluator, search: str, params: SearchParams,
                 nodes: int = 0, seconds: float = 0.0) -> None:
        self.name = name
        self.runner: SearchRunner = make_search(search, evaluator, params)
        self.nodes = nodes
        self.seconds = seconds

    def new_game(self, seed: int) -> None:
        self.runner.clear()

    def choose(self, state: GameState) -> int:
        stopper = Stopper(time=self.seconds) if self.seconds > 0 else \
            Stopper(nodes=self.nodes)
        return self.runner.run(state, stopper).action


class RandomPlayer:
    """Uniform over the legal moves, seeded per game."""

    name = "random"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def new_game(self, seed: int) -> None:
        self.rng = np.random.default_rng([seed, 7])

    def choose(self, state: GameState) -> int:
        legal = state.legal_actions()
        return legal[int(self.rng.integers(len(legal)))]


def play_match(game: Game, players: tuple[Player, Player], seed: int,
               opening_plies: int = 0) -> float:
    """One game, ``players[0]`` as player 0; returns the result in player 0's view.
    The first ``opening_plies`` decisions are uniform random moves drawn from ``seed``;
    chance outcomes come from the seed's dice stream. Blocks."""
    state = game.new_initial_state()
    dice = random.Random(seed)
    opening = np.random.default_rng([seed, 1])
    for p in players:
        p.new_game(seed)
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(draw_outcome(state.chance_outcomes(), dice.random()))
            continue
        if decisions < opening_plies:
            legal = state.legal_actions()
            action = legal[int(opening.integers(len(legal)))]
        else:
            action = players[state.current_player()].choose(state)
        decisions += 1
        state.apply_action(action)
    return float(state.terminal_value())


def paired_matches(game: Game, learner: Player, opponent: Player, games: int, seed: int,
                   opening_plies: int = 0,
                   on_game: Callable[[int], None] | None = None) -> MatchStats:
    """``games`` games (an even number): pair i plays seed ``seed + i`` twice, the learner
    first as player 0, then as player 1."""
    wins = draws = losses = 0
    for i in range(games // 2):
        for learner_first in (True, False):
            order: tuple[Player, Player] = (learner, opponent) if learner_first \
                else (opponent, learner)
            result = play_match(game, order, seed + i, opening_plies)
            mine = result if learner_first else -result
            if mine > 0:
                wins += 1
            elif mine < 0:
                losses += 1
            else:
                draws += 1
            if on_game is not None:
                on_game(wins + draws + losses)
    return MatchStats(opponent.name, wins + draws + losses, wins, draws, losses)
