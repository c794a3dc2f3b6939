"""``descent policy``: Hex move-policy networks trained on the labels, and their accuracy.

MoHex-CNN's move prior, learned from this engine's own searches: a convolutional tower
(``nets/arch.py``, output ``policy``) reads the position from the side to move's view and
gives a logit to every cell; its softmax over the empty cells is the prior the ``rave``
search multiplies into the pattern prior at nodes of enough visits
(``search_cy/eval/hex_policy.pyx``)::

    descent policy train data/labels/hex11 --run-dir data/runs/hex11-policy --epochs 12
    descent policy eval data/runs/hex11-policy/model.dnet data/labels/hex11
    descent policy bench data/runs/hex11-policy/model.dnet data/labels/hex11 --at 40,100

The side to move's view: Black to move reads the kernel's encoding as it is (symmetry 0);
White to move reads it transposed with the colours exchanged (symmetry 2), which makes
White a Black that connects top and bottom. One network then serves both colours, and the
input's to-move plane is always ones. Training adds the 180-degree rotation of every
example (the board's other symmetry that keeps the colours).

The targets are the search's visit shares over the root's children (``descent labels``);
the loss is their cross-entropy with the softmax over the empty cells. A network with
value heads (preset ``policy_value``: MoHex 3HNN's three heads on one tower) also learns
the position's value (the search's, for the side to move) and the action values of the
moves whose next position the labels value: the game's move (the value of the next
position of the game) and the random branch move (the value of the branch position), each
a squared error added to the loss.

One game in ten (game seed divisible by 10) is held out; the held-out figures are the
cross-entropy and the top-1 agreement with the move the search played (``best``), and for
value heads the Pearson correlation of the value with the labels on the held-out
positions the search did not prove (``value_corr``) and of the action values with theirs
(``action_corr``). A run keeps its state in its folder (``config.json``, ``checkpoint.pt``
with the optimiser, ``metrics.jsonl``, the best held-out model as ``model.dnet``: the best
top-1, or with value heads the lowest held-out loss) and resumes from it with more epochs,
on whatever labels the folder then holds (on a new held-out set, the best model is chosen
anew). ``--init`` starts a new run from the tensors a policy network shares with it (the
tower and the policy head, and the value heads where both have them).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.stats import correlation
from descent.train.labels import Labels, held_out, labels_game, load


def canonical_symmetry(side: int) -> int:
    """The Hex encoding symmetry that shows ``side`` (0 Black, 1 White) as Black to move."""
    return 0 if side == 0 else 2


@dataclass
class Examples:
    """Positions in the side to move's view: inputs (n, 3, size + 2, size + 2) as 0/1
    bytes, visit shares and legal cells (n, size * size), the search's move (n,), its
    value for the side to move and whether it proved it (n,), and up to two moves whose
    action value is known with those values (n, 2; cell -1: none), all in the canonical
    frame."""

    x: npt.NDArray[np.uint8]
    target: npt.NDArray[np.float32]
    legal: npt.NDArray[np.bool_]
    best: npt.NDArray[np.int64]
    size: int
    value: npt.NDArray[np.float32]
    proven: npt.NDArray[np.bool_]
    action_cell: npt.NDArray[np.int64]
    action_value: npt.NDArray[np.float32]

    def __len__(self) -> int:
        return int(len(self.best))


def _canonical_cells(values: npt.NDArray[Any], size: int, side: int) -> npt.NDArray[Any]:
    """Per-cell values moved into the canonical frame (symmetry 2 is the transpose)."""
    if side == 0:
        return values
    return values.reshape(size, size).T.reshape(-1)


def _canonical_cell(cell: int, size: int, side: int) -> int:
    """A cell moved into the canonical frame (symmetry 2 is the transpose)."""
    return cell if side == 0 else (cell % size) * size + cell // size


def action_targets(labels: Labels) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Per position (n, 2): the moves whose next position the labels value and those
    values (player 0's view; cell -1: none): the game's next move (valued by the game's
    next position) and the branch move searched from it (valued by the branch position).
    Branch positions get none."""
    a = labels.arrays
    count = labels.positions
    cells = np.full((count, 2), -1, np.int64)
    values = np.zeros((count, 2), np.float32)
    at: dict[tuple[int, int], int] = {}
    for main in np.flatnonzero(a["pos_extra"] < 0):
        at[(int(a["pos_game"][main]), int(a["pos_ply"][main]))] = int(main)
    for p in range(count):
        g, ply, extra = int(a["pos_game"][p]), int(a["pos_ply"][p]), int(a["pos_extra"][p])
        parent = at.get((g, ply)) if extra >= 0 else at.get((g, ply - 1))
        if parent is None:
            continue
        move = extra if extra >= 0 else int(a["game_moves"][int(a["game_offset"][g]) + ply - 1])
        slot = 1 if extra >= 0 else 0
        cells[parent, slot] = move
        values[parent, slot] = a["value"][p]
    return cells, values


