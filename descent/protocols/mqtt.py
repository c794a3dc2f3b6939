"""The MQTT transport: the same protocol lines as stdio, through an MQTT broker.

Topics (``<prefix>`` is ``--topic-prefix``, default ``descent``; ``<id>`` is ``--engine-id``,
default ``<host name>-<process id>``; an id must not contain ``/``, ``+`` or ``#``):

- ``<prefix>/<id>/in``: requests, to the engine. QoS 1.
- ``<prefix>/<id>/out``: replies and other output, from the engine. QoS 1.
- ``<prefix>/<id>/status``: retained ``online`` once the engine has subscribed (so a
  manager that sees ``online`` can send at once); retained ``offline`` when it quits, and
  the same ``offline`` as its last will when it dies or loses the broker for good.

Requests (payload, UTF-8):

- Plain text: a protocol line, e.g. ``genmove b``. A payload of several lines is several
  requests, handled in order. The output they cause is published as plain text too: one
  message holding everything the request printed (exactly the bytes stdio would print,
  e.g. ``= c3\\n\\n`` for GTP), none when it printed nothing.
- JSON ``{"id": ID, "line": "genmove b"}``: ID is a string or an integer, unique per
  engine session. The engine answers with exactly one message
  ``{"id": ID, "reply": TEXT}`` when the request has been handled; TEXT is everything the
  request printed while it was handled (the stdio bytes), ``""`` when it printed nothing
  (UCI ``position``, comment lines), so the reply doubles as an acknowledgement. A JSON
  object without an ``id`` (or with ``"id": null``) is a plain request.
- A payload that starts with ``{`` but is not such an object (bad JSON, no ``line``
  string, a line with a line break, an id that is neither string nor integer), or that
  is not UTF-8, is answered ``{"id": ID or null, "error": "bad request: ..."}`` and
  changes nothing. Retained messages on the in topic are ignored (a stale retained request
  must not run again at every reconnection).

Output that is not a reply: what a protocol prints on the thread handling a request is
that request's reply (above). Lines printed by a thread of their own, a search (UCI
``info``/``bestmove`` after ``go`` returned; ``descent-analyze`` info lines and its closing
blank line), are published as they come, one message per line group:
``{"id": ID, "output": TEXT}``, ID being that of the non-urgent request that was being
handled, or had been handled last, when that thread first printed: the request that
started the search (plain text when it had no id). So UCI ``go``'s info and bestmove
carry the go's id; a bestmove that ``stop`` releases from its own handler (an infinite
search that had already ended and held its move) is ``stop``'s reply. Messages leave in
the order they were produced.

Duplicates: QoS 1 delivers at least once, so a request id seen before is never executed
again; instead every message already published for that id (its reply, its outputs: the
last 64 per id) is published again. The engine remembers the last 1024 ids. Requests
without an id cannot be recognised: a redelivered plain request runs twice, so managers
that need exactly-once send ids. Replies can also arrive twice (a reply whose PUBACK was
lost in a broker outage is published again after reconnecting); managers match replies
by id and keep the first.

Execution: urgent lines (``protocol.is_urgent``: ``# interrupt``, UCI ``stop`` and
``isready``) are handled at once on the network thread, even during a blocking command;
every other line runs on one worker thread, one at a time, in arrival order, so a GTP
``genmove`` never stalls keep-alives or urgent lines. ``quit`` publishes its reply, then
retained ``offline``, then disconnects and exits 0.

Connection: MQTT 5 (needs Mosquitto 2 or another MQTT 5 broker) with a fixed client id
``descent-<id>``, a session that outlives a dropped connection for an hour (session
expiry), clean only on the first connection of the process (a previous process's queued
requests are discarded). When the broker is unreachable or restarts, the engine reconnects
with exponential backoff (0.1 s doubling to 5 s, with jitter) and keeps its protocol and
game state; while it is away the broker queues its requests in the session (across a
restart too when the broker has persistence on), and replies that could not be published
stay in an outbox and are published, in order, after reconnecting. A request the manager
could not publish during the outage is the manager's to publish again (with its id, so it
still runs once). Wrong credentials on the
first connection end the process with status 1 (later they are retried: a broker being
reconfigured should not kill a game). ``--mqtt-username``/``--mqtt-password`` (or
``DESCENT_MQTT_PASSWORD``, which stays out of process listings) and ``--mqtt-tls`` with
``--mqtt-ca-file`` (server certificate checked, host name included) go to the client.
TCP_NODELAY is set on the socket: with Nagle on, a QoS 1 round trip takes ~88 ms instead
of well under 1 ms; broker operators should set Mosquitto's ``set_tcp_nodelay true`` too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import queue
import random
import signal
import socket
import ssl
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from descent.engine.engine import Engine
from descent.engine.logsetup import get_logger
from descent.engine.settings import Settings
from descent.protocols.base import LineProtocol

JsonId = str | int

BACKOFF_MIN_S = 0.1
BACKOFF_MAX_S = 5.0
SESSION_EXPIRY_S = 3600      # how long the broker keeps our queue while we are away
KEEPALIVE_S = 20             # a silent network failure is noticed within 1.5x this
PUBLISH_TIMEOUT_S = 30.0     # no PUBACK by then: treat the connection as broken
FLUSH_TIMEOUT_S = 5.0        # on quit, how long to try to deliver what is still queued
CACHE_IDS = 1024
CACHE_MESSAGES_PER_ID = 64
OUTBOX_LIMIT = 100_000       # messages kept through an outage before dropping the oldest
NODELAY = (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
# CONNACK reason codes that retrying cannot fix (3.1.1 and 5)
_AUTH_FAILURES = {4, 5, 134, 135}


class BadRequest(ValueError):
    """A payload that is not a request; answered with an ``error`` message."""

    def __init__(self, message: str, request_id: JsonId | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


@dataclass(frozen=True)
class Request:
    id: JsonId | None
    line: str


def parse_request(payload: bytes) -> list[Request]:
    """The requests in one payload (see the module docstring). Raises BadRequest."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest("bad request: payload is not UTF-8") from exc
    if not text.lstrip().startswith("{"):
        return [Request(None, line) for line in (text.splitlines() or [""])]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"bad request: invalid JSON ({exc.msg} at {exc.pos})") from exc
    except RecursionError as exc:     # a few KB of brackets: refused, never fatal
        raise BadRequest("bad request: JSON nested too deeply") from exc
    if not isinstance(data, dict):
        raise BadRequest("bad request: a JSON request must be an object")
    request_id = data.get("id")
    if request_id is not None and (isinstance(request_id, bool)
                                   or not isinstance(request_id, str | int)):
        raise BadRequest("bad request: \"id\" must be a string or an integer")
    line = data.get("line")
    if not isinstance(line, str):
        raise BadRequest("bad request: no \"line\" string", request_id)
    line = line.rstrip("\r\n")
    if "\n" in line or "\r" in line:
        raise BadRequest("bad request: \"line\" must be a single line", request_id)
    return [Request(request_id, line)]


