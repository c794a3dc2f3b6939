"""``descent arena``: matches and tournaments between engines, refereed move by move.

    descent arena PLAYER_SPEC PLAYER_SPEC... --game G [--games N] [--tc T] [-j N] [--out DIR]
                  [--gauntlet] [--openings none|all-1|FILE] [--sprt elo0,elo1,alpha,beta]

Player specs:

- ``descent:key=value,...``: our engine with a configuration, run as
  ``python -P -m descent play --game G ...`` speaking the game's protocol. Keys: ``search``,
  ``strength``, ``model``, ``backend``, ``hash`` (MiB), ``threads``, ``seed``, ``time``
  (seconds per move for this player, e.g. ``time=0.5`` or ``time=200ms``), ``stones``
  (the clock: 1, the default, a byo-yomi of ``time`` every move; N a Canadian block of N
  moves in N x ``time``, which the engine shares out between them; GTP games), ``nodes``
  (nodes-as-time: about N nodes per move whatever the machine, so games are
  reproducible), ``name`` (shown in the tables), and any other ``descent play`` setting by
  its name (``resign_threshold=0.95``).
- ``gtp:COMMAND``, ``ewn:COMMAND``, ``uci:COMMAND``: an external engine run as a
  subprocess; the protocol must be the game's (gtp for Hex, ewn for EinStein, uci for dice
  chess). E.g. ``gtp:/opt/mohex/mohex --quiet``; ``gtp[time=5s]:...`` gives it its own
  time per move (also ``stones=`` and ``name=``).
- ``mqtt:HOST:PORT/ENGINE-ID``: an engine running elsewhere on an MQTT broker (``descent
  play --transport mqtt``, or any engine behind ``descent mqtt-bridge``), played through
  ``descent mqtt-client``: a tournament spans hosts through the broker. One game at a time
  per remote engine (``-j 1`` when it plays several games).
- Any spec may start with ``NAME@`` to name the player: ``old@descent:model=old.dnet``.

Two players play a match; more play a round robin (every pair), or with ``--gauntlet`` the
first player against each other one. Games come in pairs: the same opening (Hex: from the
opening suite; EinStein: the set-ups drawn from the pair's seed; dice chess: the start
position) and the same die stream (the pair's seed), once with each player moving first.
Each move is checked by our kernels; a crash, an illegal move, a protocol error or a
timeout loses the game and the reason is recorded; the ply cap draws it.

Output: a live progress bar (tqdm) on stderr, then the results on stdout (per player: games,
score, win rate with its 95% interval, Elo difference with its interval; a crosstable for
tournaments; the SPRT state). With ``--out DIR``: ``DIR/games.jsonl`` (one JSON object per
game), ``DIR/games/NNNN.{sgf,pgn,txt}`` (SGF for Hex, PGN for dice chess, text for
EinStein: tools/records.py) and ``DIR/results.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from descent.progress import LineStream
from descent.tools.stats import Sprt, Summary, finite_or_none, fmt_elo, summarize

EXTERNAL = ("gtp", "ewn", "uci")
# descent: keys -> `descent play` flags (other keys: any Settings field by its name)
DESCENT_KEYS = {"search": "search", "strength": "strength", "model": "model",
                "backend": "backend", "hash": "hash_mb", "threads": "threads", "seed": "seed"}
DEFAULT_MOVETIME = 1.0

_NAME_PREFIX = re.compile(r"^([^@:\s]+)@((?:descent|gtp|ewn|uci|mqtt)(?:\[[^\]]*\])?(?::.*)?)$",
                          re.S)


def parse_seconds(text: str, what: str = "time") -> float:
    """``1s``, ``500ms``, ``2m``, ``0.25`` (seconds) -> seconds."""
    raw = text.strip().lower()
    scale = 1.0
    for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if raw.endswith(suffix):
            raw, scale = raw[: -len(suffix)], factor
            break
    try:
        value = float(raw) * scale
    except ValueError:
        raise ValueError(f"{what} {text!r}: expected seconds such as 1s, 500ms or 0.25") \
            from None
    if not value > 0 or math.isinf(value):
        raise ValueError(f"{what} {text!r}: must be positive")
    return value


@dataclass(frozen=True)
class Player:
    """One arena participant: how to start it and how long it may think per move."""

    name: str
    kind: str                  # descent | gtp | ewn | uci
    command: str               # shell-style command line (split with shlex)
    movetime: float | None     # seconds per move; None: the arena's --tc
    spec: str                  # as given on the command line
    stones: int = 1            # the clock's block (GTP): 1 byo-yomi a move, N Canadian


def _settings_fields() -> set[str]:
    from dataclasses import fields

    from descent.engine.settings import Settings

    return {f.name for f in fields(Settings)}


def descent_command(options: dict[str, str], game: str, movetime: float) -> list[str]:
    """The ``python -P -m descent play`` command line of a ``descent:`` spec's options.
    ``-P`` keeps the current folder off ``sys.path``: a user's ``descent.py`` or
    ``engine.py`` there is never imported in place of the installed package."""
    argv = [sys.executable, "-P", "-m", "descent", "play", "--game", game,
            "--log-level", "warning"]
    known = _settings_fields()
    for key, value in options.items():
        if key in ("time", "name", "stones"):
            continue
        if key == "nodes":
            try:
                nodes = int(value)
            except ValueError:
                raise ValueError(f"descent: nodes={value!r} is not an integer") from None
            if nodes < 1:
                raise ValueError("descent: nodes must be >= 1")
            # nodes-as-time: the move's time budget turned into nodes at this rate
            argv += ["--nodes-per-second", f"{nodes / movetime:.6g}", "--move-overhead-ms", "0"]
            continue
        name = DESCENT_KEYS.get(key, key.replace("-", "_"))
        if name not in known or name in ("game", "protocol", "transport", "log_level"):
            allowed = ", ".join(sorted({*DESCENT_KEYS, "time", "nodes", "name", "stones"} |
                                       (known - {"game", "protocol", "transport"})))
            raise ValueError(f"descent: unknown option {key!r} (known: {allowed})")
        argv += ["--" + name.replace("_", "-"), value]
    return argv


def parse_player(text: str, game: str, default_time: float = DEFAULT_MOVETIME) -> Player:
    """A player spec (module docstring) -> Player; ValueError on a bad spec or a protocol
    that is not the game's."""
    from descent.search_cy.games.registry import make_game

    g = make_game(game)
    raw = text.strip()
    name = ""
    m = _NAME_PREFIX.match(raw)
    if m:
        name, raw = m.group(1), m.group(2)
    kind, _, rest = raw.partition(":")
    kind = kind.strip().lower()
    if kind == "descent":
        options: dict[str, str] = {}
        for item in (x for x in rest.split(",") if x.strip()):
            key, sep, value = item.partition("=")
            key = key.strip().lower()
            if not sep or not key or not value.strip():
                raise ValueError(f"player {text!r}: expected key=value, got {item!r}")
            if key in options:
                raise ValueError(f"player {text!r}: {key} given twice")
            options[key] = value.strip()
        movetime = parse_seconds(options["time"], "time") if "time" in options else None
        argv = descent_command(options, g.spec, movetime or default_time)
        shown = name or options.get("name") or ("descent:" + rest if rest else "descent")
        return Player(shown, "descent", shlex.join(argv), movetime, text,
                      _stones(options.get("stones"), g.default_protocol, text))
    if kind == "mqtt":
        return _mqtt_player(text, name, rest, g.default_protocol)
    m = _EXTERNAL_KIND.match(kind)
    if m:
        kind = m.group(1)
        wanted = g.default_protocol
        if kind != wanted:
            raise ValueError(f"player {text!r}: {g.name} is played over {wanted}, not {kind}")
        ext_options: dict[str, str] = {}
        for item in (x for x in (m.group(2) or "").split(",") if x.strip()):
            key, sep, value = item.partition("=")
            if key.strip() not in ("time", "name", "stones") or not sep or not value.strip():
                raise ValueError(f"player {text!r}: {kind}[...] takes time=..., stones=... "
                                 "and name=...")
            ext_options[key.strip()] = value.strip()
        if not rest.strip():
            raise ValueError(f"player {text!r}: no command after {kind}:")
        try:
            argv = shlex.split(rest)
        except ValueError as exc:
            raise ValueError(f"player {text!r}: {exc}") from None
        shown = name or ext_options.get("name") or _program_name(argv)
        movetime = parse_seconds(ext_options["time"], "time") if "time" in ext_options \
            else None
        return Player(shown, kind, rest.strip(), movetime, text,
                      _stones(ext_options.get("stones"), kind, text))
    raise ValueError(f"player {text!r}: expected descent:..., gtp:..., ewn:..., uci:... or "
                     "mqtt:...")


