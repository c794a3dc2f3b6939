"""The MQTT transport and bridge against a real Mosquitto broker on 127.0.0.1 (an
ephemeral port per test), driving real ``descent play`` / ``descent mqtt-bridge``
subprocesses the way a tournament manager would."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import aiomqtt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from descent.engine.engine import Engine
from descent.engine.settings import Settings
from descent.protocols.base import LineProtocol
from descent.protocols.mqtt import (
    NODELAY,
    BadRequest,
    JsonId,
    MqttEngineServer,
    MqttLink,
    MqttOptions,
    ReplyCache,
    message_payload,
    parse_broker,
    parse_request,
)
from descent.tools.bench_protocol import Mosquitto

GAME = "hex(size=5)"
TIMEOUT = 30.0


# -- a manager's side of the topics ---------------------------------------------------

class Manager:
    """What a tournament manager does: requests with ids on the in topic, at-least-once
    (requests not answered within ``resend_after`` seconds, or pending when the connection
    comes back, are published again), every message of the out and status topics kept."""

    def __init__(self, broker: str, engine_id: str, *, username: str | None = None,
                 password: str | None = None, resend_after: float = 2.0) -> None:
        self.host, self.port = parse_broker(broker)
        self.base = f"descent/{engine_id}"
        self.username, self.password = username, password
        self.resend_after = resend_after
        self.client_id = f"manager-{uuid.uuid4().hex[:10]}"
        self.replies: dict[JsonId | None, list[dict[str, Any]]] = defaultdict(list)
        self.outputs: list[dict[str, Any]] = []
        self.plain: list[str] = []
        self.statuses: list[tuple[str, bool]] = []
        self.sent: dict[JsonId | None, int] = defaultdict(int)
        self._pending: dict[JsonId | None, tuple[str, float]] = {}
        self._client: aiomqtt.Client | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Manager:
        self._task = asyncio.create_task(self._run())
        await self.wait_for(lambda: self._client is not None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        first = True
        while True:
            properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            properties.SessionExpiryInterval = 300
            try:
                async with aiomqtt.Client(
                        self.host, self.port, identifier=self.client_id,
                        protocol=aiomqtt.ProtocolVersion.V5, clean_start=first,
                        properties=properties, socket_options=(NODELAY,),
                        username=self.username, password=self.password) as client:
                    first = False
                    await client.subscribe(f"{self.base}/out", qos=1)
                    await client.subscribe(f"{self.base}/status", qos=1)
                    self._client = client
                    self._notify()
                    resender = asyncio.create_task(self._resend(client))
                    try:
                        async for message in client.messages:
                            self._record(message)
                    finally:
                        self._client = None
                        resender.cancel()
            except aiomqtt.MqttError:
                await asyncio.sleep(0.1)

    async def _resend(self, client: aiomqtt.Client) -> None:
        force = True     # after (re)connecting: whatever failed during the outage
        while True:
            now = time.monotonic()
            for request_id, (payload, last) in list(self._pending.items()):
                if force or now - last > self.resend_after:
                    await self._publish(client, request_id, payload)
            force = False
            await asyncio.sleep(0.2)

    async def _publish(self, client: aiomqtt.Client, request_id: JsonId | None,
                       payload: str) -> None:
        self._pending[request_id] = (payload, time.monotonic())
        self.sent[request_id] += 1
        with contextlib.suppress(aiomqtt.MqttError):
            await client.publish(f"{self.base}/in", payload, qos=1, timeout=2)

    def _notify(self) -> None:
        self._changed.set()

    def _record(self, message: aiomqtt.Message) -> None:
        assert isinstance(message.payload, bytes)
        text = message.payload.decode()
        if str(message.topic).endswith("/status"):
            self.statuses.append((text, message.retain))
        elif text.startswith("{"):
            data = json.loads(text)
            if "output" in data:
                self.outputs.append(data)
            else:
                self._pending.pop(data["id"], None)
                self.replies[data["id"]].append(data)
        else:
            self.plain.append(text)
        self._notify()

    async def send(self, request_id: JsonId, line: str) -> None:
        payload = json.dumps({"id": request_id, "line": line})
        self._pending[request_id] = (payload, time.monotonic())
        client = self._client
        if client is not None:
            await self._publish(client, request_id, payload)

    async def publish_raw(self, payload: str | bytes) -> None:
        assert self._client is not None
        await self._client.publish(f"{self.base}/in", payload, qos=1)

    async def request(self, request_id: JsonId, line: str) -> str:
        await self.send(request_id, line)
        return await self.reply(request_id)

    async def reply(self, request_id: JsonId) -> str:
        await self.wait_for(lambda: request_id in self.replies)
        first = self.replies[request_id][0]
        assert "reply" in first, first
        text: str = first["reply"]
        return text

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self._changed.clear()
            if predicate():
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("timed out waiting for the engine")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def wait_status(self, value: str) -> None:
        await self.wait_for(lambda: bool(self.statuses) and self.statuses[-1][0] == value)


async def retained_status(broker: str, engine_id: str) -> tuple[str, bool]:
    """The status a manager that connects now sees first."""
    host, port = parse_broker(broker)
    async with aiomqtt.Client(host, port, socket_options=(NODELAY,)) as client:
        await client.subscribe(f"descent/{engine_id}/status", qos=1)
        async with asyncio.timeout(TIMEOUT):
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                return message.payload.decode(), bool(message.retain)
    raise AssertionError("no status")


# -- fixtures ---------------------------------------------------------------------------

@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with Mosquitto(tmp_path / "broker", persistence=True) as running:
        yield running


def descent(*args: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as err:
        return subprocess.Popen([sys.executable, "-m", "descent", *args],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)


def play_mqtt(broker: str, engine_id: str, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    # info: the tests read connection events from the log
    return descent("play", "--transport", "mqtt", "--broker", broker, "--engine-id",
                   engine_id, "--game", GAME, "--seed", "1", "--hash-mb", "16",
                   "--log-level", "info", *extra, log=log)


@contextlib.contextmanager
def process(proc: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(TIMEOUT)


def finished(proc: subprocess.Popen[bytes]) -> int:
    code = proc.wait(TIMEOUT)
    assert proc.stdout is not None
    assert proc.stdout.read() == b"", "stdout must stay empty under MQTT"
    return code


def stones(board_reply: str) -> int:
    """Occupied cells of a GTP ``showboard`` (rows look like ``2\\.  B  .\\2``)."""
    rows = [line.split("\\")[1] for line in board_reply.splitlines() if line.count("\\") == 2]
    return sum(token != "." for row in rows for token in row.split())


# -- the engine over MQTT -----------------------------------------------------------------

def test_gtp_session_ids_duplicates_status_and_quit(broker: Mosquitto, tmp_path: Path) -> None:
    async def scenario() -> None:
        with process(play_mqtt(broker.address, "test1", tmp_path / "engine.log")) as proc:
            async with Manager(broker.address, "test1") as manager:
                await manager.wait_status("online")
                assert await retained_status(broker.address, "test1") == ("online", True)

                name = await manager.request("n1", "name")
                assert name.startswith("= ") and name.endswith("\n\n")
                assert await manager.request("p1", "play b a1") == "= \n\n"
                # the same id again (a QoS 1 redelivery): answered from the cache, not
                # played a second time (that would be an illegal-move error)
                await manager.publish_raw(json.dumps({"id": "p1", "line": "play b a1"}))
                await manager.wait_for(lambda: len(manager.replies["p1"]) == 2)
                assert manager.replies["p1"][1] == {"id": "p1", "reply": "= \n\n"}
                illegal = await manager.request("p2", "play b a1")
                assert illegal.startswith("? ") and illegal.endswith("\n\n")
                assert await manager.request(7, "play w b2") == "= \n\n"   # integer ids
                assert manager.replies[7] == [{"id": 7, "reply": "= \n\n"}]
                assert stones(await manager.request("s1", "showboard")) == 2

                # a plain line: a plain reply; a comment: an empty acknowledgement
                await manager.publish_raw("protocol_version")
                await manager.wait_for(lambda: "= 2\n\n" in manager.plain)
                assert await manager.request("c1", "# just a comment") == ""
                await manager.publish_raw(b"{not json")
                await manager.wait_for(lambda: None in manager.replies)
                assert manager.replies[None][0]["error"].startswith("bad request")
                await manager.publish_raw(json.dumps({"id": "x1"}))
                await manager.wait_for(lambda: "x1" in manager.replies)
                assert "error" in manager.replies["x1"][0]

                assert await manager.request("q", "quit") == "= \n\n"
                await manager.wait_status("offline")
                assert finished(proc) == 0
        assert await retained_status(broker.address, "test1") == ("offline", True)

    asyncio.run(scenario())


def test_last_will_says_offline_when_the_engine_is_killed(broker: Mosquitto,
                                                          tmp_path: Path) -> None:
    async def scenario() -> None:
        with process(play_mqtt(broker.address, "doomed", tmp_path / "engine.log")) as proc:
            async with Manager(broker.address, "doomed") as manager:
                await manager.wait_status("online")
                assert await manager.request(1, "play b c3") == "= \n\n"
                proc.send_signal(signal.SIGKILL)
                await manager.wait_status("offline")
        assert await retained_status(broker.address, "doomed") == ("offline", True)

    asyncio.run(scenario())


@pytest.mark.parametrize("outage", ["restart", "crash"])
def test_broker_restart_mid_game_loses_and_repeats_nothing(broker: Mosquitto, tmp_path: Path,
                                                            outage: str) -> None:
    """``restart``: SIGTERM, the broker saves its sessions and queues and restores them;
    ``crash``: SIGKILL, whatever it held is gone and the manager's resending covers it."""
    cells = [f"{c}{r}" for r in range(1, 6) for c in "abcde"]
    moves = [f"play {'bw'[i % 2]} {cell}" for i, cell in enumerate(cells[:16])]

    async def scenario() -> None:
        with process(play_mqtt(broker.address, "restart1", tmp_path / "engine.log")) as proc:
            async with Manager(broker.address, "restart1", resend_after=1.5) as manager:
                await manager.wait_status("online")
                for i, line in enumerate(moves[:4]):
                    assert await manager.request(f"m{i}", line) == "= \n\n"
                # a burst in flight when the broker goes down: some requests still queued
                # for the engine, some replies queued for us, some publishes that fail
                for i, line in enumerate(moves[4:10], start=4):
                    await manager.send(f"m{i}", line)
                await asyncio.to_thread(broker.stop if outage == "restart" else broker.kill)
                for i, line in enumerate(moves[10:], start=10):
                    await manager.send(f"m{i}", line)   # the broker is down: they fail
                await asyncio.sleep(0.3)
                await asyncio.to_thread(broker.start)
                await manager.wait_for(lambda: all(f"m{i}" in manager.replies
                                                   for i in range(len(moves))), 60)
                for i in range(len(moves)):
                    replies = manager.replies[f"m{i}"]
                    # executed once: a second execution of a play would be illegal, and
                    # copies of a reply (QoS 1) are identical
                    assert all(r == {"id": f"m{i}", "reply": "= \n\n"} for r in replies), \
                        (i, replies)
                # the game goes on where it was: every stone once, and the engine moves
                assert stones(await manager.request("board", "showboard")) == len(moves)
                move = await manager.request("g", "genmove b")
                assert move.startswith("= ") and move.strip() != "="
                assert stones(await manager.request("board2", "showboard")) == len(moves) + 1
                assert await manager.request("q", "quit") == "= \n\n"
                assert finished(proc) == 0
                assert sum(manager.sent.values()) >= len(moves)

    asyncio.run(scenario())