def examples(labels: Labels, positions: npt.NDArray[np.int64]) -> Examples:
    """The ``positions`` of ``labels`` as canonical examples (each game replayed once)."""
    from descent.search_cy.games.registry import make_game

    n = labels.size
    a = labels.arrays
    game = make_game(f"hex(size={n})")
    shape = game.new_initial_state().encoding_shape
    count = len(positions)
    x = np.zeros((count, *shape), np.uint8)
    target = np.zeros((count, n * n), np.float32)
    legal = np.zeros((count, n * n), bool)
    best = np.zeros(count, np.int64)
    value = np.zeros(count, np.float32)
    action_cell = np.full((count, 2), -1, np.int64)
    action_value = np.zeros((count, 2), np.float32)
    cells, values = action_targets(labels)
    buf = np.zeros(shape, np.float32)
    order = np.lexsort((a["pos_ply"][positions], a["pos_game"][positions]))
    state = None
    current_game, ply = -1, 0
    for row in order:
        p = int(positions[row])
        g, want = int(a["pos_game"][p]), int(a["pos_ply"][p])
        if g != current_game:
            state, current_game, ply = game.new_initial_state(), g, 0
        assert state is not None
        start = int(a["game_offset"][g])
        while ply < want:
            state.apply_action(int(a["game_moves"][start + ply]))
            ply += 1
        extra = int(a["pos_extra"][p])
        if extra >= 0:
            state.apply_action(extra)
        side = state.current_player()
        state.encode(buf, canonical_symmetry(side))
        x[row] = buf
        empty = np.zeros(n * n, bool)
        empty[state.legal_actions()] = True
        legal[row] = _canonical_cells(empty, n, side)
        target[row] = _canonical_cells(labels.policy(p), n, side)
        best[row] = _canonical_cell(int(a["best"][p]), n, side)
        sign = 1.0 if side == 0 else -1.0          # player 0's view -> the side to move's
        value[row] = sign * float(a["value"][p])
        for slot in range(2):
            if 0 <= cells[p, slot] < n * n:        # a cell (the swap has no plane)
                action_cell[row, slot] = _canonical_cell(int(cells[p, slot]), n, side)
                action_value[row, slot] = sign * float(values[p, slot])
        if extra >= 0:
            state.undo()
    proven = np.asarray(a["proven"][positions], bool)
    return Examples(x, target, legal, best, n, value, proven, action_cell, action_value)


@dataclass
class PolicyConfig:
    """A policy run's settings (``config.json``; a resumed run keeps its own)."""

    preset: str = "policy"
    batch: int = 256
    lr: float = 1e-3
    weight_decay: float = 1e-4
    seed: int = 1
    init: str = ""              # a policy model file whose tensors start a new run
    value_weight: float = 1.0   # the value heads' squared errors against the policy's loss


def _masked_log_softmax(logits: Any, legal: Any) -> Any:
    import torch

    return torch.log_softmax(logits.masked_fill(~legal, -1e9), dim=1)


@dataclass
class Batch:
    """One batch of examples as tensors (``Examples``' fields)."""

    x: Any
    target: Any
    legal: Any
    best: Any
    value: Any
    proven: Any
    action_cell: Any
    action_value: Any


