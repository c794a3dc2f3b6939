"""The one model-file format: safetensors weights with the model's JSON metadata.

A safetensors file is an 8-byte little-endian header length, a JSON header (tensor names,
dtypes, shapes, offsets, and a free ``__metadata__`` string map), then raw tensor bytes.
No code is ever unpickled: loading reads JSON and raw float32 arrays only, so a file from
anywhere is safe to open. ``__metadata__["descent"]`` holds this project's JSON:

    format, format_version         "descent-model", 1
    game                           registry name, canonical spec, parameters
    encoding                       version, shape [planes, H, W], fingerprint
    architecture                   nets.arch.Architecture (family, hyperparameters, output)
    value                          view (player0 | side_to_move), scale, bounds, heuristic
    training                       steps, games, date, seed, free note
    weights                        sha256 over every tensor (name, shape, bytes), count

``load_model`` checks all of it against the running kernels and raises ModelFileError
naming the problem: wrong game or board size, encoding mismatch, truncated or corrupt
file, tensor shape mismatch, bad hash.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from descent.nets.arch import (
    NNUE_Q,
    Architecture,
    Weights,
    init_weights,
    quantise_nnue,
    weight_shapes,
)
from descent.nets.encoding import encoding_version, fingerprint
from descent.nets.files import atomic_write_bytes
from descent.search_cy.games.registry import Game, GameSpecError, make_game
from descent.search_cy.games.state import GameState

log = logging.getLogger(__name__)

FORMAT = "descent-model"
FORMAT_VERSION = 1
METADATA_KEY = "descent"
VIEWS = ("player0", "side_to_move")
MAX_HEADER = 64 << 20  # a header this large is corruption, not a model


class ModelFileError(ValueError):
    """A model file that cannot be used here; the message names the file and the problem."""


@dataclass(frozen=True)
class ValueSpec:
    """How the network's single output becomes a value."""

    view: str = "player0"      # whose view the output is in: player0 | side_to_move
    scale: float = 1.0         # value = scale * output (tanh outputs lie in [-1, 1])
    lo: float = -1.0           # bounds of the values (searches prune with them)
    hi: float = 1.0
    heuristic: str = "gain"    # reinforcement heuristic of the targets: gain, depth_add, ...
    max_plies: int = 0         # P of the depth heuristics (0: the game's own bound)

    def __post_init__(self) -> None:
        if self.view not in VIEWS:
            raise ValueError(f"value view must be one of {', '.join(VIEWS)}, not {self.view!r}")
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"value bounds need finite lo < hi, not {self.lo}, {self.hi}")
        if not math.isfinite(self.scale) or self.scale == 0:
            raise ValueError(f"value scale must be finite and not 0, not {self.scale}")
        if self.max_plies < 0:
            raise ValueError(f"value max_plies must be >= 0, not {self.max_plies}")


@dataclass(frozen=True)
class Provenance:
    """Where the weights came from. ``steps == 0`` means untrained (random) weights."""

    steps: int = 0
    games: int = 0
    date: str = ""
    seed: int | None = None
    note: str = ""


@dataclass
class LoadedModel:
    """A checked model: game, architecture, value convention, weights (float32 numpy)."""

    game: Game
    arch: Architecture
    input_shape: tuple[int, int, int]
    value: ValueSpec
    training: Provenance
    weights: Weights
    weights_sha256: str
    encoding_version: int
    encoding_fingerprint: str
    path: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        """Identity of what the network computes (weights, architecture, encoding, value):
        the key of cached TensorRT engines and backend choices."""
        ident = json.dumps({"weights": self.weights_sha256, "arch": self.arch.to_json(),
                            "shape": list(self.input_shape), "value": asdict(self.value),
                            "encoding": self.encoding_version}, sort_keys=True)
        return hashlib.sha256(ident.encode()).hexdigest()[:24]

    @property
    def name(self) -> str:
        return self.path.name if self.path else f"<{self.game.name} {self.arch.preset or 'model'}>"

    def metadata(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "game": {"name": self.game.name, "spec": self.game.spec,
                     "params": dict(self.game.params)},
            "encoding": {"version": self.encoding_version, "shape": list(self.input_shape),
                         "fingerprint": self.encoding_fingerprint},
            "architecture": self.arch.to_json(),
            "value": asdict(self.value),
            "training": asdict(self.training),
            "weights": {"sha256": self.weights_sha256, "count": len(self.weights),
                        "parameters": int(sum(w.size for w in self.weights.values()))},
            **({"extra": self.extra} if self.extra else {}),
        }

    def describe(self) -> str:
        params = sum(w.size for w in self.weights.values())
        arch = self.arch
        body = {"resnet": f"{arch.blocks} blocks", "conv": f"{arch.convs} convs",
                "mlp": "no convolutions",
                "nnue": f"feature transformer {arch.fc[0]}"}[arch.family]
        trained = (f"{self.training.steps} steps, {self.training.games} games"
                   if self.training.steps else "untrained")
        return (f"{self.name}: {self.game.spec}, input {'x'.join(map(str, self.input_shape))}, "
                f"{arch.family} {arch.filters} filters {body} fc {list(arch.fc)} "
                f"{arch.output}{' on the C heuristic' if arch.base else ''}, "
                f"{params} parameters, {trained}, sha256 {self.weights_sha256[:12]}")