def test_uci_search_output_carries_the_go_request_id(broker: Mosquitto,
                                                     tmp_path: Path) -> None:
    async def scenario() -> None:
        engine = descent("play", "--transport", "mqtt", "--broker", broker.address,
                         "--engine-id", "uci1", "--game", "dicechess", "--seed", "1",
                         "--hash-mb", "16", log=tmp_path / "engine.log")
        with process(engine) as proc:
            async with Manager(broker.address, "uci1") as manager:
                await manager.wait_status("online")
                assert await manager.request("r", "isready") == "readyok\n"
                assert await manager.request("p", "position startpos") == ""
                # go answers nothing itself; its search prints info and bestmove later
                assert await manager.request("g", "go dice 1 nodes 200") == ""
                await manager.wait_for(lambda: any(o["output"].startswith("bestmove")
                                                   for o in manager.outputs))
                assert manager.outputs and all(o["id"] == "g" for o in manager.outputs)
                assert manager.outputs[-1]["output"].startswith("bestmove ")
                # an infinite search: its bestmove comes after stop, tagged with the go's
                # id (or, when the search had already ended and held it, as stop's reply)
                assert await manager.request("g2", "go dice 1 infinite") == ""
                stop_reply = await manager.request("s", "stop")
                await manager.wait_for(lambda: stop_reply.startswith("bestmove ") or any(
                    o["id"] == "g2" and o["output"].startswith("bestmove ")
                    for o in manager.outputs))
                assert all(o["id"] in ("g", "g2") for o in manager.outputs)
                assert await manager.request("q", "quit") == ""
                await manager.wait_status("offline")
                assert finished(proc) == 0

    asyncio.run(scenario())