def _batches(data: Examples, batch: int, rng: np.random.Generator | None) -> Iterator[Batch]:
    """Batches of ``batch`` examples, shuffled by ``rng`` and rotated 180 degrees at
    random (None: in order, as they are)."""
    import torch

    n = data.size
    order = rng.permutation(len(data)) if rng is not None else np.arange(len(data))
    for lo in range(0, len(order), batch):
        idx = np.sort(order[lo:lo + batch])
        x = torch.from_numpy(data.x[idx].astype(np.float32))
        t = torch.from_numpy(data.target[idx]).view(-1, n, n)
        m = torch.from_numpy(data.legal[idx]).view(-1, n, n)
        b = torch.from_numpy(data.best[idx])
        ac = torch.from_numpy(data.action_cell[idx])
        if rng is not None:
            flip = torch.from_numpy(rng.random(len(idx)) < 0.5)
            x[flip] = x[flip].flip(2, 3)
            t[flip] = t[flip].flip(1, 2)
            m[flip] = m[flip].flip(1, 2)
            b[flip] = n * n - 1 - b[flip]
            ac[flip] = torch.where(ac[flip] >= 0, n * n - 1 - ac[flip], ac[flip])
        yield Batch(x, t.reshape(len(idx), -1), m.reshape(len(idx), -1), b,
                    torch.from_numpy(data.value[idx]), torch.from_numpy(data.proven[idx]),
                    ac, torch.from_numpy(data.action_value[idx]))


def _losses(net: Any, batch: Batch) -> tuple[Any, Any, Any, Any, Any]:
    """(policy loss, value loss, action loss (0 without value heads), log-probabilities,
    values or None); the losses are sums over the batch."""
    import torch

    logits, actions, values = net.heads(batch.x)
    logp = _masked_log_softmax(logits, batch.legal)
    policy = -(batch.target * logp.clamp_min(-1e4)).sum()
    if values is None:
        zero = torch.zeros(())
        return policy, zero, zero, logp, None
    value = ((values - batch.value) ** 2).sum()
    known = batch.action_cell >= 0
    picked = actions.gather(1, batch.action_cell.clamp_min(0))
    action = (((picked - batch.action_value) ** 2) * known).sum()
    return policy, value, action, logp, (values, picked, known)


def evaluate(net: Any, data: Examples, batch: int = 1024,
             value_weight: float = 1.0) -> dict[str, float]:
    """Held-out cross-entropy against the visit shares and top-1 against the searched move;
    with value heads, the value's and the action values' squared errors (a position, a
    known action) and correlations (the value's on the positions the search did not
    prove), and ``total``, the loss training minimises (the value heads' errors weighted
    by ``value_weight``)."""
    import torch

    net.eval()
    sums = {"policy": 0.0, "value": 0.0, "action": 0.0}
    correct = 0.0
    values: list[Any] = []
    labels: list[Any] = []
    unproven: list[Any] = []
    picked: list[Any] = []
    targets: list[Any] = []
    with torch.no_grad():
        for b in _batches(data, batch, None):
            policy, value, action, logp, heads = _losses(net, b)
            sums["policy"] += float(policy)
            sums["value"] += float(value)
            sums["action"] += float(action)
            correct += float((logp.argmax(1) == b.best).sum())
            if heads is not None:
                v, q, known = heads
                values.append(v.numpy())
                labels.append(b.value.numpy())
                unproven.append(~b.proven.numpy())
                picked.append(q[known].numpy())
                targets.append(b.action_value[known].numpy())
    count = max(len(data), 1)
    out = {"loss": sums["policy"] / count, "top1": correct / count}
    if values:
        v, y, u = np.concatenate(values), np.concatenate(labels), np.concatenate(unproven)
        q, t = np.concatenate(picked), np.concatenate(targets)
        out |= {"value_mse": sums["value"] / count,
                "action_mse": sums["action"] / max(len(q), 1),
                "value_corr": correlation(v[u], y[u]), "action_corr": correlation(q, t),
                "total": (sums["policy"] + value_weight * (sums["value"] + sums["action"]))
                / count}
    return out


