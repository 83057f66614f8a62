"""A small HTTP/1.1 client on asyncio streams, for posting JSON to remote agents.

Standard library only. One ``HttpPool`` per agent URL and process keeps idle keep-alive
connections for reuse and caps the requests in flight; pools are shared by the episodes
running at once (``acquire``/``release``) and closed when the last one lets go. Responses
may carry ``Content-Length``, chunked transfer encoding, or end at connection close;
bodies past ``MAX_BODY`` bytes are refused. Failures are ``HttpError`` with a kind
(``connection``, ``timeout``, ``too_large``, ``malformed``); statuses are returned, not
raised. A request on a reused connection that the server had already closed is retried
once on a fresh connection (the usual keep-alive race), which is safe for this protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_BODY = 1 << 20
"""The largest reply accepted (1 MiB): an action is a few hundred bytes."""
MAX_HEADERS = 100
MAX_LINE = 8192


class HttpError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    body: bytes


_Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class HttpPool:
    """Keep-alive connections to one ``http(s)://host:port/base`` and a cap on requests in flight."""

    def __init__(self, url: str, limit: int = 16) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL with a host: {url!r}")
        self.host = parts.hostname
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.base = parts.path.rstrip("/")
        self.limit = limit
        self.refs = 0
        self._idle: list[_Conn] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None

    @property
    def hostport(self) -> str:
        return f"{self.host}:{self.port}"

    def _bind(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:
            self._idle = []  # connections of an earlier event loop cannot be used here
            self._slots = asyncio.Semaphore(self.limit)
            self._loop = loop
        return self._slots

    async def post(self, path: str, body: bytes) -> Response:
        """POST ``body`` (JSON) to ``<base><path>``; the caller bounds the time it may take."""
        async with self._bind():
            reused = bool(self._idle)
            conn = self._idle.pop() if reused else await self._open()
            try:
                response, keep = await self._exchange(conn, path, body)
            except (ConnectionError, asyncio.IncompleteReadError, HttpError) as exc:
                _close(conn)
                stale = isinstance(exc, ConnectionError | asyncio.IncompleteReadError)
                if not (reused and stale):
                    raise _as_error(exc) from None
                conn = await self._open()
                try:
                    response, keep = await self._exchange(conn, path, body)
                except (ConnectionError, asyncio.IncompleteReadError, HttpError) as again:
                    _close(conn)
                    raise _as_error(again) from None
            except BaseException:  # a timeout or cancellation mid-exchange
                _close(conn)
                raise
            if keep:
                self._idle.append(conn)
            else:
                _close(conn)
            return response

    async def _open(self) -> _Conn:
        try:
            context = ssl.create_default_context() if self.tls else None
            return await asyncio.open_connection(self.host, self.port, ssl=context)
        except OSError as exc:
            raise HttpError(
                "connection", f"cannot connect to {self.hostport}: {exc.strerror or exc}"
            ) from None

    async def _exchange(self, conn: _Conn, path: str, body: bytes) -> tuple[Response, bool]:
        reader, writer = conn
        head = (
            f"POST {self.base}{path} HTTP/1.1\r\n"
            f"Host: {self.hostport}\r\n"
            "Content-Type: application/json\r\n"
            "Accept: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            "Connection: keep-alive\r\n\r\n"
        )
        writer.write(head.encode("ascii") + body)
        await writer.drain()
        status_line = await _line(reader)
        if not status_line:
            raise ConnectionResetError("the connection closed before an answer")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HttpError("malformed", f"not an HTTP answer: {status_line[:80]!r}")
        status, reason = int(parts[1]), parts[2] if len(parts) > 2 else ""
        headers: dict[str, str] = {}
        for _ in range(MAX_HEADERS + 1):
            line = await _line(reader)
            if not line:
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        else:
            raise HttpError("malformed", "too many header lines")
        keep = parts[0] == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            data = await _chunked(reader)
        elif "content-length" in headers:
            try:
                size = int(headers["content-length"])
            except ValueError:
                raise HttpError("malformed", "a Content-Length that is not a number") from None
            if size > MAX_BODY:
                raise HttpError("too_large", f"a reply of {size} bytes (at most {MAX_BODY})")
            data = await reader.readexactly(size)
        else:
            data = await reader.read(MAX_BODY + 1)
            keep = False
            if len(data) > MAX_BODY:
                raise HttpError("too_large", f"a reply over {MAX_BODY} bytes")
        return Response(status, reason, data), keep


async def _line(reader: asyncio.StreamReader) -> str:
    try:
        raw = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise HttpError("malformed", "a header line too long") from None
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise
        return ""
    if len(raw) > MAX_LINE:
        raise HttpError("malformed", "a header line too long")
    return raw.decode("latin-1").rstrip("\r\n")


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while True:
        size_line = await _line(reader)
        try:
            size = int(size_line.split(";")[0].strip() or "x", 16)
        except ValueError:
            raise HttpError("malformed", f"a bad chunk size {size_line[:20]!r}") from None
        if size == 0:
            while await _line(reader):  # trailers
                pass
            return bytes(out)
        if len(out) + size > MAX_BODY:
            raise HttpError("too_large", f"a reply over {MAX_BODY} bytes")
        out += await reader.readexactly(size)
        await reader.readexactly(2)


def _close(conn: _Conn) -> None:
    with contextlib.suppress(Exception):
        conn[1].close()


def _as_error(exc: BaseException) -> HttpError:
    if isinstance(exc, HttpError):
        return exc
    return HttpError("connection", f"the connection broke ({type(exc).__name__}: {exc})")


_POOLS: dict[tuple[str, int], HttpPool] = {}


def acquire(url: str, limit: int) -> HttpPool:
    """The shared pool for ``url`` (one per URL and concurrency limit), counted as in use."""
    key = (url, limit)
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS[key] = HttpPool(url, limit)
    pool.refs += 1
    return pool


def release(pool: HttpPool) -> None:
    """Let go of a pool; the last user closes its idle connections."""
    pool.refs = max(pool.refs - 1, 0)
    if pool.refs == 0:
        for conn in pool._idle:
            _close(conn)
        pool._idle = []
