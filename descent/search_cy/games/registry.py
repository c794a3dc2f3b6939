"""Game registry: game specs such as ``hex(size=11,swap=true)`` -> Game descriptors.

A Game descriptor is immutable: its name, its validated parameters, and factories for
states. Kernels register themselves by name; the registry parses and checks specs so
that every bad parameter is reported with the game, the parameter and what is allowed.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from descent.search_cy.games.state import GameState

# Modules that register a game when imported; loaded on first registry use.
_KERNEL_MODULES = (
    "descent.search_cy.games.hex_game",
    "descent.search_cy.games.einstein_game",
    "descent.search_cy.games.dicechess_game",
)

_SPEC_RE = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.IGNORECASE)


ChanceMode = Literal["deterministic", "explicit_stochastic"]


class GameSpecError(ValueError):
    """A game spec that names an unknown game, parameter or value."""


@dataclass(frozen=True)
class Param:
    """One game parameter: its type, default, and allowed values or range."""

    name: str
    kind: type
    default: Any
    choices: tuple[Any, ...] | None = None
    lo: int | None = None
    hi: int | None = None
    doc: str = ""

    def parse(self, game: str, raw: Any) -> Any:
        value: Any
        if isinstance(raw, str):
            text = raw.strip()
            if self.kind is bool:
                low = text.lower()
                if low in ("true", "1", "yes", "on"):
                    value = True
                elif low in ("false", "0", "no", "off"):
                    value = False
                else:
                    raise GameSpecError(f"{game}: {self.name}={raw!r} is not a boolean")
            elif self.kind is int:
                try:
                    value = int(text)
                except ValueError:
                    raise GameSpecError(f"{game}: {self.name}={raw!r} is not an integer") from None
            else:
                value = text.lower()
        else:
            value = raw
        if not isinstance(value, self.kind) or (self.kind is int and isinstance(value, bool)):
            raise GameSpecError(f"{game}: {self.name}={raw!r} must be {self.kind.__name__}")
        if self.choices is not None and value not in self.choices:
            allowed = "|".join(str(c).lower() for c in self.choices)
            raise GameSpecError(f"{game}: {self.name}={raw!r} is not one of {allowed}")
        in_range = not isinstance(value, int) or (
            (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi))
        if not in_range:
            raise GameSpecError(f"{game}: {self.name}={value} out of range {self.lo}..{self.hi}")
        return value


class Game:
    """Base of the game descriptors: a name, parameters, state factories and the game's
    facts (as OpenSpiel's GameType and Game keep them), which every layer reads instead of
    guessing: maximum length, chance mode, the protocols that speak it, the play search."""

    name: ClassVar[str]
    params_spec: ClassVar[tuple[Param, ...]]
    # Parameter sets the conformance and differential suites run over.
    test_specs: ClassVar[tuple[str, ...]]
    # "explicit_stochastic": chance nodes (dice) in the tree, with their outcomes listed.
    chance_mode: ClassVar[ChanceMode]
    # The line protocols that fit the game; the first is its default.
    protocols: ClassVar[tuple[str, ...]]
    # The search ``descent play`` uses when none is named.
    default_search: ClassVar[str]
    # The search it uses instead when a network values the leaves (None: default_search):
    # a search that values its leaves by playouts would leave the network unread.
    network_search: ClassVar[str | None] = None

    @property
    def max_game_length(self) -> int:
        """An upper bound on the number of actions (chance outcomes excluded) of a game:
        P of the depth heuristics."""
        raise NotImplementedError

    @property
    def has_chance(self) -> bool:
        return self.chance_mode == "explicit_stochastic"

    @property
    def default_protocol(self) -> str:
        return self.protocols[0]

    def __init__(self, **params: Any) -> None:
        known = {p.name: p for p in self.params_spec}
        for key in params:
            if key not in known:
                allowed = ", ".join(known) or "none"
                raise GameSpecError(f"{self.name}: unknown parameter {key!r} (known: {allowed})")
        values = {
            p.name: p.parse(self.name, params[p.name]) if p.name in params else p.default
            for p in self.params_spec
        }
        self.params: Mapping[str, Any] = values
        self._check(values)

    def _check(self, params: Mapping[str, Any]) -> None:
        """Cross-parameter checks; overridden where a game has them."""

    @property
    def spec(self) -> str:
        """Canonical spec that make_game() reads back to an equal descriptor."""
        inner = ",".join(f"{k}={_fmt(v)}" for k, v in self.params.items())
        return f"{self.name}({inner})"

    def new_initial_state(self) -> GameState:
        raise NotImplementedError

    def state_from_text(self, text: str) -> GameState:
        """Build a state from the game's position notation (GameState.to_text)."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash(self.spec)

    def __repr__(self) -> str:
        return f"make_game({self.spec!r})"


def _fmt(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


_REGISTRY: dict[str, Callable[..., Game]] = {}
_loaded = False


def register_game(cls: type[Game]) -> type[Game]:
    """Class decorator: make a Game descriptor reachable by its name."""
    _REGISTRY[cls.name] = cls
    return cls


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in _KERNEL_MODULES:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                # A kernel left out of a partial build; tests pin the full list.
                if exc.name != module:
                    raise


def registered_games() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``name(k=v,...)`` into the name and raw parameter strings."""
    m = _SPEC_RE.match(spec)
    if not m:
        raise GameSpecError(f"malformed game spec {spec!r}: expected name(key=value,...)")
    name, inner = m.group(1).lower(), m.group(2)
    params: dict[str, str] = {}
    if inner and inner.strip():
        for item in inner.split(","):
            key, sep, value = item.partition("=")
            key = key.strip().lower()
            if not sep or not key or not value.strip():
                raise GameSpecError(f"malformed parameter {item.strip()!r} in {spec!r}")
            if key in params:
                raise GameSpecError(f"parameter {key!r} given twice in {spec!r}")
            params[key] = value.strip()
    return name, params


def make_game(spec: str, **overrides: Any) -> Game:
    """The descriptor for a spec such as ``hex(size=13,swap=true)`` or ``einstein``."""
    _load()
    name, params = parse_spec(spec)
    if name not in _REGISTRY:
        raise GameSpecError(f"unknown game {name!r} (known: {', '.join(sorted(_REGISTRY))})")
    merged: dict[str, Any] = {**params, **overrides}
    return _REGISTRY[name](**merged)


def all_test_specs() -> Iterator[str]:
    """Every registered game with every parameter set its suites must cover."""
    _load()
    for name in sorted(_REGISTRY):
        cls = _REGISTRY[name]
        assert isinstance(cls, type) and issubclass(cls, Game)
        yield from cls.test_specs