# -- username/password and TLS --------------------------------------------------------------

def password_broker(tmp_path: Path) -> Mosquitto:
    passwd = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    assert Path(passwd).exists(), "mosquitto_passwd is missing (Debian package mosquitto)"
    password_file = tmp_path / "passwords"
    subprocess.run([passwd, "-c", "-b", str(password_file), "referee", "s3cret"],
                   check=True, capture_output=True)
    password_file.chmod(0o600)
    return Mosquitto(tmp_path / "authbroker",
                     extra=["allow_anonymous false", f"password_file {password_file}"])


def test_username_and_password_accepted(tmp_path: Path) -> None:
    async def scenario(address: str) -> None:
        engine = play_mqtt(address, "authed", tmp_path / "engine.log",
                           "--mqtt-username", "referee", "--mqtt-password", "s3cret")
        with process(engine) as proc:
            async with Manager(address, "authed", username="referee",
                               password="s3cret") as manager:
                await manager.wait_status("online")
                assert await manager.request(1, "play b a1") == "= \n\n"
                assert await manager.request(2, "quit") == "= \n\n"
                assert finished(proc) == 0

    with password_broker(tmp_path) as broker:
        asyncio.run(scenario(broker.address))


@pytest.mark.parametrize("credentials", [["--mqtt-username", "referee", "--mqtt-password",
                                          "wrong"], []])
