"""The model file: round trip, and one clear error for every way a file can be wrong."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import load, save

from descent.nets.arch import preset
from descent.nets.encoding import ENCODING_VERSIONS
from descent.nets.modelfile import (
    LoadedModel,
    ModelFileError,
    Provenance,
    ValueSpec,
    as_model,
    load_model,
    make_model,
    read_metadata,
    save_model,
    weights_digest,
)
from descent.search_cy.games.registry import make_game


@pytest.fixture
def saved(tmp_path: Path) -> tuple[LoadedModel, Path]:
    model = make_model("hex(size=5)", preset("hex", "tiny"), seed=2,
                       training=Provenance(steps=7, games=3, date="2026-11-23", seed=2,
                                           note="test"))
    return model, save_model(model, tmp_path / "model.safetensors")


def rewrite(src: Path, dst: Path, meta_edit: Callable[[dict[str, Any]], None] | None = None,
            weights_edit: Callable[[dict[str, np.ndarray]], None] | None = None) -> Path:
    """A copy of ``src`` with its metadata and/or tensors edited (hash left as it was)."""
    data = src.read_bytes()
    size = int.from_bytes(data[:8], "little")
    meta = json.loads(json.loads(data[8:8 + size])["__metadata__"]["descent"])
    weights = dict(load(data))
    if meta_edit:
        meta_edit(meta)
    if weights_edit:
        weights_edit(weights)
    dst.write_bytes(save(weights, metadata={"descent": json.dumps(meta)}))
    return dst


def check_an_nnue_speaks_for_the_side_to_move(nnue_file: Path, tmp_path: Path, game: str,
                                             arch: Any) -> None:
    """An nnue (``arch``, of ``nnue_file``'s family) in player 0's view is refused, as a
    file and as a new model (the dice chess and the Hex nnue tests)."""
    def player0(meta: dict[str, Any]) -> None:
        meta["value"]["view"] = "player0"

    with pytest.raises(ModelFileError, match="an nnue speaks for the side to move"):
        load_model(rewrite(nnue_file, tmp_path / "player0.dnet", player0), game)
    with pytest.raises(ModelFileError, match="speaks for the side to move"):
        make_model(game, arch, value=ValueSpec(view="player0"))


def test_round_trip_keeps_everything(saved: tuple[LoadedModel, Path]) -> None:
    model, path = saved
    back = load_model(path, "hex(size=5)")
    assert back.game.spec == model.game.spec
    assert back.arch == model.arch
    assert back.value == model.value
    assert back.training == model.training
    assert back.input_shape == (3, 7, 7)
    assert back.weights_sha256 == model.weights_sha256
    assert back.model_id == model.model_id
    assert back.weights.keys() == model.weights.keys()
    assert all(np.array_equal(back.weights[k], model.weights[k]) for k in model.weights)
    meta = read_metadata(path)
    assert meta["format"] == "descent-model" and meta["format_version"] == 1
    assert meta["encoding"]["shape"] == [3, 7, 7]
    assert meta["encoding"]["version"] == ENCODING_VERSIONS["hex"]
    assert meta["architecture"]["family"] == "resnet"
    assert meta["training"]["steps"] == 7
    assert len(meta["weights"]["sha256"]) == 64


def test_linear_models_record_their_heuristic_and_bounds(tmp_path: Path) -> None:
    value = ValueSpec(scale=10.0, lo=-60.0, hi=60.0, heuristic="depth_add", max_plies=60)
    model = make_model("einstein", preset("einstein", "tiny", output="linear"), value=value)
    back = load_model(save_model(model, tmp_path / "e.safetensors"), "einstein")
    assert back.value == value and back.arch.output == "linear"


def test_a_model_works_for_other_parameters_with_the_same_encoding(
        saved: tuple[LoadedModel, Path]) -> None:
    _, path = saved
    back = load_model(path, "hex(size=5,swap=true)")
    assert back.game.spec == "hex(size=5,swap=true)"
    # the fingerprint is checked on the game the model was saved for: the sampled
    # positions of the other game differ (at 11x11 they hold a swap)
    eleven = save_model(make_model("hex(size=11)", preset("hex", "tiny")),
                        path.with_name("eleven.dnet"))
    assert load_model(eleven, "hex(size=11,swap=true)").game.spec == "hex(size=11,swap=true)"


def test_saving_is_atomic_and_leaves_no_temporary(saved: tuple[LoadedModel, Path]) -> None:
    _, path = saved
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_unpickling_is_never_involved(saved: tuple[LoadedModel, Path]) -> None:
    _, path = saved
    assert b"\x80\x04" not in path.read_bytes()[:8]   # not a pickle protocol header
    assert path.read_bytes()[8:9] == b"{"              # a JSON header


def expect(path: Path, message: str, game: str | None = "hex(size=5)") -> None:
    with pytest.raises(ModelFileError, match=message) as info:
        load_model(path, game)
    assert str(path) in str(info.value)   # the error names the file


def test_wrong_game(saved: tuple[LoadedModel, Path]) -> None:
    expect(saved[1], "wrong game: the model is for hex, not einstein", "einstein")


def test_wrong_board_size(saved: tuple[LoadedModel, Path]) -> None:
    expect(saved[1], r"wrong board size: the model is for hex\(size=5,swap=false\) "
                     r"\(input 3x7x7\), the game is hex\(size=7,swap=false\)", "hex(size=7)")


def test_encoding_version_mismatch(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    def bump(meta: dict[str, Any]) -> None:
        meta["encoding"]["version"] = 99
    bad = rewrite(saved[1], tmp_path / "v99.safetensors", bump)
    expect(bad, "encoding version mismatch: .* v99, this engine's kernel encodes v1")


def test_encoding_fingerprint_mismatch(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    def other(meta: dict[str, Any]) -> None:
        meta["encoding"]["fingerprint"] = "0" * 64
    bad = rewrite(saved[1], tmp_path / "fp.safetensors", other)
    expect(bad, "encoding fingerprint mismatch")


def test_encoding_shape_mismatch(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    def other(meta: dict[str, Any]) -> None:
        meta["encoding"]["shape"] = [4, 7, 7]
    bad = rewrite(saved[1], tmp_path / "shape.safetensors", other)
    expect(bad, r"encoding shape mismatch: the model reads \[4, 7, 7\]")


@pytest.mark.parametrize("keep", [0, 5, 8, 100, -1])
def test_truncated_files(saved: tuple[LoadedModel, Path], tmp_path: Path, keep: int) -> None:
    data = saved[1].read_bytes()
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(data[:keep] if keep >= 0 else data[:-1])
    expect(cut, "truncated file")


def test_corrupt_header(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    data = bytearray(saved[1].read_bytes())
    data[9:20] = b"\xff" * 11
    bad = tmp_path / "garbage.safetensors"
    bad.write_bytes(bytes(data))
    expect(bad, "corrupt file: header is not JSON")


def test_absurd_header_length(tmp_path: Path) -> None:
    bad = tmp_path / "noise.safetensors"
    bad.write_bytes(b"\xff" * 64)
    expect(bad, "corrupt file: header length")


def test_corrupt_metadata(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    weights = dict(load(saved[1].read_bytes()))
    bad = tmp_path / "meta.safetensors"
    bad.write_bytes(save(weights, metadata={"descent": "{not json"}))
    expect(bad, "corrupt metadata: not JSON")

    def drop(meta: dict[str, Any]) -> None:
        del meta["architecture"]
    expect(rewrite(saved[1], tmp_path / "noarch.safetensors", drop),
           "corrupt metadata: 'architecture' section missing")


def test_not_a_descent_model(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    other = tmp_path / "other.safetensors"
    other.write_bytes(save({"w": np.zeros(3, dtype=np.float32)}, metadata={"format": "pt"}))
    expect(other, "not a descent model file")


def test_unsupported_format_version(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    def future(meta: dict[str, Any]) -> None:
        meta["format_version"] = 2
    expect(rewrite(saved[1], tmp_path / "v2.safetensors", future),
           "unsupported model format version 2")


def test_shape_mismatch(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    def wider(meta: dict[str, Any]) -> None:
        meta["architecture"]["filters"] = 9
    expect(rewrite(saved[1], tmp_path / "wide.safetensors", wider),
           r"shape mismatch: tensor stem.weight is \(8, 3, 3, 3\), the architecture .* "
           r"need \(9, 3, 3, 3\)")

    def missing(weights: dict[str, np.ndarray]) -> None:
        del weights["head.bias"]
    expect(rewrite(saved[1], tmp_path / "missing.safetensors", None, missing),
           "shape mismatch: tensor.* head.bias missing")


def test_bad_hash(saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    def nudge(weights: dict[str, np.ndarray]) -> None:
        weights["head.bias"] = weights["head.bias"] + np.float32(1e-3)
    expect(rewrite(saved[1], tmp_path / "edited.safetensors", None, nudge),
           "bad weights hash")


def test_flipped_byte_in_the_weights_is_caught(saved: tuple[LoadedModel, Path],
                                               tmp_path: Path) -> None:
    data = bytearray(saved[1].read_bytes())
    data[-3] ^= 0x40
    bad = tmp_path / "flipped.safetensors"
    bad.write_bytes(bytes(data))
    expect(bad, "bad weights hash")


def test_weights_that_are_not_finite_are_refused_even_with_a_matching_hash(
        saved: tuple[LoadedModel, Path], tmp_path: Path) -> None:
    """All-NaN weights whose stated hash matched loaded and played nonsense."""
    def poison(weights: dict[str, np.ndarray]) -> None:
        weights["head.bias"] = np.full_like(weights["head.bias"], np.nan)

    def rehash(meta: dict[str, Any]) -> None:
        edited = dict(load(saved[1].read_bytes()))
        poison(edited)
        meta["weights"]["sha256"] = weights_digest(edited)
    expect(rewrite(saved[1], tmp_path / "nan.safetensors", rehash, poison),
           "tensor head.bias holds 1 NaN or infinite value")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("scale", float("inf"), "value scale must be finite"),
    ("scale", 0.0, "value scale must be finite and not 0"),
    ("hi", float("inf"), "finite lo < hi"),
    ("max_plies", -1, "max_plies must be >= 0"),
])
def test_value_specs_that_cannot_be_right_are_refused(
        saved: tuple[LoadedModel, Path], tmp_path: Path, key: str, value: float,
        message: str) -> None:
    def edit(meta: dict[str, Any]) -> None:
        meta["value"][key] = value
    expect(rewrite(saved[1], tmp_path / "value.safetensors", edit), message)


def test_a_directory_is_not_a_model_file(tmp_path: Path) -> None:
    expect(tmp_path, "is a directory, not a model file")


def test_missing_file(tmp_path: Path) -> None:
    expect(tmp_path / "nope.safetensors", "no such model file")


def test_as_model_checks_a_loaded_model_against_the_game(
        saved: tuple[LoadedModel, Path]) -> None:
    model, _ = saved
    assert as_model(model, make_game("hex(size=5)").new_initial_state()) is model
    with pytest.raises(ModelFileError, match="not hex"):
        as_model(model, "hex(size=6)")
