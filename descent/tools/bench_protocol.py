"""Protocol round trips of ``descent play`` over stdio and over MQTT: median and p99.

    python -m descent.tools.bench_protocol [--n 500] [--game 'hex(size=11)'] [--broker HOST:PORT]
                                   [--json]

Each transport runs one real ``descent play`` subprocess and sends the same cycle of
commands (GTP: ``name``, ``play b a1``, ``undo``; UCI: ``isready``), one at a time,
waiting for each reply; the round trip is from writing/publishing the request to having
read its whole reply. Over MQTT the requests carry ids (``{"id", "line"}``, QoS 1) and
the client sets TCP_NODELAY. Without ``--broker`` a private Mosquitto is started on
127.0.0.1 with ``set_tcp_nodelay true`` (the Debian ``mosquitto`` package).

Also home of ``Mosquitto``, the broker launcher that the MQTT tests share.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

DEFAULT_COMMANDS = {"gtp": ["name", "play b a1", "undo"], "uci": ["isready"]}
ENGINE_START_TIMEOUT_S = 60.0


def find_mosquitto() -> str | None:
    """The broker binary: on PATH, or in Debian's /usr/sbin (not on a user's PATH)."""
    found = shutil.which("mosquitto")
    if found:
        return found
    for folder in ("/usr/sbin", "/usr/local/sbin"):
        candidate = Path(folder) / "mosquitto"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Mosquitto:
    """A private Mosquitto on 127.0.0.1: start, stop (SIGTERM: it saves its persistence
    file), restart on the same port. ``extra`` lines go into the listener's config."""

    workdir: Path
    persistence: bool = False
    extra: list[str] = field(default_factory=list)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def config(self) -> Path:
        lines = [f"listener {self.port} 127.0.0.1", "set_tcp_nodelay true",
                 f"persistence {'true' if self.persistence else 'false'}",
                 f"persistence_location {self.workdir}/",
                 "log_dest stderr", "log_type error", "log_type warning"]
        if os.geteuid() == 0:
            lines.append("user root")   # else it drops to 'mosquitto' and cannot read tmp files
        if not any(line.startswith(("allow_anonymous", "password_file")) for line in self.extra):
            lines.append("allow_anonymous true")
        path = self.workdir / "mosquitto.conf"
        path.write_text("\n".join(lines + self.extra) + "\n", encoding="utf-8")
        return path

    def start(self, timeout: float = 10.0) -> None:
        binary = find_mosquitto()
        if binary is None:
            raise RuntimeError("mosquitto is not installed (apt-get install mosquitto)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = open(self.workdir / "mosquitto.log", "ab")  # noqa: SIM115 (lives with proc)
        self.proc = subprocess.Popen([binary, "-c", str(self.config())],
                                     stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited with {self.proc.returncode}: "
                                   + (self.workdir / "mosquitto.log").read_text()[-2000:])
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not open port {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        """A crash: SIGKILL, nothing saved since the last autosave."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> Mosquitto:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def summary(samples: Sequence[float]) -> dict[str, float]:
    """Median and p99 (nearest rank) in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, max(0, int(round(0.99 * len(ordered))) - 1))]
    return {"n": len(ordered), "median_ms": statistics.median(ordered) * 1e3,
            "p99_ms": p99 * 1e3}


def engine_command(game: str, protocol: str, extra: Sequence[str] = ()) -> list[str]:
    return [sys.executable, "-m", "descent", "play", "--game", game, "--seed", "1",
            "--hash-mb", "16", "--log-level", "warning",
            *(["--protocol", protocol] if protocol else []), *extra]


def _read_reply(stdout: IO[str], framing: str) -> str:
    lines = []
    while True:
        line = stdout.readline()
        if not line:
            raise RuntimeError("the engine closed its output")
        lines.append(line)
        if framing == "line" or (framing == "gtp" and line.strip() == ""):
            return "".join(lines)


