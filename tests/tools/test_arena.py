"""The arena: player specs, fair pairing, real matches through the referee (our engine and a
test-double engine speaking each protocol), adjudication, logs and records, the CLI."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from descent.tools import arena, records
from descent.tools.arena import ArenaConfig, Player, parse_player, run_arena, schedule
from descent.tools.referee import GameRecord, play_game
from descent.tools.stats import Sprt

ROOT = Path(__file__).resolve().parents[2]

# A test-double engine: speaks GTP (Hex, MoHex's swap-pieces convention), the EinStein
# dialect or UCI with dice, plays the first legal move (or swaps when it may, in `swap`
# mode) using our kernels, and misbehaves on request: `crash` exits at its K-th move,
# `illegal` answers an occupied or impossible move at its K-th move, `hang` never answers
# its K-th move, `resign` resigns.
FAKE_ENGINE = textwrap.dedent('''
    import sys, time
    sys.path.insert(0, {root!r})
    from descent.search_cy.games.registry import make_game

    protocol, mode = sys.argv[1], sys.argv[2]
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    out = sys.stdout
    asked = 0

    def reply(text=""):
        out.write("= " + text + "\\n\\n")
        out.flush()

    def error(text):
        out.write("? " + text + "\\n\\n")
        out.flush()

    def misbehave(bad):
        global asked
        asked += 1
        if asked < k:
            return None
        if mode == "crash":
            sys.exit(3)
        if mode == "hang":
            time.sleep(3600)
        if mode == "illegal":
            return bad
        if mode == "resign":
            return "resign"
        return None

    def first(state):
        return state.legal_actions()[0]

    def gtp():
        from descent.search_cy.games.hex import cell_name, parse_move
        size, swap, transposed = 11, False, False
        state = make_game("hex(size=11)").new_initial_state()

        def t(action):
            if not transposed or action >= size * size:
                return action
            r, c = divmod(action, size)
            return c * size + r

        for line in sys.stdin:
            parts = line.split()
            if not parts:
                continue
            cmd, args = parts[0], parts[1:]
            if cmd == "quit":
                reply()
                return
            if cmd == "boardsize":
                size = int(args[0])
                reply()
            elif cmd == "param_game":
                swap = args[1] == "1"
                reply()
            elif cmd == "clear_board":
                state = make_game(f"hex(size={{size}},swap={{str(swap).lower()}})"
                                  ).new_initial_state()
                transposed = False
                reply()
            elif cmd == "time_settings":
                reply()
            elif cmd in ("play", "genmove"):
                colour = "bw".index(args[0][0].lower()) ^ int(transposed)
                if colour != state.current_player():
                    error(f"wrong colour {{args[0]}}")
                    continue
                if cmd == "play":
                    action = t(parse_move(args[1], size))
                    if action not in state.legal_actions():
                        error("illegal move")
                        continue
                else:
                    legal = state.legal_actions()
                    action = size * size if mode == "swap" and size * size in legal \\
                        else legal[0]
                    occupied = [a for a in range(size * size) if a not in legal]
                    bad = misbehave(cell_name(occupied[0], size) if occupied else "z99")
                    if bad:
                        reply(bad)
                        continue
                wire = "swap-pieces" if action == size * size else cell_name(t(action), size)
                state.apply_action(action)
                if action == size * size:
                    transposed = True
                reply("" if cmd == "play" else wire)
            else:
                error("unknown command")

    def ewn():
        state = make_game("einstein").new_initial_state()
        for line in sys.stdin:
            parts = line.split()
            if not parts:
                continue
            cmd, args = parts[0], parts[1:]
            if cmd == "quit":
                reply()
                return
            if cmd == "clear_board":
                state = make_game("einstein").new_initial_state()
                reply()
            elif cmd == "setup":
                state.apply_move(" ".join(args[1:]))
                reply()
            elif cmd == "time_settings":
                reply()
            elif cmd == "play":
                state.apply_move("d" + args[1])
                state.apply_move(args[2])
                reply()
            elif cmd == "genmove":
                state.apply_move("d" + args[1])
                action = first(state)
                bad = misbehave("a1a1")
                if bad:
                    reply(bad)
                    continue
                text = state.action_to_string(action)
                state.apply_action(action)
                reply(text)
            else:
                error("unknown command")

    def uci():
        game = make_game("dicechess")
        moves = []
        for line in sys.stdin:
            parts = line.split()
            if not parts:
                continue
            cmd = parts[0]
            if cmd == "quit":
                return
            if cmd == "uci":
                print("id name fake\\nuciok", flush=True)
            elif cmd == "isready":
                print("readyok", flush=True)
            elif cmd == "position":
                moves = parts[parts.index("moves") + 1:] if "moves" in parts else []
            elif cmd == "go":
                state = game.new_initial_state()
                for move in moves:          # infer each roll: the first that allows it
                    for die, _ in state.chance_outcomes():
                        state.apply_action(die)
                        if move in [state.action_to_string(a) for a in state.legal_actions()]:
                            break
                        state.undo()
                    state.apply_move(move)
                state.apply_move("d" + parts[parts.index("dice") + 1])
                bad = misbehave("a1a8")
                print("bestmove " + (bad or state.action_to_string(first(state))), flush=True)

    {{"gtp": gtp, "ewn": ewn, "uci": uci}}[protocol]()
''')


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fake") / "fake_engine.py"
    path.write_text(FAKE_ENGINE.format(root=str(ROOT)))
    return path


def fake_cmd(fake: Path, protocol: str, mode: str = "first", k: int = 1) -> str:
    return shlex.join([sys.executable, str(fake), protocol, mode, str(k)])


# -- player specs and pairing ---------------------------------------------------------------

def test_descent_spec_becomes_an_engine_command_line() -> None:
    p = parse_player("descent:search=mcts,time=250ms,strength=expert,hash=16,seed=3",
                     "hex(size=5)")
    argv = shlex.split(p.command)
    assert argv[:5] == [sys.executable, "-P", "-m", "descent", "play"]
    assert argv[argv.index("--game") + 1] == "hex(size=5,swap=false)"
    for flag, value in (("--search", "mcts"), ("--strength", "expert"), ("--hash-mb", "16"),
                        ("--seed", "3")):
        assert argv[argv.index(flag) + 1] == value
    assert p.movetime == pytest.approx(0.25)
    assert p.kind == "descent"
    nodes = shlex.split(parse_player("descent:nodes=500,time=2s", "hex").command)
    assert nodes[nodes.index("--nodes-per-second") + 1] == "250"
    assert nodes[nodes.index("--move-overhead-ms") + 1] == "0"
    assert parse_player("old@descent:model=x.dnet", "hex").name == "old"
    assert parse_player("descent:name=new", "hex").name == "new"


def test_a_player_may_have_a_canadian_clock() -> None:
    """``stones=N``: N moves in N x ``time`` (GTP games); 1, the default, a byo-yomi."""
    assert parse_player("descent:time=1", "hex").stones == 1
    ours = parse_player("descent:time=1,stones=30", "hex")
    assert ours.stones == 30 and "--stones" not in ours.command
    assert parse_player("gtp[time=1,stones=10]:mohex", "hex").stones == 10
    assert parse_player("descent:stones=5", "einstein").stones == 5
    with pytest.raises(ValueError, match="GTP clock"):
        parse_player("descent:stones=5", "dicechess")
    with pytest.raises(ValueError, match="stones must be"):
        parse_player("descent:stones=0", "hex")
    with pytest.raises(ValueError, match="not an integer"):
        parse_player("gtp[stones=many]:mohex", "hex")


def test_external_specs_must_speak_the_games_protocol() -> None:
    p = parse_player("gtp:/opt/mohex/mohex --quiet", "hex(size=11)")
    assert (p.kind, p.command, p.name) == ("gtp", "/opt/mohex/mohex --quiet", "mohex")
    assert parse_player("uci:stockfish", "dicechess").kind == "uci"
    timed = parse_player("gtp[time=5s,name=mo]:/opt/mohex/mohex", "hex")
    assert (timed.name, timed.movetime, timed.command) == ("mo", 5.0, "/opt/mohex/mohex")
    assert parse_player("x@gtp[time=1]:mohex", "hex").name == "x"
    assert parse_player(f"gtp:{sys.executable} -m tests.helpers.bots.hex_openspiel_gtp",
                        "hex").name == "hex_openspiel_gtp"
    assert parse_player(f"gtp:{sys.executable} /tmp/fake_engine.py gtp", "hex").name == \
        "fake_engine"
    with pytest.raises(ValueError, match="takes time"):
        parse_player("gtp[depth=3]:mohex", "hex")
    assert parse_player("ewn:./bot", "einstein").kind == "ewn"
    with pytest.raises(ValueError, match="played over gtp"):
        parse_player("uci:/bin/engine", "hex")
    with pytest.raises(ValueError, match="played over ewn"):
        parse_player("gtp:/bin/engine", "einstein")
    with pytest.raises(ValueError, match="unknown option"):
        parse_player("descent:colour=blue", "hex")
    with pytest.raises(ValueError, match="expected descent"):
        parse_player("mohex", "hex")
    with pytest.raises(ValueError, match="no command"):
        parse_player("gtp:", "hex")
    names = arena.unique_names([parse_player("descent", "hex"), parse_player("descent", "hex")])
    assert [p.name for p in names] == ["descent", "descent#2"]


def test_parse_seconds() -> None:
    assert arena.parse_seconds("1s") == 1.0
    assert arena.parse_seconds("200ms") == pytest.approx(0.2)
    assert arena.parse_seconds("0.5") == 0.5
    assert arena.parse_seconds("2m") == 120.0
    for bad in ("", "fast", "-1s", "0"):
        with pytest.raises(ValueError):
            arena.parse_seconds(bad)


def test_schedule_pairs_reverse_colours_and_share_seed_and_opening() -> None:
    openings = [["a1"], ["b2"], ["c3"]]
    jobs = schedule(2, 6, False, openings, seed=10)
    assert [j.index for j in jobs] == [1, 2, 3, 4, 5, 6]
    for a, b in zip(jobs[::2], jobs[1::2], strict=True):
        assert (a.first, a.second) == (b.second, b.first)
        assert a.seed == b.seed and a.opening == b.opening and a.pair == b.pair
    assert [j.seed for j in jobs[::2]] == [10, 11, 12]
    assert [j.opening for j in jobs[::2]] == [("a1",), ("b2",), ("c3",)]
    assert len(schedule(2, 3, False, [[]], 1)) == 4          # rounded up to pairs
    robin = schedule(3, 2, False, [[]], 1)
    assert sorted({(j.first, j.second) for j in robin}) == [(0, 1), (0, 2), (1, 0), (1, 2),
                                                            (2, 0), (2, 1)]
    gauntlet = schedule(3, 2, True, [[]], 1)
    assert all(0 in (j.first, j.second) for j in gauntlet) and len(gauntlet) == 4


def test_all_one_move_openings_cover_the_hex_board() -> None:
    suite = arena.load_openings("all-1", "hex(size=4)", seed=3)
    assert sorted(m for [m] in suite) == sorted(f"{c}{r}" for c in "abcd" for r in range(1, 5))
    assert suite == arena.load_openings("all-1", "hex(size=4)", seed=3)
    with pytest.raises(ValueError, match="for Hex"):
        arena.load_openings("all-1", "einstein")


def test_openings_file(tmp_path: Path) -> None:
    path = tmp_path / "openings.txt"
    path.write_text("# two openings\nA1 b2\n\nc3  # centre\n")
    assert arena.load_openings(str(path), "hex(size=3)") == [["a1", "b2"], ["c3"]]
    path.write_text("a1 a1\n")
    with pytest.raises(ValueError, match="not legal"):
        arena.load_openings(str(path), "hex(size=3)")


# -- the referee with the test double ----------------------------------------------------------

def test_referee_plays_an_opening_then_checks_every_move(fake: Path) -> None:
    cmd = fake_cmd(fake, "gtp")
    record = play_game("hex(size=3)", (cmd, cmd), seed=1, movetime=0.05, opening=["b2"])
    assert record.opening == ["b2"] and record.moves[0] == "b2"
    assert record.reason == "normal" and record.winner is not None
    state = records.replay(record.game, record.moves)
    assert state.is_terminal()
    assert (0 if state.terminal_value() > 0 else 1) == record.winner


def test_referee_maps_the_swap_both_ways(fake: Path) -> None:
    """White swaps (MoHex convention on the wire); the game goes on and ends normally."""
    record = play_game("hex(size=3,swap=true)",
                       (fake_cmd(fake, "gtp"), fake_cmd(fake, "gtp", "swap")), seed=1,
                       movetime=0.05)
    assert record.moves[1] == "swap", record
    assert record.reason == "normal", record.detail
    sgf = records.hex_sgf(record)
    assert ";W[swap-pieces];W[" in sgf
    parsed = records.read_hex_sgf(sgf)
    assert parsed.moves == record.moves and parsed.winner == record.winner
    assert (parsed.first, parsed.second) == (record.first, record.second)


@pytest.mark.parametrize(("mode", "reason"), [("crash", "crash"), ("illegal", "illegal"),
                                              ("hang", "timeout"), ("resign", "resign")])
def test_adjudication_of_a_broken_engine(fake: Path, mode: str, reason: str) -> None:
    good, bad = fake_cmd(fake, "gtp"), fake_cmd(fake, "gtp", mode, 2)
    record = play_game("hex(size=4)", (good, bad), seed=1, movetime=0.05, timeout=1.0,
                       names=("good", "bad"))
    assert (record.reason, record.winner) == (reason, 0), record
    if mode == "illegal":
        assert "bad played" in record.detail
    # the record of an adjudicated game is still readable
    parsed = records.read_hex_sgf(records.hex_sgf(record))
    assert parsed.winner == 0 and parsed.moves == record.moves


@pytest.mark.parametrize(("game", "protocol"), [("einstein", "ewn"), ("dicechess", "uci")])
def test_adjudication_in_the_dice_games(fake: Path, game: str, protocol: str) -> None:
    good = fake_cmd(fake, protocol)
    for mode, reason in (("illegal", "illegal"), ("crash", "crash")):
        record = play_game(game, (fake_cmd(fake, protocol, mode, 2), good), seed=2,
                           movetime=0.05, timeout=1.0)
        assert (record.reason, record.winner) == (reason, 1), record


def test_an_engine_that_does_not_start_loses(fake: Path) -> None:
    record = play_game("hex(size=3)", (fake_cmd(fake, "gtp"), "/nonexistent/engine"), seed=1)
    assert (record.reason, record.winner) == ("crash", 0)
    assert "did not start" in record.detail


# -- whole matches -------------------------------------------------------------------------

def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def check_pairs(games: list[dict[str, object]]) -> None:
    by_index = {g["index"]: g for g in games}
    for i in range(1, len(games) + 1, 2):
        a, b = by_index[i], by_index[i + 1]
        assert (a["first"], a["second"]) == (b["second"], b["first"])
        assert a["seed"] == b["seed"] and a["opening"] == b["opening"]


def check_records(out: Path, games: list[dict[str, object]]) -> None:
    for g in games:
        parsed = records.read_record(out / str(g["record"]))
        assert parsed.moves == g["moves"]
        assert (parsed.first, parsed.second) == (g["first"], g["second"])
        state = records.replay(parsed.game, parsed.moves)
        if g["reason"] == "normal":
            assert state.is_terminal() and parsed.winner == g["winner"]


def test_fake_match_on_einstein_pairs_share_setups_and_dice(fake: Path, tmp_path: Path) -> None:
    players = [Player("one", "ewn", fake_cmd(fake, "ewn"), None, "ewn:one"),
               Player("two", "ewn", fake_cmd(fake, "ewn"), None, "ewn:two")]
    result = run_arena(ArenaConfig("einstein", players, games=4, movetime=0.05, jobs=2,
                                   out=tmp_path))
    games = read_jsonl(tmp_path / "games.jsonl")
    assert len(games) == 4 == len(result.games)
    check_pairs(games)
    check_records(tmp_path, games)
    by_index = {g["index"]: g for g in games}
    for i in (1, 3):
        a, b = by_index[i]["moves"], by_index[i + 1]["moves"]
        assert isinstance(a, list) and isinstance(b, list)
        assert a[:2] == b[:2]                       # the same set-ups
        rolls_a = [m for m in a[2:] if m.startswith("d")]
        rolls_b = [m for m in b[2:] if m.startswith("d")]
        n = min(len(rolls_a), len(rolls_b))
        assert n > 3 and rolls_a[:n] == rolls_b[:n]   # the same die stream
    assert (tmp_path / "games" / "0001-one-vs-two.txt").is_file()
    summary = json.loads((tmp_path / "results.json").read_text())
    assert summary["games"] == 4
    assert sum(p["points"] for p in summary["players"]) == 4


def test_fake_gauntlet_on_dice_chess_with_crosstable(fake: Path, tmp_path: Path) -> None:
    players = [Player(name, "uci", fake_cmd(fake, "uci"), None, name)
               for name in ("p1", "p2", "p3")]
    result = run_arena(ArenaConfig("dicechess", players, games=2, movetime=0.05, jobs=2,
                                   out=tmp_path, max_plies=30, gauntlet=True))
    assert len(result.games) == 4
    assert result.tally(1, 2).games == 0 and result.tally(0, 2).games == 2
    games = read_jsonl(tmp_path / "games.jsonl")
    check_pairs(games)
    check_records(tmp_path, games)
    text = result.table()
    assert "crosstable" in text and "p3" in text
    assert all(str(g["record"]).endswith(".pgn") for g in games)
    # the first roll of both games of a pair is the same (the pair's die stream)
    first_roll = {g["index"]: g["moves"][0] for g in games}  # type: ignore[index]
    assert first_roll[1] == first_roll[2] and first_roll[3] == first_roll[4]


def test_sprt_stops_a_lopsided_match(fake: Path) -> None:
    players = [Player("strong", "gtp", fake_cmd(fake, "gtp"), None, "strong"),
               Player("resigner", "gtp", fake_cmd(fake, "gtp", "resign"), None, "weak")]
    sprt = Sprt(-200, 0, 0.2, 0.2)
    result = run_arena(ArenaConfig("hex(size=3)", players, games=200, movetime=0.05, jobs=2,
                                   sprt=sprt))
    assert result.sprt_decision == "H1"
    assert len(result.games) < 200 and result.stopped.startswith("SPRT")
    assert "H1 accepted" in result.table()


def test_internal_player_against_the_test_double_on_hex(fake: Path, tmp_path: Path) -> None:
    ours = parse_player("descent:search=ubfms,nodes=200,time=0.2", "hex(size=3)")
    theirs = Player("fake", "gtp", fake_cmd(fake, "gtp"), None, "gtp:fake")
    result = run_arena(ArenaConfig("hex(size=3)", [ours, theirs], games=4, movetime=0.2,
                                   jobs=2, out=tmp_path,
                                   openings=arena.load_openings("all-1", "hex(size=3)")))
    games = read_jsonl(tmp_path / "games.jsonl")
    assert len(games) == 4
    assert {g["reason"] for g in games} == {"normal"}, games
    check_pairs(games)
    check_records(tmp_path, games)
    sgf = (tmp_path / str(games[0]["record"])).read_text()
    assert sgf.startswith("(;FF[4]") and "GM[11]SZ[3]" in sgf
    assert result.tally(0, 1).games == 4


def test_our_engine_understands_the_referees_swap(fake: Path) -> None:
    """The fake swaps our first move (our engine must then play White on the wire), and
    our engine answers the fake's first move (whether it swaps or not, the game goes on)."""
    ours = parse_player("descent:nodes=100,time=0.2", "hex(size=3,swap=true)")
    swapped = play_game("hex(size=3,swap=true)", (ours.command, fake_cmd(fake, "gtp", "swap")),
                        seed=1, movetime=0.2)
    assert swapped.moves[1] == "swap" and swapped.reason == "normal", swapped.detail
    other = play_game("hex(size=3,swap=true)", (fake_cmd(fake, "gtp"), ours.command), seed=1,
                      movetime=0.2)
    assert other.reason == "normal", other.detail