def message_payload(request_id: JsonId | None, kind: str, text: str) -> bytes:
    """What goes on the out topic: plain text without an id, else JSON with ``kind``
    (``reply``, ``output`` or ``error``); errors are always JSON."""
    if request_id is None and kind != "error":
        return text.encode("utf-8")
    return json.dumps({"id": request_id, kind: text}, ensure_ascii=False).encode("utf-8")


def parse_broker(text: str, tls: bool = False) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST`` (1883, or 8883 with TLS) or ``[IPv6]:PORT``."""
    text = text.strip()
    default = 8883 if tls else 1883
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    else:
        host, port_text = text, ""
    if not host:
        raise ValueError(f"broker {text!r}: no host name")
    try:
        port = int(port_text) if port_text else default
    except ValueError as exc:
        raise ValueError(f"broker {text!r}: port must be a number") from exc
    if not 0 < port < 65536:
        raise ValueError(f"broker {text!r}: port out of range")
    return host, port


def default_engine_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class MqttOptions:
    host: str
    port: int
    engine_id: str
    prefix: str = "descent"
    username: str = ""
    password: str = ""
    tls: bool = False
    ca_file: str = ""

    def __post_init__(self) -> None:
        for name, value in (("engine id", self.engine_id), ("topic prefix", self.prefix)):
            if not value or any(c in value for c in "+#") or (name == "engine id"
                                                              and "/" in value):
                raise ValueError(f"MQTT {name} {value!r} is empty or has a wildcard"
                                 + (" or '/'" if name == "engine id" else ""))

    @classmethod
    def from_settings(cls, settings: Settings) -> MqttOptions:
        host, port = parse_broker(settings.broker, settings.mqtt_tls)
        return cls(host, port, settings.engine_id or default_engine_id(),
                   settings.topic_prefix, settings.mqtt_username, settings.mqtt_password,
                   settings.mqtt_tls, settings.mqtt_ca_file)

    def topic(self, leaf: str) -> str:
        return f"{self.prefix}/{self.engine_id}/{leaf}"

    @property
    def client_id(self) -> str:
        return f"descent-{self.engine_id}"


class ReplyCache:
    """The messages published for the last ``CACHE_IDS`` requests (loop thread only),
    keyed on the request id and its line: a manager that numbers its requests per game
    reuses ids with other lines, and those are new requests. The server clears it when a
    request starts a new game, so a line repeated in the next game runs again."""

    def __init__(self, ids: int = CACHE_IDS, per_id: int = CACHE_MESSAGES_PER_ID) -> None:
        self._ids = ids
        self._per_id = per_id
        self._entries: OrderedDict[str, deque[bytes]] = OrderedDict()

    @staticmethod
    def key(request_id: JsonId, line: str) -> str:
        return json.dumps([request_id, line])   # "1" and 1 are different ids

    def get(self, request_id: JsonId, line: str) -> list[bytes] | None:
        entry = self._entries.get(self.key(request_id, line))
        return None if entry is None else list(entry)

    def clear(self) -> None:
        self._entries.clear()

    def open(self, request_id: JsonId, line: str) -> deque[bytes]:
        key = self.key(request_id, line)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = deque(maxlen=self._per_id)
            while len(self._entries) > self._ids:
                self._entries.popitem(last=False)
        return entry


def _inbox_class(sink: Callable[[aiomqtt.Message], None]) -> type[asyncio.Queue[Any]]:
    """aiomqtt's message queue, replaced by a direct hand-over: paho calls it inside
    on_message, before it sends the PUBACK, so an acknowledged request can never be left
    behind in a dead connection's queue."""

    class Inbox(asyncio.Queue[Any]):
        def put_nowait(self, item: Any) -> None:
            sink(item)

    return Inbox


