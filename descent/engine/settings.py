"""One typed settings object for the engine process, merged from (lowest first) defaults,
a TOML file, ``DESCENT_*`` environment variables and command-line flags."""

from __future__ import annotations

import os
import tomllib
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

DEFAULT_GAME = "hex(size=11)"


@dataclass(frozen=True)
class Settings:
    """Every knob of ``descent play``; each field's comment is its --help text."""

    game: str = field(default=DEFAULT_GAME, metadata={
        "help": "game spec: hex(size=11,swap=false), einstein(setup=random), dicechess(...)"})
    protocol: str = field(default="", metadata={
        "help": "gtp | ewn | ntu | uci (default: the game's own protocol)"})
    transport: str = field(default="stdio", metadata={"help": "stdio | mqtt"})
    broker: str = field(default="127.0.0.1:1883", metadata={"help": "MQTT broker HOST:PORT"})
    engine_id: str = field(default="", metadata={
        "help": "MQTT engine id (default: host name and process id)"})
    topic_prefix: str = field(default="descent", metadata={"help": "MQTT topic prefix"})
    mqtt_username: str = field(default="", metadata={"help": "MQTT user name"})
    mqtt_password: str = field(default="", metadata={"help": "MQTT password"})
    mqtt_tls: bool = field(default=False, metadata={"help": "connect to the broker over TLS"})
    mqtt_ca_file: str = field(default="", metadata={"help": "CA certificate file for TLS"})
    model: str = field(default="", metadata={
        "help": "value network file (default: the shipped network for the game, if any, "
                "else the heuristic evaluator)"})
    policy: str = field(default="", metadata={
        "help": "Hex move-policy network file: rave's move prior (its word multiplies the "
                "pattern prior at nodes of enough visits) and, with value heads, the "
                "best-first searches' values of an expansion's children (default: the "
                "shipped policy for the game, if any; none: neither)"})
    policy_at: int = field(default=300, metadata={
        "help": "visits of a rave node before the policy network weighs its children's prior "
                "(the root at once)"})
    policy_weight: float = field(default=1.0, metadata={
        "help": "the power of the policy network's probabilities in rave's prior (1: their "
                "product with the pattern prior; 0.5: a softer network)"})
    action_visits: int = field(default=8, metadata={
        "help": "virtual visits a rave child gets at the odds of its action value where the "
                "policy network has value heads (read in the same pass; 0: none)"})
    minimax_weight: float = field(default=0.0, metadata={
        "help": "the share of the action values' implicit minimax backups in a rave "
                "child's score where the policy network has value heads (0: none)"})
    value_visits: int = field(default=8, metadata={
        "help": "rave with a value network: the virtual visits at its odds of each child of "
                "a node it reaches enough visits (0: none; value_mix still reads it at the "
                "leaves)"})
    value_mix: float = field(default=0.0, metadata={
        "help": "rave with a value network in C (an mlp or an nnue model): the share of the "
                "network's values of the simulations' leaves in a child's score (AlphaGo's "
                "lambda; 0: none)"})
    value_fade: float = field(default=0.0, metadata={
        "help": "with value_mix: the child visits at which the leaf values' share is halved, "
                "fading as the child's playouts grow (0: the share value_mix at every child)"})
    heuristic: str = field(default="", metadata={
        "help": "the game's heuristic evaluator where no network is used (Hex: vc | "
                "two_distance; dice chess: material | features; default: the first)"})
    heuristic_weights: str = field(default="", metadata={
        "help": "weights of the heuristic evaluator, name=value,... over its defaults "
                "(what descent tune prints)"})
    backend: str = field(default="auto", metadata={
        "help": "inference backend: auto | onnxruntime | torch | native | tensorrt"})
    search: str = field(default="", metadata={
        "help": "rave | ubfms | ubfm | descent | mcts | expectiminimax (default: rave for "
                "Hex, ubfms for Hex with a network, expectiminimax for the dice games; rave "
                "plays Hex only, and reads a network as its children's virtual visits and, "
                "with value_mix, at its leaves)"})
    strength: str = field(default="max", metadata={
        "help": "playing strength (Rminimax): max, master, expert, advanced, intermediate, "
                "casual, novice, beginner, random (calibrated per game), 0..20, or theta=X"})
    hash_mb: int = field(default=256, metadata={"help": "search table memory, MiB"})
    threads: int = field(default=1, metadata={
        "help": "search threads: one shared tree (best-first searches, MCTS), Lazy SMP "
                "over one table (expectiminimax) or a tree each (rave); 1 plays "
                "deterministically by seed"})
    seed: int = field(default=0, metadata={"help": "random seed (deterministic play)"})
    resign_threshold: float = field(default=0.0, metadata={
        "help": "resign when the root value for us is below -T (0 = never resign)"})
    move_overhead_ms: int = field(default=50, metadata={
        "help": "safety margin subtracted from every move's time, ms"})
    nodes_per_second: float = field(default=0.0, metadata={
        "help": "nodes-as-time: turn time budgets into node budgets at this rate "
                "(deterministic games under a clock; 0 = off)"})
    log_level: str = field(default="warning", metadata={
        "help": "debug | info | warning | error (info: a line per move and per game event; "
                "GUIs and arbiters show every stderr line)"})
    log_file: str = field(default="", metadata={"help": "log file (default: stderr)"})

    def __post_init__(self) -> None:
        if self.hash_mb < 1:
            raise ValueError("hash_mb must be >= 1")
        if self.threads < 1:
            raise ValueError("threads must be >= 1")
        if self.policy_at < 1:
            raise ValueError("policy_at must be >= 1")
        if not 0.0 <= self.policy_weight <= 4.0:
            raise ValueError("policy_weight must be in [0, 4]")
        if not 0 <= self.action_visits <= 10_000:
            raise ValueError("action_visits must be in [0, 10000]")
        if not 0.0 <= self.minimax_weight <= 1.0:
            raise ValueError("minimax_weight must be in [0, 1]")
        if not 0 <= self.value_visits <= 10_000:
            raise ValueError("value_visits must be in [0, 10000]")
        if not 0.0 <= self.value_mix <= 1.0:
            raise ValueError("value_mix must be in [0, 1]")
        if self.value_fade < 0.0:
            raise ValueError("value_fade must be >= 0")
        if self.transport not in ("stdio", "mqtt"):
            raise ValueError("transport must be stdio or mqtt")
        if self.move_overhead_ms < 0:
            raise ValueError("move_overhead_ms must be >= 0")


