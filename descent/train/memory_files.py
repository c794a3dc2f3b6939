"""The replay memory on disk: append-only segment files beside the checkpoint.

A checkpoint used to hold the whole replay memory, so every checkpoint rewrote it (3 GB at
45 M pairs: minutes of a run spent writing data that had not changed). Now each checkpoint
writes only the games added since the previous one, as one segment file in
``run_dir/memory/``, and the checkpoint itself names the segments it relies on and the
serial numbers (games ever added, counting from 0) of the games it keeps.

Every write is atomic (a temporary file, fsync, rename) and nothing a checkpoint names is
removed before a newer checkpoint no longer names it: a kill at any moment leaves the last
checkpoint and all its segments. Segments no checkpoint names (written just before a
kill, or dropped by the memory's trimming) are removed after the next checkpoint and when
a run resumes.

A segment ``games-<first>-<end>.npz`` holds games ``first .. end-1``: the rows of its
bit-packed games one after another (``packed``), those of its float32 games likewise
(``dense``), each game's number of pairs (``lengths``) and kind (``is_packed``), and the
values of all its pairs (``values``). Loaded with ``allow_pickle=False``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from descent.nets.files import atomic_write, fsync_dir

FOLDER = "memory"
Game = tuple[npt.NDArray[Any], npt.NDArray[np.float32]]
Segment = tuple[str, int, int]          # file name, first serial, number of games


class MissingSegment(ValueError):
    """A segment a checkpoint names is not there (a running trainer may have replaced the
    checkpoint and removed it since the checkpoint was read)."""


def segment_name(first: int, end: int) -> str:
    return f"games-{first:012d}-{end:012d}.npz"


def write_segment(run_dir: Path, first: int, games: Sequence[Game]) -> Segment:
    """Writes ``games`` (serials ``first``, ``first + 1``, ...) as one segment file,
    atomically; returns its entry for the checkpoint."""
    if not games:
        raise ValueError("a memory segment needs at least one game")
    folder = run_dir / FOLDER
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        fsync_dir(run_dir)
    is_packed = np.array([stored.dtype == np.uint8 for stored, _ in games], dtype=np.bool_)
    packed = [stored for stored, _ in games if stored.dtype == np.uint8]
    dense = [stored for stored, _ in games if stored.dtype != np.uint8]
    arrays: dict[str, npt.NDArray[Any]] = {
        "packed": (np.concatenate(packed) if packed else np.zeros((0, 0), np.uint8)),
        "dense": (np.concatenate(dense).astype(np.float32, copy=False) if dense
                  else np.zeros((0, 0), np.float32)),
        "lengths": np.array([len(values) for _, values in games], dtype=np.int64),
        "is_packed": is_packed,
        "values": np.concatenate([values for _, values in games]).astype(np.float32),
    }
    name = segment_name(first, first + len(games))
    # durable, rename included: the checkpoint that names it must not outlive its entry
    with atomic_write(folder / name) as handle:
        np.savez(handle, **arrays)  # type: ignore[arg-type]
    return name, first, len(games)


def read_segment(run_dir: Path, segment: Segment) -> list[Game]:
    """The games of one segment, in order (views into the segment's arrays)."""
    name, _first, count = segment
    path = run_dir / FOLDER / name
    try:
        with np.load(path, allow_pickle=False) as data:
            packed, dense = data["packed"], data["dense"]
            lengths, is_packed, values = data["lengths"], data["is_packed"], data["values"]
    except FileNotFoundError:
        raise MissingSegment(f"{path}: a memory segment the checkpoint names is missing"
                             ) from None
    except Exception as exc:
        raise ValueError(f"{path}: unreadable memory segment ({exc})") from None
    if len(lengths) != count or len(is_packed) != count or int(lengths.sum()) != len(values):
        raise ValueError(f"{path}: holds {len(lengths)} games, the checkpoint says {count}")
    games: list[Game] = []
    at = {True: 0, False: 0}
    row = 0
    for n, kind in zip(lengths.tolist(), is_packed.tolist(), strict=True):
        source = packed if kind else dense
        games.append((source[at[kind]:at[kind] + n], values[row:row + n]))
        at[kind] += n
        row += n
    if at[True] != len(packed) or at[False] != len(dense):
        raise ValueError(f"{path}: its rows do not add up to its games' lengths")
    return games


def read_games(run_dir: Path, segments: Iterable[Segment], first: int, end: int) -> list[Game]:
    """Games ``first .. end-1`` from ``segments`` (which must cover them), each in its own
    arrays, so that trimming a game frees it."""
    games: list[Game] = []
    expected = first
    for segment in sorted(segments, key=lambda s: s[1]):
        _name, start, count = segment
        if start + count <= first or start >= end:
            continue
        if start > expected:
            break
        for serial, game in enumerate(read_segment(run_dir, segment), start):
            if expected <= serial < end:
                games.append((game[0].copy(), game[1].copy()))
                expected = serial + 1
    if expected != end:
        raise ValueError(f"{run_dir / FOLDER}: the segments hold games up to {expected}, "
                         f"the checkpoint keeps games {first} to {end - 1}")
    return games


def remove_unnamed(run_dir: Path, segments: Iterable[Segment]) -> None:
    """Deletes the segment files (and temporaries) no entry of ``segments`` names. Call
    only once a checkpoint naming ``segments`` is on disk."""
    folder = run_dir / FOLDER
    if not folder.is_dir():
        return
    keep = {name for name, _first, _count in segments}
    for path in folder.iterdir():
        if path.name not in keep and path.suffix in (".npz", ".tmp"):
            path.unlink(missing_ok=True)


def live_segments(segments: Iterable[Segment], first: int) -> list[Segment]:
    """The segments still holding a game of serial ``first`` or later."""
    return [s for s in segments if s[1] + s[2] > first]


def checkpoint_games(run_dir: Path, state: dict[str, Any]) -> tuple[tuple[int, ...], list[Game]]:
    """The replay memory a loaded checkpoint describes: its row shape and games, from the
    segment files (version 2) or from the checkpoint itself (version 1)."""
    shape = tuple(int(x) for x in state["memory_shape"])
    if "memory" in state:                       # version 1: the games inline
        return shape, [(p.numpy(), v.numpy()) for p, v in state["memory"]]
    return shape, read_games(run_dir, checkpoint_segments(state),
                             int(state["memory_first"]), int(state["memory_end"]))


def checkpoint_segments(state: dict[str, Any]) -> list[Segment]:
    """The segments a loaded checkpoint names (none in version 1)."""
    return [(str(n), int(a), int(c)) for n, a, c in state.get("memory_segments", [])]


def load_run_memory(run_dir: Path, attempts: int = 3
                    ) -> tuple[dict[str, Any], tuple[int, ...], list[Game]] | None:
    """The latest checkpoint of ``run_dir`` (None when there is none) with its replay
    memory's shape and games. Safe while the run trains: when the run replaces its
    checkpoint (and drops a segment) between the two reads, it reads them again."""
    from descent.train.checkpoint import load_checkpoint

    for attempt in range(attempts):
        state = load_checkpoint(run_dir)
        if state is None:
            return None
        try:
            shape, games = checkpoint_games(run_dir, state)
        except MissingSegment:
            if attempt == attempts - 1:
                raise
            continue
        return state, shape, games
    raise AssertionError("unreachable")
