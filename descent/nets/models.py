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

from descent.nets.arch import Architecture, Weights, init_weights, weight_shapes


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


class ValueNet(_Tower):
    """One of the value families of nets/arch.py; forward returns shape (batch,)."""

    def __init__(self, arch: Architecture, input_shape: tuple[int, int, int]) -> None:
        super().__init__(arch, input_shape)
        if arch.is_policy:
            raise ValueError("a policy architecture makes a PolicyNet, not a ValueNet")
        planes, height, width = input_shape
        f = arch.filters
        widths = [(planes if arch.family == "mlp" else f) * height * width, *arch.fc]
        self.fc = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:],
                                                                  strict=False))
        self.head = nn.Linear(widths[-1], 1)
        self.tanh = arch.output == "tanh"

    def forward(self, x: Tensor) -> Tensor:
        x = torch.flatten(self.tower(x), 1)
        for layer in self.fc:
            x = torch.relu(layer(x))
        x = self.head(x).reshape(-1)
        return torch.tanh(x) if self.tanh else x


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


def module_from_weights(arch: Architecture, input_shape: tuple[int, int, int],
                        weights: Weights | None = None, seed: int = 0) -> ValueNet | PolicyNet:
    """The module of ``arch`` (a ValueNet, or a PolicyNet for the policy output) holding
    ``weights`` (or the seeded initial weights of nets/arch.py)."""
    net: ValueNet | PolicyNet = (PolicyNet(arch, input_shape) if arch.is_policy
                                 else ValueNet(arch, input_shape))
    if weights is None:
        weights = init_weights(arch, input_shape, seed)
    state = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in weights.items()}
    net.load_state_dict(state, strict=True)
    return net


def weights_from_module(net: ValueNet | PolicyNet) -> Weights:
    """The module's tensors as float32 numpy arrays, by model-file name."""
    expected = weight_shapes(net.arch, net.input_shape)
    state = net.state_dict()
    return {name: state[name].detach().to("cpu", torch.float32).numpy().copy()
            for name in expected}