def _convert(name: str, kind: Any, raw: Any) -> Any:
    target = kind if isinstance(kind, type) else {"int": int, "float": float, "bool": bool,
                                                   "str": str}[str(kind)]
    if target is bool and isinstance(raw, str):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"setting {name}: expected true/false, got {raw!r}")
    try:
        return target(raw)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"setting {name}: expected {target.__name__}, got {raw!r}") from exc


def load_settings(cli: dict[str, Any] | None = None, config_file: str | None = None,
                  environ: dict[str, str] | None = None) -> Settings:
    """Defaults < TOML file < DESCENT_<FIELD> environment variables < CLI values (None =
    not given). Unknown keys are errors, named."""
    known = {f.name: f for f in fields(Settings)}
    values: dict[str, Any] = {}
    if config_file:
        path = Path(config_file)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read config file {config_file}: {exc.strerror}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"config file {config_file}: {exc}") from exc
        data = data.get("descent", data)
        for key, raw in data.items():
            name = key.replace("-", "_")
            if name not in known:
                raise ValueError(f"config file {config_file}: unknown setting {key!r}")
            values[name] = _convert(name, known[name].type, raw)
    env = os.environ if environ is None else environ
    for name, f in known.items():
        raw = env.get(f"DESCENT_{name.upper()}")
        if raw is not None:
            values[name] = _convert(name, f.type, raw)
    for name, raw in (cli or {}).items():
        if raw is not None:
            if name not in known:
                raise ValueError(f"unknown setting {name!r}")
            values[name] = _convert(name, known[name].type, raw)
    return replace(Settings(), **values)


def settings_help() -> list[tuple[str, str, Any]]:
    """(name, help, default) of every setting, for --help and the docs."""
    out = []
    for f in fields(Settings):
        default = f.default if f.default is not MISSING else None
        out.append((f.name, str(f.metadata.get("help", "")), default))
    return out
