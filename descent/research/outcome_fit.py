"""How well EinStein evaluators predict game outcomes, position by position.

Reads the held-out games (the newest share, as ``descent train --refit`` holds them out)
of a run whose labels are game outcomes (``selfplay.learning = "terminal"``), leaves out
terminal positions, and scores each predictor against the outcome (+1 Red wins, -1 Blue):

- ``heuristic``: the engine's C heuristic (``search_cy/eval/einstein_eval.pyx``);
- ``race``: a race table in the manner of Zweistein (Hsueh and Hsu, 2025): each side's
  exact distribution of the number of turns its fastest cube needs to reach its corner,
  captures ignored, moving the cube that the die allows and that minimises the expected
  number of turns; the value is the chance that Red finishes first;
- each model file given.

For each it prints the raw MSE, the MSE after calibration (quantile bins fitted on one
half of the sample and scored on the other, so a predictor is not penalised for its
scale) and the correlation. A static measure: it says what an evaluator knows about
outcomes of the run's policy, not how well a search plays with it (docs/results/
networks.md, what the evaluators know: a network can predict better and play no better).

    python -m descent.research.outcome_fit runs/ewn_term \\
        nets/shipped/einstein-*.dnet --sample 100000
"""

from __future__ import annotations

import argparse
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

CUBES = 6
LEVELS = 5                 # a cube's state in the race: 0 absent, 1..4 steps to its corner
STATES = LEVELS ** CUBES
TURNS = 48                 # turns tracked; the tail mass is folded into the last one
RED_TO_ACT = 12            # encoding planes (search_cy/games/einstein.pyx c_encode)
DIE_PLANES = 13
CELLS = 25
FINISH = np.eye(1, TURNS).ravel()     # T = 0: the cube is there
FINISH.flags.writeable = False


def _digits(state: int) -> list[int]:
    return [(state // LEVELS ** k) % LEVELS for k in range(CUBES)]


def movable(steps: list[int], die: int) -> list[int]:
    """Cube indices (0-based) a die value (1..6) may move: its own cube, or else the
    nearest present cube below and the nearest above (the game's rule)."""
    k = die - 1
    if steps[k]:
        return [k]
    below = [j for j in range(k) if steps[j]]
    above = [j for j in range(k + 1, CUBES) if steps[j]]
    return below[-1:] + above[:1]


def _later(dist: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The distribution of T + 1 (the tail stays in the final turn tracked)."""
    out = np.zeros(TURNS)
    out[1:] = dist[:-1]
    out[-1] += dist[-1]
    return out


def _best_step(state: int, die: int, dist: npt.NDArray[np.float64],
               mean: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """T's distribution right after the best step ``die`` allows (T = 0: it finishes)."""
    steps = _digits(state)
    best, best_mean = FINISH, np.inf
    for k in movable(steps, die):
        if steps[k] == 1:
            return FINISH
        after = state - LEVELS ** k
        if mean[after] < best_mean:
            best, best_mean = dist[after], mean[after]
    return best


@lru_cache(maxsize=1)
def race_table() -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(P(T = t) for t < TURNS, E[T]) for every race state (base-5 digits, cube 1 lowest).

    T counts the side's own turns until one cube reaches the corner. Each turn moves one
    cube a step nearer (some step always shortens the distance); where the die allows two
    cubes the one with the smaller expected T is moved. A side without cubes never
    finishes (mass 0, E[T] infinite)."""
    dist = np.zeros((STATES, TURNS))
    mean = np.full(STATES, np.inf)
    # a move lowers one digit by one: the states in order of total steps come after
    # every state they lead to
    for s in sorted(range(1, STATES), key=lambda s: sum(_digits(s))):
        dist[s] = _later(np.mean([_best_step(s, die, dist, mean) for die in range(1, 7)], axis=0))
        mean[s] = float(dist[s] @ np.arange(TURNS))
    return dist, mean


def race_value(red: int, blue: int, red_to_act: bool, die: int = 0) -> float:
    """Red's chance of winning the race, as a value in [-1, 1]. ``die`` is the pending roll
    of the side to act (0 before the roll)."""
    dist, mean = race_table()
    x, y = dist[red], dist[blue]
    if die:    # the side to act moves now: its current turn counts
        if red_to_act:
            x = _later(_best_step(red, die, dist, mean))
        else:
            y = _later(_best_step(blue, die, dist, mean))
    # Red wins when it finishes on its t-th turn before Blue has: Blue has had t - 1 turns
    # by then when Red acts first, t turns when Blue does (y_done[t] = P(Y <= t))
    y_done = np.cumsum(y)
    blue_before = np.concatenate([[0.0], y_done[:-1]]) if red_to_act else y_done
    p = float(np.sum(x * (1.0 - blue_before)))
    return 2.0 * p - 1.0


def decode(planes: npt.NDArray[np.float32]) -> tuple[str, int, int, bool, int]:
    """One position's planes -> (position text, Red race state, Blue race state,
    Red to act, pending die)."""
    board = [""] * CELLS
    red = blue = 0
    for k in range(CUBES):
        for side, letters in ((0, "ABCDEF"), (1, "abcdef")):
            cells = np.flatnonzero(planes[6 * side + k].reshape(CELLS))
            for cell in cells:
                board[cell] = letters[k]
                r, c = divmod(int(cell), 5)
                if side == 0:
                    red += max(4 - r, 4 - c) * LEVELS ** k
                else:
                    blue += max(r, c) * LEVELS ** k
    rows = []
    for r in range(5):
        row, empty = "", 0
        for ch in board[5 * r:5 * r + 5]:
            if ch:
                row += (str(empty) if empty else "") + ch
                empty = 0
            else:
                empty += 1
        rows.append(row + (str(empty) if empty else ""))
    red_to_act = bool(planes[RED_TO_ACT, 0, 0] > 0.5)
    die = next((d for d in range(1, 7) if planes[DIE_PLANES + d - 1, 0, 0] > 0.5), 0)
    text = "/".join(rows) + (" r " if red_to_act else " b ") + (f"d{die}" if die else "roll")
    return text, red, blue, red_to_act, die


def live(planes: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Rows whose position is not over: both sides have cubes, no cube on its corner."""
    n = len(planes)
    red = planes[:, 0:6].sum(axis=1).reshape(n, CELLS)
    blue = planes[:, 6:12].sum(axis=1).reshape(n, CELLS)
    keep: npt.NDArray[np.bool_] = ((red.sum(1) > 0) & (blue.sum(1) > 0) & (red[:, 24] == 0)
                                   & (blue[:, 0] == 0))
    return keep


def fit_scores(pred: npt.NDArray[np.float64], y: npt.NDArray[np.float64],
               bins: int = 50) -> tuple[float, float, float]:
    """(raw MSE, calibrated MSE, correlation), the MSEs on the second half of the rows;
    calibration: ``bins`` quantile bins of the first half, each predicting its mean."""
    half = len(y) // 2
    raw = float(np.mean((pred[half:] - y[half:]) ** 2))
    edges = np.quantile(pred[:half], np.linspace(0.0, 1.0, bins + 1)[1:-1])
    slot = np.searchsorted(edges, pred)
    sums = np.bincount(slot[:half], weights=y[:half], minlength=bins)
    counts = np.bincount(slot[:half], minlength=bins)
    means = np.where(counts > 0, sums / np.maximum(counts, 1), float(np.mean(y[:half])))
    calibrated = float(np.mean((means[slot[half:]] - y[half:]) ** 2))
    spread = np.std(pred) * np.std(y)
    corr = float(np.mean((pred - pred.mean()) * (y - y.mean())) / spread) if spread else 0.0
    return raw, calibrated, corr


def held_out(run_dir: Path, holdout: float, sample: int, seed: int
             ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64], int]:
    """(planes, outcomes, games) of a sample of the held-out games' live positions."""
    from descent.train.config import load_config
    from descent.train.memory_files import load_run_memory
    from descent.train.refit import PackedRows, trained_games

    cfg = load_config(run_dir / "config.toml")
    if cfg.game.split("(")[0] != "einstein" or cfg.selfplay.learning != "terminal":
        raise SystemExit(f"outcome_fit: {run_dir} is not an EinStein run labelled with "
                         f"outcomes (game {cfg.game!r}, learning {cfg.selfplay.learning!r}; "
                         "needs einstein and selfplay.learning = 'terminal')")
    loaded = load_run_memory(run_dir)
    if loaded is None or not loaded[2]:
        raise SystemExit(f"outcome_fit: {run_dir} has no checkpoint with games")
    _, shape, games = loaded
    test = games[trained_games(len(games), holdout):] or games[-1:]
    rows = PackedRows(shape, test)
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(rows.values), size=min(sample, len(rows.values)),
                              replace=False))
    planes = rows.planes(pick)
    keep = live(planes)
    return planes[keep], rows.values[pick][keep].astype(np.float64), len(test)