def test_node_budgets_make_games_reproducible() -> None:
    """Two pairs from the same opening (Hex has no dice): with node budgets the games of
    the second pair repeat those of the first, move for move."""
    result = arena.play_match("hex(size=4)", ["descent:nodes=200,time=0.2",
                                              "descent:search=mcts,nodes=200,time=0.2"],
                              games=4, movetime=0.2, jobs=2, openings=[["b2"]])
    games = {g["index"]: g for g in result.games}
    assert {g["reason"] for g in result.games} == {"normal"}
    assert games[1]["moves"] == games[3]["moves"] and games[2]["moves"] == games[4]["moves"]
    assert games[1]["first"] == games[3]["first"] != games[2]["first"]


@pytest.mark.parametrize("game", ["einstein", "dicechess"])
def test_two_internal_players_on_the_dice_games(game: str, tmp_path: Path) -> None:
    a = parse_player("A@descent:nodes=100,time=0.2", game)
    b = parse_player("B@descent:search=mcts,nodes=100,time=0.2", game)
    result = run_arena(ArenaConfig(game, [a, b], games=2, movetime=0.2, jobs=2, out=tmp_path,
                                   max_plies=60))
    games = read_jsonl(tmp_path / "games.jsonl")
    assert {g["reason"] for g in games} <= {"normal", "ply cap"}, games
    check_pairs(games)
    check_records(tmp_path, games)
    assert result.tally(0, 1).games == 2


