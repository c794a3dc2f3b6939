"""PyTorch networks (training and the ``torch`` backend; torch is an extra): the value
networks and the move-policy networks of nets/arch.py.

The modules mirror nets/arch.py exactly: their state-dict keys are the weight names of
the model file, so ``module_from_weights`` and ``weights_from_module`` are plain copies.

    arch = preset("hex", "paper")                  # resnet 83 filters, 4 blocks, FC 74
    net = ValueNet(arch, (3, 13, 13))
    values = net(torch.zeros(8, 3, 13, 13))        # shape (8,)
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from descent.nets.arch import (
    BASE_CLIP,
    HEX_NNUE_PATTERNS,
    NNUE_CONTEXT,
    NNUE_FEATURES,
    Architecture,
    Weights,
    hex_nnue_features,
    init_weights,
    is_hex_encoding,
    quantise_nnue,
    weight_shapes,
)
from descent.nets.encoding import DICECHESS_PLANES


class ResidualBlock(nn.Module):
    """x -> relu(x + conv2(relu(conv1(x))))."""

    def __init__(self, filters: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(filters, filters, 3, padding=1)
        self.conv2 = nn.Conv2d(filters, filters, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class _Tower(nn.Module):
    """The convolutional tower of the resnet and conv families (nothing for mlp)."""

    def __init__(self, arch: Architecture, input_shape: tuple[int, int, int]) -> None:
        super().__init__()
        planes = input_shape[0]
        self.arch = arch
        self.input_shape = input_shape
        f = arch.filters
        if arch.family == "resnet":
            self.stem = nn.Conv2d(planes, f, 3, padding=1)
            self.blocks = nn.ModuleList(ResidualBlock(f) for _ in range(arch.blocks))
        elif arch.family == "conv":
            self.convs = nn.ModuleList(
                nn.Conv2d(planes if i == 0 else f, f, 3, padding=1) for i in range(arch.convs))

    def tower(self, x: Tensor) -> Tensor:
        if self.arch.family == "resnet":
            x = torch.relu(self.stem(x))
            for block in self.blocks:
                x = block(x)
        elif self.arch.family == "conv":
            for conv in self.convs:
                x = torch.relu(conv(x))
        return x


def _dense_layers(widths: list[int]) -> tuple[nn.ModuleList, nn.Linear]:
    """Fully connected layers over ``widths`` (the inputs' first) and the one-output head."""
    return (nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:], strict=False)),
            nn.Linear(widths[-1], 1))


class _Scale(nn.Module):
    """One learned factor (``base.scale``)."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))


def _on_base(net: ValueNet | NNUENet | HexNNUENet, out: Tensor,
             base: Tensor | None) -> Tensor:
    """The raw output ``out`` added to the base's atanh where the architecture has a base
    (nets/arch.py): ``base`` holds the C heuristic's values for the side to move."""
    if not net.arch.base:
        return out
    if base is None:
        raise ValueError("this network corrects the C heuristic: forward needs the "
                         "heuristic's values for the side to move (base=)")
    return out + net.base.scale * torch.atanh(base.clamp(-BASE_CLIP, BASE_CLIP))


class ValueNet(_Tower):
    """One of the value families of nets/arch.py; forward returns shape (batch,)."""

    def __init__(self, arch: Architecture, input_shape: tuple[int, int, int]) -> None:
        super().__init__(arch, input_shape)
        if arch.is_policy:
            raise ValueError("a policy architecture makes a PolicyNet, not a ValueNet")
        if arch.family == "nnue":
            raise ValueError("an nnue architecture makes an NNUENet, not a ValueNet")
        planes, height, width = input_shape
        f = arch.filters
        widths = [(planes if arch.family == "mlp" else f) * height * width, *arch.fc]
        self.fc, self.head = _dense_layers(widths)
        self.tanh = arch.output == "tanh"
        if arch.base:
            self.base = _Scale()

    def forward(self, x: Tensor, base: Tensor | None = None) -> Tensor:
        """Values for the model's view; ``base``: the heuristic's values for the side to
        move, which a network with a base corrects."""
        x = torch.flatten(self.tower(x), 1)
        for layer in self.fc:
            x = torch.relu(layer(x))
        x = _on_base(self, self.head(x).reshape(-1), base)
        return torch.tanh(x) if self.tanh else x


