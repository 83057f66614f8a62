"""A small OpenAI-compatible HTTP server on 127.0.0.1, for offline tests and smoke runs.

It answers ``POST <root>/chat/completions`` and ``GET <root>/models`` and can be
told, request by request, to reply normally, fail with a status (with
``retry-after`` headers; ``Fail.context_length()`` is llama.cpp's refusal of an
oversized request), hang, drop the connection, send a body that is not JSON, or
send empty content, or answer with tool calls (``Reply(tool_calls=...)``, sent only
to requests that offer ``tools``). With ``models`` it knows only those model names (others get
a 404 like OpenAI's); with ``context_window`` it refuses requests whose prompt
(four characters a token) plus ``max_tokens`` exceed it, and reports the window
in its model listing as vLLM does (``max_model_len``). It counts how many
requests are in flight at once and keeps every request it received. Only the
standard library is used; each request is handled in its own thread.

    with FakeOpenAIServer() as server:
        server.script(Fail(429, retry_after="2"), Reply("hello"))
        client = OpenAIClient(OpenAISettings(model="m", base_url=server.base_url))

``python -m mirrorcraft.llm.fakeserver --help`` serves one from the command line
(to try a run against a failing endpoint by hand; ``--after N`` answers N requests
normally before the fault, a server breaking mid-run); with a command after ``--`` it
serves only while that command runs (``{url}`` in it becomes the base URL) and exits
with the command's status.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A normal completion. ``text=None`` sends null content; ``usage=False`` leaves usage out;
    ``usage_as`` is sent as the usage object instead of the counted one (a provider's own numbers,
    right or wrong).

    ``tool_calls`` are ``{"name": ..., "arguments": ...}`` objects (arguments as an object, or
    as the exact text to send); a request that offers ``tools`` gets them as the message's
    ``tool_calls`` (finish reason ``tool_calls``), any other request gets only the text."""

    text: str | None = "ok"
    usage: bool = True
    cached_tokens: int = 0
    model: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    usage_as: Any = None


@dataclass(frozen=True)
class Fail:
    """An error status with an OpenAI-style error body and optional wait headers."""

    status: int
    message: str = "simulated failure"
    retry_after: str | None = None
    retry_after_ms: str | None = None
    type: str = "fake"

    @classmethod
    def context_length(cls) -> Fail:
        """A llama.cpp server's answer to a prompt plus max_tokens beyond its context."""
        return cls(
            400,
            "the request exceeds the available context size, try increasing it",
            type="exceed_context_size_error",
        )