# -- the command line ------------------------------------------------------------------------

def test_cli_runs_a_match_and_prints_json(fake: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "descent", "arena", f"first@gtp:{fake_cmd(fake, 'gtp')}",
         f"second@gtp:{fake_cmd(fake, 'gtp')}", "--game", "hex(size=3)", "--games", "2",
         "--tc", "50ms", "--openings", "all-1", "--out", str(out), "--json"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["games"] == 2
    assert [p["name"] for p in summary["players"]] == ["first", "second"]
    # stderr is a pipe: the progress bar comes as whole lines (no redraws), the last one
    # with every game played and the score
    assert "\r" not in proc.stderr
    last = [line for line in proc.stderr.splitlines() if "game" in line][-1]
    assert "100%" in last and "2/2" in last and "first" in last and "Elo" in last
    assert len(read_jsonl(out / "games.jsonl")) == 2
    assert len(list((out / "games").glob("*.sgf"))) == 2


def test_cli_rejects_a_protocol_that_is_not_the_games(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "descent", "arena", "descent", "uci:/bin/true", "--game", "hex"],
        capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2
    assert "played over gtp" in proc.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [False, True])
def test_the_progress_bar_shows_the_games_and_the_score(terminal: bool) -> None:
    """A tqdm bar: redrawn in place on a terminal; on a log, a line at most every
    PROGRESS_LOG_INTERVAL seconds and the last state."""
    players = [parse_player("a@gtp:/bin/true", "hex(size=3)"),
               parse_player("b@gtp:/bin/true", "hex(size=3)")]

    def play(spec: str, commands: object, **kw: Any) -> GameRecord:   # the first player wins
        return GameRecord(spec, kw["names"][0], kw["names"][1], 0, "normal", ["a1"], plies=1)

    out = _Terminal() if terminal else io.StringIO()
    result = run_arena(ArenaConfig("hex(size=3)", players, games=4, progress=out), play=play)
    assert result.tally(0, 1).games == 4
    text = out.getvalue()
    assert text.endswith("\n")
    if terminal:
        states = [s.strip() for s in text.split("\r") if s.strip()]
        assert "\n" not in text.rstrip("\n")          # one line, redrawn
    else:
        assert "\r" not in text
        states = text.splitlines()
        assert len(states) == 2                      # the start and the end: 4 games in 10 s
    assert "0/4" in states[0]
    last = states[-1]
    assert "100%" in last and "4/4" in last and "a 2-2 b  Elo +0.0" in last, last