def _stones(value: str | None, protocol: str, text: str) -> int:
    """A player's ``stones=``: the Canadian block of its clock (1: a byo-yomi a move)."""
    if value is None:
        return 1
    try:
        stones = int(value)
    except ValueError:
        raise ValueError(f"player {text!r}: stones={value!r} is not an integer") from None
    if stones < 1:
        raise ValueError(f"player {text!r}: stones must be >= 1")
    if stones > 1 and protocol not in ("gtp", "ewn"):
        raise ValueError(f"player {text!r}: stones= sets a GTP clock; {protocol} has none")
    return stones


def _mqtt_player(text: str, name: str, address: str, protocol: str) -> Player:
    """``mqtt:HOST:PORT/ENGINE-ID``: an engine that runs elsewhere on the broker (ours, or
    any engine behind ``descent mqtt-bridge``), played through ``descent mqtt-client``."""
    from descent.protocols.mqtt_client import parse_address

    try:
        broker, engine_id = parse_address(address.strip())
    except ValueError as exc:
        raise ValueError(f"player {text!r}: {exc}") from None
    framing = "gtp" if protocol in ("gtp", "ewn") else "line"
    argv = [sys.executable, "-P", "-m", "descent", "mqtt-client", "--broker", broker,
            "--engine-id", engine_id, "--framing", framing]
    return Player(name or f"{engine_id}@{broker}", protocol, shlex.join(argv), None, text)