def predictions(planes: npt.NDArray[np.float32], models: list[Path]
                ) -> dict[str, npt.NDArray[np.float64]]:
    """Each predictor's values (Red's view) on the positions."""
    from descent.nets.evaluator import network_function
    from descent.search_cy.eval.einstein_eval import EinsteinEvaluator
    from descent.search_cy.games.einstein import EinsteinState
    from descent.search_cy.games.registry import make_game

    state = make_game("einstein").new_initial_state()
    assert isinstance(state, EinsteinState)
    evaluator = EinsteinEvaluator()
    heuristic = np.zeros(len(planes))
    race = np.zeros(len(planes))
    for i, one in enumerate(planes):
        text, red, blue, red_to_act, die = decode(one)
        state.set_position(text)
        heuristic[i] = float(evaluator.evaluate([state])[0])
        race[i] = race_value(red, blue, red_to_act, die)
    out = {"heuristic": heuristic, "race": race}
    for path in models:
        f = network_function(str(path), state, backend="torch")
        out[path.name] = np.concatenate(
            [f(planes[i:i + 4096]) for i in range(0, len(planes), 4096)]).astype(np.float64)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="an EinStein run with learning = 'terminal'")
    parser.add_argument("models", nargs="*", type=Path, help="model files to score too")
    parser.add_argument("--sample", type=int, default=100_000, help="positions drawn")
    parser.add_argument("--holdout", type=float, default=0.05, help="newest share of games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    planes, y, games = held_out(args.run_dir, args.holdout, args.sample, args.seed)
    if len(y) < 4:
        raise SystemExit("outcome_fit: fewer than 4 live positions in the sample")
    print(f"{len(y)} live positions from {games} held-out games; outcome mean {y.mean():+.3f}")
    preds = predictions(planes, args.models)
    width = max(len(name) for name in preds)
    print(f"{'predictor':{width}s} {'raw MSE':>8s} {'calibrated':>10s} {'corr':>7s}")
    for name, pred in preds.items():
        raw, calibrated, corr = fit_scores(pred, y)
        print(f"{name:{width}s} {raw:8.4f} {calibrated:10.4f} {corr:+7.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