def test_wrong_or_missing_credentials_end_the_engine(tmp_path: Path,
                                                     credentials: list[str]) -> None:
    log = tmp_path / "engine.log"
    with password_broker(tmp_path) as broker, \
            process(play_mqtt(broker.address, "intruder", log, *credentials)) as proc:
        assert finished(proc) == 1
    events = [json.loads(line) for line in log.read_text().splitlines()
              if line.startswith("{")]
    refused = [e["error"].lower() for e in events if e["event"] == "mqtt_refused"]
    assert refused and ("authori" in refused[0] or "password" in refused[0]), refused


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl is missing: it makes the test certificates"
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, csr, cert = (folder / n for n in
                                  ("ca.key", "ca.pem", "server.key", "server.csr",
                                   "server.pem"))
    ext = folder / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, capture_output=True)

    run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(ca_key))
    run("req", "-x509", "-new", "-key", str(ca_key), "-subj", "/CN=descent test CA",
        "-days", "2", "-out", str(ca))
    run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key))
    run("req", "-new", "-key", str(key), "-subj", "/CN=127.0.0.1", "-out", str(csr))
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
        "-CAcreateserial", "-days", "2", "-extfile", str(ext), "-out", str(cert))
    return ca, cert, key


def test_tls_with_a_ca_file(tmp_path: Path) -> None:
    ca, cert, key = make_certificates(tmp_path / "certs")

    async def scenario(address: str) -> None:
        engine = play_mqtt(address, "secure", tmp_path / "engine.log", "--mqtt-tls",
                           "--mqtt-ca-file", str(ca))
        with process(engine) as proc:
            await asyncio.sleep(0)   # the manager cannot read TLS topics: use the process
            deadline = time.monotonic() + TIMEOUT
            log = tmp_path / "engine.log"
            while "mqtt_connected" not in log.read_text():
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                await asyncio.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            assert finished(proc) == 0

    with Mosquitto(tmp_path / "tlsbroker", extra=[f"cafile {ca}", f"certfile {cert}",
                                                  f"keyfile {key}"]) as broker:
        asyncio.run(scenario(broker.address))