_EXTERNAL_KIND = re.compile(r"^(gtp|ewn|uci)(?:\[([^\]]*)\])?$")


def _program_name(argv: list[str]) -> str:
    """A short name for an external engine: its program, or the script or module that a
    Python interpreter runs."""
    name = os.path.basename(argv[0]) or argv[0]
    if re.fullmatch(r"python[0-9.]*", name) and len(argv) > 1:
        if argv[1] == "-m" and len(argv) > 2:
            return argv[2].rsplit(".", 1)[-1]
        name = os.path.basename(argv[1])
        return name[:-3] if name.endswith(".py") else name
    return name


def unique_names(players: list[Player]) -> list[Player]:
    seen: dict[str, int] = {}
    out = []
    for p in players:
        seen[p.name] = seen.get(p.name, 0) + 1
        if seen[p.name] > 1:
            p = replace(p, name=f"{p.name}#{seen[p.name]}")
        out.append(p)
    return out


# -- openings -----------------------------------------------------------------------------

def load_openings(choice: str, game: str, seed: int = 1) -> list[list[str]]:
    """The opening suite: ``none`` (one empty opening), ``all-1`` (Hex: every first move,
    in an order shuffled by the seed so that a short match samples the board) or a file
    with one opening per line (moves in the game's notation; ``#`` comments)."""
    import random

    from descent.search_cy.games.registry import make_game
    from descent.tools.referee import check_opening

    g = make_game(game)
    if choice in ("", "none"):
        return [[]]
    if choice == "all-1":
        if g.name != "hex":
            raise ValueError("--openings all-1 is for Hex (the dice games open from the "
                             "seed: EinStein set-ups, dice-chess rolls)")
        state = g.new_initial_state()
        suite = [[state.action_to_string(a)] for a in state.legal_actions()]
        random.Random(seed).shuffle(suite)
        return suite
    path = Path(choice)
    if not path.is_file():
        raise ValueError(f"--openings {choice!r}: none, all-1 or an existing file")
    suite = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            suite.append(check_opening(g.spec, line.split()))
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    if not suite:
        raise ValueError(f"--openings {choice!r}: no opening in the file")
    return suite


