"""``descent bench rules``: kernel speed next to reference implementations, same run.

Hex 11 and EinStein: random-playout states per second, our C loop and our Python-driven
loop, next to the same loop driving OpenSpiel from Python. Dice chess: perft leaves per
second from the start position next to a python-chess perft under the same rules. The
references are optional (test-only dependencies); missing ones are reported, not faked.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from descent.search_cy.games import playout
from descent.search_cy.games.registry import make_game
from descent.search_cy.games.sampling import random_action


@dataclass
class Row:
    game: str
    measure: str
    ours_c: float
    ours_python: float | None
    reference: float | None
    reference_name: str

    @property
    def ratio(self) -> float | None:
        return self.ours_c / self.reference if self.reference else None


def _rate(step: Callable[[], int], seconds: float) -> float:
    """Units per second of repeated calls to step (which returns units done)."""
    step()  # warm-up
    done = 0
    start = time.perf_counter()
    while True:
        done += step()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def _python_playouts(spec: str, seed: int) -> Callable[[], int]:
    """Our kernel driven from Python, one game per call: states visited."""
    game = make_game(spec)
    rng = random.Random(seed)

    def step() -> int:
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            state.apply_action(random_action(state, rng))
            n += 1
        return n

    return step


def _openspiel_playouts(name: str, params: dict[str, Any], seed: int) -> Callable[[], int]:
    import pyspiel

    game = pyspiel.load_game(name, params)
    rng = random.Random(seed)

    def step() -> int:
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            state.apply_action(random_action(state, rng))
            n += 1
        return n

    return step


def _playout_row(game: str, spec: str, peer: tuple[str, dict[str, Any]],
                 seconds: float) -> Row:
    state = make_game(spec).new_initial_state()
    seeds = iter(range(1, 1 << 30))
    ours_c = _rate(lambda: playout.random_playouts(state, 20, next(seeds)), seconds)
    ours_py = _rate(_python_playouts(spec, 1), seconds)
    try:
        reference: float | None = _rate(_openspiel_playouts(peer[0], peer[1], 1), seconds)
    except ImportError:
        reference = None
    return Row(game, f"random-playout states/s, {spec}", ours_c, ours_py, reference,
               "OpenSpiel (pip open-spiel), Python-driven" if reference else
               "OpenSpiel not installed")


def _dicechess_row(seconds: float) -> Row:
    from descent.search_cy.games import dicechess

    depth = 3
    state = make_game("dicechess").new_initial_state()
    assert isinstance(state, dicechess.DiceChessState)
    ours = _rate(lambda: sum(list(dicechess.perft_per_die(state, depth).values())), seconds)
    try:
        from descent.tools.dicechess_reference import reference_perft_per_die

        fen = state.to_text()
        reference: float | None = _rate(
            lambda: sum(list(reference_perft_per_die(fen, depth).values())), seconds)
    except ImportError:
        reference = None
    return Row("dicechess", f"perft leaves/s, start position, depth {depth}, all dice",
               ours, None, reference,
               "python-chess pseudo-legal moves under the same rules" if reference else
               "python-chess not installed")


BENCHES: dict[str, Callable[[float], Row]] = {
    "hex": lambda s: _playout_row("hex", "hex(size=11,swap=false)",
                                  ("hex", {"board_size": 11}), s),
    "einstein": lambda s: _playout_row("einstein", "einstein(setup=random)",
                                       ("einstein_wurfelt_nicht", {}), s),
    "dicechess": _dicechess_row,
}


def run(game: str | None = None, seconds: float = 1.0) -> list[Row]:
    names = [game] if game else list(BENCHES)
    for name in names:
        if name not in BENCHES:
            raise ValueError(f"no rules benchmark for {name!r} (known: {', '.join(BENCHES)})")
    return [BENCHES[name](seconds) for name in names]


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def main(game: str | None = None, as_json: bool = False, seconds: float = 1.0) -> int:
    rows = run(game, seconds)
    if as_json:
        print(json.dumps({"suite": "rules", "rows": [
            {**asdict(r), "ratio": r.ratio} for r in rows]}))
        return 0
    print(f"{'game':<10} {'ours (C loop)':>15} {'ours (Python)':>15} {'reference':>13} "
          f"{'ratio':>8}  measure / reference")
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.1f}x"
        print(f"{r.game:<10} {_fmt(r.ours_c):>15} {_fmt(r.ours_python):>15} "
              f"{_fmt(r.reference):>13} {ratio:>8}  {r.measure} / {r.reference_name}")
    return 0