def bench_stdio(game: str, protocol: str, commands: Sequence[str], n: int,
                framing: str) -> dict[str, list[float]]:
    """Round trips in seconds, per command, through the engine's stdin/stdout."""
    proc = subprocess.Popen(engine_command(game, protocol), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    times: dict[str, list[float]] = {c: [] for c in commands}
    try:
        for i in range(n):
            command = commands[i % len(commands)]
            started = time.perf_counter()
            proc.stdin.write(command + "\n")
            proc.stdin.flush()
            _read_reply(proc.stdout, framing)
            times[command].append(time.perf_counter() - started)
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return times


async def _bench_mqtt(broker: str, game: str, protocol: str, commands: Sequence[str],
                      n: int) -> dict[str, list[float]]:
    import aiomqtt

    from descent.protocols.mqtt import NODELAY, parse_broker

    host, port = parse_broker(broker)
    engine_id = f"bench-{uuid.uuid4().hex[:8]}"
    prefix = "descent"
    proc = await asyncio.create_subprocess_exec(
        *engine_command(game, protocol, ["--transport", "mqtt", "--broker", broker,
                                         "--engine-id", engine_id]),
        stdin=asyncio.subprocess.DEVNULL)
    times: dict[str, list[float]] = {c: [] for c in commands}
    try:
        async with aiomqtt.Client(host, port, identifier=f"{engine_id}-client",
                                  socket_options=(NODELAY,)) as client:
            await client.subscribe(f"{prefix}/{engine_id}/#", qos=1)
            messages = client.messages
            await _wait_online(messages, f"{prefix}/{engine_id}/status")
            for i in range(n):
                command = commands[i % len(commands)]
                request = json.dumps({"id": i, "line": command})
                started = time.perf_counter()
                await client.publish(f"{prefix}/{engine_id}/in", request, qos=1)
                await _wait_reply(messages, i)
                times[command].append(time.perf_counter() - started)
            await client.publish(f"{prefix}/{engine_id}/in", "quit", qos=1)
            await asyncio.wait_for(proc.wait(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return times


async def _wait_online(messages: Any, status_topic: str) -> None:
    async def wait() -> None:
        async for message in messages:
            if str(message.topic) == status_topic and message.payload == b"online":
                return

    await asyncio.wait_for(wait(), ENGINE_START_TIMEOUT_S)


async def _wait_reply(messages: Any, request_id: int) -> None:
    async for message in messages:
        if str(message.topic).endswith("/out"):
            data = json.loads(message.payload)
            if data.get("id") == request_id and "reply" in data:
                return


def bench_mqtt(broker: str, game: str, protocol: str, commands: Sequence[str],
               n: int) -> dict[str, list[float]]:
    """Round trips in seconds, per command, through the broker (QoS 1, ids)."""
    return asyncio.run(_bench_mqtt(broker, game, protocol, commands, n))


def run(n: int = 500, game: str = "hex(size=11)", protocol: str = "",
        broker: str | None = None, commands: Sequence[str] | None = None) -> dict[str, Any]:
    """Both transports; starts a private Mosquitto when no broker is given."""
    from descent.search_cy.games.registry import make_game

    protocol_name = protocol or make_game(game).default_protocol
    framing = "line" if protocol_name == "uci" else "gtp"
    cycle = list(commands or DEFAULT_COMMANDS.get(protocol_name, DEFAULT_COMMANDS["gtp"]))
    rows: list[dict[str, Any]] = []
    for command, samples in bench_stdio(game, protocol, cycle, n, framing).items():
        rows.append({"transport": "stdio", "command": command, **summary(samples)})
    with tempfile.TemporaryDirectory(prefix="descent-bench-") as tmp:
        broker_proc = None
        if broker is None:
            broker_proc = Mosquitto(Path(tmp))
            broker_proc.start()
            broker = broker_proc.address
        try:
            for command, samples in bench_mqtt(broker, game, protocol, cycle, n).items():
                rows.append({"transport": "mqtt", "command": command, **summary(samples)})
        finally:
            if broker_proc is not None:
                broker_proc.stop()
    return {"game": game, "protocol": protocol_name, "broker": broker, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m descent.tools.bench_protocol",
                                     description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--n", type=int, default=500, help="requests per transport")
    parser.add_argument("--game", default="hex(size=11)")
    parser.add_argument("--protocol", default="", help="default: the game's protocol")
    parser.add_argument("--broker", default=None,
                        help="HOST:PORT of a running broker (default: start a private one)")
    parser.add_argument("--command", action="append", dest="commands", default=None,
                        help="a command of the cycle (repeatable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.n, args.game, args.protocol, args.broker, args.commands)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"protocol round trips, {report['game']} over {report['protocol']} "
          f"(N = {args.n} per transport)")
    print(f"{'transport':<10} {'command':<12} {'n':>5} {'median ms':>10} {'p99 ms':>9}")
    for row in report["rows"]:
        print(f"{row['transport']:<10} {row['command']:<12} {row['n']:>5} "
              f"{row['median_ms']:>10.3f} {row['p99_ms']:>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