# -- scheduling ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """One game to play: ``first`` (a player index) moves first."""

    index: int            # 1-based game number
    pair: int             # 0-based pair number within the pairing
    first: int
    second: int
    seed: int
    opening: tuple[str, ...]


def pairings(n_players: int, gauntlet: bool) -> list[tuple[int, int]]:
    if n_players < 2:
        raise ValueError("the arena needs at least two players")
    if gauntlet:
        return [(0, j) for j in range(1, n_players)]
    return [(i, j) for i in range(n_players) for j in range(i + 1, n_players)]


def schedule(n_players: int, games: int, gauntlet: bool, openings: list[list[str]],
             seed: int) -> list[Job]:
    """Games per pairing (rounded up to an even number): pair k uses seed ``seed + k`` and
    opening ``k mod len(openings)``, once with each player first. Pairs of all pairings
    are interleaved, so a run stopped early is balanced."""
    pairs = (max(1, games) + 1) // 2
    jobs = []
    index = 1
    for k in range(pairs):
        opening = tuple(openings[k % len(openings)])
        for a, b in pairings(n_players, gauntlet):
            for first, second in ((a, b), (b, a)):
                jobs.append(Job(index, k, first, second, seed + k, opening))
                index += 1
    return jobs


# -- results ------------------------------------------------------------------------------

@dataclass
class Tally:
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, score: float) -> None:
        if score == 1.0:
            self.wins += 1
        elif score == 0.0:
            self.losses += 1
        else:
            self.draws += 1

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    def summary(self) -> Summary:
        return summarize(self.wins, self.draws, self.losses)