# the tensors that read the value features pooled by their mean, then their maximum
POOLED_INPUTS = ("vfc.weight", "qglobal.weight")


def widened(start: npt.NDArray[Any], fresh: npt.NDArray[Any],
            pooled: bool = False) -> npt.NDArray[Any]:
    """``start``'s tensor embedded in the (as large or larger) ``fresh`` one of a wider
    network so that the wider network computes what ``start``'s did: its channels keep
    their weights and read none of the new channels (those inputs' weights are zero),
    while the new channels keep their fresh weights, reading every channel. ``pooled``:
    the inputs are the value features' means, then their maxima, each half widened."""
    if start.shape == fresh.shape:
        return start
    out = fresh.copy()
    rows = start.shape[0]
    if start.ndim == 1:
        out[:rows] = start
        return out
    out[:rows] = 0.0
    if pooled:
        half, whole = start.shape[1] // 2, fresh.shape[1] // 2
        out[:rows, :half] = start[:, :half]
        out[:rows, whole:whole + half] = start[:, half:]
    else:
        out[:rows, :start.shape[1]] = start
    return out


def _embeddable(start: Any, arch: Any) -> bool:
    """Whether a run of ``arch`` can start from a policy network of ``start``: a tower of
    the same family and width, or a conv tower no wider, no deeper and with no wider a
    value hidden layer."""
    if not start.is_policy or start.family != arch.family:
        return False
    if arch.family != "conv":
        return bool(start.filters == arch.filters)
    return bool(start.filters <= arch.filters and start.convs <= arch.convs
                and all(a <= b for a, b in zip(start.fc, arch.fc, strict=False)))


def embedded(start: dict[str, npt.NDArray[Any]], start_convs: int,
             fresh: dict[str, npt.NDArray[Any]], convs: int) -> dict[str, npt.NDArray[Any]]:
    """A conv network's ``fresh`` tensors with a smaller conv network's (``start``, of
    ``start_convs`` convolutions) embedded: each of its tensors ``widened`` into the fresh
    one, and the convolutions it lacks (up to ``convs``) the identity, which keeps every
    value after a ReLU; so the larger network begins computing what ``start`` did (in
    the heads ``start`` has), and its new parts learn from there."""
    out = dict(fresh)
    out |= {k: widened(v, fresh[k], pooled=k in POOLED_INPUTS)
            for k, v in start.items() if k in fresh}
    for layer in range(start_convs, convs):
        weight = np.zeros_like(fresh[f"convs.{layer}.weight"])
        for channel in range(weight.shape[0]):
            weight[channel, channel, 1, 1] = 1.0
        out[f"convs.{layer}.weight"] = weight
        out[f"convs.{layer}.bias"] = np.zeros_like(fresh[f"convs.{layer}.bias"])
    return out


