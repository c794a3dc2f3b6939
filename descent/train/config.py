"""The training configuration: one typed, validated object read from TOML.

A run's ``config.toml`` (written into the run directory at the start, read back by
``--resume``) has the top-level keys ``game`` and ``seed`` and one table per section
below; every key is optional and an unknown key is an error naming it::

    game = "hex(size=4)"
    seed = 1

    [network]
    preset = "tiny"              # nets.arch preset: tiny | fast | cpu | paper

    [selfplay]
    search = "descent"
    iterations = 100             # per-move budget (or seconds = 0.5)
    heuristic = "depth_add"

    [run]
    max_iterations = 200
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from descent.search_cy.search.api import CHANCE_SAMPLING
from descent.train.heuristics import ALL_KINDS

LEARNING_MODES = ("tree", "root", "terminal", "chance")
STOCHASTIC_MODES = ("expectiminimax", "determinization")
SELECTIONS = ("ordinal", "epsilon_greedy", "softmax", "best")
LEARNING_SEARCHES = ("descent", "ubfm", "ubfms", "mcts", "expectiminimax")
TREE_SEARCHES = ("descent", "ubfm", "ubfms", "mcts")
OPPONENTS = ("heuristic", "previous", "random")
VIEWS = ("player0", "side_to_move")


@dataclass(frozen=True)
class NetworkConfig:
    preset: str = "tiny"          # nets.arch preset: tiny | fast | mlp | mlp_wide | cpu | paper
    view: str = "player0"         # the output's view: player0 | side_to_move
    init_seed: int = -1           # seed of the initial weights (-1: the run's seed)
    init_model: str = ""          # initial weights from a model file (e.g. a --refit)


@dataclass(frozen=True)
class SelfPlayConfig:
    search: str = "descent"       # learning search: descent | ubfm | ubfms | mcts | expectiminimax
    iterations: int = 100         # per-move budget: search iterations (used when seconds = 0)
    seconds: float = 0.0          # per-move budget in seconds (> 0: replaces iterations)
    nodes: int = 0                # optional cap on states visited per move (0: none)
    heuristic: str = "gain"       # reinforcement heuristic (train.heuristics)
    max_plies: int = 0            # P of the depth heuristics (0: the game's default)
    completion: bool = True       # completion in the learning search
    resolution_stop: bool = True  # stop the search once the root is solved
    hash_mb: int = 32             # search table memory, MiB
    selection: str = "ordinal"    # ordinal | epsilon_greedy | softmax | best
    eps_start: float = 0.0        # exploration parameter at the start of the annealing
    eps_end: float = 1.0          # ... and at its end (ordinal: 1 = always the best move)
    anneal_iterations: int = 0    # annealing horizon in iterations (0: run.max_iterations,
    #                               else run.hours of training time, else 1000 iterations)
    temperature: float = 1.0      # softmax temperature (values normalised to [-1, 1])
    completed: bool = True        # completed selection: take resolved wins, avoid losses
    learning: str = "tree"        # tree | root | terminal | chance (dice games: the roll
    #                               before each move searched as a root, expectiminimax)
    outcome_weight: float = 0.0   # root and chance learning: a label is this share of the
    #                               game's outcome plus the rest of the search's value (a
    #                               resolved value is kept as it is)
    terminals: bool = True        # tree learning: include the terminal states reached
    stochastic: str = "expectiminimax"  # expectiminimax | determinization (dice games)
    chance_sampling: str = "all"  # the learning search's chance nodes: all (the stochastic
    #                               paper: every outcome by probability) | unresolved
    games_per_iteration: int = 1  # self-play games before each update
    max_pairs_per_search: int = 1_000_000  # cap on the rows one search contributes
    bootstrap_games: int = 0      # warm start: the first N games search with the game's C
    #                               heuristic as leaf evaluator (0: from zero knowledge)
    workers: int = 0              # processes playing an iteration's games side by side,
    #                               each game with its own seeded generator, so any N >= 1
    #                               gives the same run (0: in the trainer's process)
    backend: str = "auto"         # the workers' network backend: auto (the native C
    #                               evaluator for an mlp, else onnxruntime) | onnxruntime
    #                               | torch (the only one with device = cuda)
    device: str = "cpu"           # the workers' device: cpu | cuda (one context each)
    batch_games: int = 1          # games a worker plays at once, their network calls
    #                               gathered into one backend call (batched self-play;
    #                               the games are the same as one at a time)


@dataclass(frozen=True)
class DataConfig:
    symmetries: bool = True       # augment with every symmetry of the game
    replay_games: int = 100       # mu: the memory keeps the data of the last mu games
    replay_pairs: int = 2_000_000  # ... and at most this many pairs (0: no cap)
    replay_rate: float = 0.1      # sigma: fraction of the older memory added to each update
    pretrain_games: int = 0       # random games whose terminal states pre-initialise the net
    pretrain_epochs: int = 20     # epochs over that pre-initialisation set
    init_memory: str = ""         # a run directory whose replay memory this run starts with


@dataclass(frozen=True)
class UpdateConfig:
    lr: float = 1e-3              # Adam learning rate
    weight_decay: float = 1e-4    # L2 regularisation (Adam's coupled weight decay)
    batch_size: int = 256         # minibatch size B
    epochs: int = 1               # passes over each update's training set
    device: str = "auto"          # training device: auto | cpu | cuda
    threads: int = 1              # torch CPU threads, process-wide (0: torch's default). 1
    #                               by default: self-play runs batches of a few positions,
    #                               where a second thread only adds synchronisation (and on
    #                               a busy 2-core machine costs 10-50x)


@dataclass(frozen=True)
class EvalConfig:
    every: int = 10               # evaluate every N iterations (0: only at the end)
    games: int = 20               # games per opponent (pairs with colours reversed)
    opponents: tuple[str, ...] = ("heuristic", "previous")  # heuristic | previous | random
    search: str = ""              # play search ("": ubfms, expectiminimax for dice games)
    nodes: int = 2000             # per-move budget: states visited (deterministic)
    seconds: float = 0.0          # per-move budget in seconds (> 0: replaces nodes)
    opening_plies: int = -1       # random opening plies per pair (-1: 2 deterministic, 0 dice)
    seed: int = 20260401          # the pairs' seeds (same at every evaluation: comparable)
    backend: str = "torch"        # inference backend of the network players
    device: str = "cpu"           # their device: cpu | cuda | auto
    hash_mb: int = 32


@dataclass(frozen=True)
class RunConfig:
    max_iterations: int = 0       # stop after this many iterations (0: no limit)
    hours: float = 0.0            # stop after this much training time (0: no limit)
    checkpoint_every: int = 1     # checkpoint every N iterations
    plot_every: int = 10          # redraw the PNG plots every N iterations
    progress: bool = True         # live progress bar on stderr


@dataclass(frozen=True)
class TrainConfig:
    game: str = "hex(size=4)"
    seed: int = 0
    network: NetworkConfig = field(default_factory=NetworkConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    data: DataConfig = field(default_factory=DataConfig)
    update: UpdateConfig = field(default_factory=UpdateConfig)
    evaluation: EvalConfig = field(default_factory=EvalConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def __post_init__(self) -> None:
        validate(self)

    def with_overrides(self, **changes: Any) -> TrainConfig:
        """A copy with top-level fields or ``section__key`` fields replaced."""
        top: dict[str, Any] = {}
        sections: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            if "__" in key:
                section, name = key.split("__", 1)
                sections.setdefault(section, {})[name] = value
            else:
                top[key] = value
        for section, values in sections.items():
            top[section] = replace(getattr(self, section), **values)
        return replace(self, **top)


SECTIONS: dict[str, str] = {"network": "network", "selfplay": "selfplay", "data": "data",
                            "update": "update", "eval": "evaluation", "run": "run"}


def _fail(msg: str) -> None:
    raise ValueError(f"training config: {msg}")


def validate(cfg: TrainConfig) -> None:
    sp, d, u, e, r = cfg.selfplay, cfg.data, cfg.update, cfg.evaluation, cfg.run
    if cfg.network.view not in VIEWS:
        _fail(f"network.view must be one of {', '.join(VIEWS)}")
    if sp.search not in LEARNING_SEARCHES:
        _fail(f"selfplay.search must be one of {', '.join(LEARNING_SEARCHES)}")
    if sp.learning not in LEARNING_MODES:
        _fail(f"selfplay.learning must be one of {', '.join(LEARNING_MODES)}")
    if sp.learning == "tree" and sp.search not in TREE_SEARCHES:
        _fail(f"tree learning needs a tree search ({', '.join(TREE_SEARCHES)}), "
              f"not {sp.search}")
    if sp.learning == "chance" and sp.search != "expectiminimax":
        _fail("chance learning searches chance roots: selfplay.search = \"expectiminimax\"")
    if not 0.0 <= sp.outcome_weight <= 1.0:
        _fail("selfplay.outcome_weight must be in [0, 1]")
    if sp.outcome_weight and sp.learning not in ("root", "chance"):
        _fail("selfplay.outcome_weight mixes the outcome into root or chance labels; "
              f"{sp.learning} learning has no search label to mix")
    if sp.heuristic not in ALL_KINDS:
        _fail(f"selfplay.heuristic must be one of {', '.join(ALL_KINDS)}")
    if sp.stochastic not in STOCHASTIC_MODES:
        _fail(f"selfplay.stochastic must be one of {', '.join(STOCHASTIC_MODES)}")
    if sp.chance_sampling not in CHANCE_SAMPLING:
        _fail(f"selfplay.chance_sampling must be one of {', '.join(CHANCE_SAMPLING)}")
    if sp.stochastic == "determinization" and sp.search not in TREE_SEARCHES:
        _fail(f"determinization needs a tree search ({', '.join(TREE_SEARCHES)}), "
              f"not {sp.search}")
    if sp.selection not in SELECTIONS:
        _fail(f"selfplay.selection must be one of {', '.join(SELECTIONS)}")
    if sp.iterations < 1 and sp.seconds <= 0 and sp.nodes < 1:
        _fail("selfplay needs a budget: iterations >= 1, seconds > 0 or nodes >= 1")
    for name in ("eps_start", "eps_end"):
        value = getattr(sp, name)
        if not 0.0 <= value <= 1.0:
            _fail(f"selfplay.{name} must be in [0, 1]")
    if not (sp.temperature > 0 and math.isfinite(sp.temperature)):
        _fail("selfplay.temperature must be > 0")
    if sp.workers < 0:
        _fail("selfplay.workers must be >= 0 (0: games in the trainer's process)")
    if sp.batch_games < 1:
        _fail("selfplay.batch_games must be >= 1")
    if sp.batch_games > 1 and not sp.workers:
        _fail("selfplay.batch_games plays a worker's games together: it needs "
              "selfplay.workers >= 1 (each game then draws from its own generator)")
    if sp.backend not in ("auto", "onnxruntime", "torch") or sp.device not in ("cpu", "cuda"):
        _fail("selfplay.backend must be auto, onnxruntime or torch, selfplay.device cpu "
              "or cuda")
    if sp.device == "cuda" and sp.backend != "torch":
        _fail("selfplay.device = cuda needs selfplay.backend = torch")
    if (sp.backend, sp.device) != ("auto", "cpu") and not sp.workers:
        _fail("selfplay.backend and device choose the workers' backend: they need "
              "selfplay.workers >= 1 (the trainer's own games use its learner's evaluator)")
    if sp.games_per_iteration < 1 or sp.hash_mb < 1 or sp.max_pairs_per_search < 1:
        _fail("selfplay.games_per_iteration, hash_mb and max_pairs_per_search must be >= 1")
    if sp.bootstrap_games < 0:
        _fail("selfplay.bootstrap_games must be >= 0")
    if sp.bootstrap_games and sp.heuristic not in ("gain", "presence", "score"):
        _fail("selfplay.bootstrap_games needs targets in [-1, 1] like the C heuristics' "
              "values: heuristic gain, presence or score")
    if sp.max_plies < 0 or sp.anneal_iterations < 0 or sp.seconds < 0 or sp.nodes < 0:
        _fail("selfplay.max_plies, anneal_iterations, seconds and nodes must be >= 0")
    if d.replay_games < 1 or d.replay_pairs < 0 or not 0.0 <= d.replay_rate <= 1.0:
        _fail("data.replay_games must be >= 1 and data.replay_rate in [0, 1]")
    if d.pretrain_games < 0 or d.pretrain_epochs < 0:
        _fail("data.pretrain_games and pretrain_epochs must be >= 0")
    if u.lr <= 0 or u.weight_decay < 0 or u.batch_size < 1 or u.epochs < 1 or u.threads < 0:
        _fail("update: lr > 0, weight_decay >= 0, batch_size >= 1, epochs >= 1, threads >= 0")
    if u.device not in ("auto", "cpu", "cuda"):
        _fail("update.device must be auto, cpu or cuda")
    if e.every < 0 or e.games < 0 or e.games % 2:
        _fail("eval.every must be >= 0 and eval.games an even number >= 0 (colour pairs)")
    for opp in e.opponents:
        if opp not in OPPONENTS:
            _fail(f"eval.opponents: unknown opponent {opp!r} ({', '.join(OPPONENTS)})")
    if e.search and e.search not in LEARNING_SEARCHES:
        _fail(f"eval.search must be one of {', '.join(LEARNING_SEARCHES)}")
    if e.device not in ("auto", "cpu", "cuda"):
        _fail("eval.device must be auto, cpu or cuda")
    if e.nodes < 1 and e.seconds <= 0:
        _fail("eval needs a budget: nodes >= 1 or seconds > 0")
    if r.max_iterations < 0 or r.hours < 0 or r.checkpoint_every < 1 or r.plot_every < 1:
        _fail("run: max_iterations, hours >= 0; checkpoint_every, plot_every >= 1")


def _coerce(section: str, name: str, current: Any, raw: Any) -> Any:
    where = f"{section}.{name}" if section else name
    if isinstance(current, bool):
        if not isinstance(raw, bool):
            _fail(f"{where} must be true or false, not {raw!r}")
        return raw
    if isinstance(current, int):
        if isinstance(raw, bool) or not isinstance(raw, int):
            _fail(f"{where} must be an integer, not {raw!r}")
        return raw
    if isinstance(current, float):
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            _fail(f"{where} must be a number, not {raw!r}")
        return float(raw)
    if isinstance(current, tuple):
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            _fail(f"{where} must be a list of strings, not {raw!r}")
        return tuple(raw)
    if not isinstance(raw, str):
        _fail(f"{where} must be a string, not {raw!r}")
    return raw


def from_mapping(data: Mapping[str, Any], base: TrainConfig | None = None) -> TrainConfig:
    """A config from parsed TOML (unknown keys and wrong types are errors)."""
    cfg = base or TrainConfig()
    top: dict[str, Any] = {}
    for key, raw in data.items():
        if key in ("game", "seed"):
            top[key] = _coerce("", key, getattr(cfg, key), raw)
        elif key in SECTIONS:
            if not isinstance(raw, Mapping):
                _fail(f"[{key}] must be a table")
            attr = SECTIONS[key]
            section = getattr(cfg, attr)
            known = {f.name for f in fields(section)}
            values: dict[str, Any] = {}
            for name, value in raw.items():
                if name not in known:
                    _fail(f"unknown key {key}.{name} (known: {', '.join(sorted(known))})")
                values[name] = _coerce(key, name, getattr(section, name), value)
            top[attr] = replace(section, **values)
        else:
            _fail(f"unknown key {key!r} (known: game, seed, "
                  f"{', '.join('[' + s + ']' for s in SECTIONS)})")
    return replace(cfg, **top)


def load_config(path: str | Path, base: TrainConfig | None = None) -> TrainConfig:
    """Reads a TOML training config (ValueError naming the problem)."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"training config {p} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"training config {p}: {exc}") from None
    return from_mapping(data, base)


def config_from_toml(text: str) -> TrainConfig:
    """A config from TOML text (``to_toml``'s output; ValueError naming the problem)."""
    try:
        return from_mapping(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"training config: {exc}") from None


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "0.0"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def to_toml(cfg: TrainConfig) -> str:
    """The complete config as TOML (every key, defaults included): reads back equal."""
    lines = [f"game = {_toml_value(cfg.game)}", f"seed = {_toml_value(cfg.seed)}"]
    for key, attr in SECTIONS.items():
        section = getattr(cfg, attr)
        lines.append("")
        lines.append(f"[{key}]")
        for f in fields(section):
            lines.append(f"{f.name} = {_toml_value(getattr(section, f.name))}")
    return "\n".join(lines) + "\n"


def to_dict(cfg: TrainConfig) -> dict[str, Any]:
    """The config as plain JSON-able data (TOML section names)."""
    out: dict[str, Any] = {"game": cfg.game, "seed": cfg.seed}
    for key, attr in SECTIONS.items():
        section = getattr(cfg, attr)
        out[key] = {f.name: (list(v) if isinstance(v := getattr(section, f.name), tuple)
                             else v) for f in fields(section)}
    return out