def game_of(game: Game | GameState | str) -> Game:
    """The Game of a Game, a state or a spec."""
    if isinstance(game, Game):
        return game
    if isinstance(game, GameState):
        if not isinstance(game.game, Game):
            raise ValueError("state has no game descriptor")
        return game.game
    return make_game(game)


def _shape_of(game: Game) -> tuple[int, int, int]:
    planes, height, width = game.new_initial_state().encoding_shape
    return (planes, height, width)


def weights_digest(weights: Mapping[str, np.ndarray]) -> str:
    """SHA-256 over every tensor in name order: name, shape, little-endian float32 bytes."""
    digest = hashlib.sha256()
    for name in sorted(weights):
        tensor = np.ascontiguousarray(weights[name], dtype="<f4")
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(json.dumps(list(tensor.shape)).encode())
        digest.update(tensor.tobytes())
    return digest.hexdigest()


def _check_weights(where: str, arch: Architecture, input_shape: tuple[int, int, int],
                   weights: Mapping[str, np.ndarray]) -> None:
    try:
        expected = weight_shapes(arch, input_shape)
    except ValueError as exc:           # a family that does not read this game
        raise ModelFileError(f"{where}: {exc}") from None
    missing = [n for n in expected if n not in weights]
    if missing:
        raise ModelFileError(f"{where}: shape mismatch: tensor(s) {', '.join(missing)} "
                             f"missing for the {arch.family} architecture")
    unexpected = [n for n in weights if n not in expected]
    if unexpected:
        raise ModelFileError(f"{where}: shape mismatch: unexpected tensor(s) "
                             f"{', '.join(sorted(unexpected))} for the {arch.family} "
                             "architecture")
    for name, shape in expected.items():
        got = tuple(weights[name].shape)
        if got != shape:
            raise ModelFileError(f"{where}: shape mismatch: tensor {name} is {got}, the "
                                 f"architecture and input {input_shape} need {shape}")
        if weights[name].dtype != np.float32:
            raise ModelFileError(f"{where}: tensor {name} is {weights[name].dtype}, "
                                 "expected float32")
        if not np.isfinite(weights[name]).all():
            bad = int(np.count_nonzero(~np.isfinite(weights[name])))
            raise ModelFileError(f"{where}: tensor {name} holds {bad} NaN or infinite "
                                 "value(s) (a diverged training?)")
    if arch.family == "nnue":
        quantised = quantise_nnue(dict(weights))
        for name in ("ft.weight", "ft.bias"):
            if not np.array_equal(quantised[name], weights[name]):
                raise ModelFileError(f"{where}: tensor {name} is not quantised: an nnue's "
                                     f"feature transformer holds whole multiples of "
                                     f"1/{NNUE_Q} within int16's range")


def _check_view(where: str, arch: Architecture, value: ValueSpec) -> None:
    # an nnue reads its views with the side to move first: its output is that side's;
    # a network on the C heuristic corrects the heuristic's value for the side to move
    if arch.family == "nnue" and value.view != "side_to_move":
        raise ModelFileError(f"{where}: an nnue speaks for the side to move, not "
                             f"{value.view!r}")
    if arch.base and value.view != "side_to_move":
        raise ModelFileError(f"{where}: a network on the C heuristic speaks for the side "
                             f"to move, not {value.view!r}")


