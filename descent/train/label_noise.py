"""``descent labels retest``: how much of a Hex label is its search's noise.

A value network is measured by its correlation with the labels' values, but a label is
one search's estimate: searched again with another seed, the position gets another value.
The correlation r of two fresh searches of the same positions (the labels' reliability)
caps what any predictor can reach: one that knew the value the search returns on average
would correlate about sqrt(r) with a single label, and a predictor's correlation with the
labels divided by sqrt(r) estimates its correlation with that average (Spearman's
correction for attenuation). The retest searches held-out positions the labels left
unproven twice, each time with a fresh tree, with the player the labels' manifest
records (its network given by file and checked against the recorded SHA-256), and, given
``deep`` simulations, once more at that budget: the closest the engine has to the
position's true value, against which the labels, the fresh searches and a network are
measured alike. (The labels' own searches began with the tree kept from the game's
previous move, so a label is not quite a fresh search of its budget.)
"""

from __future__ import annotations

import math
import multiprocessing
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.stats import correlation
from descent.train.labels import (
    MANIFEST,
    Labels,
    Player,
    held_out,
    load,
    player_budget,
    player_searches,
)


def recorded_player(folder: Path, policy: str = "", value: str = "") -> Player:
    """The one player whose games fill ``folder`` (from its manifest), with its policy
    network read from ``policy`` and its value network from ``value``, which must be the
    files the shards record."""
    import json

    from descent.search_cy.games.registry import make_game

    players = {json.dumps(s["player"], sort_keys=True)
               for s in json.loads((folder / MANIFEST).read_text())["shards"]}
    if len(players) != 1:
        raise ValueError(f"{folder}: {len(players)} players in the manifest, not one")
    record = json.loads(players.pop())
    game = make_game(record["game"])
    if game.name != "hex" or record["search"] != "rave":
        raise ValueError(f"{folder}: a retest searches rave's Hex labels, not "
                         f"{record['search']} on {record['game']}")
    kw: dict[str, Any] = {
        "size": int(game.params["size"]), "sims": int(record["sims"]),
        "branch": float(record["branch"]), "heuristic": str(record["heuristic"]),
        "action_visits": int(record.get("action_visits", 0)),
        "fast_sims": int(record.get("fast_sims", 0)),
        "full_share": float(record.get("full_share", 1.0))}
    for key, path, option in (("policy_sha256", policy, "--policy"),
                              ("value_sha256", value, "--value")):
        if key not in record and path:
            raise ValueError(f"{folder}: its player searched without a {key[:-7]} network")
        if key in record and not path:
            raise ValueError(f"{folder}: its player searched with the {key[:-7]} network of "
                             f"weights {record[key]}: give its file ({option})")
    player = (Player.with_policy(policy, int(record["policy_at"]), **kw) if policy
              else Player(**kw))
    if value:
        player = player.with_value(value, float(record["value_mix"]),
                                   float(record["value_fade"]), int(record["value_visits"]))
    for key, path in (("policy_sha256", policy), ("value_sha256", value)):
        if path and getattr(player, key) != record[key]:
            raise ValueError(f"{path}: its weights are not those of {folder}'s player")
    return player


