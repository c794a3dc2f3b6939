"""Self-play on a real local Ray cluster (``ray start --head``, two CPUs): the same games
as local workers, weights by version, an actor killed mid-game replaced with nothing of
its game learned, and a learner killed and resumed."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from descent.train.report import without_timings
from descent.train.trainer import METRICS_NAME, Trainer
from tests.train.conftest import tiny_config

ray = pytest.importorskip("ray", reason="the cluster extra (Ray) is not installed")

PORT = 46379


def _ray_cli() -> list[str]:
    exe = shutil.which("ray")
    return [exe] if exe else [sys.executable, "-m", "ray.scripts.scripts"]


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """A head node of two CPUs started as a user would (``ray start --head``), joined by
    this process; its address for subprocesses. Stopped at the end of the run: once per
    run, since a test worker may run other modules between this one's tests, and a head
    restarted at once after ``ray stop`` can refuse its clients (WrongClusterID)."""
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    subprocess.run([*_ray_cli(), "stop", "--force"], env=env, capture_output=True)
    started = subprocess.run(
        [*_ray_cli(), "start", "--head", f"--port={PORT}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats"],
        env=env, capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr + started.stdout
    # the address it tells workers to join (the node's IP, where the GCS listens)
    found = re.search(r"--address='([^']+)'", started.stdout + started.stderr)
    address = found.group(1) if found else "auto"
    try:
        yield address
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run([*_ray_cli(), "stop", "--force"], env=env, capture_output=True,
                       timeout=120)


def _cfg(**changes: Any) -> Any:
    base: dict[str, Any] = {"selfplay__iterations": 20, "selfplay__eps_start": 0.5}
    base.update(changes)
    return tiny_config("hex(size=4)", **base)


def _model(cfg: Any, seed: int) -> Any:
    from descent.search_cy.games.registry import make_game
    from descent.train.heuristics import reinforcement_for
    from descent.train.network import Learner

    game = make_game(cfg.game)
    reinforcement = reinforcement_for(game.new_initial_state(), cfg.selfplay.heuristic,
                                      cfg.selfplay.max_plies)
    return Learner(game, cfg.network.preset, reinforcement, seed=seed).current_model()


def _same(a: list[Any], b: list[Any]) -> None:
    assert [g.record.actions for g in a] == [g.record.actions for g in b]
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x.record.planes, y.record.planes)
        assert np.array_equal(x.record.values, y.record.values)
        assert x.positions == y.positions > 0


def test_actors_play_the_games_local_workers_play_and_take_new_weights(
        cluster: str) -> None:
    from descent.train.cluster import RayPool
    from descent.train.workers import _Player

    cfg = _cfg()
    first, second = _model(cfg, 5), _model(cfg, 6)
    pool = RayPool(cfg, 2, cluster)
    try:
        assert pool.versions() == [-1, -1]
        there = pool.play(3, 6, 0.5, first)
        assert pool.versions() == [1, 1]
        again = pool.play(9, 4, 0.5, second)       # the next update round's weights
        assert pool.versions() == [2, 2]
        assert pool.replayed == 0
    finally:
        pool.close()
    _same(there, _Player(cfg).play(list(range(3, 9)), 0.5, first))
    _same(again, _Player(cfg).play(list(range(9, 13)), 0.5, second))
    assert len({tuple(g.record.actions) for g in there}) > 1


def test_actors_batch_their_games_as_local_workers_do(cluster: str) -> None:
    from descent.train.cluster import RayPool
    from descent.train.workers import _Player

    cfg = _cfg(selfplay__batch_games=3, selfplay__workers=2)
    model = _model(cfg, 5)
    pool = RayPool(cfg, 2, cluster)
    try:
        there = pool.play(0, 6, 0.5, model)         # a task of three games an actor
    finally:
        pool.close()
    _same(there, _Player(cfg.with_overrides(selfplay__batch_games=1)).play(
        list(range(6)), 0.5, model))
    # gathered: fewer backend calls than the games' searches made one at a time
    alone = _Player(cfg.with_overrides(selfplay__batch_games=1)).play(list(range(6)), 0.5,
                                                                       model)
    assert sum(g.batches for g in there) < sum(g.batches for g in alone)


def test_an_actor_killed_mid_game_is_replaced_and_its_game_played_again(
        cluster: str) -> None:
    from descent.train.cluster import RayPool
    from descent.train.workers import _Player

    # Hex 5x5 at 300 iterations a move: about two seconds a game here
    cfg = tiny_config("hex(size=5)", selfplay__iterations=300, selfplay__eps_start=0.5)
    model = _model(cfg, 5)
    pool = RayPool(cfg, 2, cluster)
    try:
        pool.play(0, 2, 0.5, model)                 # both actors up, weights held
        victim = pool.pids()[0]
        out: dict[str, Any] = {}

        def play() -> None:
            # a game an actor: the victim's is played again by its replacement, the
            # other actor's runs on untouched, and both are checked against a live worker
            out["games"] = pool.play(2, 2, 0.5, model)

        worker = threading.Thread(target=play)
        worker.start()
        time.sleep(0.8)                             # inside the round's first games
        os.kill(victim, signal.SIGKILL)
        worker.join(timeout=600)
        assert not worker.is_alive()
        assert pool.replayed >= 1
        assert victim not in pool.pids()            # a new process took its place
    finally:
        pool.close()
    # the games learned are whole games, exactly those a live worker plays
    _same(out["games"], _Player(cfg).play([2, 3], 0.5, model))


def _metrics(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / METRICS_NAME).read_text().splitlines()
    return [without_timings(json.loads(line)) for line in lines]


def _train_args(run: Path, address: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "descent", "train", "--run-dir", str(run), "--quiet",
            "--cluster", "ray", "--address", address, *extra]


def test_a_cluster_run_is_a_local_run_and_survives_its_learner(
        cluster: str, tmp_path: Path) -> None:
    from descent.train.config import load_config

    cfg_text = (
        'game = "hex(size=3)"\nseed = 7\n'
        '[selfplay]\niterations = 20\ngames_per_iteration = 4\nworkers = 2\n'
        'eps_start = 0.5\nanneal_iterations = 10\nhash_mb = 4\n'
        '[data]\nreplay_games = 8\n[update]\nbatch_size = 32\ndevice = "cpu"\n'
        '[eval]\nevery = 0\ngames = 0\n[run]\ncheckpoint_every = 1\n')
    config = tmp_path / "run.toml"
    config.write_text(cfg_text)
    local = Trainer(load_config(config).with_overrides(run__max_iterations=3,
                                                       run__progress=False),
                    tmp_path / "local")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    run = tmp_path / "cluster"
    # the learner is killed (SIGKILL) once its first checkpoint is written ...
    proc = subprocess.Popen(_train_args(run, cluster, "--config", str(config),
                                        "--max-iterations", "50"),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 600
    while not (run / "checkpoint.pt").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    done = len(_metrics(run))
    assert 1 <= done < 50
    # ... and resumed on the cluster, it continues from that checkpoint
    resumed = subprocess.run(_train_args(run, cluster, "--resume", "--max-iterations", "1"),
                             env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    records = _metrics(run)
    iterations = [r["iteration"] for r in records if r.get("kind") == "iteration"]
    assert iterations == list(range(1, len(iterations) + 1))
    # the cluster's games are the local workers' games: same metrics, iteration by
    # iteration (the killed learner lost nothing it had checkpointed)
    local.run()
    expected = [r for r in _metrics(tmp_path / "local") if r.get("kind") == "iteration"]
    got = [r for r in records if r.get("kind") == "iteration"]
    n = min(len(expected), len(got))
    assert n >= 2
    assert got[:n] == expected[:n]


# -- the package the actors import -------------------------------------------------------

RUN_SECONDS = 600          # generous: a stuck pool is the failure, not a slow machine
TINY_RUN = ('seed = 7\n[selfplay]\niterations = 12\ngames_per_iteration = 2\nworkers = 1\n'
            'hash_mb = 4\n[data]\nreplay_games = 8\n[update]\nbatch_size = 32\n'
            'device = "cpu"\n[eval]\nevery = 0\ngames = 0\n[run]\ncheckpoint_every = 1\n')
# `descent train` whose Ray workers are pointed at another copy of the package (the
# folder ray.init runs in, which Ray puts first on its workers' sys.path)
_POINTED_MAIN = ("import sys\nimport descent.train.cluster as cluster\n"
                 "root = sys.argv.pop(1)\ncluster.package_root = lambda: root\n"
                 "from descent.tools.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def _sources(folder: Path, built: bool) -> Path:
    """A copy of the ``descent`` package in ``folder``: its Python files, and its compiled
    extensions when ``built``. The folder returned holds ``descent/``."""
    import descent

    here = Path(descent.__file__).parent
    keep = ("*.py", "*.so", "*.pyd") if built else ("*.py",)
    for pattern in keep:
        for path in here.rglob(pattern):
            if "__pycache__" in path.parts:
                continue
            target = folder / "descent" / path.relative_to(here)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return folder


def _descent_cli() -> list[str]:
    """The ``descent`` script installed beside this Python, as a user runs it (else
    ``python -P -m descent``: the current folder kept off sys.path, as the script does)."""
    script = Path(sys.executable).parent / "descent"
    return [str(script)] if script.is_file() else [sys.executable, "-P", "-m", "descent"]


def _alone_env() -> dict[str, str]:
    # a local cluster of its own, even while this module's `ray start` cluster is up
    return {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ADDRESS": "local"}


def _tiny_train(folder: Path) -> list[str]:
    (folder / "tiny.toml").write_text(TINY_RUN)
    return ["train", "--game", "hex(size=3)", "--cluster", "ray", "--run-dir", "R",
            "--config", "tiny.toml", "--max-iterations", "1", "--quiet"]


def test_a_run_started_in_a_folder_of_unbuilt_sources_plays_with_the_installed_package(
        tmp_path: Path) -> None:
    # a clone where the user ran `pip install .` and stayed: `descent/` here has no
    # compiled extensions; Ray puts the current folder first on its workers' sys.path
    folder = _sources(tmp_path, built=False)
    done = subprocess.run([*_descent_cli(), *_tiny_train(folder)], cwd=folder,
                          env=_alone_env(), capture_output=True, text=True,
                          timeout=RUN_SECONDS)
    assert done.returncode == 0, done.stderr
    assert (folder / "R" / "checkpoint.pt").is_file()
    assert "iterations: 1" in done.stdout


def _pointed_run(tmp_path: Path, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-c", _POINTED_MAIN, str(root),
                           *_tiny_train(tmp_path)], cwd=tmp_path, env=_alone_env(),
                          capture_output=True, text=True, timeout=RUN_SECONDS)


def _error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr.strip().splitlines()[-1]


def test_workers_that_cannot_import_the_package_fail_the_run_with_one_line(
        tmp_path: Path) -> None:
    broken = _sources(tmp_path / "broken", built=False)
    line = _error(_pointed_run(tmp_path, broken))
    assert line.startswith("descent train: error: ray workers could not import descent: ")
    assert "ModuleNotFoundError: No module named 'descent.search_cy" in line
    assert not (tmp_path / "R" / "checkpoint.pt").exists()


def test_workers_that_import_another_copy_of_the_package_fail_the_run_with_one_line(
        tmp_path: Path) -> None:
    import descent

    other = _sources(tmp_path / "other", built=True)
    line = _error(_pointed_run(tmp_path, other))
    there = other.resolve() / "descent" / "__init__.py"
    assert line == (f"descent train: error: ray workers import descent from {there}, "
                    f"this process from {Path(descent.__file__).resolve()}")
