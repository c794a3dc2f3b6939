"""``descent mqtt-client``: an engine that runs elsewhere, on an MQTT broker's topics, as a
local stdio engine (the reverse of ``descent mqtt-bridge``).

    descent mqtt-client --broker HOST:PORT --engine-id ID [--framing gtp|line]

Every line read from stdin is published to ``<prefix>/<id>/in`` as a request with an id
of this client's own (``{"id": "<session>-<n>", "line": ...}``), and what the engine
publishes for those ids on ``<prefix>/<id>/out`` (replies, and the output of searches such
as UCI ``info``/``bestmove``) is written to stdout as it was printed, so any GTP, EWN, NTU
or UCI client (``descent arena`` among them, as ``mqtt:HOST:PORT/ID`` players) plays the
remote engine as if it ran here. ``quit`` (``exit`` too) ends this process only: it is
answered here (``= `` with GTP framing) and never sent, so the remote engine stays for the
next game. An error message of the engine (a bad request) is written as the protocol's
error: ``? message`` with GTP framing, ``info string error: message`` otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import ssl
import sys
import threading
import uuid
from typing import Any

import aiomqtt

from descent.protocols.base import command_word
from descent.protocols.mqtt import NODELAY, MqttOptions, parse_broker

QUIT_WORDS = frozenset({"quit", "exit"})
CONNECT_TIMEOUT_S = 30.0
FLUSH_TIMEOUT_S = 10.0


class MqttClient:
    """One stdio session against one remote engine."""

    def __init__(self, options: MqttOptions, framing: str = "gtp") -> None:
        if framing not in ("gtp", "line"):
            raise ValueError("framing must be gtp or line")
        self.options = options
        self.framing = framing
        self.session = uuid.uuid4().hex[:12]
        self.sent = 0
        self.answered: set[str] = set()
        self._answer = asyncio.Event()

    def _client(self) -> aiomqtt.Client:
        tls = ssl.create_default_context(cafile=self.options.ca_file or None) \
            if self.options.tls else None
        return aiomqtt.Client(
            self.options.host, self.options.port, identifier=f"descent-client-{self.session}",
            username=self.options.username or None, password=self.options.password or None,
            protocol=aiomqtt.ProtocolVersion.V5, tls_context=tls, socket_options=(NODELAY,))

    def _write(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    def _output(self, payload: bytes) -> None:
        """Writes what the engine published for one of this client's requests."""
        try:
            data = json.loads(payload)
        except ValueError:
            return                     # a plain-text message answers no request of ours
        if not isinstance(data, dict) or not str(data.get("id", "")).startswith(self.session):
            return
        if "output" not in data and str(data["id"]) not in self.answered:
            self.answered.add(str(data["id"]))
            self._answer.set()
        if "error" in data:
            message = str(data["error"])
            self._write(f"? {message}\n\n" if self.framing == "gtp"
                        else f"info string error: {message}\n")
            return
        self._write(str(data.get("reply", data.get("output", ""))))

    async def run(self) -> int:
        """Runs until stdin ends or a quit line. Blocks."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()

        def reader() -> None:
            for raw in sys.stdin.buffer:
                loop.call_soon_threadsafe(lines.put_nowait,
                                          raw.decode("utf-8", "replace").rstrip("\r\n"))
            loop.call_soon_threadsafe(lines.put_nowait, None)

        async with asyncio.timeout(CONNECT_TIMEOUT_S):
            client = await self._client().__aenter__()
        try:
            await client.subscribe(self.options.topic("out"), qos=1)

            async def receive() -> None:
                async for message in client.messages:
                    payload = message.payload
                    if isinstance(payload, bytes | bytearray):
                        self._output(bytes(payload))

            listener = asyncio.create_task(receive())
            threading.Thread(target=reader, name="stdin-reader", daemon=True).start()
            while True:
                line = await lines.get()
                if line is None:
                    break
                if command_word(line) in QUIT_WORDS:
                    if self.framing == "gtp":
                        self._write("= \n\n")
                    break
                self.sent += 1
                request = {"id": f"{self.session}-{self.sent}", "line": line}
                await client.publish(self.options.topic("in"), json.dumps(request), qos=1)
            # the replies still on their way are written before leaving
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FLUSH_TIMEOUT_S):
                    while len(self.answered) < self.sent:
                        self._answer.clear()
                        await self._answer.wait()
            listener.cancel()
        finally:
            await client.__aexit__(None, None, None)
        return 0


def parse_address(text: str) -> tuple[str, str]:
    """``HOST:PORT/ENGINE-ID`` (or ``HOST/ENGINE-ID``) -> (broker, engine id)."""
    broker, sep, engine_id = text.rpartition("/")
    if not sep or not broker or not engine_id:
        raise ValueError(f"expected HOST:PORT/ENGINE-ID, got {text!r}")
    parse_broker(broker)      # checked here, not at the first connection
    return broker, engine_id


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--broker", default="127.0.0.1:1883", help="MQTT broker HOST:PORT")
    p.add_argument("--engine-id", required=True, help="the remote engine's id")
    p.add_argument("--topic-prefix", default="descent", help="MQTT topic prefix")
    p.add_argument("--mqtt-username", default="", help="MQTT user name")
    p.add_argument("--mqtt-password", default="", help="MQTT password")
    p.add_argument("--mqtt-tls", action="store_true", help="connect over TLS")
    p.add_argument("--mqtt-ca-file", default="", help="CA certificate file for TLS")
    p.add_argument("--framing", choices=("gtp", "line"), default="gtp",
                   help="gtp: replies end with a blank line (GTP, EWN); line: UCI, NTU")


def run(args: argparse.Namespace) -> int:
    host, port = parse_broker(args.broker, args.mqtt_tls)
    options = MqttOptions(host, port, args.engine_id, args.topic_prefix, args.mqtt_username,
                          args.mqtt_password, args.mqtt_tls, args.mqtt_ca_file)
    status: Any = asyncio.run(MqttClient(options, args.framing).run())
    return int(status)