def train(labels_folder: Path | list[Path], run_dir: Path, epochs: int, *,
          config: PolicyConfig | None = None,
          log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Trains (or resumes) the run in ``run_dir`` until it has ``epochs`` epochs, on the
    labels of one folder or several (successive generations' players); returns the last
    epoch's metrics. The best held-out model so far is ``run_dir/model.dnet``."""
    folders = labels_folder if isinstance(labels_folder, list) else [labels_folder]
    import torch

    from descent.nets.arch import init_weights, policy_preset
    from descent.nets.files import atomic_write
    from descent.nets.modelfile import Provenance, load_model, make_model, save_model
    from descent.nets.models import PolicyNet, module_from_weights, weights_from_module
    from descent.train.checkpoint import run_config

    say = log or (lambda text: None)
    run_dir.mkdir(parents=True, exist_ok=True)
    labels = load(*folders)
    game = f"hex(size={labels.size})"
    shape = tuple(examples(labels, np.arange(1)).x.shape[1:])
    begun: dict[str, Any] = {}

    def start_weights(chosen: PolicyConfig) -> None:
        """The run's first weights: seeded, or (``init``) those of the tensors the two
        networks share (the tower, the policy head and any value heads both have):
        value heads learned on top of a policy that already knows the moves, or the
        next generation from the last; a smaller conv network is embedded in a larger
        one. Raises before the run's settings are written."""
        arch = policy_preset("hex", chosen.preset)
        weights = init_weights(arch, shape, chosen.seed)
        if chosen.init:
            start = load_model(chosen.init, game)
            if not _embeddable(start.arch, arch):
                raise ValueError(f"{chosen.init}: not a policy network of {arch.family} "
                                 f"{arch.filters} filters (or a smaller conv one) to "
                                 "start from")
            if arch.family == "conv":
                weights = embedded(start.weights, start.arch.convs, weights, arch.convs)
            else:
                weights |= {k: v for k, v in start.weights.items()
                            if k in weights and v.shape == weights[k].shape}
        begun.update(arch=arch, weights=weights)

    cfg = run_config(run_dir, PolicyConfig, config, check=start_weights)
    arch, weights = begun["arch"], begun["weights"]
    test_mask = held_out(labels)
    positions = np.arange(labels.positions)
    train_set = examples(labels, positions[~test_mask])
    test_set = examples(labels, positions[test_mask])
    torch.manual_seed(cfg.seed)
    net = module_from_weights(arch, tuple(train_set.x.shape[1:]), weights)
    assert isinstance(net, PolicyNet)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    # the step size falls to a third after each epoch that did not lower the held-out loss
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.3, patience=0)
    ckpt = run_dir / "checkpoint.pt"
    epoch, best_score = 0, -math.inf
    if ckpt.exists():
        state = torch.load(ckpt, weights_only=True)
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        if "sched" in state:
            sched.load_state_dict(state["sched"])
        epoch = int(state["epoch"])
        best_score = float(state.get("best_score", state.get("best_top1", -math.inf)))
        if int(state.get("test_positions", -1)) != len(test_set):
            best_score = -math.inf  # other labels, another held-out set: a best anew
    say(f"{len(train_set)} training and {len(test_set)} held-out positions "
        f"({labels.arrays['game_seed'].size} games); epoch {epoch} of {epochs}")
    metrics: dict[str, Any] = {}
    while epoch < epochs:
        started = time.monotonic()
        rng = np.random.default_rng(cfg.seed * 1000 + epoch)
        net.train()
        total = 0.0
        for b in _batches(train_set, cfg.batch, rng):
            policy, value, action, _, _ = _losses(net, b)
            loss = (policy + cfg.value_weight * (value + action)) / len(b.best)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(b.best)
        epoch += 1
        held = evaluate(net, test_set, value_weight=cfg.value_weight)
        # the score the best model is chosen by: top-1, or the held-out loss (negated)
        score = held["top1"] if "total" not in held else -held["total"]
        sched.step(held.get("total", held["loss"]))
        metrics = {"epoch": epoch, "lr": opt.param_groups[0]["lr"],
                   "train_loss": total / len(train_set),
                   "test_loss": held["loss"], "test_top1": held["top1"],
                   "train_positions": len(train_set), "test_positions": len(test_set),
                   "seconds": time.monotonic() - started}
        metrics |= {f"test_{k}": v for k, v in held.items() if k not in ("loss", "top1")}
        if score > best_score:
            best_score = score
            model = make_model(game, arch, weights_from_module(net),
                               training=Provenance(steps=epoch, games=int(
                                   labels.arrays["game_seed"].size), seed=cfg.seed,
                                   note=f"policy on {', '.join(f.name for f in folders)}: "
                                        f"held-out top-1 {held['top1']:.4f}"
                                        + (f", value corr {held['value_corr']:.4f}"
                                           if "value_corr" in held else "")))
            save_model(model, run_dir / "model.dnet")
        state = {"net": net.state_dict(), "opt": opt.state_dict(),
                 "sched": sched.state_dict(), "epoch": epoch, "best_score": best_score,
                 "test_positions": len(test_set)}
        with atomic_write(ckpt, "wb") as f:
            torch.save(state, f)
        with open(run_dir / "metrics.jsonl", "a") as f:
            f.write(json.dumps(metrics) + "\n")
        values = (f", value corr {held['value_corr']:.4f}, action corr "
                  f"{held['action_corr']:.4f}" if "value_corr" in held else "")
        say(f"epoch {epoch}: train loss {metrics['train_loss']:.4f}, held-out loss "
            f"{held['loss']:.4f}, top-1 {held['top1']:.4f}{values} "
            f"({metrics['seconds']:.0f} s)")
    return metrics


def measured_positions(labels: Labels, training_games: bool = False,
                       limit: int = 0) -> npt.NDArray[np.int64]:
    """The positions a network is measured on: those of the held-out games, or of the
    games training saw (``training_games``: how far a network fits what it learned
    beyond what it knows); the first ``limit`` (0: all)."""
    positions = np.flatnonzero(held_out(labels) != training_games)
    return positions[:limit] if limit else positions


def prior_accuracy(model_path: Path | None, labels_folder: Path,
                   limit: int = 0, training_games: bool = False) -> dict[str, float]:
    """Top-1 agreement with the searched move on the held-out positions of
    ``labels_folder`` (the first ``limit``, 0: all) of: the pattern prior, the pattern
    prior with the route factor, the network (when given) and the network's product with
    the pattern prior and route factor (what ``rave`` uses)."""
    from descent.nets.policy import load_policy
    from descent.search_cy.eval.hex_eval import HexEvaluator
    from descent.search_cy.games.hex import HexState
    from descent.search_cy.games.hex_patterns import HexPatterns, shipped_weights
    from descent.search_cy.games.registry import make_game

    labels = load(labels_folder)
    n = labels.size
    positions = measured_positions(labels, training_games, limit)
    game = make_game(f"hex(size={n})")
    policy = load_policy(model_path, game) if model_path else None
    patterns = HexPatterns(n, shipped_weights())
    route_gamma = patterns.weights[2]
    codes = HexEvaluator()
    hits = {"patterns": 0, "patterns_route": 0, "network": 0, "network_x_route": 0}
    for p in positions:
        state = game.new_initial_state()
        moves = labels.moves(int(p))
        for m in moves:
            state.apply_action(m)
        last = moves[-1] if moves else -1
        prior = np.zeros(n * n)
        for cell, value in patterns.prior(state, last).items():
            if cell < n * n:
                prior[cell] = value
        read = codes.move_codes(state)
        routed = prior * (route_gamma[read[:n * n]] if read is not None else 1.0)
        best = int(labels.arrays["best"][p])
        hits["patterns"] += int(np.argmax(prior) == best)
        hits["patterns_route"] += int(np.argmax(routed) == best)
        if policy is not None:
            assert isinstance(state, HexState)
            net = policy.probabilities(state)
            hits["network"] += int(np.argmax(net) == best)
            hits["network_x_route"] += int(np.argmax(net * routed) == best)
    if policy is None:
        del hits["network"], hits["network_x_route"]
    return {k: v / max(len(positions), 1) for k, v in hits.items()} | {
        "positions": float(len(positions))}


def value_accuracy(model_path: Path | None, labels_folder: Path,
                   limit: int = 0, training_games: bool = False) -> dict[str, float]:
    """Pearson correlation with the labels' values, on the held-out positions of
    ``labels_folder`` the search did not prove (the first ``limit``, 0: all), of the
    Hex heuristics (``vc``, ``two_distance``) and, for a network with value heads, of its
    value; all in player 0's view."""
    from descent.nets.policy import load_policy
    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.games.hex import HexState
    from descent.search_cy.games.registry import make_game

    labels = load(labels_folder)
    a = labels.arrays
    positions = measured_positions(labels, training_games)
    positions = positions[~a["proven"][positions]]
    if limit:
        positions = positions[:limit]
    game = make_game(f"hex(size={labels.size})")
    policy = load_policy(model_path, game) if model_path else None
    names = ["vc", "two_distance"] + (["network"] if policy and policy.has_values else [])
    heuristics = {name: heuristic_for(game, name) for name in names[:2]}
    got: dict[str, list[float]] = {name: [] for name in names}
    want: list[float] = []
    kept: list[int] = []
    for p in positions:
        state = game.new_initial_state()
        for m in labels.moves(int(p)):
            state.apply_action(m)
        if state.is_terminal():
            continue
        assert isinstance(state, HexState)
        want.append(float(a["value"][p]))
        for name, evaluator in heuristics.items():
            got[name].append(float(evaluator.evaluate([state])[0]))
        kept.append(int(p))
    if "network" in got:
        assert model_path is not None
        got["network"] = list(network_values(model_path, labels, np.asarray(kept)))
    target = np.asarray(want)
    return {name: correlation(np.asarray(v), target) for name, v in got.items()} | {
        "positions": float(len(target))}


def network_values(model: Path, labels: Labels,
                   positions: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """A policy_value network's value of each position, player 0's view."""
    from descent.nets.policy import load_policy
    from descent.search_cy.games.registry import make_game

    game = make_game(labels.game)
    policy = load_policy(model, game)
    if not policy.has_values:
        raise ValueError(f"{model}: a move-policy network without value heads")
    out = np.empty(len(positions), dtype=np.float64)
    for k, p in enumerate(positions):
        state: Any = game.new_initial_state()
        for m in labels.moves(int(p)):
            state.apply_action(m)
        value = float(policy.values(state)[1])
        out[k] = value if state.current_player() == 0 else -value
    return out


def rave_rates(labels_folder: Path, settings: dict[str, Callable[[Any, Any], None]],
               seconds: float, positions: int = 12, seed: int = 5) -> dict[str, float]:
    """Simulations a second of ``rave`` (the default player) on ``positions`` positions
    drawn from ``labels_folder``, ``seconds`` each: without a network (``none``, the
    reference, measured in the same run), then set up by each of ``settings``, a function
    of the search (its ``impl``) and the position, by name. Each position is searched by
    every set-up in turn, so that a machine's drift falls on all of them alike."""
    import random

    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.games.registry import make_game
    from descent.search_cy.search.api import SearchParams, make_search
    from descent.search_cy.search.stopper import Stopper

    labels = load(labels_folder)
    game = make_game(f"hex(size={labels.size})")
    chosen = random.Random(seed).sample(range(labels.positions), positions)
    setups = [("none", None), *settings.items()]
    sims = dict.fromkeys((name for name, _ in setups), 0)
    elapsed = dict.fromkeys((name for name, _ in setups), 0.0)
    for p in chosen:
        state = game.new_initial_state()
        for m in labels.moves(p):
            state.apply_action(m)
        for name, setup in setups:
            search = make_search("rave", heuristic_for(state),
                                 SearchParams(seed=1, keep_tree=False))
            if setup is not None:
                setup(search.impl, state)
            result = search.run(state, Stopper(time=seconds))
            sims[name] += result.iterations
            elapsed[name] += result.time
    return {name: sims[name] / max(elapsed[name], 1e-9) for name, _ in setups}


def print_rates(rates: dict[str, float]) -> None:
    """``rave_rates``' figures, each beside the reference's."""
    for name, rate in rates.items():
        print(f"{name:>16}: {rate:8.0f} simulations a second, "
              f"{rate / rates['none']:.3f} of none")


def search_speed(model_path: Path, labels_folder: Path, thresholds: list[int],
                 seconds: float, positions: int = 12, seed: int = 5,
                 action_visits: int = 0, minimax_weight: float = 0.0) -> dict[str, float]:
    """``rave_rates`` with the policy network at each of ``thresholds`` visits (with
    ``action_visits`` virtual visits at its action values and their implicit minimax at
    ``minimax_weight``, for value heads)."""
    from descent.nets.policy import load_policy

    policy = load_policy(model_path, labels_game(labels_folder))

    def at(visits: int) -> Callable[[Any, Any], None]:
        def setup(impl: Any, state: Any) -> None:
            impl.policy, impl.policy_at = policy, visits
            impl.action_visits = action_visits
            impl.minimax_weight = minimax_weight
        return setup

    return rave_rates(labels_folder, {f"policy_at={t}": at(t) for t in thresholds}, seconds,
                      positions, seed)


def bench_arguments(b: argparse.ArgumentParser, threshold: str, default: str) -> None:
    """A rave bench's arguments: the model, the labels, the ``threshold``s to time."""
    b.add_argument("model", type=Path)
    b.add_argument("labels", type=Path, help="Hex labels folder the positions are drawn from")
    b.add_argument("--at", default=default, help=f"{threshold} thresholds, comma separated")
    b.add_argument("--time", type=float, default=1.0, help="seconds a position")
    b.add_argument("--positions", type=int, default=12)


def configure(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="policy_command", metavar="ACTION", required=True)
    t = sub.add_parser("train", help="train (or resume) a move-policy network on labels")
    t.add_argument("labels", type=Path, nargs="+",
                   help="labels folders (descent labels), of one board size")
    t.add_argument("--run-dir", type=Path, required=True,
                   help="run folder: config, checkpoint, metrics, model.dnet")
    t.add_argument("--epochs", type=int, required=True, help="train until this many epochs")
    t.add_argument("--preset", default="policy", help="architecture preset of a new run")
    t.add_argument("--init", default="", help="a policy model file whose shared tensors "
                                              "(tower, heads) start a new run")
    t.add_argument("--lr", type=float, default=PolicyConfig.lr,
                   help="a new run's step size")
    t.add_argument("--value-weight", type=float, default=PolicyConfig.value_weight,
                   help="a new run's weight of the value heads' errors against the "
                        "policy's loss")
    t.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's own)")
    e = sub.add_parser("eval", help="top-1 of the priors on a labels folder's held-out games")
    e.add_argument("model", type=Path, nargs="?", default=None,
                   help="policy model file (none: the pattern prior only)")
    e.add_argument("labels", type=Path)
    e.add_argument("--limit", type=int, default=0, help="the first this many positions")
    e.add_argument("--training-games", action="store_true",
                   help="measure on the games training saw instead of the held-out ones")
    e.add_argument("--values", action="store_true",
                   help="also the values' correlation with the labels: the heuristics' and "
                        "a policy_value network's")
    b = sub.add_parser("bench", help="rave's simulations a second with the policy, against "
                                     "none in the same run")
    bench_arguments(b, "policy_at", "40")
    b.add_argument("--action-visits", type=int, default=0,
                   help="virtual visits at a policy_value network's action values")
    b.add_argument("--minimax-weight", type=float, default=0.0,
                   help="the share of the action values' implicit minimax in rave's scores")


def run(args: argparse.Namespace) -> int:
    if args.policy_command == "train":
        if args.threads:
            import torch
            torch.set_num_threads(args.threads)
        train(args.labels, args.run_dir, args.epochs,
              config=PolicyConfig(preset=args.preset, init=args.init, lr=args.lr,
                                  value_weight=args.value_weight),
              log=lambda text: print(text, flush=True))
        return 0
    if args.policy_command == "bench":
        rates = search_speed(args.model, args.labels, [int(a) for a in args.at.split(",")],
                             args.time, args.positions, action_visits=args.action_visits,
                             minimax_weight=args.minimax_weight)
        print_rates(rates)
        return 0
    scores = prior_accuracy(args.model, args.labels, args.limit, args.training_games)
    split = "training" if args.training_games else "held-out"
    count = int(scores.pop("positions"))
    for name, value in scores.items():
        print(f"{name:>16}: top-1 {value:.4f} ({count} {split} positions, "
              f"interval +-{1.96 * math.sqrt(value * (1 - value) / max(count, 1)):.4f})")
    if args.values:
        corr = value_accuracy(args.model, args.labels, args.limit, args.training_games)
        count = int(corr.pop("positions"))
        for name, value in corr.items():
            print(f"{name:>16}: value correlation {value:.4f} ({count} {split} positions "
                  "the search did not prove)")
    return 0
