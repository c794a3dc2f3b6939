"""Label generation: shards a fresh clone can read back, resumable, deterministic by seed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from descent.search_cy.games.registry import make_game
from descent.train.labels import DRAW, Player, generate, index, load, play_game

PLAYER = Player(size=5, sims=200, branch=0.5)


def test_a_game_is_the_same_on_any_machine_and_its_labels_are_the_searchs() -> None:
    first, again = play_game((PLAYER, 3, 7)), play_game((PLAYER, 3, 7))
    assert first.moves == again.moves and first.values == again.values
    assert first.policy == again.policy and first.seed == 3_000_007
    state = make_game(PLAYER.game).new_initial_state()
    for move in first.moves:
        state.apply_action(move)
    # the game ends at its end or at a proof, and the winner is the proof's or the board's
    assert state.is_terminal() or first.proven[-1]
    if state.is_terminal():
        assert first.winner == (0 if state.terminal_value() > 0 else 1)
    else:
        assert first.winner == (0 if first.values[-1] > 0 else 1)
    assert len(first.plies) == len(first.values) == len(first.policy) > 0


def test_fast_searches_play_moves_and_label_none_of_them(tmp_path: Path) -> None:
    fast = Player(size=5, sims=300, branch=0.5, fast_sims=30, full_share=0.3)
    assert fast.to_json()["fast_sims"] == 30 and "fast_sims" not in PLAYER.to_json()
    game, again = play_game((fast, 1, 4)), play_game((fast, 1, 4))
    assert game.moves == again.moves and game.values == again.values
    main = [ply for ply, extra in zip(game.plies, game.extras, strict=True) if extra < 0]
    searched = len(game.moves) - 1          # every move after the random first stone
    assert 0 < len(main) < searched         # some moves labelled, not all
    # the labelled positions are full searches: more visits than a fast search has
    assert all(sum(v for _, v in p) > fast.fast_sims for p in game.policy)
    with pytest.raises(ValueError, match="fast sims < sims"):
        generate(tmp_path / "bad", Player(size=5, sims=100, fast_sims=100), games=1)
    with pytest.raises(ValueError, match="full share"):
        generate(tmp_path / "bad", Player(size=5, sims=100, fast_sims=10, full_share=0.0),
                 games=1)


def test_shards_read_back_as_positions_with_their_visit_distributions(tmp_path: Path) -> None:
    folder = tmp_path / "hex5"
    assert generate(folder, PLAYER, games=3, jobs=1, shard_games=2) == 3
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["games"] == 3 and [s["games"] for s in manifest["shards"]] == [2, 1]
    assert manifest["shards"][0]["games_by_stream"] == {"1": [[0, 1]]}
    labels = load(folder)
    assert labels.positions == manifest["positions"] > 0
    game = make_game(PLAYER.game)
    for p in range(labels.positions):
        state = game.new_initial_state()
        for move in labels.moves(p):
            state.apply_action(move)
        assert not state.is_terminal()
        policy = labels.policy(p)
        assert policy.sum() == pytest.approx(1.0, abs=1e-5)
        legal = np.zeros(PLAYER.size ** 2, bool)
        legal[state.legal_actions()] = True
        assert not policy[~legal].any()           # visits only on empty cells
        assert legal[int(labels.arrays["best"][p])]
        assert -1.0 <= labels.arrays["value"][p] <= 1.0
    assert (labels.arrays["pos_extra"] >= 0).any()   # branch positions are there too


def test_generation_resumes_and_refuses_another_players_folder(tmp_path: Path) -> None:
    folder = tmp_path / "hex5"
    generate(folder, PLAYER, games=2, shard_games=5)
    generate(folder, PLAYER, games=1, shard_games=5)
    generate(folder, PLAYER, games=1, stream=2, shard_games=5)
    done = sorted((s, i) for shard in index(folder)["shards"]
                  for s, runs in shard["games_by_stream"].items()
                  for lo, hi in runs for i in range(lo, hi + 1))
    assert done == [("1", 0), ("1", 1), ("1", 2), ("2", 0)]
    with pytest.raises(ValueError, match="one folder holds one player's games"):
        generate(folder, Player(size=5, sims=300), games=1)


def test_a_shard_that_is_not_the_manifests_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "hex5"
    generate(folder, PLAYER, games=1)
    shard = next(folder.glob("s1-*.npz"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="SHA-256"):
        load(folder)
    (folder / "s1-000009-000009.npz").write_bytes(b"not a shard")
    with pytest.raises(ValueError, match="not a labels shard"):
        index(folder)


def test_adding_a_shard_reads_that_shard_only(tmp_path: Path) -> None:
    """The manifest's entries stand for the shards it lists (written once) until a full
    rebuild, which reads every shard again."""
    folder = tmp_path / "hex5"
    generate(folder, PLAYER, games=1)
    listed = next(folder.glob("s1-*.npz"))
    entry = index(folder)["shards"][0]
    listed.write_bytes(b"damaged after it was listed")
    generate(folder, PLAYER, games=1, stream=2)   # writes a shard and updates the manifest
    manifest = index(folder, rehash=False)
    assert manifest["shards"][0] == entry
    assert [s["file"][:2] for s in manifest["shards"]] == ["s1", "s2"]
    assert manifest["games"] == 2
    with pytest.raises(ValueError, match=f"{listed.name}: not a labels shard"):
        index(folder)


def test_sigterm_writes_the_finished_games_and_exits_cleanly(tmp_path: Path) -> None:
    """A stop (SIGTERM, as at the end of a session) loses only the games in play."""
    import signal
    import subprocess
    import sys
    import time

    folder = tmp_path / "hex5"
    proc = subprocess.Popen([sys.executable, "-m", "descent", "labels", "generate", str(folder),
                             "--size", "5", "--sims", "200", "--hours", "1",
                             "--shard-games", "100000"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert "stream 1, 0 games done, 1 playing" in proc.stdout.readline()
    time.sleep(3.0)                               # games are being played
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=120)
    out = rest
    assert proc.returncode == 0, out
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["games"] >= 1 and len(manifest["shards"]) == 1, out
    assert f"{manifest['games']} games in" in out


def test_einstein_labels_record_the_dice_and_the_expectiminimax_values(tmp_path: Path) -> None:
    player = Player.for_game("einstein", sims=300, branch=0.3)
    assert player.search == "expectiminimax" and player.heuristic == "distance"
    assert player.to_json()["game"] == make_game("einstein").spec == player.game
    first = play_game((player, 2, 5))
    assert first.moves == play_game((player, 2, 5)).moves       # deterministic by seed
    # the game replays to its end from the recorded dice and moves; its winner is the board's
    state = make_game(player.game).new_initial_state()
    for move in first.moves:
        state.apply_action(move)
    assert state.is_terminal()
    assert first.winner == (0 if state.terminal_value() > 0 else 1)
    folder = tmp_path / "einstein"
    assert generate(folder, player, games=2, shard_games=2) == 2
    labels = load(folder)
    assert labels.size == 0 and labels.game == player.game
    for p in range(labels.positions):
        state = make_game(player.game).new_initial_state()
        for move in labels.moves(p):
            state.apply_action(move)
        assert not state.is_terminal()
        if int(labels.arrays["pos_extra"][p]) < 0:
            # a position the game reached: a move was chosen there, after its die
            assert state.current_player() in (0, 1) and state.phase_name == "move"
            assert int(labels.arrays["best"][p]) in state.legal_actions()
        assert -1.0 <= labels.arrays["value"][p] <= 1.0
    proven = labels.arrays["proven"]
    # positions the search solved (the endgames) carry the exact expectiminimax value
    assert proven.any()
    with pytest.raises(ValueError, match="one player's games"):
        generate(folder, Player.for_game("einstein", sims=301), games=1)


def test_dice_chess_games_end_with_the_boards_result() -> None:
    player = Player.for_game("dicechess", sims=100, branch=0.0)
    for game_index in range(3):
        record = play_game((player, 1, game_index))
        state = make_game(player.game).new_initial_state()
        for move in record.moves:
            state.apply_action(move)
        assert state.is_terminal()
        value = state.terminal_value()
        assert record.winner == (0 if value > 0 else 1 if value < 0 else DRAW)
        assert len(record.values) == len(record.plies) > 0


def test_a_player_with_a_value_network_records_it_and_reads_its_leaves(
        tmp_path: Path) -> None:
    """Expert iteration's next player: rave with a value network in C (the engine's
    ``search=rave,model=...,value_mix=...,value_fade=...``), recorded in every shard."""
    from descent.nets.arch import policy_preset, preset
    from descent.nets.modelfile import ValueSpec, make_model, save_model

    model = make_model("hex(size=5)", preset("hex", "nnue_tiny"), seed=6)
    path = save_model(model, tmp_path / "nnue.dnet")
    player = PLAYER.with_value(str(path), 0.5, 100.0, visits=0)
    assert {k: player.to_json()[k] for k in ("value_sha256", "value_visits", "value_mix",
                                             "value_fade")} == {
        "value_sha256": model.weights_sha256, "value_visits": 0, "value_mix": 0.5,
        "value_fade": 100.0}
    assert "value_sha256" not in PLAYER.to_json()     # earlier folders' players unchanged
    game = play_game((player, 1, 3))
    assert game.moves == play_game((player, 1, 3)).moves      # deterministic by seed
    # the same game's first search reads the network: its visits are not the plain player's
    assert game.policy[0] != play_game((PLAYER, 1, 3)).policy[0]
    folder = tmp_path / "hex5-v"
    generate(folder, player, games=1)
    assert json.loads((folder / "manifest.json").read_text())["shards"][0]["player"] == \
        player.to_json()
    policy = save_model(make_model("hex(size=5)", policy_preset("hex", "tiny"), seed=7),
                        tmp_path / "policy.dnet")
    with pytest.raises(ValueError, match="policy.dnet: a move-policy network"):
        PLAYER.with_value(str(policy), 0.5)
    with pytest.raises(ValueError, match="value mix 1.5: a share"):
        PLAYER.with_value(str(path), 1.5)
    with pytest.raises(ValueError, match="value fade -1: child visits"):
        PLAYER.with_value(str(path), 0.5, -1.0)
    with pytest.raises(ValueError, match="value visits -1: virtual visits"):
        PLAYER.with_value(str(path), 0.5, visits=-1)
    with pytest.raises(ValueError, match="not expectiminimax"):
        Player.for_game("einstein").with_value(str(path), 0.5)
    depth = save_model(make_model("hex(size=5)", preset("hex", "mlp"), seed=3,
                                  value=ValueSpec(scale=26.0, lo=-26.0, hi=26.0,
                                                  heuristic="depth_add", max_plies=25)),
                       tmp_path / "depth.dnet")
    with pytest.raises(ValueError, match="depth.dnet: rave reads a value network as odds"):
        PLAYER.with_value(str(depth), 0.5)