@dataclass
class ArenaResult:
    game: str
    players: list[Player]
    games: list[dict[str, Any]] = field(default_factory=list)
    # (i, j) -> i's tally against j
    pair_tally: dict[tuple[int, int], Tally] = field(default_factory=dict)
    sprt: Sprt | None = None
    sprt_decision: str | None = None
    stopped: str = ""           # why the run ended before its last game ("" = it did not)
    crashes: list[str] = field(default_factory=list)   # one line per engine that failed
    planned: int = 0
    elapsed: float = 0.0

    def tally(self, i: int, j: int) -> Tally:
        return self.pair_tally.setdefault((i, j), Tally())

    def player_tally(self, i: int) -> Tally:
        total = Tally()
        for (a, _), t in self.pair_tally.items():
            if a == i:
                total.wins += t.wins
                total.draws += t.draws
                total.losses += t.losses
        return total

    def add(self, job: Job, entry: dict[str, Any]) -> None:
        self.games.append(entry)
        s = entry["score_first"]
        self.tally(job.first, job.second).add(s)
        self.tally(job.second, job.first).add(1.0 - s)

    def llr(self) -> float | None:
        if self.sprt is None:
            return None
        t = self.tally(0, 1)
        return self.sprt.llr(t.wins, t.draws, t.losses)

    def first_mover_points(self) -> float:
        return float(sum(g["score_first"] for g in self.games))

    def reasons(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for g in self.games:
            out[g["reason"]] = out.get(g["reason"], 0) + 1
        return out

    def table(self) -> str:
        """The results as text: per-player lines, the crosstable, SPRT, first-mover rate."""
        n = len(self.players)
        width = max(8, *(len(p.name) for p in self.players))
        lines = [f"{self.game}: {len(self.games)} games"
                 + (f" of {self.planned}" if self.planned != len(self.games) else "")
                 + f" in {self.elapsed:.1f} s"]
        head = (f"{'player':<{width}}  games    W    D    L  points   score  95% interval"
                f"      Elo  95% interval")
        lines.append(head)
        match = n == 2
        for i, p in enumerate(self.players):
            t = self.tally(0, 1) if match and i == 0 else (
                self.tally(1, 0) if match else self.player_tally(i))
            s = t.summary()
            lines.append(
                f"{p.name:<{width}}  {s.games:5d} {s.wins:4d} {s.draws:4d} {s.losses:4d}"
                f"  {s.points:6.1f}  {100 * s.score:5.1f}%  [{100 * s.score_lo:5.1f}, "
                f"{100 * s.score_hi:5.1f}]  {fmt_elo(s.elo):>6}  [{fmt_elo(s.elo_lo)}, "
                f"{fmt_elo(s.elo_hi)}]")
        if match:
            s = self.tally(0, 1).summary()
            lines.append(f"{self.players[0].name} vs {self.players[1].name}: Elo "
                         f"{fmt_elo(s.elo)} [{fmt_elo(s.elo_lo)}, {fmt_elo(s.elo_hi)}], "
                         f"LOS {100 * s.los:.1f}%")
        else:
            lines.append("(tournament: each player's score and Elo are against the field)")
            lines.append("")
            lines.append("crosstable (row's points / games against column)")
            cell = max(9, width // 2)
            lines.append(" " * (width + 2) + "".join(
                f"{str(j + 1) + '.':>{cell}}" for j in range(n)))
            for i, p in enumerate(self.players):
                row = f"{str(i + 1) + '. ' + p.name:<{width + 2}}"
                for j in range(n):
                    if i == j:
                        row += f"{'-':>{cell}}"
                        continue
                    pt = self.pair_tally.get((i, j))
                    shown = f"{pt.points:g}/{pt.games}" if pt and pt.games else "."
                    row += f"{shown:>{cell}}"
                lines.append(row)
        if self.games:
            firsts = self.first_mover_points()
            lines.append(f"first mover scored {firsts:g}/{len(self.games)} "
                         f"({100 * firsts / len(self.games):.1f}%); endings: " +
                         ", ".join(f"{k} {v}" for k, v in sorted(self.reasons().items())))
        if self.sprt is not None:
            lo, hi = self.sprt.bounds
            llr = self.llr() or 0.0
            verdict = {"H1": f"H1 accepted (elo >= {self.sprt.elo1:g})",
                       "H0": f"H0 accepted (elo <= {self.sprt.elo0:g})",
                       None: "no decision yet"}[self.sprt_decision]
            lines.append(f"SPRT elo0={self.sprt.elo0:g} elo1={self.sprt.elo1:g} "
                         f"alpha={self.sprt.alpha:g} beta={self.sprt.beta:g}: LLR {llr:.2f} "
                         f"[{lo:.2f}, {hi:.2f}]: {verdict}")
        if self.stopped:
            lines.append(f"stopped early: {self.stopped}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        def summary(t: Tally) -> dict[str, Any]:
            s = t.summary()
            return {"games": s.games, "wins": s.wins, "draws": s.draws, "losses": s.losses,
                    "points": s.points, "score": s.score, "score_ci": [s.score_lo, s.score_hi],
                    "elo": finite_or_none(s.elo),
                    "elo_ci": [finite_or_none(s.elo_lo), finite_or_none(s.elo_hi)],
                    "los": s.los}

        n = len(self.players)
        out: dict[str, Any] = {
            "game": self.game, "games": len(self.games), "planned": self.planned,
            "seconds": round(self.elapsed, 3),
            "players": [{"name": p.name, "spec": p.spec, "command": p.command,
                         "movetime": p.movetime, **summary(self.player_tally(i))}
                        for i, p in enumerate(self.players)],
            "crosstable": {self.players[i].name: {self.players[j].name: summary(t)
                                                  for (a, j), t in self.pair_tally.items()
                                                  if a == i}
                           for i in range(n)},
            "first_mover_points": self.first_mover_points(),
            "reasons": self.reasons(),
            "stopped": self.stopped,
            "crashes": self.crashes,
        }
        if self.sprt is not None:
            out["sprt"] = {"elo0": self.sprt.elo0, "elo1": self.sprt.elo1,
                           "alpha": self.sprt.alpha, "beta": self.sprt.beta,
                           "llr": self.llr(), "bounds": list(self.sprt.bounds),
                           "decision": self.sprt_decision}
        return out


# -- the run ------------------------------------------------------------------------------

@dataclass
class ArenaConfig:
    game: str
    players: list[Player]
    games: int = 2                     # per pairing (rounded up to pairs)
    movetime: float = DEFAULT_MOVETIME  # per move, for players without time=
    jobs: int = 1
    gauntlet: bool = False
    openings: list[list[str]] = field(default_factory=lambda: [[]])
    seed: int = 1
    timeout: float = 30.0
    max_plies: int = 2000
    sprt: Sprt | None = None
    out: Path | None = None
    progress: IO[str] | None = None     # where the live progress line goes (None: nowhere)
    event: str = "descent arena"


def _progress_info(result: ArenaResult, running: int) -> str:
    """What the progress bar shows after its count: the games under way and, for a
    match, the score, the Elo difference with its interval and the SPRT's LLR."""
    parts = [f"{running} running"] if running else []
    if len(result.players) == 2:
        t = result.tally(0, 1)
        s = t.summary()
        text = (f"{result.players[0].name} {t.points:g}-{result.tally(1, 0).points:g} "
                f"{result.players[1].name}  Elo {fmt_elo(s.elo)}")
        if t.games:
            text += f" [{fmt_elo(s.elo_lo)}, {fmt_elo(s.elo_hi)}]"
        parts.append(text)
        llr = result.llr()
        if llr is not None and result.sprt is not None:
            lo, hi = result.sprt.bounds
            parts.append(f"LLR {llr:.2f} [{lo:.2f}, {hi:.2f}]")
    return "  ".join(parts)


PROGRESS_LOG_INTERVAL = 10.0     # seconds between progress lines on a stream no terminal


def _progress_bar(stream: IO[str], total: int) -> Any:
    """A tqdm bar of the games on ``stream``: redrawn in place on a terminal, a line at
    most every PROGRESS_LOG_INTERVAL seconds (and the last state) otherwise."""
    from tqdm import tqdm

    tty = bool(getattr(stream, "isatty", lambda: False)())
    return tqdm(total=total, unit="game", file=stream if tty else LineStream(stream),
                mininterval=0.1 if tty else PROGRESS_LOG_INTERVAL, miniters=0,
                dynamic_ncols=tty, ascii=None if tty else True, leave=True)


def _record_path(out: Path, job: Job, players: list[Player]) -> Path:
    def clean(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", name)[:40].strip("_") or "player"

    return out / "games" / (f"{job.index:04d}-{clean(players[job.first].name)}-vs-"
                            f"{clean(players[job.second].name)}")


def run_arena(config: ArenaConfig,
              play: Callable[..., Any] | None = None) -> ArenaResult:
    """Plays the scheduled games (``config.jobs`` at a time, each game two engine
    subprocesses driven by the referee), writing the log and records as games end, and
    stopping early when the SPRT decides. Blocks until the last running game ends."""
    from descent.search_cy.games.registry import make_game
    from descent.tools import records, referee

    play_game = play or referee.play_game
    spec = make_game(config.game).spec
    players = config.players
    if config.sprt is not None and len(players) != 2:
        raise ValueError("--sprt needs exactly two players")
    jobs = schedule(len(players), config.games, config.gauntlet, config.openings, config.seed)
    result = ArenaResult(spec, players, sprt=config.sprt, planned=len(jobs))
    log: IO[str] | None = None
    if config.out is not None:
        config.out.mkdir(parents=True, exist_ok=True)
        log = (config.out / "games.jsonl").open("w", encoding="utf-8")
    lock = threading.Lock()
    started = time.monotonic()
    bar = None if config.progress is None else _progress_bar(config.progress, len(jobs))

    def show(running: int) -> None:
        if bar is None:
            return
        bar.set_postfix_str(_progress_info(result, running), refresh=False)
        bar.update(len(result.games) - bar.n)

    def one(job: Job) -> Any:
        a, b = players[job.first], players[job.second]
        times = (a.movetime or config.movetime, b.movetime or config.movetime)
        return play_game(spec, (a.command, b.command), seed=job.seed, movetime=times,
                         timeout=config.timeout, max_plies=config.max_plies,
                         names=(a.name, b.name), opening=list(job.opening),
                         stones=(a.stones, b.stones))

    def finish(job: Job, record: Any) -> None:
        rec = asdict(record)
        winner = rec["winner"]
        score_first = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
        entry: dict[str, Any] = {
            "index": job.index, "pair": job.pair, "players": [job.first, job.second],
            "winner_name": None if winner is None else
            (players[job.first].name if winner == 0 else players[job.second].name),
            "score_first": score_first, **rec}
        if config.out is not None:
            path = records.write_record(record, _record_path(config.out, job, players),
                                        event=config.event, round_=str(job.index))
            entry["record"] = str(path.relative_to(config.out))
        if rec["reason"] == "crash":
            failed = players[job.second if winner == 0 else job.first].name
            detail = str(rec.get("detail") or "").strip()
            line = f"{failed} crashed in game {job.index} at ply {rec['plies']}: {detail}"
            with lock:
                result.crashes.append(line)
                if rec["plies"] == 0 and not result.stopped:
                    # a player that cannot start would hand every game to the other
                    result.stopped = f"{failed} cannot play"
            if bar is not None:     # above the bar, not through it
                bar.write(f"descent arena: {line}", file=sys.stderr)
            else:
                print(f"descent arena: {line}", file=sys.stderr, flush=True)
        with lock:
            result.add(job, entry)
            if log is not None:
                log.write(json.dumps(entry) + "\n")
                log.flush()
            if config.sprt is not None and not result.sprt_decision:
                t = result.tally(0, 1)
                result.sprt_decision = config.sprt.decide(t.wins, t.draws, t.losses)
                if result.sprt_decision:
                    result.stopped = f"SPRT accepted {result.sprt_decision}"

    pending = list(jobs)
    running: dict[Future[Any], Job] = {}
    show(0)
    try:
        with ThreadPoolExecutor(max_workers=max(1, config.jobs)) as pool:
            while pending or running:
                while pending and len(running) < max(1, config.jobs) and not result.stopped:
                    job = pending.pop(0)
                    running[pool.submit(one, job)] = job
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    job = running.pop(future)
                    finish(job, future.result())
                show(len(running))
                if result.stopped:
                    pending.clear()
    except KeyboardInterrupt:
        result.stopped = "interrupted"
        raise
    finally:
        result.elapsed = time.monotonic() - started
        if bar is not None:
            bar.close()
        if log is not None:
            log.close()
        if config.out is not None:
            (config.out / "results.json").write_text(
                json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
            (config.out / "results.txt").write_text(result.table() + "\n", encoding="utf-8")
    return result


def play_match(game: str, specs: Sequence[str], games: int = 2, movetime: float = 1.0,
               jobs: int = 1, **options: Any) -> ArenaResult:
    """A match or tournament from player specs, for programs (the learning loop's
    evaluation matches): ``play_match("hex(size=5)", ["descent:model=new.dnet",
    "descent:model=old.dnet"], games=20, jobs=2).tally(0, 1)``. ``options`` are the other
    ArenaConfig fields (openings, seed, sprt, out, progress, ...)."""
    from descent.search_cy.games.registry import make_game

    spec = make_game(game).spec
    players = unique_names([parse_player(text, spec, movetime) for text in specs])
    return run_arena(ArenaConfig(spec, players, games=games, movetime=movetime, jobs=jobs,
                                 **options))


# -- command line -------------------------------------------------------------------------

def configure(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = __doc__.split("\n\n", 2)[2] if __doc__ else None
    p.add_argument("players", nargs="+", metavar="PLAYER_SPEC",
                   help="descent:key=value,... | gtp:CMD | ewn:CMD | uci:CMD (NAME@ prefix "
                        "names a player)")
    p.add_argument("--game", required=True, help="game spec, e.g. 'hex(size=11)'")
    p.add_argument("--games", type=int, default=2,
                   help="games per pairing, in pairs with colours reversed (default: 2); "
                        "with --sprt the maximum")
    p.add_argument("--tc", default=f"{DEFAULT_MOVETIME:g}s",
                   help="time per move for players without time= (1s, 200ms, 0.5)")
    p.add_argument("-j", "--jobs", type=int, default=1,
                   help="games played at once (each game runs two engine processes)")
    p.add_argument("--gauntlet", action="store_true",
                   help="the first player against each of the others (default with more "
                        "than two players: round robin)")
    p.add_argument("--openings", default="none",
                   help="none | all-1 (Hex: every first move) | FILE (one move list per line)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of pair k is SEED+k: its dice and EinStein set-ups")
    p.add_argument("--sprt", default=None, metavar="ELO0,ELO1[,ALPHA,BETA]",
                   help="stop when the sequential test decides (two players), e.g. 0,10")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds an engine may take to start or answer, beyond 3x its move "
                        "time for a move (then it loses on time)")
    p.add_argument("--max-plies", type=int, default=2000,
                   help="ply cap: a game that reaches it is a draw")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write DIR/games.jsonl, DIR/games/* records, DIR/results.json")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")


def config_from_args(args: argparse.Namespace) -> ArenaConfig:
    from descent.search_cy.games.registry import make_game

    game = make_game(args.game).spec
    movetime = parse_seconds(args.tc, "--tc")
    players = unique_names([parse_player(text, game, movetime) for text in args.players])
    if len(players) < 2:
        raise ValueError("the arena needs at least two players")
    if args.games < 1:
        raise ValueError("--games must be >= 1")
    if args.jobs < 1:
        raise ValueError("-j must be >= 1")
    return ArenaConfig(
        game=game, players=players, games=args.games, movetime=movetime, jobs=args.jobs,
        gauntlet=args.gauntlet, openings=load_openings(args.openings, game, args.seed),
        seed=args.seed, timeout=args.timeout, max_plies=args.max_plies,
        sprt=Sprt.parse(args.sprt) if args.sprt else None,
        out=Path(args.out) if args.out else None,
        progress=None if args.quiet else sys.stderr)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    try:
        result = run_arena(config)
    except KeyboardInterrupt:
        print("descent arena: interrupted", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(result.table())
    if result.crashes:
        print(f"descent arena: {len(result.crashes)} game(s) ended in a crash"
              + (f"; stopped: {result.stopped}" if result.stopped else ""), file=sys.stderr)
        return 1
    return 0


COMMAND = ("matches and tournaments between engines (ours and external), with records",
           configure, run)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m descent.tools.arena", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(ap)
    args = ap.parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