@dataclass(frozen=True)
class Retest:
    """Per retested position (player 0's view): the label, two fresh searches, and the
    deep search (empty when there is none)."""

    positions: npt.NDArray[np.int64]
    label: npt.NDArray[np.float64]
    first: npt.NDArray[np.float64]
    second: npt.NDArray[np.float64]
    deep: npt.NDArray[np.float64]

    @property
    def reliability(self) -> float:
        """The correlation of the two fresh searches."""
        return correlation(self.first, self.second)

    def summary(self, predictor: npt.NDArray[np.float64] | None = None) -> dict[str, float]:
        """The reliability, its ceiling sqrt(r), the label's correlation with a fresh
        search; with the deep search, the label's and a fresh search's correlation with
        it; and for a ``predictor`` (one value a position) its correlation with the
        labels, with the fresh searches' mean, with the search's average value (corrected
        for attenuation) and with the deep search."""
        r = self.reliability
        out = {"positions": float(len(self.label)), "reliability": r,
               "ceiling": math.sqrt(max(r, 0.0)),
               "label_vs_fresh": 0.5 * (correlation(self.label, self.first)
                                        + correlation(self.label, self.second))}
        if len(self.deep):
            out |= {"label_vs_deep": correlation(self.label, self.deep),
                    "fresh_vs_deep": 0.5 * (correlation(self.first, self.deep)
                                            + correlation(self.second, self.deep))}
        if predictor is not None:
            versus_label = correlation(predictor, self.label)
            out |= {"predictor_vs_label": versus_label,
                    "predictor_vs_fresh_mean": correlation(
                        predictor, 0.5 * (self.first + self.second)),
                    "predictor_vs_average": versus_label / max(math.sqrt(max(r, 0.0)), 1e-9)}
            if len(self.deep):
                out["predictor_vs_deep"] = correlation(predictor, self.deep)
        return out


def chosen_positions(labels: Labels, count: int, seed: int) -> npt.NDArray[np.int64]:
    """``count`` held-out positions the labels left unproven, drawn by ``seed``, sorted."""
    pool = np.flatnonzero(held_out(labels) & ~labels.arrays["proven"])
    if count < 1 or count > len(pool):
        raise ValueError(f"a retest of {count} positions: the labels hold {len(pool)} "
                         "held-out unproven positions")
    picked = random.Random(seed).sample(range(len(pool)), count)
    return np.sort(pool[picked]).astype(np.int64)


def _search(task: tuple[Player, list[list[int]], int, int]) -> list[tuple[float, ...]]:
    """Each position's (moves from the empty board) two fresh searches' values, and the
    deep search's when ``deep`` is not 0."""
    from descent.nets.policy import load_policy
    from descent.search_cy.games.registry import make_game

    player, paths, seed, deep = task
    game = make_game(player.game)
    deeper = replace(player, sims=deep)
    policy = load_policy(player.policy, game) if player.policy else None   # once a task
    out = []
    for k, moves in enumerate(paths):
        state = game.new_initial_state()
        for m in moves:
            state.apply_action(m)
        # fresh searches a position: no tree carried over from the one before
        first, second = player_searches(player, state, [seed + 3 * k, seed + 3 * k + 1],
                                        policy)
        values = [float(first.run(state, player_budget(player, state)).value),
                  float(second.run(state, player_budget(player, state)).value)]
        if deep:
            (search,) = player_searches(deeper, state, [seed + 3 * k + 2], policy)
            values.append(float(search.run(state, player_budget(deeper, state)).value))
        out.append(tuple(values))
    return out


def retest(folder: Path, count: int, *, policy: str = "", value: str = "", seed: int = 1,
           deep: int = 0, jobs: int = 1, labels: Labels | None = None) -> Retest:
    """Searches ``count`` held-out unproven positions of ``folder`` twice afresh with the
    labels' player, and once with ``deep`` simulations when it is not 0 (``jobs``
    processes; deterministic by ``seed`` at any ``jobs``). ``labels``: the folder's, when
    the caller loaded them already."""
    if deep < 0:
        raise ValueError(f"deep simulations {deep} < 0")
    player = recorded_player(folder, policy, value)
    if labels is None:
        labels = load(folder)
    positions = chosen_positions(labels, count, seed)
    paths = [labels.moves(int(p)) for p in positions]
    chunks = max(1, min(len(paths), 4 * jobs))
    bounds = np.linspace(0, len(paths), chunks + 1).astype(int)
    tasks = [(player, paths[lo:hi], 1_000_003 * seed + 3 * int(lo), deep)
             for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo]
    if jobs == 1:
        parts = [_search(t) for t in tasks]
    else:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            parts = pool.map(_search, tasks)
    values = np.asarray([v for part in parts for v in part], dtype=np.float64)
    return Retest(positions, labels.arrays["value"][positions].astype(np.float64),
                  values[:, 0], values[:, 1],
                  values[:, 2] if deep else np.empty(0, dtype=np.float64))