def test_record_of_a_game_record_dict_matches_the_dataclass() -> None:
    record = GameRecord("hex(size=2,swap=false)", "a", "b", 0, "normal", ["a1", "b1", "a2"],
                        plies=3)
    from dataclasses import asdict

    assert records.record_text(record, date="2024.01.01") == \
        records.record_text(asdict(record), date="2024.01.01")


def test_our_engine_as_an_external_protocol_subprocess(tmp_path: Path) -> None:
    """An external spec (any GTP engine) that happens to be ours, against an internal one."""
    external = (f"ext@gtp:{sys.executable} -m descent play --game hex(size=4) --seed 3 "
                f"--hash-mb 8 --nodes-per-second 2000")
    players = [parse_player("ours@descent:nodes=200,time=0.2", "hex(size=4)"),
               parse_player(external, "hex(size=4)")]
    result = run_arena(ArenaConfig("hex(size=4)", players, games=2, movetime=0.2, jobs=1,
                                   out=tmp_path))
    games = read_jsonl(tmp_path / "games.jsonl")
    assert {g["reason"] for g in games} == {"normal"}, games
    check_pairs(games)
    check_records(tmp_path, games)
    assert result.tally(0, 1).games == 2


def test_a_player_that_cannot_start_fails_the_arena_fast(tmp_path: Path) -> None:
    """``gtp:/no/such/engine`` handed the other side every win and exited 0."""
    result = subprocess.run(
        [sys.executable, "-m", "descent", "arena", "--game", "hex(size=4)", "--games", "6",
         "--quiet", "--out", str(tmp_path / "out"), "descent:time=0.05",
         "gtp:/no/such/engine --quiet"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stderr
    assert "/no/such/engine" in result.stderr and "did not start" in result.stderr
    report = json.loads((tmp_path / "out" / "results.json").read_text())
    assert report["games"] < 6 and "cannot play" in report["stopped"], report
    assert report["crashes"], report


def test_a_crash_mid_match_is_reported_with_the_engines_stderr(tmp_path: Path) -> None:
    crasher = tmp_path / "crasher.py"
    crasher.write_text(
        "import sys\n"
        "for line in sys.stdin:\n"
        "    if line.startswith('genmove'):\n"
        "        print('out of cheese', file=sys.stderr, flush=True)\n"
        "        sys.exit(3)\n"
        "    print('= ' + ('descent-crasher' if line.startswith('name') else '') + '\\n',"
        " flush=True)\n")
    result = subprocess.run(
        [sys.executable, "-m", "descent", "arena", "--game", "hex(size=4)", "--games", "2",
         "--quiet", "descent:time=0.05", f"gtp:{sys.executable} {crasher}"],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert "crashed in game" in result.stderr and "out of cheese" in result.stderr


def test_an_engine_on_another_host_plays_through_the_broker(tmp_path: Path) -> None:
    """``mqtt:HOST:PORT/ID``: an engine that runs elsewhere (here: another process on a
    real Mosquitto) plays a match as if it were a local subprocess."""
    from descent.tools.bench_protocol import Mosquitto

    with Mosquitto(tmp_path / "broker") as broker:
        remote = subprocess.Popen(
            [sys.executable, "-m", "descent", "play", "--transport", "mqtt", "--broker",
             broker.address, "--engine-id", "far", "--game", "hex(size=4)", "--hash-mb", "16",
             "--model", "none"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        try:
            result = subprocess.run(
                [sys.executable, "-m", "descent", "arena", "--game", "hex(size=4)",
                 "--games", "2", "-j", "1", "--quiet", "--json", "descent:time=0.05",
                 f"far@mqtt:{broker.address}/far"],
                capture_output=True, text=True, timeout=600)
            assert result.returncode == 0, result.stderr
            report = json.loads(result.stdout)
            assert report["games"] == 2 and set(report["reasons"]) == {"normal"}, report
            assert remote.poll() is None        # quit ends the client, not the engine
        finally:
            remote.terminate()
            remote.wait(timeout=60)