class NNUENet(nn.Module):
    """The ``nnue`` family over dice chess's input planes (24, 8, 8): the same function
    the native evaluator computes with its accumulators (search_cy/eval/nnue_eval.pyx).

    White's view reads the twelve piece planes as they are, Black's with the colours
    exchanged and the ranks flipped; the side to move's view comes first. The other planes
    by name: nets/encoding.py's DICECHESS_PLANES. A network with a base (nets/arch.py)
    takes the C heuristic's values for the side to move as ``base``, as ValueNet does:
    planes do not carry them."""

    _BLACK = [6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5]

    def __init__(self, arch: Architecture, input_shape: tuple[int, int, int]) -> None:
        super().__init__()
        weight_shapes(arch, input_shape)          # checks the input shape
        self.arch = arch
        self.input_shape = input_shape
        self.ft = nn.Linear(NNUE_FEATURES, arch.fc[0])
        widths = [2 * arch.fc[0] + NNUE_CONTEXT, *arch.fc[1:]]
        self.fc, self.head = _dense_layers(widths)
        self.tanh = arch.output == "tanh"
        if arch.base:
            self.base = _Scale()

    def forward(self, x: Tensor, base: Tensor | None = None) -> Tensor:
        n = x.shape[0]
        white = self.ft(x[:, :12].reshape(n, NNUE_FEATURES))
        black = self.ft(x[:, self._BLACK].flip(2).reshape(n, NNUE_FEATURES))
        to_move, castling, ep_plane, die_plane = (DICECHESS_PLANES[k] for k in (
            "to_move", "castling", "ep", "die"))
        white_moves = x[:, to_move, 0, 0:1] > 0.5
        us = torch.where(white_moves, white, black)
        them = torch.where(white_moves, black, white)
        rights = x[:, castling:castling + 4, 0, 0]
        castle = torch.where(white_moves, rights, rights[:, [2, 3, 0, 1]])
        ep = x[:, ep_plane].flatten(1).amax(1, keepdim=True)
        die = x[:, die_plane:die_plane + 6, 0, 0]
        h = torch.cat([torch.clamp(torch.cat([us, them], 1), 0.0, 1.0), die, castle, ep], 1)
        for layer in self.fc:
            h = torch.relu(layer(h))
        out = _on_base(self, self.head(h).reshape(-1), base)
        return torch.tanh(out) if self.tanh else out


class HexNNUENet(nn.Module):
    """The ``nnue`` family over Hex's input planes (3, n + 2, n + 2): the function the
    native evaluator computes (search_cy/eval/hex_nnue_eval.pyx), its features as
    search_cy/eval/hex_nnue.h lists them.

    Black's view reads the stone planes as they are, White's transposed with the colours
    exchanged (the padding's edges follow: the viewer's edges are always the top and
    bottom rows); the side to move's view comes first. An empty cell's pattern is a 3x3
    convolution of the view's states (0 empty, 1 the viewer's, 2 the opponent's) with the
    base-3 place value of each of its six neighbours."""

    cells: Tensor           # buffers: each cell's index, the first pattern feature of its
    pattern_base: Tensor    # line, the base-3 place values of the neighbourhood
    digits: Tensor

    def __init__(self, arch: Architecture, input_shape: tuple[int, int, int]) -> None:
        super().__init__()
        weight_shapes(arch, input_shape)          # checks the input shape
        self.arch = arch
        self.input_shape = input_shape
        n = input_shape[1] - 2
        self.ft = nn.Linear(hex_nnue_features(n), arch.fc[0])
        widths = [2 * arch.fc[0], *arch.fc[1:]]
        self.fc, self.head = _dense_layers(widths)
        self.tanh = arch.output == "tanh"
        if arch.base:
            self.base = _Scale()
        cells = torch.arange(n * n)
        r, c = cells // n, cells % n
        line = (torch.clamp(torch.minimum(r, n - 1 - r), max=5) * 6
                + torch.clamp(torch.minimum(c, n - 1 - c), max=5))
        # constants, not weights: left out of the state dict
        self.register_buffer("cells", cells, persistent=False)
        self.register_buffer("pattern_base", 2 * n * n + line * HEX_NNUE_PATTERNS,
                             persistent=False)
        digits = torch.zeros(1, 1, 3, 3)
        for k, (dr, dc) in enumerate(((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0))):
            digits[0, 0, dr + 1, dc + 1] = 3.0 ** k
        self.register_buffer("digits", digits, persistent=False)

    def _view(self, own: Tensor, opp: Tensor) -> Tensor:
        """The sums (batch, width) of the view whose stones are ``own`` and the
        opponent's ``opp`` (padded planes, the viewer's edges on the top and bottom)."""
        n2 = self.cells.shape[0]
        states = (own + 2.0 * opp).unsqueeze(1)
        pattern = torch.round(torch.nn.functional.conv2d(states, self.digits)).flatten(1)
        mine = own[:, 1:-1, 1:-1].flatten(1) > 0.5
        theirs = opp[:, 1:-1, 1:-1].flatten(1) > 0.5
        index = torch.where(mine, self.cells, torch.where(
            theirs, n2 + self.cells, self.pattern_base + pattern.long()))
        rows = torch.nn.functional.embedding(index, self.ft.weight.t())
        return rows.sum(1) + self.ft.bias

    def forward(self, x: Tensor, base: Tensor | None = None) -> Tensor:
        black = self._view(x[:, 0], x[:, 1])
        white = self._view(x[:, 1].transpose(1, 2), x[:, 0].transpose(1, 2))
        black_moves = x[:, 2, 0, 0:1] > 0.5
        us = torch.where(black_moves, black, white)
        them = torch.where(black_moves, white, black)
        h = torch.clamp(torch.cat([us, them], 1), 0.0, 1.0)
        for layer in self.fc:
            h = torch.relu(layer(h))
        out = _on_base(self, self.head(h).reshape(-1), base)
        return torch.tanh(out) if self.tanh else out