@dataclass(frozen=True)
class Hang:
    """Answer nothing for ``seconds`` (or until the server closes), then drop the connection."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Malformed:
    """A 200 answer whose body is not valid JSON."""

    body: bytes = b'{"id": "broken", "choices": [{"message": '


@dataclass(frozen=True)
class Drop:
    """Close the connection without answering (a server process dying mid-request)."""


Behaviour = Reply | Fail | Hang | Malformed | Drop


@dataclass
class Received:
    path: str
    body: dict[str, Any]
    authorization: str | None
    headers: dict[str, str] = field(default_factory=dict)


class FakeOpenAIServer:
    """Serves scripted behaviours in order, then ``default`` for every further request."""

    def __init__(
        self,
        default: Behaviour = Reply(),
        *,
        models: tuple[str, ...] | None = None,
        context_window: int | None = None,
        port: int = 0,
    ) -> None:
        self.default = default
        self.models = models
        self.context_window = context_window
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._gate: threading.Event | None = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
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
            refusal = self._refusal(received.body)
            if refusal is not None:
                return refusal
            return self._script.popleft() if self._script else self.default

    def _refusal(self, request: dict[str, Any]) -> Fail | None:
        """An unknown model or an oversized request, checked before any scripted behaviour."""
        model = str(request.get("model", ""))
        if self.models is not None and model not in self.models:
            return Fail(404, f"The model `{model}` does not exist or you do not have access to it.")
        if self.context_window is not None:
            asked = request.get("max_tokens") or request.get("max_completion_tokens") or 0
            if _prompt_chars(request) // 4 + int(asked) > self.context_window:
                return Fail.context_length()
        return None

    def listing(self) -> dict[str, Any]:
        names = self.models if self.models is not None else ("fake-model",)
        entries: list[dict[str, Any]] = []
        for name in names:
            entry: dict[str, Any] = {"id": name, "object": "model", "owned_by": "fake"}
            if self.context_window is not None:
                entry["max_model_len"] = self.context_window
            entries.append(entry)
        return {"object": "list", "data": entries}

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _prompt_chars(request: dict[str, Any]) -> int:
    messages = request.get("messages") or []
    if not isinstance(messages, list):
        return 0
    return sum(len(str(m.get("content", ""))) for m in messages if isinstance(m, dict))


def _tool_calls(reply: Reply, request: dict[str, Any]) -> list[dict[str, Any]]:
    if not reply.tool_calls or not request.get("tools"):
        return []
    out = []
    for i, call in enumerate(reply.tool_calls):
        arguments = call.get("arguments", {})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        function = {"name": str(call.get("name", "")), "arguments": text}
        out.append({"id": f"call_{i}", "type": "function", "function": function})
    return out


def _completion_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    prompt_chars = _prompt_chars(request)
    calls = _tool_calls(reply, request)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if calls:
        message["tool_calls"] = calls
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": reply.model or str(request.get("model", "")),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
    }
    if reply.usage_as is not None:
        body["usage"] = reply.usage_as
    elif reply.usage:
        called = sum(len(c["function"]["name"] + c["function"]["arguments"]) for c in calls)
        prompt, completion = prompt_chars // 4, (len(reply.text or "") + called) // 4
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

        def do_GET(self) -> None:
            try:
                if self.path.split("?")[0].rstrip("/") == "/v1/models":
                    self._send(200, json.dumps(server.listing()).encode())
                else:
                    self._send(404, b'{"error": {"message": "no such route"}}')
            except (BrokenPipeError, ConnectionResetError):
                pass

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
            if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
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
                error = {
                    "error": {"message": behaviour.message, "type": behaviour.type, "code": None}
                }
                self._send(behaviour.status, json.dumps(error).encode(), headers)
            elif isinstance(behaviour, Hang):
                server._stop.wait(timeout=behaviour.seconds)
                self.close_connection = True
            elif isinstance(behaviour, Drop):
                self.close_connection = True
            else:
                self._send(200, behaviour.body)

    return Handler


def main(argv: list[str] | None = None) -> int:
    """Serve a fake endpoint until interrupted; prints its base URL first."""
    import argparse
    import time

    parser = argparse.ArgumentParser(
        prog="python -m mirrorcraft.llm.fakeserver",
        description="A fake OpenAI-compatible endpoint on 127.0.0.1 (for trying failure paths).",
    )
    parser.add_argument("--port", type=int, default=0, help="port (default: any free one)")
    parser.add_argument("--reply", default="ok", help="the text of every normal reply")
    parser.add_argument(
        "--tool-call",
        action="append",
        default=None,
        metavar="JSON",
        help='answer requests that offer tools with this call, e.g. \'{"name": "explore", '
        '"arguments": {"target": "log"}}\' (repeat for several calls in one reply)',
    )
    parser.add_argument(
        "--fail", type=int, default=None, help="answer every request with this HTTP status"
    )
    parser.add_argument(
        "--context-length-error", action="store_true", help="answer llama.cpp's context refusal"
    )
    parser.add_argument("--hang", action="store_true", help="never answer")
    parser.add_argument("--drop", action="store_true", help="close every connection unanswered")
    parser.add_argument(
        "--malformed", action="store_true", help="answer 200 with a body that is not JSON"
    )
    parser.add_argument(
        "--after",
        type=int,
        default=0,
        metavar="N",
        help="answer the first N requests normally (--reply), then fail as told: a server "
        "that breaks mid-run (a run's model preflight is its first request)",
    )
    parser.add_argument("--models", default=None, help="comma-separated model names it knows")
    parser.add_argument("--context-window", type=int, default=None, help="tokens it accepts")
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        help="after --: run this command ({url} becomes the base URL), then stop serving",
    )
    args = parser.parse_args(argv)
    calls: list[dict[str, Any]] = []
    for text in args.tool_call or ():
        try:
            call = json.loads(text)
        except ValueError:
            parser.error(f"--tool-call is not JSON: {text[:60]}")
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            parser.error('--tool-call needs an object with a "name" and "arguments"')
        calls.append(call)
    default: Behaviour = Reply(args.reply, tool_calls=tuple(calls))
    if args.fail is not None:
        default = Fail(args.fail)
    elif args.context_length_error:
        default = Fail.context_length()
    elif args.hang:
        default = Hang(3600.0)
    elif args.drop:
        default = Drop()
    elif args.malformed:
        default = Malformed()
    if args.after < 0:
        parser.error("--after needs a count of 0 or more")
    models = tuple(m for m in args.models.split(",") if m) if args.models else None
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    try:
        fake = FakeOpenAIServer(
            default, models=models, context_window=args.context_window, port=args.port
        )
    except OSError as exc:
        print(
            f"{parser.prog}: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}"
            " (is another server there? pass another --port, or none for any free one)",
            file=sys.stderr,
        )
        return 2
    with fake as server:
        server.script(*[Reply(args.reply, tool_calls=tuple(calls))] * args.after)
        if command:
            import subprocess

            try:
                return subprocess.run(
                    [a.replace("{url}", server.base_url) for a in command]
                ).returncode
            except OSError as exc:
                print(f"cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
                return 127
        print(server.base_url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    raise SystemExit(main())
