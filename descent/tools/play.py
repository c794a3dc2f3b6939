"""``descent play``: the long-running competition process.

Flags mirror the Settings fields one for one (``--hash-mb 64`` sets ``hash_mb``); a TOML
file (``--config``) and ``DESCENT_*`` environment variables fill what flags leave unset.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from dataclasses import fields

from descent import __version__
from descent.engine.settings import Settings, load_settings, settings_help


def configure(p: argparse.ArgumentParser) -> None:
    types = {f.name: f.type for f in fields(Settings)}
    for name, help_text, default in settings_help():
        flag = "--" + name.replace("_", "-")
        kind = str(types[name])
        shown = f" (default: {default})" if default not in ("", None) else ""
        if kind in ("bool", "<class 'bool'>"):
            p.add_argument(flag, dest=name, default=None, nargs="?", const="true",
                           metavar="BOOL", help=help_text + shown)
        else:
            p.add_argument(flag, dest=name, default=None, metavar=name.upper().replace(
                "_", "-"), help=help_text + shown)
    p.add_argument("--config", default=None, metavar="FILE.toml",
                   help="TOML file with any of the settings above (flags win over it)")


def run(args: argparse.Namespace) -> int:
    from descent.engine.engine import Engine
    from descent.engine.logsetup import configure_logging, get_logger
    from descent.protocols.base import protocol_class
    from descent.search_cy.games.registry import make_game

    cli = {f.name: getattr(args, f.name) for f in fields(Settings)}
    settings = load_settings(cli, args.config)
    # a protocol that does not fit the game is refused before anything loads
    game = make_game(settings.game)
    protocol_name = settings.protocol or game.default_protocol
    protocol = protocol_class(protocol_name)
    if protocol_name not in game.protocols:
        raise ValueError(f"--protocol {protocol_name} does not fit {game.spec}: "
                         f"{game.name} is played over {' or '.join(game.protocols)}")
    configure_logging(settings.log_level, settings.log_file or None)
    log = get_logger(component="play")
    engine = Engine(settings)

    log.info("start", version=__version__, python=platform.python_version(),
             machine=platform.machine(), cpu=platform.processor() or platform.machine(),
             pid=os.getpid(), protocol=protocol_name, transport=settings.transport,
             **engine.describe())
    if settings.transport == "mqtt":
        from descent.protocols.mqtt import serve_mqtt

        mqtt_status: int = serve_mqtt(protocol, engine, settings)
        return mqtt_status
    from descent.protocols.stdio import StdioTransport

    status = StdioTransport().serve(protocol, engine)
    log.info("stop")
    sys.stdout.flush()
    return status
