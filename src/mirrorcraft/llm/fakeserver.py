"""A small OpenAI-compatible HTTP server on 127.0.0.1, for offline tests and smoke runs.

It answers ``POST <root>/chat/completions`` and can be told, request by
request, to reply normally, fail with a status (with ``retry-after`` headers),
hang, send a body that is not JSON, or send empty content. It counts how many
requests are in flight at once and keeps every request it received. Only the
standard library is used; each request is handled in its own thread.

    with FakeOpenAIServer() as server:
        server.script(Fail(429, retry_after="2"), Reply("hello"))
        client = OpenAIClient(OpenAISettings(model="m", base_url=server.base_url))
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A normal completion. ``text=None`` sends null content; ``usage=False`` leaves usage out."""

    text: str | None = "ok"
    usage: bool = True
    cached_tokens: int = 0
    model: str | None = None


@dataclass(frozen=True)
class Fail:
    """An error status with an OpenAI-style error body and optional wait headers."""

    status: int
    message: str = "simulated failure"
    retry_after: str | None = None
    retry_after_ms: str | None = None


@dataclass(frozen=True)
class Hang:
    """Answer nothing for ``seconds`` (or until the server closes), then drop the connection."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Malformed:
    """A 200 answer whose body is not valid JSON."""

    body: bytes = b'{"id": "broken", "choices": [{"message": '


Behaviour = Reply | Fail | Hang | Malformed


@dataclass
class Received:
    path: str
    body: dict[str, Any]
    authorization: str | None
    headers: dict[str, str] = field(default_factory=dict)


class FakeOpenAIServer:
    """Serves scripted behaviours in order, then ``default`` for every further request."""

    def __init__(self, default: Behaviour = Reply()) -> None:
        self.default = default
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._gate: threading.Event | None = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._gate is not None:
            self._gate.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next requests, one each."""
        with self._lock:
            self._script.extend(behaviours)

    def hold(self) -> None:
        """Make normal replies wait until ``release()`` (to pile up requests in flight)."""
        self._gate = threading.Event()

    def release(self) -> None:
        if self._gate is not None:
            self._gate.set()

    @property
    def requests(self) -> int:
        return len(self.received)

    def _next(self, received: Received) -> Behaviour:
        with self._lock:
            self.received.append(received)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._script.popleft() if self._script else self.default

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _completion_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    messages = request.get("messages") or []
    prompt_chars = sum(len(str(m.get("content", ""))) for m in messages if isinstance(m, dict))
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": reply.model or str(request.get("model", "")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": "stop",
            }
        ],
    }
    if reply.usage:
        prompt, completion = prompt_chars // 4, len(reply.text or "") // 4
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
        }
    return body


def _handler_for(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                request = json.loads(raw or b"{}")
            except ValueError:
                request = {}
            received = Received(
                self.path,
                request if isinstance(request, dict) else {},
                self.headers.get("Authorization"),
                {k.lower(): v for k, v in self.headers.items()},
            )
            behaviour = server._next(received)
            try:
                self._play(behaviour, received)
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                server._done()

        def _play(self, behaviour: Behaviour, received: Received) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "no such route"}}')
            elif isinstance(behaviour, Reply):
                gate = server._gate
                if gate is not None:
                    gate.wait(timeout=30)
                body = _completion_body(behaviour, received.body)
                self._send(200, json.dumps(body).encode())
            elif isinstance(behaviour, Fail):
                headers = {}
                if behaviour.retry_after is not None:
                    headers["Retry-After"] = behaviour.retry_after
                if behaviour.retry_after_ms is not None:
                    headers["retry-after-ms"] = behaviour.retry_after_ms
                error = {"error": {"message": behaviour.message, "type": "fake", "code": None}}
                self._send(behaviour.status, json.dumps(error).encode(), headers)
            elif isinstance(behaviour, Hang):
                server._stop.wait(timeout=behaviour.seconds)
                self.close_connection = True
            else:
                self._send(200, behaviour.body)

    return Handler
