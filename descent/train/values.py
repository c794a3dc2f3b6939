"""``descent values``: value networks fitted on the labels of a game, and what they know.

Stockfish trains its NNUE on positions valued by a deeper search than the one that will
use it; ``descent labels generate --game dicechess`` keeps such positions (expectiminimax
over the C heuristic at a node budget, every decision of self-play games, with the game's
result). This fits a value network of any preset of the game on them::

    descent values train data/labels/dicechess --run-dir data/runs/dicechess-nnue \\
        --preset nnue --epochs 20
    descent values eval data/runs/dicechess-nnue/model.dnet data/labels/dicechess
    descent values curve data/labels/dicechess --games 100,200,400 --work curve

Each labelled position is replayed from its game's moves (the dice are among them) and
encoded; the target is the search's value, mixed with the game's result by ``--outcome``
(Stockfish's lambda: 0 the search alone, 1 the result alone), for the side to move, or to
roll at a chance node (the model's view: ``side_to_move``). The labels value decisions
(the die known) and the positions after a random move (chance nodes); training also reads
each decision's position before its roll, with the decision's labels (an unbiased sample
of the chance node's value), since a search's leaves are chance nodes as often as not.
The loss is the squared error of the network's tanh output. One game in ten (seed
divisible by 10) is held out; the held-out figures are the loss and the Pearson
correlation with the search's value on the positions it did not prove (``value_corr``),
beside which ``eval`` puts the game's C heuristic's, and the correlations of the
network, the heuristic and the search itself with the games' results.

Hex's labels (``descent labels generate``, rave's search values) train its ``nnue``
preset the same way; ``--symmetries`` adds each training position under the game's
colour-keeping symmetries (Hex: the 180-degree rotation)::

    descent values train data/labels/hex11 data/labels/hex11-cap --run-dir RUN \
        --preset nnue --symmetries

``--preset hybrid`` fits a correction to the C heuristic (nets/arch.py's ``base``): the
examples then carry the heuristic's value of each position beside its planes.

``--init MODEL`` starts a run from a network of the same preset: fitted first on many
positions valued by a shallow search (cheap: ``--sims 4000`` plays a game in a fraction
of a second), then refined on the deep labels.

A run keeps its state in its folder (``config.json``, ``checkpoint.pt`` with the
optimiser, ``metrics.jsonl``, the best held-out model as ``model.dnet``) and resumes from
it with more epochs, on whatever the labels folders then hold (a new held-out set chooses
its best model anew).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.stats import correlation
from descent.train.labels import Labels, held_out, load, rave_value_arguments


@dataclass
class ValueExamples:
    """Positions as encoded planes (0/1 bytes), with the search's value and the game's
    result (both player 0's view), the player to move and whether the search proved its
    value."""

    x: npt.NDArray[np.uint8]
    value: npt.NDArray[np.float32]
    outcome: npt.NDArray[np.float32]
    mover: npt.NDArray[np.int8]
    proven: npt.NDArray[np.bool_]
    base: npt.NDArray[np.float32] | None = None   # the C heuristic, for the side to move

    def __len__(self) -> int:
        return int(self.value.shape[0])

    def target(self, outcome_weight: float) -> npt.NDArray[np.float32]:
        """The training target for the side to move."""
        mixed = (1.0 - outcome_weight) * self.value + outcome_weight * self.outcome
        out: npt.NDArray[np.float32] = np.where(self.mover == 0, mixed, -mixed).astype(
            np.float32)
        return out


def _replay(labels: Labels, positions: npt.NDArray[np.int64],
            pre_roll: bool = False) -> Iterator[tuple[int, Any]]:
    """(position, state) for each of ``positions``, each game replayed once in order;
    with ``pre_roll``, a position reached by a die roll is also given as the chance node
    before that roll, just before the position itself."""
    from descent.search_cy.games.registry import make_game

    a = labels.arrays
    game = make_game(labels.game)
    order = sorted(positions.tolist(), key=lambda p: (int(a["pos_game"][p]),
                                                       int(a["pos_ply"][p])))
    current, state, done = -1, None, 0
    for p in order:
        g, ply, extra = int(a["pos_game"][p]), int(a["pos_ply"][p]), int(a["pos_extra"][p])
        if g != current:
            current, state, done = g, game.new_initial_state(), 0
        assert state is not None
        moves = a["game_moves"][int(a["game_offset"][g]):int(a["game_offset"][g + 1])]
        while done < ply:
            if pre_roll and extra < 0 and done == ply - 1 and state.is_chance_node():
                yield p, state
            state.apply_action(int(moves[done]))
            done += 1
        if extra >= 0:
            state.apply_action(extra)
            yield p, state
            state.undo()
        else:
            yield p, state


def _results(labels: Labels, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """Player 0's result of each position's game: 1 a win, -1 a loss, 0 a draw
    (labels.DRAW)."""
    winner = labels.arrays["game_winner"][labels.arrays["pos_game"][positions]]
    out: npt.NDArray[np.float32] = np.where(
        winner == 0, 1.0, np.where(winner == 1, -1.0, 0.0)).astype(np.float32)
    return out


def examples(labels: Labels, positions: npt.NDArray[np.int64],
             pre_roll: bool = False, base: bool = False,
             symmetries: bool = False) -> ValueExamples:
    """The ``positions`` of ``labels`` as examples. With ``pre_roll``, each position a
    die roll led to is also given as the chance node before the roll, with the same
    labels: the search's value after a fair roll is an unbiased sample of the value
    before it, and a search values chance nodes at its leaves too. With ``base``, each
    also carries the game's C heuristic's value (what a network with a base corrects).
    With ``symmetries``, each is also given under every symmetry of the game that keeps
    the colours (Hex: the 180-degree rotation), with the same labels."""
    from descent.nets.encoding import TO_MOVE_PLANE
    from descent.search_cy.eval.heuristics import heuristic_for
    from descent.search_cy.games.registry import make_game

    a = labels.arrays
    rows: list[int] = []
    planes: list[npt.NDArray[np.uint8]] = []
    heuristic: list[float] = []
    game = make_game(labels.game)
    plane = TO_MOVE_PLANE[game.name]
    h = heuristic_for(game.name) if base else None
    for p, state in _replay(labels, positions, pre_roll):
        kept = [0] + ([k for k in range(1, state.num_symmetries)
                       if not state.symmetry_swaps_colours(k)] if symmetries else [])
        # one heuristic value a position: the symmetries kept leave it as it is
        value = float(h.evaluate([state])[0]) if h is not None else 0.0
        for k in kept:
            rows.append(p)
            planes.append((np.asarray(state.encode(symmetry=k), np.float32) > 0.5)
                          .astype(np.uint8))
            if h is not None:
                heuristic.append(value)
    index = np.array(rows, dtype=np.int64)
    x = np.stack(planes) if planes else np.zeros((0,), np.uint8)
    # the side the encoding says is to move (to roll at a chance node): the model's view
    mover = (x[:, plane, 0, 0] == 0).astype(np.int8) if planes else np.zeros(0, np.int8)
    outcome = _results(labels, index)
    # the heuristic speaks for player 0; the network with a base reads it for the mover
    based = (np.where(mover == 0, 1.0, -1.0) * np.asarray(heuristic)).astype(np.float32) \
        if base else None
    return ValueExamples(x=x, value=a["value"][index].astype(np.float32),
                         outcome=outcome, mover=mover, proven=a["proven"][index], base=based)


@dataclass
class ValueConfig:
    """A value run's settings (``config.json``; a resumed run keeps its own)."""

    preset: str = "nnue"
    batch: int = 512
    lr: float = 1e-3
    weight_decay: float = 1e-5
    outcome: float = 0.0        # weight of the game's result in the target (lambda)
    pre_roll: bool = True       # the chance node before each roll, with the roll's labels
    seed: int = 1
    init: str = ""              # a model file of the same architecture to start from
    max_games: int = 0          # train on the first this many training games (0: all)
    symmetries: bool = False    # also every colour-keeping symmetry of each training position


def predict(net: Any, data: ValueExamples, batch: int = 4096) -> npt.NDArray[np.float32]:
    """The network's outputs (its view: the side to move) on every example, computed on
    the network's device."""
    import torch

    device = next(net.parameters()).device
    out = np.empty(len(data), np.float32)
    net.eval()
    with torch.no_grad():
        for s in range(0, len(data), batch):
            rows = slice(s, s + batch)
            out[s:s + batch] = net(*_inputs(data, rows, device)).cpu().numpy()
    return out


def _inputs(data: ValueExamples, rows: Any, device: Any = "cpu") -> tuple[Any, ...]:
    """The network's inputs for ``rows`` of ``data`` on ``device``: the planes, and the
    base's values where the examples carry them."""
    import torch

    # the planes travel as bytes: a quarter of the floats' traffic to a GPU
    xb = torch.from_numpy(data.x[rows]).to(device).float()
    if data.base is None:
        return (xb,)
    return xb, torch.from_numpy(data.base[rows]).to(device)


def evaluate(net: Any, data: ValueExamples, outcome_weight: float) -> dict[str, float]:
    """Held-out loss against the target, and the correlation with the search's value (the
    side to move's view) on the positions it did not prove."""
    y = predict(net, data)
    t = data.target(outcome_weight)
    search = data.target(0.0)
    u = ~data.proven
    return {"loss": float(np.mean((y - t) ** 2)), "value_corr": correlation(y[u], search[u])}


def search_speed(model_path: Path, labels_folder: Path, thresholds: list[int],
                 seconds: float, positions: int = 12, seed: int = 5,
                 value_mix: float = 0.0, value_fade: float = 0.0,
                 value_visits: int = 8) -> dict[str, float]:
    """``rave``'s simulations a second on positions of a Hex labels folder
    (descent/train/policy.py's ``rave_rates``: without a network, the reference measured
    in the same run) with the value network in C at each of ``thresholds`` visits
    (``RaveSearch.value_at``, ``value_visits`` virtual visits), and with ``value_mix`` > 0
    (faded by ``value_fade``) at the end of every simulation's walk too."""
    from descent.nets.evaluator import network_evaluator
    from descent.search_cy.eval.evaluator import HeuristicEvaluator
    from descent.search_cy.games.registry import make_game
    from descent.train.labels import labels_game
    from descent.train.policy import rave_rates

    evaluator = network_evaluator(model_path, make_game(labels_game(labels_folder))
                                  .new_initial_state())
    if not isinstance(evaluator, HeuristicEvaluator):
        raise ValueError(f"{model_path}: rave reads a network in C only (an mlp or an nnue)")

    def at(visits: int) -> Callable[[Any, Any], None]:
        def setup(impl: Any, state: Any) -> None:
            impl.value, impl.value_at = evaluator, visits
            impl.value_visits, impl.value_mix = value_visits, value_mix
            impl.value_fade = value_fade
        return setup

    return rave_rates(labels_folder, {f"value_at={t}": at(t) for t in thresholds}, seconds,
                      positions, seed)


def train(folders: list[Path], run_dir: Path, epochs: int, *,
          config: ValueConfig | None = None, device: str = "cpu",
          log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Trains (or resumes) the run in ``run_dir`` until it has ``epochs`` epochs on the
    labels of ``folders``, on ``device`` (cpu, cuda or auto: a GPU where torch sees one);
    returns the last epoch's metrics. The best held-out model so far is
    ``run_dir/model.dnet``; the checkpoint is the same on any device, so a run started on
    a GPU resumes on a CPU."""
    import torch

    from descent.nets.arch import preset
    from descent.nets.files import atomic_write
    from descent.nets.modelfile import Provenance, ValueSpec, load_model, make_model, save_model
    from descent.nets.models import module_from_weights, weights_from_module
    from descent.search_cy.games.registry import make_game
    from descent.train.checkpoint import run_config
    from descent.train.network import pick_device

    say = log or (lambda text: None)
    device = pick_device(device, "device")
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg = run_config(run_dir, ValueConfig, config)
    labels = load(*folders)
    game = make_game(labels.game)
    test_mask = held_out(labels)
    positions = np.arange(labels.positions)
    train_mask = ~test_mask
    if cfg.max_games:
        # the first games in the folders' order: a learning curve's smaller samples
        games = np.unique(labels.arrays["pos_game"][train_mask])[:cfg.max_games]
        train_mask &= np.isin(labels.arrays["pos_game"], games)
    arch = preset(game.name, cfg.preset)
    train_set = examples(labels, positions[train_mask], cfg.pre_roll, bool(arch.base),
                         cfg.symmetries)
    test_set = examples(labels, positions[test_mask], base=bool(arch.base))
    torch.manual_seed(cfg.seed)
    start = None
    if cfg.init:
        # a curriculum: a network fitted on many cheap labels, refined on the deep ones
        start = load_model(cfg.init, game)
        if (start.arch.family, start.arch.fc, start.arch.base) != (arch.family, arch.fc,
                                                                    arch.base):
            raise ValueError(f"{cfg.init}: a {start.arch.family} {list(start.arch.fc)}"
                             f"{' on the heuristic' if start.arch.base else ''}, not the "
                             f"{cfg.preset} preset's {arch.family} {list(arch.fc)}"
                             f"{' on the heuristic' if arch.base else ''}")
    net: Any = module_from_weights(arch, tuple(train_set.x.shape[1:]),
                                   start.weights if start else None, seed=cfg.seed).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    # the step size falls to a third after each epoch that did not lower the held-out loss
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.3, patience=0)
    ckpt = run_dir / "checkpoint.pt"
    epoch, best = 0, math.inf
    if ckpt.exists():
        state = torch.load(ckpt, weights_only=True, map_location=device)
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        epoch, best = int(state["epoch"]), float(state["best"])
        if int(state["test_positions"]) != len(test_set):
            best = math.inf       # other labels, another held-out set: a best anew
    target = torch.from_numpy(train_set.target(cfg.outcome)).to(device)
    say(f"{len(train_set)} training and {len(test_set)} held-out positions "
        f"({labels.arrays['game_seed'].size} games); epoch {epoch} of {epochs}")
    metrics: dict[str, Any] = {}
    while epoch < epochs:
        started = time.monotonic()
        order = np.random.default_rng(cfg.seed * 1000 + epoch).permutation(len(train_set))
        net.train()
        total = 0.0
        for s in range(0, len(order), cfg.batch):
            idx = order[s:s + cfg.batch]
            loss: Any = torch.mean((net(*_inputs(train_set, idx, device))
                                    - target[torch.from_numpy(idx).to(device)]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        epoch += 1
        held = evaluate(net, test_set, cfg.outcome)
        sched.step(held["loss"])
        metrics = {"epoch": epoch, "lr": opt.param_groups[0]["lr"],
                   "train_loss": total / len(train_set), "test_loss": held["loss"],
                   "test_value_corr": held["value_corr"],
                   "train_positions": len(train_set), "test_positions": len(test_set),
                   "seconds": time.monotonic() - started}
        if held["loss"] < best:
            best = held["loss"]
            model = make_model(game, arch, weights_from_module(net),
                               value=ValueSpec(view="side_to_move"),
                               training=Provenance(steps=epoch, games=int(
                                   labels.arrays["game_seed"].size), seed=cfg.seed,
                                   note=f"values on {', '.join(f.name for f in folders)}: "
                                        f"held-out value corr {held['value_corr']:.4f}"))
            save_model(model, run_dir / "model.dnet")
        state = {"net": net.state_dict(), "opt": opt.state_dict(),
                 "sched": sched.state_dict(), "epoch": epoch, "best": best,
                 "test_positions": len(test_set)}
        with atomic_write(ckpt, "wb") as f:
            torch.save(state, f)
        with open(run_dir / "metrics.jsonl", "a") as f:
            f.write(json.dumps(metrics) + "\n")
        say(f"epoch {epoch}: train loss {metrics['train_loss']:.4f}, held-out loss "
            f"{held['loss']:.4f}, value corr {held['value_corr']:.4f} "
            f"({metrics['seconds']:.0f} s)")
    return metrics


def accuracy(model_path: Path | None, folders: list[Path]) -> dict[str, float]:
    """On the held-out positions the search did not prove: the Pearson correlation with
    the search's value (player 0's view) of the game's C heuristic and, when given, of
    the model (through its native or torch evaluator, as a search would read it); and
    each one's correlation with the game's result (``*_result``), the search's own
    included: how much of the result a value foresees, which bounds what an evaluation
    fitted to the search's values can know."""
    from descent.nets.evaluator import network_evaluator
    from descent.search_cy.eval.heuristics import heuristic_for

    labels = load(*folders)
    a = labels.arrays
    positions = np.flatnonzero(held_out(labels) & ~a["proven"])
    search = a["value"][positions]
    result = _results(labels, positions)
    row = {int(p): i for i, p in enumerate(positions.tolist())}
    heuristic = np.zeros(len(positions))
    network = np.zeros(len(positions))
    evaluator = None
    for p, state in _replay(labels, positions):
        if evaluator is None:
            h = heuristic_for(state)
            evaluator = network_evaluator(model_path, state) if model_path else None
        heuristic[row[p]] = h.evaluate([state])[0]
        if evaluator is not None:
            network[row[p]] = evaluator.evaluate([state])[0]
    out = {"positions": float(len(positions)), "heuristic": correlation(heuristic, search),
           "search_result": correlation(search, result),
           "heuristic_result": correlation(heuristic, result)}
    if model_path is not None:
        out["network"] = correlation(network, search)
        out["network_result"] = correlation(network, result)
    return out


def learning_curve(folders: list[Path], games: list[int], work: Path, epochs: int, *,
                   config: ValueConfig | None = None,
                   log: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Held-out figures of fresh runs on the first ``games`` training games each (one run
    folder per sample under ``work``), on one held-out set: what more labels buy."""
    out = []
    for n in games:
        cfg = replace(config or ValueConfig(), max_games=n)
        train(folders, work / f"games-{n}", epochs, config=cfg)
        rows = [json.loads(x) for x in (work / f"games-{n}" / "metrics.jsonl").read_text()
                .splitlines()]
        best = min(rows, key=lambda m: m["test_loss"])
        out.append({"games": n, "train_positions": best["train_positions"],
                    "epoch": best["epoch"], "test_loss": best["test_loss"],
                    "test_value_corr": best["test_value_corr"]})
        if log:
            log(json.dumps(out[-1]))
    return out


def configure(p: argparse.ArgumentParser) -> None:
    from descent.train.policy import bench_arguments

    sub = p.add_subparsers(dest="values_command", metavar="ACTION", required=True)
    t = sub.add_parser("train", help="fit (or resume) a value network on labels folders")
    t.add_argument("folders", type=Path, nargs="+", help="labels folders (one game)")
    t.add_argument("--run-dir", type=Path, required=True)
    t.add_argument("--epochs", type=int, default=20, help="train until this many epochs")
    t.add_argument("--preset", default="nnue", help="the game's value preset (nets/arch.py)")
    t.add_argument("--outcome", type=float, default=0.0,
                   help="weight of the game's result in the target (0: the search's value)")
    t.add_argument("--no-pre-roll", dest="pre_roll", action="store_false",
                   help="train on the labelled positions only, not also on the chance node "
                        "before each roll")
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--weight-decay", type=float, default=ValueConfig.weight_decay,
                   help="AdamW's weight decay")
    t.add_argument("--batch", type=int, default=512)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--init", default="",
                   help="start from this model file's weights (same preset): a network fitted "
                        "on cheaper labels, refined on these")
    t.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    t.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"),
                   help="where the network trains (auto: a GPU where torch sees one)")
    t.add_argument("--max-games", type=int, default=0,
                   help="train on the first this many training games (0: all)")
    t.add_argument("--symmetries", action="store_true",
                   help="train also on every colour-keeping symmetry of each position (Hex: "
                        "the 180-degree rotation)")
    c = sub.add_parser("curve", help="held-out figures of fresh runs on more and more games")
    c.add_argument("folders", type=Path, nargs="+")
    c.add_argument("--games", required=True, help="sample sizes, e.g. 100,200,400")
    c.add_argument("--work", type=Path, required=True, help="a folder for the runs")
    c.add_argument("--epochs", type=int, default=15)
    c.add_argument("--preset", default="nnue")
    c.add_argument("--threads", type=int, default=0)
    e = sub.add_parser("eval", help="held-out correlation with the labels' values and the "
                                    "games' results, beside the C heuristic's")
    e.add_argument("model", type=Path, help="a value model file ('none': the heuristic only)")
    e.add_argument("folders", type=Path, nargs="+")
    b = sub.add_parser("bench", help="rave's simulations a second on Hex labels' positions "
                                     "with the network in C, against none in the same run")
    bench_arguments(b, "value_at", "20")
    rave_value_arguments(b)


def run(args: argparse.Namespace) -> int:
    if args.values_command == "bench":
        from descent.train.policy import print_rates

        rates = search_speed(args.model, args.labels, [int(a) for a in args.at.split(",")],
                             args.time, args.positions, value_mix=args.value_mix,
                             value_fade=args.value_fade, value_visits=args.value_visits)
        print_rates(rates)
        return 0
    if args.values_command == "curve":
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        learning_curve(args.folders, [int(x) for x in args.games.split(",")], args.work,
                       args.epochs, config=ValueConfig(preset=args.preset),
                       log=lambda text: print(text, flush=True))
        return 0
    if args.values_command == "train":
        if not 0.0 <= args.outcome <= 1.0:
            raise ValueError(f"--outcome {args.outcome}: a weight from 0 to 1")
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        cfg = ValueConfig(preset=args.preset, batch=args.batch, lr=args.lr,
                          weight_decay=args.weight_decay, outcome=args.outcome,
                          pre_roll=args.pre_roll, seed=args.seed, init=args.init,
                          max_games=args.max_games, symmetries=args.symmetries)
        train(args.folders, args.run_dir, args.epochs, config=cfg, device=args.device,
              log=lambda text: print(text, flush=True))
        return 0
    model = None if str(args.model) == "none" else args.model
    result = accuracy(model, args.folders)
    print(json.dumps(result))
    return 0