def make_model(game: Game | GameState | str, arch: Architecture, weights: Weights | None = None,
               *, value: ValueSpec | None = None, training: Provenance | None = None,
               seed: int = 0) -> LoadedModel:
    """A model in memory: given weights (checked) or seeded random ones."""
    g = game_of(game)
    shape = _shape_of(g)
    if weights is None:
        weights = init_weights(arch, shape, seed)
    weights = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()}
    _check_weights(f"model for {g.spec}", arch, shape, weights)
    if value is None:
        # the classic gain's values in [-1, 1], whatever the output; the other heuristics
        # need an explicit ValueSpec with their own scale and bounds
        value = ValueSpec(view="side_to_move" if arch.family == "nnue" or arch.base
                          else "player0")
    _check_view(f"model for {g.spec}", arch, value)
    return LoadedModel(game=g, arch=arch, input_shape=shape, value=value,
                       training=training or Provenance(seed=seed),
                       weights=weights, weights_sha256=weights_digest(weights),
                       encoding_version=encoding_version(g.name),
                       encoding_fingerprint=fingerprint(g))


def save_model(model: LoadedModel, path: str | os.PathLike[str]) -> Path:
    """Writes ``model`` to ``path`` atomically (a reader never sees half a file)."""
    from safetensors.numpy import save

    target = Path(path)
    _check_weights(str(target), model.arch, model.input_shape, model.weights)
    metadata = model.metadata()
    metadata["weights"]["sha256"] = weights_digest(model.weights)
    blob = save(dict(model.weights), metadata={METADATA_KEY: json.dumps(metadata,
                                                                        sort_keys=True)})
    atomic_write_bytes(target, blob)
    model.path = target
    return target


