"""Remote agents for tests: the example servers as subprocesses, and a scriptable fake one."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PY_SERVER = EXAMPLES / "remote_agent" / "server.py"
NODE_SERVER = EXAMPLES / "remote_agent" / "server.js"
NODE = shutil.which("node")


def example_module() -> ModuleType:
    """examples/remote_agent/server.py as a module (its policy and handler)."""
    spec = importlib.util.spec_from_file_location("example_remote_server", PY_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def example_server(kind: str = "python") -> Iterator[str]:
    """Start an example server on a free port; yields its URL."""
    if kind == "python":
        cmd = [sys.executable, str(PY_SERVER), "--port", "0"]
    else:
        assert NODE is not None
        cmd = [NODE, str(NODE_SERVER), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, (line, proc.stderr.read() if proc.stderr else "")
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


Behaviour = Callable[[str, dict[str, Any]], tuple[int, bytes]]
"""(path, message) -> (HTTP status, body)."""


class FakeAgentServer:
    """A remote agent whose answers a test chooses; keeps every message it received."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    message = json.loads(body)
                except ValueError:
                    message = {"unreadable": body.decode("utf-8", "replace")}
                with server.lock:
                    server.received.append((self.path, message))
                status, data = server.behaviour(self.path, message)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FakeAgentServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def paths(self) -> list[str]:
        with self.lock:
            return [p for p, _ in self.received]


def greedy_behaviour() -> Behaviour:
    """Answers like the Python example server (same policy, same per-episode RNG)."""
    module = example_module()
    agent = module.Agent()
    routes = {"/reset": agent.reset, "/act": agent.act, "/close": agent.close}

    def behave(path: str, message: dict[str, Any]) -> tuple[int, bytes]:
        return 200, json.dumps(routes[path](message)).encode()

    return behave


def free_port() -> int:
    """A port nothing listens on (bound and released at once)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
