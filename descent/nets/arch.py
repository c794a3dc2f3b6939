"""Value-network architectures without PyTorch: hyperparameters, presets, weight shapes.

Two families from the Descent papers' protocols, and one for speed:

- ``resnet``: input 3x3 convolution, ``blocks`` residual blocks of two 3x3 convolutions,
  ``filters`` channels throughout, then fully connected hidden layers ``fc`` and one output;
- ``conv``: ``convs`` plain 3x3 convolutions of ``filters`` channels, then ``fc`` and one
  output;
- ``mlp``: fully connected hidden layers ``fc`` straight over the flattened input planes,
  then one output. The inputs are sparse 0/1 planes, so the first layer costs a few dozen
  weight rows a position: the native evaluator (search_cy/eval/mlp_eval.pyx) runs it inside
  the search, without the GIL, about ten times cheaper than a convolutional network
  through ONNX Runtime (still several times a C heuristic; ``filters`` is 0).
- ``nnue`` (dice chess): Stockfish's efficiently updatable network. ``fc[0]`` is the
  width of the feature transformer ``ft`` over the 768 piece-square inputs of each side's
  view (the side to move's first), whose sums the position keeps up to date move by move
  (search_cy/games/dicechess_nnue.h); ``fc[1:]`` the head's hidden widths over both views'
  clamped sums and 11 context inputs (the die, castling rights, en passant). Its ``ft``
  weights are whole multiples of 1/1024 (``quantise_nnue``), so the kept sums are exact.
  The same family reads Hex's encoding (3, n + 2, n + 2): each view (the side to move's
  first, each in its own canonical frame) sets one feature a cell, its stone, the
  opponent's, or an empty cell's six neighbours at its distances from the edges
  (``hex_nnue_features``; search_cy/eval/hex_nnue.h), and the head reads both views'
  sums without context.

An ``mlp`` or ``nnue`` with ``base="heuristic"`` corrects the game's C heuristic ``h``
(for the side to move) rather than giving a value of its own: the output is
``tanh(base.scale * atanh(clip(h, BASE_CLIP)) + head)``, which with a zero head is the
heuristic itself, so training starts from what the heuristic knows and learns what it
misses (dice chess's heuristic sums dice threats over attack sets, which piece-square
inputs cannot express; the inputs see placements its tables do not).

ReLU everywhere; the output is ``tanh`` (classic gain, values in [-1, 1]), ``linear``
(depth and other reinforcement heuristics) or ``policy``: a move prior, where a ``conv``
or ``resnet`` tower with no fully connected layer ends in a 1x1 convolution to one plane,
whose cells inside the encoding's one-cell border are the logits of the moves there (a
Hex board's cells; MoHex-CNN's move prior is of this kind). ``policy_value`` adds MoHex
3HNN's two value heads to the same tower, so that one pass gives all three (``fc`` holds
one width, the value head's hidden layer): a 1x1 convolution of the tower to ``filters``
value features (ReLU), pooled over the encoding's cells by their mean and their maximum
(KataGo's global pooling, which leaves the network free of the board size); from the
pooled features, the position's value (a hidden layer, then tanh) and a bias that joins a
second 1x1 convolution of the tower to give each cell its action value, the tanh of the
value of playing there, both for the side to move. Weight names are the PyTorch module's
state-dict keys (nets/models.py), so a model file, the torch module and the ONNX graph
all speak the same names without a mapping table.

This module imports numpy only: the engine builds, checks and benchmarks networks on a
machine where torch is not installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FAMILIES = ("resnet", "conv", "mlp", "nnue")
NNUE_FEATURES = 768          # 2 colours x 6 piece types x 64 squares, a view
NNUE_CONTEXT = 11            # the die (6), castling rights (4), en passant (1)
NNUE_Q = 1024                # ft weights are whole multiples of 1 / NNUE_Q
NNUE_INPUT = (24, 8, 8)      # the dice-chess encoding it reads (nets/encoding.py)
HEX_NNUE_PATTERNS = 729      # an empty cell's six neighbours, each empty, ours or theirs
HEX_NNUE_LINES = 36          # its distances (0 to 5 or more) to each pair of edges
OUTPUTS = ("tanh", "linear", "policy", "policy_value")
BASES = ("", "heuristic")    # what a network's output is added to: nothing, the C heuristic
BASE_CLIP = 0.99             # the heuristic's value is clipped to this before its atanh
POLICY_OUTPUTS = ("policy", "policy_value")

Weights = dict[str, npt.NDArray[np.float32]]


@dataclass(frozen=True)
class Architecture:
    """Hyperparameters of one value network (the input shape comes from the game)."""

    family: str                 # resnet | conv
    filters: int                # channels of every convolution (mlp: 0)
    blocks: int = 0             # resnet: residual blocks after the input convolution
    convs: int = 0              # conv: plain convolutions
    fc: tuple[int, ...] = ()    # hidden fully connected widths, in order
    output: str = "tanh"        # tanh (gain) | linear (depth heuristics) | policy (moves)
    #                             | policy_value (moves, the position's and each move's value)
    preset: str = ""            # the preset it came from, for people; not checked
    base: str = ""              # "heuristic": the head adds to the C heuristic's atanh

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown architecture family {self.family!r} "
                             f"(known: {', '.join(FAMILIES)})")
        if self.output not in OUTPUTS:
            raise ValueError(f"unknown output activation {self.output!r} "
                             f"(known: {', '.join(OUTPUTS)})")
        if self.family in ("mlp", "nnue"):
            if self.filters or self.blocks or self.convs:
                raise ValueError(f"the {self.family} family has no convolutions: filters, "
                                 f"blocks and convs must be 0")
            if not self.fc:
                raise ValueError(f"the {self.family} family needs at least one fully "
                                 f"connected layer")
            if self.family == "nnue" and (self.fc[0] % 16 or not 16 <= self.fc[0] <= 256):
                raise ValueError("an nnue's feature transformer width (fc[0]) is a multiple "
                                 "of 16 from 16 to 256")
        elif self.filters < 1 or self.blocks < 0 or self.convs < 0:
            raise ValueError("filters must be >= 1, blocks and convs >= 0")
        if self.family == "conv" and self.convs < 1:
            raise ValueError("the conv family needs convs >= 1")
        if any(width < 1 for width in self.fc):
            raise ValueError("fully connected widths must be >= 1")
        if self.base not in BASES:
            raise ValueError(f"unknown base {self.base!r} (known: heuristic)")
        if self.base and (self.family not in ("mlp", "nnue") or self.output != "tanh"):
            raise ValueError("a base (the C heuristic under the network) is for an mlp or "
                             "an nnue with a tanh output")
        if self.is_policy and self.family == "nnue":
            raise ValueError("the nnue family is a value network")
        if self.output == "policy" and (self.family == "mlp" or self.fc):
            raise ValueError("a policy network is a convolutional tower without fully "
                             "connected layers (family conv or resnet, fc empty)")
        if self.output == "policy_value" and (self.family == "mlp" or len(self.fc) != 1):
            raise ValueError("a policy_value network is a convolutional tower whose fc "
                             "holds one width, the value head's hidden layer")

    @property
    def is_policy(self) -> bool:
        """Whether the network is a move policy (with or without value heads)."""
        return self.output in POLICY_OUTPUTS

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"family": self.family, "filters": self.filters,
                               "blocks": self.blocks, "convs": self.convs,
                               "fc": list(self.fc), "output": self.output,
                               "preset": self.preset}
        if self.base:       # absent otherwise: the files written before it read the same
            out["base"] = self.base
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Architecture:
        try:
            return cls(family=str(data["family"]), filters=int(data["filters"]),
                       blocks=int(data.get("blocks", 0)), convs=int(data.get("convs", 0)),
                       fc=tuple(int(w) for w in data.get("fc", ())),
                       output=str(data.get("output", "tanh")),
                       preset=str(data.get("preset", "")),
                       base=str(data.get("base", "")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad architecture {dict(data)!r}: {exc}") from None

    def with_output(self, output: str) -> Architecture:
        return Architecture(self.family, self.filters, self.blocks, self.convs, self.fc,
                            output, self.preset, self.base)


def resnet(filters: int, blocks: int, fc: tuple[int, ...], preset: str = "") -> Architecture:
    return Architecture("resnet", filters, blocks=blocks, fc=fc, preset=preset)


def plain(filters: int, convs: int, fc: tuple[int, ...], preset: str = "") -> Architecture:
    return Architecture("conv", filters, convs=convs, fc=fc, preset=preset)


def mlp(fc: tuple[int, ...], preset: str = "", base: str = "") -> Architecture:
    return Architecture("mlp", 0, fc=fc, preset=preset, base=base)


def nnue(fc: tuple[int, ...], preset: str = "", base: str = "") -> Architecture:
    return Architecture("nnue", 0, fc=fc, preset=preset, base=base)


# Presets per game. ``paper``: the Descent papers' networks. ``cpu``: sized so a search on
# 2 CPU cores still sees thousands of positions per second at the batch sizes a node
# expansion produces (measured with ``descent bench nets``). ``fast``: sized so a search
# with the network visits about as many nodes per second as with the C heuristic where
# that is within reach (Hex 7x7 and 11x11, UBFM_s: 0.5-0.8 times the heuristic's rate),
# the networks the engine ships for equal-time play. ``mlp``: fully connected over the input
# planes, run by the native backend inside the search (about 2 us a position on these
# machines, against 0.2 us for the C heuristics and 15 us for ``fast`` through ONNX Runtime
# at a node's batch). ``mlp_wide``: the same, four times wider, for refits on large replay
# memories (about five times the cost a position). ``nnue``: dice chess's efficiently
# updatable network (a leaf costs its head, whose inputs are both views' sums: 2.2 times
# a heuristic leaf in expectiminimax; the first layer moves with the pieces);
# ``nnue_small``: half the sums, 1.2 times. ``hybrid`` (dice chess): ``nnue_tiny``'s sizes
# as a correction to the C heuristic (a leaf costs the heuristic and a head of 43 inputs);
# ``hybrid_small``: ``nnue_small``'s. ``hybrid`` (EinStein): a small mlp correcting it.
# ``nnue`` (Hex): 128 sums a view over the stones and the empty cells' patterns, a head of
# two layers of 32 (the sums moved from board to board by the changed cells);
# ``nnue_tiny`` (Hex) and ``tiny``: tests only.
PRESETS: dict[str, dict[str, Architecture]] = {
    "hex": {
        "paper": resnet(83, 4, (74,), "paper"),
        "cpu": plain(64, 3, (100,), "cpu"),
        "fast": plain(16, 3, (32,), "fast"),
        "mlp": mlp((128, 32), "mlp"),
        "mlp_wide": mlp((512, 64), "mlp_wide"),
        "nnue": nnue((128, 32, 32), "nnue"),
        "nnue_tiny": nnue((16, 8), "nnue_tiny"),
        "tiny": resnet(8, 1, (16,), "tiny"),
    },
    "einstein": {
        "paper": resnet(83, 4, (425, 425), "paper"),
        "cpu": resnet(48, 2, (128,), "cpu"),
        "fast": plain(16, 2, (32,), "fast"),
        "mlp": mlp((128, 32), "mlp"),
        "mlp_wide": mlp((512, 64), "mlp_wide"),
        "hybrid": mlp((32, 8), "hybrid", base="heuristic"),
        "tiny": resnet(8, 1, (16,), "tiny"),
    },
    "dicechess": {
        "cpu": resnet(48, 2, (128,), "cpu"),
        "fast": plain(16, 2, (32,), "fast"),
        "mlp": mlp((128, 32), "mlp"),
        "mlp_wide": mlp((512, 64), "mlp_wide"),
        "nnue": nnue((128, 32), "nnue"),
        "nnue_small": nnue((64, 32), "nnue_small"),
        "nnue_tiny": nnue((16, 8), "nnue_tiny"),
        "hybrid": nnue((16, 8), "hybrid", base="heuristic"),
        "hybrid_small": nnue((64, 32), "hybrid_small", base="heuristic"),
        "tiny": resnet(8, 1, (16,), "tiny"),
    },
}


# Move-policy networks (output ``policy``). ``policy``: six 3x3 convolutions of 32 filters,
# about 0.4 ms a position in C on these machines (``eval/hex_policy.pyx``), evaluated once
# at a node of enough visits; ``small``: four of 16, about six times cheaper;
# ``policy_value``: ``policy``'s tower with the value heads (a few per cent more a pass);
# ``policy_value_wide``: the same of 48 filters (about twice the work a pass), and
# ``policy_value_deep``: of ten convolutions (five thirds), both started from a
# ``policy_value`` network embedded in them (``descent policy train --init``).
# ``tiny`` and ``tiny_value``: tests only.
POLICY_PRESETS: dict[str, dict[str, Architecture]] = {
    "hex": {
        "policy": Architecture("conv", 32, convs=6, output="policy", preset="policy"),
        "small": Architecture("conv", 16, convs=4, output="policy", preset="small"),
        "tiny": Architecture("conv", 4, convs=2, output="policy", preset="tiny"),
        "policy_value": Architecture("conv", 32, convs=6, fc=(64,), output="policy_value",
                                     preset="policy_value"),
        "policy_value_wide": Architecture("conv", 48, convs=6, fc=(64,),
                                          output="policy_value", preset="policy_value_wide"),
        "policy_value_deep": Architecture("conv", 32, convs=10, fc=(64,),
                                          output="policy_value", preset="policy_value_deep"),
        "tiny_value": Architecture("conv", 4, convs=2, fc=(8,), output="policy_value",
                                   preset="tiny_value"),
    },
}


def policy_preset(game: str, name: str) -> Architecture:
    """The move-policy preset ``name`` of ``game`` (a registry name)."""
    table = POLICY_PRESETS.get(game)
    if table is None:
        raise ValueError(f"no policy presets for game {game!r} (known: "
                         f"{', '.join(POLICY_PRESETS)})")
    if name not in table:
        raise ValueError(f"no policy preset {name!r} for {game} (known: {', '.join(table)})")
    return table[name]


def preset(game: str, name: str, output: str = "tanh") -> Architecture:
    """The value preset ``name`` of ``game`` (a registry name) with the given output
    activation."""
    if game not in PRESETS:
        raise ValueError(f"no network presets for game {game!r} (known: {', '.join(PRESETS)})")
    table = PRESETS[game]
    if name not in table:
        raise ValueError(f"no preset {name!r} for {game} (known: {', '.join(table)})")
    return table[name].with_output(output)


def weight_shapes(arch: Architecture,
                  input_shape: tuple[int, int, int]) -> dict[str, tuple[int, ...]]:
    """Every tensor the architecture has, by state-dict name, in forward order (a base's
    factor last: it joins the head's output)."""
    shapes = _network_shapes(arch, input_shape)
    if arch.base:
        shapes["base.scale"] = (1,)
    return shapes


def _network_shapes(arch: Architecture,
                    input_shape: tuple[int, int, int]) -> dict[str, tuple[int, ...]]:
    planes, height, width = input_shape
    f = arch.filters
    shapes: dict[str, tuple[int, ...]] = {}
    if arch.family == "nnue":
        features, context = nnue_inputs(input_shape)
        shapes["ft.weight"] = (arch.fc[0], features)
        shapes["ft.bias"] = (arch.fc[0],)
        return _dense(shapes, 2 * arch.fc[0] + context, arch.fc[1:])
    if arch.family == "resnet":
        shapes["stem.weight"] = (f, planes, 3, 3)
        shapes["stem.bias"] = (f,)
        for i in range(arch.blocks):
            for conv in ("conv1", "conv2"):
                shapes[f"blocks.{i}.{conv}.weight"] = (f, f, 3, 3)
                shapes[f"blocks.{i}.{conv}.bias"] = (f,)
    else:
        for i in range(arch.convs):
            shapes[f"convs.{i}.weight"] = (f, planes if i == 0 else f, 3, 3)
            shapes[f"convs.{i}.bias"] = (f,)
    if arch.is_policy:
        shapes["head.weight"] = (1, f, 1, 1)   # a 1x1 convolution to the logits plane
        shapes["head.bias"] = (1,)
        if arch.output == "policy_value":
            hidden = arch.fc[0]
            shapes["vconv.weight"] = (f, f, 1, 1)      # the value features
            shapes["vconv.bias"] = (f,)
            shapes["qhead.weight"] = (1, f, 1, 1)      # each cell's action value ...
            shapes["qhead.bias"] = (1,)
            shapes["qglobal.weight"] = (1, 2 * f)      # ... plus a bias from the pool
            shapes["qglobal.bias"] = (1,)
            shapes["vfc.weight"] = (hidden, 2 * f)     # the position's value
            shapes["vfc.bias"] = (hidden,)
            shapes["vhead.weight"] = (1, hidden)
            shapes["vhead.bias"] = (1,)
        return shapes
    return _dense(shapes, (planes if arch.family == "mlp" else f) * height * width, arch.fc)


def hex_nnue_features(size: int) -> int:
    """Features of one view of a Hex nnue at board size ``size``: a stone of each colour
    a cell, and the patterns of an empty cell by its distances from the edges."""
    return 2 * size * size + HEX_NNUE_LINES * HEX_NNUE_PATTERNS


def is_hex_encoding(input_shape: tuple[int, ...]) -> bool:
    """Whether ``input_shape`` is Hex's encoding: 3 planes of (n + 2) x (n + 2)."""
    return len(input_shape) == 3 and input_shape[0] == 3 and input_shape[1] == input_shape[2] \
        and input_shape[1] >= 3


def nnue_inputs(input_shape: tuple[int, ...]) -> tuple[int, int]:
    """(features a view, context inputs) of an nnue reading ``input_shape``: dice chess's
    encoding or Hex's."""
    if tuple(input_shape) == NNUE_INPUT:
        return NNUE_FEATURES, NNUE_CONTEXT
    if is_hex_encoding(input_shape):
        return hex_nnue_features(input_shape[1] - 2), 0
    raise ValueError(f"an nnue reads dice chess's {NNUE_INPUT} encoding or Hex's (3, n + 2, "
                     f"n + 2), not {tuple(input_shape)}")


def _dense(shapes: dict[str, tuple[int, ...]], width_in: int,
           widths: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """``shapes`` with the fully connected layers ``fc.j`` of ``widths`` over ``width_in``
    inputs, then the one-output ``head``."""
    for j, width_out in enumerate(widths):
        shapes[f"fc.{j}.weight"] = (width_out, width_in)
        shapes[f"fc.{j}.bias"] = (width_out,)
        width_in = width_out
    shapes["head.weight"] = (1, width_in)
    shapes["head.bias"] = (1,)
    return shapes


def multiply_adds(arch: Architecture, input_shape: tuple[int, int, int]) -> int:
    """Multiply-adds of one forward pass of one position (the cost the bench reports)."""
    _, height, width = input_shape
    total = 0
    for name, shape in weight_shapes(arch, input_shape).items():
        if name.endswith(".weight"):
            per = int(np.prod(shape))
            total += per * height * width if len(shape) == 4 else per
    return total


def init_weights(arch: Architecture, input_shape: tuple[int, int, int], seed: int = 0) -> Weights:
    """Seeded random weights (He initialisation), the starting point of training.

    The second convolution of each residual block starts scaled down so that the tower's
    activations keep their size with depth (no batch normalisation in these networks).
    """
    rng = np.random.default_rng(seed)
    out: Weights = {}
    blocks = max(arch.blocks, 1)
    for name, shape in weight_shapes(arch, input_shape).items():
        if name.endswith(".bias") or (arch.base and name == "head.weight"):
            # a correction to a base starts at nothing: the base's value itself
            out[name] = np.zeros(shape, dtype=np.float32)
            continue
        if name == "base.scale":
            out[name] = np.ones(shape, dtype=np.float32)
            continue
        fan_in = int(np.prod(shape[1:]))
        std = np.sqrt(2.0 / fan_in)
        if name == "ft.weight":
            # sums of spread about 0.5, in the clamp: about 32 of dice chess's 768 inputs
            # are set, one a cell of Hex's
            active = 32.0 if tuple(input_shape) == NNUE_INPUT else float(input_shape[1] - 2) ** 2
            std = 0.5 / np.sqrt(active)
        elif name.endswith("conv2.weight"):
            std *= 0.5 / np.sqrt(blocks)
        elif name.endswith("head.weight") or name == "qglobal.weight":   # the outputs
            std = np.sqrt(1.0 / fan_in)
        out[name] = rng.normal(0.0, std, size=shape).astype(np.float32)
    return quantise_nnue(out) if arch.family == "nnue" else out


def quantise_nnue(weights: Weights) -> Weights:
    """An nnue's weights with its feature transformer (``ft``) rounded to whole multiples
    of 1 / NNUE_Q within int16's range, what the native evaluator keeps exactly in
    integers (search_cy/games/dicechess_nnue.h); the head is left as it is."""
    out = dict(weights)
    for name in ("ft.weight", "ft.bias"):
        q = np.clip(np.round(np.asarray(weights[name], np.float64) * NNUE_Q), -32767, 32767)
        out[name] = (q / NNUE_Q).astype(np.float32)
    return out