# -- the bridge -----------------------------------------------------------------------------

def bridge(broker: str, engine_id: str, log: Path, *command: str,
           framing: str = "gtp") -> subprocess.Popen[bytes]:
    return descent("mqtt-bridge", "--broker", broker, "--engine-id", engine_id,
                   "--framing", framing, "--", *command, log=log)


def test_bridge_puts_a_stdio_gtp_engine_on_the_topics(broker: Mosquitto,
                                                      tmp_path: Path) -> None:
    wrapped = [sys.executable, "-m", "descent", "play", "--game", GAME, "--seed", "1",
               "--hash-mb", "16"]

    async def scenario() -> None:
        with process(bridge(broker.address, "mohex", tmp_path / "bridge.log",
                            *wrapped)) as proc:
            async with Manager(broker.address, "mohex") as manager:
                await manager.wait_status("online")
                assert await manager.request("a", "play b a1") == "= \n\n"
                await manager.publish_raw(json.dumps({"id": "a", "line": "play b a1"}))
                await manager.wait_for(lambda: len(manager.replies["a"]) == 2)
                assert manager.replies["a"][1]["reply"] == "= \n\n"
                assert await manager.request("c", "# comment") == ""
                assert (await manager.request("b", "play b a1")).startswith("? ")
                board = await manager.request("s", "showboard")
                assert board.startswith("= ") and board.endswith("\n\n") and stones(board) == 1
                await manager.publish_raw("12 protocol_version")
                await manager.wait_for(lambda: "=12 2\n\n" in manager.plain)
                assert await manager.request("q", "quit") == "= \n\n"
                await manager.wait_status("offline")
                assert finished(proc) == 0

    asyncio.run(scenario())


def test_bridge_line_framing_tags_output_with_the_last_request(broker: Mosquitto,
                                                               tmp_path: Path) -> None:
    shout = [sys.executable, "-u", "-c",
             "import sys\nfor line in sys.stdin:\n"
             "    print(line.strip().upper(), flush=True)\n"
             "    print('done', flush=True) if line.strip() == 'go' else None\n"]

    async def scenario() -> None:
        with process(bridge(broker.address, "shout", tmp_path / "bridge.log", *shout,
                            framing="line")) as proc:
            async with Manager(broker.address, "shout") as manager:
                await manager.wait_status("online")
                await manager.send("u1", "uci")
                await manager.wait_for(lambda: len(manager.outputs) == 1)
                await manager.send("g1", "go")
                await manager.wait_for(lambda: len(manager.outputs) == 3)
                assert manager.outputs == [{"id": "u1", "output": "UCI\n"},
                                           {"id": "g1", "output": "GO\n"},
                                           {"id": "g1", "output": "done\n"}]
                await manager.publish_raw("plain")
                await manager.wait_for(lambda: manager.plain == ["PLAIN\n"])
                proc.send_signal(signal.SIGTERM)
                await manager.wait_status("offline")
                assert finished(proc) == 0

    asyncio.run(scenario())


def test_bridge_without_a_command_is_one_clear_error(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "descent", "mqtt-bridge", "--broker",
                             "127.0.0.1:1"], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2
    assert "no engine command" in result.stderr and "Traceback" not in result.stderr


# -- in-process: the server's threading, against the broker -----------------------------

class SlowProtocol(LineProtocol):
    """A protocol with a blocking command (``wait``, released by the urgent ``# go on``),
    a search that prints from another thread after its command returned (``go``), and
    ``quit``."""

    name = "slow"
    commands: ClassVar[dict[str, str]] = {}

    def __init__(self, engine: Engine, send: Callable[[str], None]) -> None:
        super().__init__(engine, send)
        self.release = threading.Event()

    def handle(self, line: str) -> bool:
        if line == "wait":
            self.release.wait(TIMEOUT)
            self.send("waited")
        elif line == "go":
            def search() -> None:
                time.sleep(0.05)
                self.send("info 1")
                self.send("bestmove x")
            threading.Thread(target=search).start()
        elif line == "quit":
            self.send("bye")
            return False
        else:
            self.send(f"echo {line}")
        return True

    def is_urgent(self, line: str) -> bool:
        return line.startswith("# go on")

    def handle_urgent(self, line: str) -> None:
        self.release.set()
        self.send("released")

    def close(self) -> None:
        self.release.set()