class PolicyNet(_Tower):
    """A move-policy network (output ``policy`` or ``policy_value``): forward returns the
    logits of the cells inside the input's one-cell border, shape (batch, (H - 2) *
    (W - 2)), row-major; ``heads`` returns them with, for ``policy_value``, each cell's
    action value (same shape) and the position's value (batch,), both in [-1, 1] for the
    side to move."""

    def __init__(self, arch: Architecture, input_shape: tuple[int, int, int]) -> None:
        super().__init__(arch, input_shape)
        if not arch.is_policy:
            raise ValueError(f"a PolicyNet needs a policy output, not {arch.output!r}")
        f = arch.filters
        self.head = nn.Conv2d(f, 1, 1)
        self.has_values = arch.output == "policy_value"
        if self.has_values:
            self.vconv = nn.Conv2d(f, f, 1)
            self.qhead = nn.Conv2d(f, 1, 1)
            self.qglobal = nn.Linear(2 * f, 1)
            self.vfc = nn.Linear(2 * f, arch.fc[0])
            self.vhead = nn.Linear(arch.fc[0], 1)

    def forward(self, x: Tensor) -> Tensor:
        return torch.flatten(self.head(self.tower(x))[:, 0, 1:-1, 1:-1], 1)

    def heads(self, x: Tensor) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """(logits, action values, values); the last two None without value heads."""
        t = self.tower(x)
        logits = torch.flatten(self.head(t)[:, 0, 1:-1, 1:-1], 1)
        if not self.has_values:
            return logits, None, None
        h = torch.relu(self.vconv(t))
        pool = torch.cat([h.mean((2, 3)), h.amax((2, 3))], 1)
        q = torch.flatten(self.qhead(t)[:, 0, 1:-1, 1:-1], 1) + self.qglobal(pool)
        v = self.vhead(torch.relu(self.vfc(pool))).reshape(-1)
        return logits, torch.tanh(q), torch.tanh(v)


Module = ValueNet | PolicyNet | NNUENet | HexNNUENet


def module_from_weights(arch: Architecture, input_shape: tuple[int, int, int],
                        weights: Weights | None = None, seed: int = 0) -> Module:
    """The module of ``arch`` (a ValueNet, an NNUENet or HexNNUENet for the nnue family,
    or a PolicyNet for the policy output) holding ``weights`` (or the seeded initial weights
    of nets/arch.py)."""
    net: Module = (PolicyNet(arch, input_shape) if arch.is_policy
                   else ValueNet(arch, input_shape) if arch.family != "nnue"
                   else HexNNUENet(arch, input_shape) if is_hex_encoding(input_shape)
                   else NNUENet(arch, input_shape))
    if weights is None:
        weights = init_weights(arch, input_shape, seed)
    state = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in weights.items()}
    net.load_state_dict(state, strict=True)
    return net


def weights_from_module(net: Module) -> Weights:
    """The module's tensors as float32 numpy arrays, by model-file name (an nnue's
    feature transformer quantised, as its model files hold it)."""
    expected = weight_shapes(net.arch, net.input_shape)
    state = net.state_dict()
    out = {name: state[name].detach().to("cpu", torch.float32).numpy().copy()
           for name in expected}
    return quantise_nnue(out) if net.arch.family == "nnue" else out