class _StructlogHandler(logging.Handler):
    """paho's stdlib log records as structured events (never bare text on stderr)."""

    def emit(self, record: logging.LogRecord) -> None:
        level = record.levelname.lower()
        log = get_logger(component="paho")
        getattr(log, level if level in ("debug", "info", "warning", "error") else "warning")(
            "paho", message=record.getMessage())


def paho_logger() -> logging.Logger:
    logger = logging.getLogger("descent.mqtt.paho")
    if not logger.handlers:
        logger.addHandler(_StructlogHandler())
        logger.propagate = False
        logger.setLevel(logging.WARNING)
    return logger


def _reason_value(exc: aiomqtt.MqttCodeError) -> int | None:
    rc = exc.rc
    value = getattr(rc, "value", rc)
    return value if isinstance(value, int) else None


class MqttLink:
    """The connection shared by the engine server and the bridge: connects (and
    reconnects with backoff), subscribes to the in topic, keeps the status topic, hands
    each new request to ``on_request`` on the event loop thread, answers duplicate ids
    from the cache, and publishes ``emit``-ted messages in order through outages."""

    def __init__(self, options: MqttOptions, on_request: Callable[[Request], None],
                 log: Any | None = None,
                 starts_new_game: Callable[[str], bool] = lambda line: False) -> None:
        self.options = options
        self.on_request = on_request
        self.starts_new_game = starts_new_game
        self.log = log or get_logger(component="mqtt")
        self.cache = ReplyCache()
        self.in_topic = options.topic("in")
        self.out_topic = options.topic("out")
        self.status_topic = options.topic("status")
        self._outbox: deque[bytes] = deque()
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._stop = asyncio.Event()
        self._stop_deadline = 0.0
        self.connections = 0

    # -- called on the event loop thread ---------------------------------------------

    def emit(self, request: Request | None, kind: str, text: str) -> None:
        """Queues one message for the out topic, on behalf of ``request`` (None: no
        request's), remembered for duplicates of a request with an id."""
        request_id = None if request is None else request.id
        payload = message_payload(request_id, kind, text)
        if request is not None and request.id is not None:
            self.cache.open(request.id, request.line).append(payload)
        self._queue(payload)

    def _queue(self, payload: bytes) -> None:
        if len(self._outbox) >= OUTBOX_LIMIT:
            self._outbox.popleft()
            self.log.warning("mqtt_outbox_full", dropped=1)
        self._outbox.append(payload)
        self._idle.clear()
        self._wakeup.set()

    def stop(self) -> None:
        """Ends ``run`` after delivering what is queued (up to FLUSH_TIMEOUT_S)."""
        if not self._stop.is_set():
            self._stop_deadline = asyncio.get_running_loop().time() + FLUSH_TIMEOUT_S
            self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _receive(self, message: aiomqtt.Message) -> None:
        if message.retain or self._stop.is_set():
            if message.retain:
                self.log.warning("mqtt_retained_request_ignored", topic=str(message.topic))
            return
        raw = message.payload
        payload = bytes(raw) if isinstance(raw, bytes | bytearray) else str(raw).encode()
        try:
            requests = parse_request(payload)
        except BadRequest as exc:
            self.log.warning("mqtt_bad_request", error=str(exc))
            self._queue(message_payload(exc.request_id, "error", str(exc)))
            return
        except Exception as exc:   # whatever a payload holds, it is answered and acked
            self.log.error("mqtt_unreadable_request", error=repr(exc))
            self._queue(message_payload(None, "error", f"bad request: {type(exc).__name__}"))
            return
        for request in requests:
            if request.id is not None:
                cached = self.cache.get(request.id, request.line)
                if cached is not None:
                    self.log.info("mqtt_duplicate_request", id=request.id,
                                  republished=len(cached))
                    for payload in cached:
                        self._queue(payload)
                    continue
            if self.starts_new_game(request.line):
                self.cache.clear()
            if request.id is not None:
                self.cache.open(request.id, request.line)
            try:
                self.on_request(request)
            except Exception as exc:   # a handler bug must not break the network thread
                self.log.error("mqtt_request_failed", line=request.line, error=repr(exc))

    # -- the connection loop ---------------------------------------------------------

    def _client(self, clean_start: bool) -> aiomqtt.Client:
        properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        properties.SessionExpiryInterval = SESSION_EXPIRY_S
        tls_context = None
        if self.options.tls:
            tls_context = ssl.create_default_context(cafile=self.options.ca_file or None)
        return aiomqtt.Client(
            self.options.host, self.options.port,
            identifier=self.options.client_id,
            username=self.options.username or None,
            password=self.options.password or None,
            protocol=aiomqtt.ProtocolVersion.V5,
            clean_start=clean_start,
            properties=properties,
            will=aiomqtt.Will(self.status_topic, b"offline", qos=1, retain=True),
            keepalive=KEEPALIVE_S,
            tls_context=tls_context,
            socket_options=(NODELAY,),
            queue_type=_inbox_class(self._receive),
            logger=paho_logger(),
        )

    def _finished(self) -> bool:
        loop = asyncio.get_running_loop()
        return self._stop.is_set() and (not self._outbox or loop.time() > self._stop_deadline)

    async def run(self) -> int:
        """Serves until ``stop()``: 0, or 1 when the broker refuses our credentials on the
        first connection. Blocks (awaits) for the whole session."""
        delay = BACKOFF_MIN_S
        while not self._finished():
            # clean only on the process's first connection: later ones resume the broker's queue
            first = self.connections == 0
            entered = False
            try:
                async with self._client(clean_start=first) as client:
                    entered = True
                    self.connections += 1
                    delay = BACKOFF_MIN_S
                    await self._start_session(client)
                    await self._serve(client)
                    return 0
            except aiomqtt.MqttError as exc:
                # a refused CONNACK only (paho's own error numbers overlap its codes)
                refused = isinstance(exc, _Fatal) or (
                    not entered and isinstance(exc, aiomqtt.MqttCodeError)
                    and _reason_value(exc) in _AUTH_FAILURES)
                if first and refused:
                    self.log.error("mqtt_refused", broker=f"{self.options.host}:"
                                   f"{self.options.port}", error=str(exc))
                    return 1
                self.log.warning("mqtt_disconnected", error=str(exc), retry_in=delay)
            if self._finished():
                break
            pause = delay * random.uniform(0.75, 1.25)
            if self._stop.is_set():
                await asyncio.sleep(pause)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), pause)
            delay = min(delay * 2, BACKOFF_MAX_S)
        if self._outbox:
            self.log.warning("mqtt_undelivered", messages=len(self._outbox))
        return 0

    async def _start_session(self, client: aiomqtt.Client) -> None:
        granted = await client.subscribe(self.in_topic, qos=1)
        if any(getattr(code, "is_failure", False) or code == 0x80
               for code in _as_iterable(granted)):
            raise _Fatal(f"the broker refused the subscription to {self.in_topic}")
        await client.publish(self.status_topic, b"online", qos=1, retain=True)
        self.log.info("mqtt_connected", broker=f"{self.options.host}:{self.options.port}",
                      topics=self.options.topic("#"), connection=self.connections,
                      queued=len(self._outbox))

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Publishes until stop() (then flushes and says offline) or the connection
        breaks (MqttError)."""
        publisher = asyncio.create_task(self._publish_outbox(client))
        watcher = asyncio.create_task(_until_disconnected(client))
        stopper = asyncio.create_task(self._stop.wait())
        tasks = {publisher, watcher, stopper}
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done - {stopper}:
                task.result()          # re-raises the MqttError that ended it
            if stopper not in done:
                raise aiomqtt.MqttError("publisher stopped")
            idle = asyncio.create_task(self._idle.wait())
            tasks.add(idle)
            remaining = max(0.0, self._stop_deadline - asyncio.get_running_loop().time())
            done, _ = await asyncio.wait({idle, publisher, watcher}, timeout=remaining,
                                         return_when=asyncio.FIRST_COMPLETED)
            for task in done - {idle}:
                task.result()          # broke while flushing: reconnect and go on flushing
            with contextlib.suppress(aiomqtt.MqttError):
                # the broker stops queueing requests for a session that is over
                await client.unsubscribe(self.in_topic, timeout=2)
            with contextlib.suppress(aiomqtt.MqttError):
                await client.publish(self.status_topic, b"offline", qos=1, retain=True,
                                     timeout=2)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _publish_outbox(self, client: aiomqtt.Client) -> None:
        # one message in flight at a time: a message leaves the outbox only once the
        # broker has acknowledged it, so an outage loses nothing and keeps the order
        while True:
            if not self._outbox:
                self._idle.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            await client.publish(self.out_topic, self._outbox[0], qos=1,
                                 timeout=PUBLISH_TIMEOUT_S)
            self._outbox.popleft()


class _Fatal(aiomqtt.MqttCodeError):
    """A refusal that reconnecting cannot fix (subscription not authorised)."""

    def __init__(self, message: str) -> None:
        super().__init__(None, message)

    def __str__(self) -> str:
        return str(self.args[0])


def _as_iterable(granted: Any) -> Iterable[Any]:
    return granted if isinstance(granted, list | tuple) else [granted]


async def _until_disconnected(client: aiomqtt.Client) -> None:
    # the inbox never stores anything, so this only returns by raising on disconnection
    async for _ in client.messages:
        pass


class MqttEngineServer:
    """Drives one protocol object (and its Engine) from the in topic. The protocol and the
    engine live as long as the process, across any number of reconnections."""

    def __init__(self, protocol_cls: type[LineProtocol], engine: Engine,
                 options: MqttOptions) -> None:
        self.protocol_cls = protocol_cls
        self.engine = engine
        self.options = options
        self.log = get_logger(component="mqtt")
        self.link = MqttLink(options, self._on_request, self.log, self._starts_new_game)
        self.protocol: LineProtocol | None = None
        self._local = threading.local()
        self._async_request: Request | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._jobs: queue.Queue[Request | None] = queue.Queue()
        self._long_lived: set[threading.Thread] = set()

    def send(self, text: str) -> None:
        """The protocol's output. Thread-safe: replies from the thread handling a request
        are collected into its reply; anything else (a search thread's info/bestmove) is
        published on its own."""
        text = text if text.endswith("\n") else text + "\n"
        captured: list[str] | None = getattr(self._local, "captured", None)
        if captured is not None:
            captured.append(text)
            return
        pinned: tuple[Request | None] | None = getattr(self._local, "async_request", None)
        if pinned is None:
            pinned = (self._async_request,)
            if threading.current_thread() not in self._long_lived:
                # a search thread keeps the request it first spoke under: the closing line
                # of an analysis, printed while the next command runs, is still its own
                self._local.async_request = pinned
        self._post(pinned[0], "output", text)

    def _starts_new_game(self, line: str) -> bool:
        return self.protocol is not None and self.protocol.starts_new_game(line)

    def _post(self, request: Request | None, kind: str, text: str) -> None:
        loop = self._loop
        try:
            if loop is None:
                raise RuntimeError("no event loop")
            loop.call_soon_threadsafe(self.link.emit, request, kind, text)
        except RuntimeError:   # the loop has closed: the session is over
            self.log.warning("mqtt_output_after_close", text=text[:200])

    def _handle(self, request: Request, handler: Callable[[str], bool | None]) -> bool:
        """Runs one request with its output captured, then posts its reply."""
        captured: list[str] = []
        self._local.captured = captured
        keep: bool | None = True
        try:
            keep = handler(request.line)
        except Exception as exc:   # a protocol bug must not kill a tournament game
            self.log.error("protocol_failure", line=request.line, error=repr(exc))
        finally:
            self._local.captured = None
        text = "".join(captured)
        if request.id is not None or text:
            self._post(request, "reply", text)
        return keep is not False

    def _on_request(self, request: Request) -> None:
        assert self.protocol is not None
        if self.protocol.is_urgent(request.line):
            self._handle(request, self.protocol.handle_urgent)
        else:
            self._jobs.put(request)

    def _work(self) -> None:
        assert self.protocol is not None
        while True:
            request = self._jobs.get()
            if request is None:
                return
            self._async_request = request
            if not self._handle(request, self.protocol.handle):
                loop = self._loop
                if loop is not None:
                    with contextlib.suppress(RuntimeError):
                        loop.call_soon_threadsafe(self.link.stop)
                return

    async def _main(self) -> int:
        loop = self._loop = asyncio.get_running_loop()
        self.protocol = self.protocol_cls(self.engine, self.send)
        worker = threading.Thread(target=self._work, name="mqtt-worker", daemon=True)
        self._long_lived = {threading.current_thread(), worker}
        worker.start()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.link.stop)
        return await self.link.run()

    def serve(self) -> int:
        """Runs the session until quit, SIGTERM/SIGINT, or a fatal refusal. Blocks."""
        try:
            status = asyncio.run(self._main())
        finally:
            self._jobs.put(None)
            if self.protocol is not None:
                self.protocol.close()
        self.log.info("stop", status=status)
        return status


def serve_mqtt(protocol_cls: type[LineProtocol], engine: Engine, settings: Settings) -> int:
    """``descent play --transport mqtt``: serves ``protocol_cls`` on the broker of
    ``settings`` until quit. Returns the process exit status. Blocks."""
    try:
        options = MqttOptions.from_settings(settings)
    except ValueError as exc:
        get_logger(component="mqtt").error("mqtt_bad_settings", error=str(exc))
        return 2
    return MqttEngineServer(protocol_cls, engine, options).serve()