def test_blocking_commands_run_off_the_network_thread(broker: Mosquitto) -> None:
    options = MqttOptions("127.0.0.1", broker.port, "inproc")
    server = MqttEngineServer(SlowProtocol, Engine(Settings(game=GAME, hash_mb=16)), options)
    done: list[int] = []
    thread = threading.Thread(target=lambda: done.append(server.serve()))
    thread.start()

    async def scenario() -> None:
        async with Manager(broker.address, "inproc") as manager:
            await manager.wait_status("online")
            await manager.send("w", "wait")
            await manager.send("e", "echo")        # queued behind the blocking command
            assert await manager.request("u", "# go on") == "released\n"
            assert await manager.reply("w") == "waited\n"
            assert await manager.reply("e") == "echo echo\n"
            assert await manager.request("g", "go") == ""
            await manager.wait_for(lambda: len(manager.outputs) == 2)
            assert manager.outputs == [{"id": "g", "output": "info 1\n"},
                                       {"id": "g", "output": "bestmove x\n"}]
            assert await manager.request("q", "quit") == "bye\n"
            await manager.wait_status("offline")

    try:
        asyncio.run(scenario())
    finally:
        thread.join(TIMEOUT)
    assert done == [0]


# -- in-process: request parsing, the cache, fuzzing -------------------------------------

def test_parse_request_forms() -> None:
    assert parse_request(b"genmove b\n") == [parse_request(b"genmove b")[0]]
    assert [r.line for r in parse_request(b"a\nb\r\n")] == ["a", "b"]
    assert parse_request(b"")[0].line == ""
    (request,) = parse_request(b'{"id": "7", "line": "name"}')
    assert (request.id, request.line) == ("7", "name")
    assert parse_request(b'{"line": "name"}')[0].id is None
    for bad, request_id in [(b'{"id": 1, "line": "a\\nb"}', 1), (b'{"id": true, "line": "x"}',
                                                               None),
                            (b"{nope", None), (b'{"id": [1]}', None), (b"\xff", None),
                            (b'{"id": "k"}', "k")]:
        with pytest.raises(BadRequest) as caught:
            parse_request(bad)
        assert caught.value.request_id == request_id


def test_payloads_and_broker_addresses() -> None:
    assert message_payload(None, "reply", "= \n\n") == b"= \n\n"
    assert json.loads(message_payload("a", "reply", "= \n\n")) == {"id": "a", "reply": "= \n\n"}
    assert json.loads(message_payload(None, "error", "bad")) == {"id": None, "error": "bad"}
    assert parse_broker("h:1884") == ("h", 1884)
    assert parse_broker("h") == ("h", 1883)
    assert parse_broker("h", tls=True) == ("h", 8883)
    assert parse_broker("[::1]:1999") == ("::1", 1999)
    for bad in (":1883", "h:x", "h:0"):
        with pytest.raises(ValueError):
            parse_broker(bad)
    for engine_id in ("a/b", "a+", "#", ""):
        with pytest.raises(ValueError):
            MqttOptions("h", 1, engine_id)


def test_reply_cache_is_bounded() -> None:
    cache = ReplyCache(ids=3, per_id=2)
    for i in range(5):
        cache.open(i, "name").extend([b"1", b"2", b"3"])
    assert cache.get(0, "name") is None and cache.get(1, "name") is None
    assert cache.get(4, "name") == [b"2", b"3"]
    assert cache.get("4", "name") is None
    assert cache.get(4, "version") is None       # the same id with another line
    cache.clear()
    assert cache.get(4, "name") is None


def receive(link: MqttLink, payload: bytes | str) -> list[bytes]:
    """What ``link`` queues for the out topic on one incoming message."""
    before = len(link._outbox)
    data = payload if isinstance(payload, bytes) else payload.encode()
    link._receive(aiomqtt.Message("descent/fuzz/in", data, 1, False, 1, None))
    return list(link._outbox)[before:]


