"""The ``descent`` command line: one entry point, subcommands from a table.

Later subsystems (play, arena, train, export, backends) register their subcommands in
COMMANDS; this module only parses arguments and dispatches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from descent import __version__

Handler = Callable[[argparse.Namespace], int]
MAX_LISTED = 150  # EinStein set-up nodes have 720 arrangements: list the first ones only


@dataclass(frozen=True)
class Command:
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Handler


def _configure_rules(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", nargs="?", default="hex",
                   help="game spec, e.g. 'hex(size=11,swap=true)', 'einstein(setup=mirror)', "
                        "'dicechess(nomove=pass)'")
    p.add_argument("--position", default=None,
                   help="start from this position text (Hex move list, EinStein text, FEN/DFEN)")
    p.add_argument("--moves", default="", help="space-separated moves to play first")


def _run_rules(args: argparse.Namespace) -> int:
    from descent.search_cy.games.registry import make_game

    game = make_game(args.game)
    state = game.new_initial_state() if args.position is None \
        else game.state_from_text(args.position)
    for token in args.moves.split():
        state.apply_move(token)
    print(f"game: {game.spec}")
    print(state)
    if state.is_terminal():
        print(f"terminal, value {state.terminal_value():+g} (first player's view)")
    elif state.is_chance_node():
        outcomes = ", ".join(f"{state.action_to_string(a)}:{p:.4g}"
                             for a, p in state.chance_outcomes())
        print(f"chance node: {outcomes}")
    else:
        legal = state.legal_actions()
        shown = [state.action_to_string(a) for a in legal[:MAX_LISTED]]
        more = f" ... ({len(legal) - MAX_LISTED} more)" if len(legal) > MAX_LISTED else ""
        print(f"player {state.current_player()} to move, {len(legal)} moves: "
              f"{', '.join(shown)}{more}")
    print(f"position: {state.to_text()}")
    print(f"hash: {state.hash:016x}")
    return 0


def _configure_bench(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", nargs="?", default="rules",
                   choices=["rules", "search", "nets", "all"],
                   help="what to measure: rules kernels, searches, networks, or all")
    p.add_argument("--game", default=None, help="only this game (hex, einstein, dicechess)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="search: also nodes per second at 1..N threads (powers of two and "
                        "N), with the speed-up over one thread measured in the same run")


def _run_bench(args: argparse.Namespace) -> int:
    import contextlib
    import io
    import json

    from descent.tools import bench_rules, bench_search

    def bench_nets(game: str | None = None, as_json: bool = False, seconds: float = 1.0) -> int:
        from descent.nets import bench  # on demand: onnxruntime is slow to import

        return bench.main(game=game, as_json=as_json, seconds=seconds)

    if args.threads < 1:
        raise ValueError("--threads must be >= 1")

    def bench_search_main(game: str | None = None, as_json: bool = False,
                          seconds: float = 1.0) -> int:
        return bench_search.main(game=game, as_json=as_json, seconds=seconds,
                                 threads=args.threads)

    table = {"rules": bench_rules.main, "search": bench_search_main, "nets": bench_nets}
    names = list(table) if args.suite == "all" else [args.suite]
    suites = [table[name] for name in names]
    if args.json and len(suites) > 1:
        # one JSON object for all suites; its signature is the search suite's node count
        merged: dict[str, object] = {"suite": args.suite, "suites": {}}
        for name, suite in zip(names, suites, strict=True):
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                status = suite(game=args.game, as_json=True, seconds=args.seconds)
            if status:
                return status
            report = json.loads(buffer.getvalue())
            merged["suites"][name] = report  # type: ignore[index]
            if "signature" in report:
                merged["signature"] = report["signature"]
        print(json.dumps(merged))
        return 0
    for suite in suites:
        status = suite(game=args.game, as_json=args.json, seconds=args.seconds)
        if status:
            return status
    return 0


def _lazy(module: str, configure: str, run: str) -> tuple[
        Callable[[argparse.ArgumentParser], None], Handler]:
    """Configure/run functions that import their module only when the subcommand is
    used, so ``descent --help`` does not load onnxruntime, torch or the kernels."""
    import importlib

    def do_configure(p: argparse.ArgumentParser) -> None:
        getattr(importlib.import_module(module), configure)(p)

    def do_run(args: argparse.Namespace) -> int:
        status: int = getattr(importlib.import_module(module), run)(args)
        return status

    return do_configure, do_run


COMMANDS: dict[str, Command] = {
    "play": Command("the competition engine process: a game protocol over stdio or MQTT",
                    *_lazy("descent.tools.play", "configure", "run")),
    "rules": Command("print a position of a game and its legal moves",
                     _configure_rules, _run_rules),
    "bench": Command("benchmarks: rules kernels, searches and networks, with references",
                     _configure_bench, _run_bench),
    "arena": Command("matches and tournaments between engines (ours and external), with "
                     "records", *_lazy("descent.tools.arena", "configure", "run")),
    "train": Command("Descent self-play training of a value network (run directory, resume)",
                     *_lazy("descent.train.cli", "configure", "run")),
    "export": Command("export a model file to ONNX (and a TensorRT engine), with a parity "
                      "check", *_lazy("descent.nets.cli", "configure_export", "run_export")),
    "backends": Command("list the inference backends available here, and why others are not",
                        *_lazy("descent.nets.cli", "configure_backends", "run_backends")),
    "mqtt-bridge": Command("put an external stdio engine (e.g. MoHex) on the MQTT topics",
                           *_lazy("descent.protocols.mqtt_bridge", "configure", "run")),
    "patterns": Command("Hex move prior: rave self-play records, and the pattern gammas "
                        "fitted on them", *_lazy("descent.research.patterns", "configure", "run")),
    "swapmap": Command("Hex swap decisions: rave self-play from every first stone, and the "
                       "map of which to swap",
                       *_lazy("descent.research.swapmap", "configure", "run")),
    "distill": Command("Hex value network taught by rave: positions of recorded games "
                       "valued by the search, and the network fitted on them",
                       *_lazy("descent.research.distill", "configure", "run")),
    "labels": Command("Hex training data: self-play games of the default player, each "
                      "position with the search's value and visits, in resumable shards",
                      *_lazy("descent.train.labels", "configure", "run")),
    "policy": Command("Hex move-policy networks: trained on the labels, their top-1 beside "
                      "the pattern prior's", *_lazy("descent.train.policy", "configure", "run")),
    "values": Command("value networks (the dice games' nnue, mlp) fitted on the labels, and "
                      "their correlation with the search's values beside the C heuristic's",
                      *_lazy("descent.train.values", "configure", "run")),
    "tune": Command("tune the weights of a game's C heuristic by self-play matches (SPSA, "
                    "hill climbing, genetic algorithm)",
                    *_lazy("descent.tools.tune", "configure", "run")),
    "mqtt-client": Command("play an engine on an MQTT broker's topics as a local stdio engine",
                           *_lazy("descent.protocols.mqtt_client", "configure", "run")),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="descent",
        description="Competition engine for Hex, EinStein wurfelt nicht! and dice chess.")
    parser.add_argument("--version", action="version", version=f"descent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        command.configure(sub.add_parser(name, help=command.help, description=command.help))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return COMMANDS[args.command].run(args)
    except ValueError as exc:  # bad game spec, position or move: one clear line, no trace
        print(f"descent {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
