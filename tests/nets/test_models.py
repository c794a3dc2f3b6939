"""Architectures and presets: weight shapes, the torch modules' outputs, seeded weights."""

from __future__ import annotations

import numpy as np
import pytest

from descent.nets.arch import (
    PRESETS,
    Architecture,
    init_weights,
    multiply_adds,
    preset,
    weight_shapes,
)
from descent.search_cy.games.registry import make_game

SPECS = {"hex": "hex(size=11)", "einstein": "einstein", "dicechess": "dicechess"}
CASES = [(game, name) for game in PRESETS for name in PRESETS[game]]


def input_shape(game: str) -> tuple[int, int, int]:
    planes, height, width = make_game(SPECS[game]).new_initial_state().encoding_shape
    return (planes, height, width)


@pytest.mark.parametrize(("game", "name"), CASES)
def test_torch_module_has_the_preset_shapes_and_one_value_per_position(game: str,
                                                                        name: str) -> None:
    import torch

    from descent.nets.models import module_from_weights, weights_from_module

    arch = preset(game, name)
    shape = input_shape(game)
    net = module_from_weights(arch, shape)
    expected = weight_shapes(arch, shape)
    assert {k: tuple(v.shape) for k, v in net.state_dict().items()} == expected
    loaded = module_from_weights(arch, shape, seed=5).eval()
    # a network on the C heuristic takes the heuristic's values too
    base = (torch.tensor([0.5, 0.0, -0.99]),) if arch.base else ()
    with torch.inference_mode():
        out = loaded(torch.zeros(3, *shape), *base)
    assert tuple(out.shape) == (3,)
    assert bool(torch.all(out.abs() <= 1.0))   # tanh output
    back = weights_from_module(loaded)
    ref = init_weights(arch, shape, seed=5)
    assert back.keys() == ref.keys()
    assert all(np.array_equal(back[k], ref[k]) for k in ref)


def test_paper_presets_are_the_papers_networks() -> None:
    ewn = preset("einstein", "paper")
    assert (ewn.family, ewn.filters, ewn.blocks, ewn.fc) == ("resnet", 83, 4, (425, 425))
    hexp = preset("hex", "paper")
    assert (hexp.family, hexp.filters, hexp.blocks, hexp.fc) == ("resnet", 83, 4, (74,))
    # the field notes' cost of the Hex paper net on 11x11: about 85 M multiply-adds
    assert 80e6 < multiply_adds(hexp, input_shape("hex")) < 90e6


def test_plain_family_and_linear_output() -> None:
    import torch

    from descent.nets.models import module_from_weights

    arch = preset("hex", "cpu", output="linear")
    assert arch.family == "conv" and arch.convs == 3
    net = module_from_weights(arch, input_shape("hex"), seed=1)
    with torch.inference_mode():
        out = net(torch.ones(2, *input_shape("hex")) * 5)
    assert tuple(out.shape) == (2,)


def test_seeded_initial_weights_are_deterministic() -> None:
    arch = preset("einstein", "cpu")
    a = init_weights(arch, input_shape("einstein"), seed=9)
    b = init_weights(arch, input_shape("einstein"), seed=9)
    c = init_weights(arch, input_shape("einstein"), seed=10)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["stem.weight"], c["stem.weight"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"family": "transformer", "filters": 8}, "unknown architecture family"),
     ({"family": "mlp", "filters": 8, "fc": (16,)}, "no convolutions"),
     ({"family": "mlp", "filters": 0}, "at least one fully connected"),
     ({"family": "resnet", "filters": 8, "output": "sigmoid"}, "unknown output"),
     ({"family": "conv", "filters": 8}, "convs >= 1"),
     ({"family": "resnet", "filters": 0}, "filters must be >= 1")])
def test_bad_architectures_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Architecture(**kwargs)  # type: ignore[arg-type]


def test_unknown_presets_name_what_exists() -> None:
    with pytest.raises(ValueError,
                       match="known: paper, cpu, fast, mlp, mlp_wide, nnue, nnue_tiny, tiny"):
        preset("hex", "huge")
    with pytest.raises(ValueError, match="no network presets"):
        preset("chess", "cpu")