def test_a_deeply_nested_request_is_answered_and_the_link_keeps_going() -> None:
    """About a thousand levels of brackets (2 KB) raised a RecursionError that escaped
    before the message was acknowledged: redelivered forever, nothing answered again."""
    async def scenario() -> None:
        async with offline_link() as (link, handled):
            nested = '{"id": "x", "line": ' + "[" * 5000 + "]" * 5000 + "}"
            out = receive(link, nested)
            assert len(out) == 1 and json.loads(out[0])["error"].startswith("bad request")
            out = receive(link, json.dumps({"id": "y", "line": "name"}))
            assert [json.loads(m) for m in out] == [{"id": "y", "reply": "= name\n\n"}]

    asyncio.run(scenario())


def test_request_ids_may_repeat_with_other_lines_and_in_the_next_game() -> None:
    """A manager that numbers its requests per game: the previous game's reply must not
    answer a new request (it answered ``play b a1`` with an old ``= f6``)."""
    async def scenario() -> None:
        async with offline_link() as (link, handled):
            receive(link, json.dumps({"id": 1, "line": "genmove b"}))
            # a redelivery of the same request: the cache answers, nothing runs again
            assert receive(link, json.dumps({"id": 1, "line": "genmove b"}))
            assert [r.line for r in handled] == ["genmove b"]
            # the same id with another line is another request
            receive(link, json.dumps({"id": 1, "line": "play b a1"}))
            assert [r.line for r in handled] == ["genmove b", "play b a1"]
            # a new game: the same id and line run again
            receive(link, json.dumps({"id": "new", "line": "clear_board"}))
            receive(link, json.dumps({"id": 1, "line": "genmove b"}))
            assert [r.line for r in handled][-2:] == ["clear_board", "genmove b"]
            # the new game's own request, redelivered, is still answered from the cache
            receive(link, json.dumps({"id": "new", "line": "clear_board"}))
            assert [r.line for r in handled].count("clear_board") == 1

    asyncio.run(scenario())


@contextlib.asynccontextmanager
async def offline_link() -> AsyncIterator[tuple[MqttLink, list[Any]]]:
    handled: list[Any] = []
    link: MqttLink

    def answer(request: Any) -> None:
        handled.append(request)
        link.emit(request, "reply", f"= {request.line}\n\n")

    link = MqttLink(MqttOptions("127.0.0.1", 1, "fuzz"), answer,
                    starts_new_game=lambda line: line == "clear_board")
    yield link, handled


payloads = st.one_of(
    st.binary(max_size=60),
    st.text(max_size=60).map(str.encode),
    st.builds(lambda i, line: json.dumps({"id": i, "line": line}).encode(),
              st.one_of(st.none(), st.integers(), st.text(max_size=8), st.booleans(),
                        st.floats(allow_nan=False)),
              st.one_of(st.text(max_size=30), st.integers(), st.none())),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(payloads, min_size=1, max_size=6))
def test_fuzz_every_request_gets_one_well_formed_answer(batch: list[bytes]) -> None:
    async def scenario() -> None:
        async with offline_link() as (link, handled):
            for payload in batch:
                before_out, before_handled = len(link._outbox), len(handled)
                link._receive(aiomqtt.Message("descent/fuzz/in", payload, 1, False, 1, None))
                new = list(link._outbox)[before_out:]
                requests = handled[before_handled:]
                if not requests:     # a bad request, or a duplicate id: answered anyway
                    assert new
                for message in new:
                    if message.startswith(b"{"):
                        data = json.loads(message)
                        assert set(data) in ({"id", "reply"}, {"id", "error"})
                    else:
                        assert message.endswith(b"\n\n")
                for request in requests:
                    assert "\n" not in request.line and "\r" not in request.line

    asyncio.run(scenario())


def test_bench_protocol_runs_briefly(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "descent.tools.bench_protocol", "--n", "12",
                             "--game", GAME, "--json"], capture_output=True, text=True,
                            timeout=120, env={**os.environ})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    rows = {(r["transport"], r["command"]): r for r in report["rows"]}
    assert set(rows) == {(t, c) for t in ("stdio", "mqtt")
                         for c in ("name", "play b a1", "undo")}
    assert all(r["n"] == 4 and 0 < r["median_ms"] <= r["p99_ms"] for r in rows.values())