def _read_header(where: str, data: bytes) -> tuple[dict[str, Any], dict[str, Any], int]:
    """(safetensors header, descent metadata, header length), or ModelFileError."""
    if len(data) < 8:
        raise ModelFileError(f"{where}: truncated file: {len(data)} bytes, not even the "
                             "8-byte header length")
    size = int.from_bytes(data[:8], "little")
    if size > MAX_HEADER:
        raise ModelFileError(f"{where}: corrupt file: header length {size} is absurd "
                             "(not a safetensors model file?)")
    if size > len(data) - 8:
        raise ModelFileError(f"{where}: truncated file: the header needs {size} bytes, only "
                             f"{len(data) - 8} follow")
    try:
        header = json.loads(data[8:8 + size])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{where}: corrupt file: header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ModelFileError(f"{where}: corrupt file: header is not a JSON object")
    raw_meta = header.get("__metadata__", {})
    if not isinstance(raw_meta, dict) or METADATA_KEY not in raw_meta:
        raise ModelFileError(f"{where}: not a descent model file: no '{METADATA_KEY}' "
                             "metadata in the safetensors header")
    try:
        meta = json.loads(raw_meta[METADATA_KEY])
    except (TypeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{where}: corrupt metadata: not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ModelFileError(f"{where}: corrupt metadata: not a JSON object")
    return header, meta, size


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The descent metadata of a model file, without loading or checking the weights."""
    data = _read_bytes(Path(path))
    return _read_header(str(path), data)[1]


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file") from None
    except IsADirectoryError:
        raise ModelFileError(f"{path}: is a directory, not a model file") from None


def _section(where: str, meta: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = meta.get(key)
    if not isinstance(value, dict):
        raise ModelFileError(f"{where}: corrupt metadata: '{key}' section missing")
    return value


def load_model(path: str | os.PathLike[str],
               game: Game | GameState | str | None = None) -> LoadedModel:
    """Reads and checks a model file; ``game``, when given, must be the model's game.

    Raises ModelFileError naming the problem. Blocks on the file read only.
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load

    p = Path(path)
    where = str(p)
    data = _read_bytes(p)
    header, meta, size = _read_header(where, data)

    if meta.get("format") != FORMAT:
        raise ModelFileError(f"{where}: not a descent model file (format "
                             f"{meta.get('format')!r})")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(f"{where}: unsupported model format version "
                             f"{meta.get('format_version')!r} (this engine reads "
                             f"{FORMAT_VERSION})")

    # -- data section present in full? (before any tensor is read) --
    try:
        end = max((int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"),
                  default=0)
    except (KeyError, TypeError, ValueError, IndexError):
        raise ModelFileError(f"{where}: corrupt file: bad tensor table in the header") from None
    have = len(data) - 8 - size
    if have < end:
        raise ModelFileError(f"{where}: truncated file: the weights need {end} bytes, only "
                             f"{have} are present")

    # -- game --
    game_meta = _section(where, meta, "game")
    try:
        file_game = make_game(str(game_meta.get("spec", "")))
    except GameSpecError as exc:
        raise ModelFileError(f"{where}: the model's game is unknown here: {exc}") from None
    trained_on = file_game          # the fingerprint is of the game the model was saved for
    if game is not None:
        wanted = game_of(game)
        if wanted.name != file_game.name:
            raise ModelFileError(f"{where}: wrong game: the model is for {file_game.name}, "
                                 f"not {wanted.name}")
        if wanted.spec != file_game.spec:
            if _shape_of(wanted) != _shape_of(file_game):
                what = "board size" if "size" in file_game.params else "game parameters"
                raise ModelFileError(
                    f"{where}: wrong {what}: the model is for {file_game.spec} (input "
                    f"{'x'.join(map(str, _shape_of(file_game)))}), the game is {wanted.spec} "
                    f"(input {'x'.join(map(str, _shape_of(wanted)))})")
            log.info("model for %s used for %s (same input encoding)", file_game.spec,
                     wanted.spec)
        file_game = wanted

    # -- encoding --
    enc = _section(where, meta, "encoding")
    current = encoding_version(file_game.name)
    if enc.get("version") != current:
        raise ModelFileError(f"{where}: encoding version mismatch: the model was trained on "
                             f"{file_game.name} input encoding v{enc.get('version')}, this "
                             f"engine's kernel encodes v{current}")
    shape = _shape_of(file_game)
    if tuple(enc.get("shape", ())) != shape:
        raise ModelFileError(f"{where}: encoding shape mismatch: the model reads "
                             f"{enc.get('shape')}, the kernel writes {list(shape)}")
    if enc.get("fingerprint") != fingerprint(trained_on):
        raise ModelFileError(f"{where}: encoding fingerprint mismatch: the kernel's "
                             f"{file_game.name} encoding changed since the model was saved "
                             "(same version number: bump nets.encoding.ENCODING_VERSIONS)")

    # -- architecture, value, provenance --
    try:
        arch = Architecture.from_json(_section(where, meta, "architecture"))
        value = ValueSpec(**_section(where, meta, "value"))
        training = Provenance(**_section(where, meta, "training"))
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"{where}: corrupt metadata: {exc}") from None

    # -- tensors --
    try:
        weights = {k: np.asarray(v) for k, v in load(data).items()}
    except (SafetensorError, ValueError) as exc:
        raise ModelFileError(f"{where}: corrupt file: {exc}") from None
    _check_weights(where, arch, shape, weights)
    _check_view(where, arch, value)
    stated = _section(where, meta, "weights").get("sha256")
    actual = weights_digest(weights)
    if stated != actual:
        raise ModelFileError(f"{where}: bad weights hash: the metadata says {stated}, the "
                             f"weights hash to {actual} (corrupt or edited file)")
    extra = meta.get("extra", {})
    return LoadedModel(game=file_game, arch=arch, input_shape=shape, value=value,
                       training=training, weights=weights, weights_sha256=actual,
                       encoding_version=current, encoding_fingerprint=enc["fingerprint"],
                       path=p, extra=extra if isinstance(extra, dict) else {})


def as_model(model: LoadedModel | str | os.PathLike[str],
             game: Game | GameState | str | None = None) -> LoadedModel:
    """A LoadedModel from a model or a path (checked against ``game`` when given)."""
    if isinstance(model, LoadedModel):
        if game is not None:
            wanted = game_of(game)
            if wanted.name != model.game.name or _shape_of(wanted) != model.input_shape:
                raise ModelFileError(f"{model.name}: the model is for {model.game.spec}, "
                                     f"not {wanted.spec}")
        return model
    return load_model(model, game)
