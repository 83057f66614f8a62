"""A response cache in SQLite, so that a rerun replays what was already paid for.

The key is a SHA-256 over the model name, the endpoint host, the messages, the
sampling settings, the function tools offered (when a call offers any), the
client settings that change what the model answers (``reasoning_effort``,
``extra_body``, ``max_tokens_field``, when any differs from its default), a
caller-chosen ``scope`` and an occurrence number. It never includes the API key
or the call's ``meta``. A reply's tool calls are stored with its text. So a run
whose spec switches provider reasoning on or off pays for new replies instead of
replaying those of the other setting; a request that left every setting at its
default keeps the key it always had.

Why scope and occurrence: sampling at temperature 0.7 is random on purpose.
If identical prompts always shared one stored reply, the repetitions of a
condition would stop being independent samples, and an agent that sends the
same prompt twice in one episode would get the same reply twice, which an
uncached run would not. So the runner passes the episode id as ``scope``, and
within a ``CachedClient`` the n-th identical request gets occurrence n. A
rerun of an interrupted episode makes the same requests in the same order and
is answered from the cache up to where it stopped; nothing is paid twice.

A hit returns ``cached=True`` with the token counts, cost and latency recorded
when the call was first made. Records of a replayed episode therefore still
show what its calls cost (and can be re-analysed unchanged); to count only new
spending, sum the cost of completions that are not ``cached``.

The file is opened in WAL mode with a busy timeout, so several worker
processes can share it; each write is one autocommitted statement, and the
first writer of a key wins. A file that is not a usable cache raises
``CacheError`` on opening; ``open_cache`` turns that into a logged warning and
no cache. A database error in the middle of a run likewise switches the cache
off with a warning instead of failing the episode.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mirrorcraft.llm.base import (
    CallMeta,
    Completion,
    LLMClient,
    Message,
    Sampling,
    ToolCall,
    Tools,
)

DEFAULT_SAMPLING = Sampling()

SCHEMA_VERSION = 1
log = logging.getLogger("mirrorcraft.llm")


class CacheError(Exception):
    """The cache file cannot be used (not a database, wrong schema, unreadable)."""


@dataclass(frozen=True)
class CachedEntry:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_s: float
    estimated: bool = False
    """The token counts were estimated when the call was made (the endpoint gave none)."""
    tool_calls: tuple[ToolCall, ...] = ()


def _calls_json(calls: Sequence[ToolCall]) -> str:
    return json.dumps([c.to_json() for c in calls], ensure_ascii=False, separators=(",", ":"))


def _calls_from(text: str) -> tuple[ToolCall, ...]:
    try:
        doc = json.loads(text or "[]")
    except ValueError:
        return ()
    if not isinstance(doc, list):
        return ()
    return tuple(
        ToolCall(str(c.get("name", "")), str(c.get("arguments", "")), str(c.get("id", "")))
        for c in doc
        if isinstance(c, dict)
    )


def cache_key(
    model: str,
    endpoint: str,
    messages: Sequence[Message],
    sampling: Sampling,
    *,
    scope: str = "",
    occurrence: int = 0,
    tools: Tools | None = None,
    variant: str = "",
) -> str:
    """The key of a request; ``variant`` is the canonical text of the reply-changing client
    settings that differ from their defaults (``OpenAIClient.cache_variant``), "" for none."""
    payload: list[Any] = [
        "mirrorcraft-llm-cache-v1",
        model,
        endpoint,
        [[m.role, m.content] for m in messages],
        [sampling.temperature, sampling.max_tokens],
        scope,
    ]
    if tools is not None:  # calls without tools keep the keys they always had
        payload.append(tools.canonical())
    if variant:  # ... and so do calls with the default settings
        payload.append(["settings", variant])
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return _with_occurrence(hashlib.sha256(text.encode("utf-8")).hexdigest(), occurrence)


def _with_occurrence(base: str, occurrence: int) -> str:
    """The key of the n-th identical request; the first one keeps the base key."""
    if occurrence == 0:
        return base
    return hashlib.sha256(f"{base}#{occurrence}".encode()).hexdigest()


_CREATE = """
CREATE TABLE IF NOT EXISTS cache_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd REAL,
    latency_s REAL NOT NULL,
    created_at TEXT NOT NULL
);
"""


class ResponseCache:
    """Stored completions by key, in one SQLite file shared by any number of processes."""

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"cannot open the LLM cache {self.path}: {exc}") from None
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_CREATE)
            self._db.execute(
                "INSERT OR IGNORE INTO cache_meta VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
            row = self._db.execute(
                "SELECT value FROM cache_meta WHERE name = 'schema_version'"
            ).fetchone()
            columns = {c[1] for c in self._db.execute("PRAGMA table_info(responses)")}
            if "estimated" not in columns:  # caches written before the column existed
                self._db.execute(
                    "ALTER TABLE responses ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0"
                )
            if "tool_calls" not in columns:
                self._db.execute(
                    "ALTER TABLE responses ADD COLUMN tool_calls TEXT NOT NULL DEFAULT '[]'"
                )
        except sqlite3.Error as exc:
            self._db.close()
            raise CacheError(
                f"{self.path} is not a usable LLM cache ({exc}); delete or move it to start afresh"
            ) from None
        if row is None or row[0] != str(SCHEMA_VERSION):
            self._db.close()
            found = row[0] if row else "none"
            raise CacheError(
                f"{self.path} has cache schema {found}, this version reads {SCHEMA_VERSION}"
            )

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __len__(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM responses", ())[0])

    def _query(self, sql: str, args: tuple[Any, ...]) -> Any:
        try:
            with self._lock:
                return self._db.execute(sql, args).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"LLM cache {self.path}: {exc}") from None

    def get(self, key: str) -> CachedEntry | None:
        row = self._query(
            "SELECT text, model, prompt_tokens, completion_tokens, cost_usd, latency_s, "
            "estimated, tool_calls FROM responses WHERE key = ?",
            (key,),
        )
        if row is None:
            return None
        text, model, prompt, completion, cost, latency, estimated, calls = row
        return CachedEntry(
            text, model, prompt, completion, cost, latency, bool(estimated), _calls_from(calls)
        )

    def put(self, key: str, entry: CachedEntry) -> None:
        """Store ``entry`` unless the key is already there (the first writer wins)."""
        self._query(
            "INSERT OR IGNORE INTO responses (key, model, text, prompt_tokens, completion_tokens, "
            "cost_usd, latency_s, created_at, estimated, tool_calls) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                entry.model,
                entry.text,
                entry.prompt_tokens,
                entry.completion_tokens,
                entry.cost_usd,
                entry.latency_s,
                datetime.now(UTC).isoformat(timespec="seconds"),
                int(entry.estimated),
                _calls_json(entry.tool_calls),
            ),
        )


_WARNED: set[str] = set()
"""Cache files this process has already warned about (every episode opens its own client)."""


def open_cache(path: Path | str) -> ResponseCache | None:
    """The cache at ``path``, or None (with a logged warning, once per file) if it cannot
    be used."""
    try:
        return ResponseCache(path)
    except CacheError as exc:
        if str(path) not in _WARNED:
            _WARNED.add(str(path))
            log.warning("running without an LLM response cache: %s", exc)
        return None


class CachedClient:
    """Wraps any ``LLMClient``: answers repeated requests from a ``ResponseCache``.

    ``endpoint`` defaults to the inner client's ``endpoint`` attribute (the
    host of its base URL) so that the same model name on two servers does not
    share entries, and ``variant`` to its ``cache_variant`` (the reply-changing
    settings) so that one model asked with reasoning on and off does not either.
    With ``cache=None`` every call goes through.
    """

    def __init__(
        self,
        inner: LLMClient,
        cache: ResponseCache | None,
        *,
        scope: str = "",
        endpoint: str | None = None,
        variant: str | None = None,
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self.endpoint = endpoint if endpoint is not None else str(getattr(inner, "endpoint", ""))
        self.variant = variant if variant is not None else str(getattr(inner, "cache_variant", ""))
        self.scope = scope
        self._cache = cache
        self._seen: dict[str, int] = {}
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"CachedClient({self.inner!r}, scope={self.scope!r})"

    @property
    def cache(self) -> ResponseCache | None:
        return self._cache

    def scoped(self, scope: str) -> CachedClient:
        """A client over the same model and cache with another scope and fresh occurrence counts."""
        return CachedClient(
            self.inner, self._cache, scope=scope, endpoint=self.endpoint, variant=self.variant
        )

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()

    def _disable(self, exc: CacheError) -> None:
        log.warning("LLM cache switched off for the rest of this run: %s", exc)
        self._cache = None

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling = DEFAULT_SAMPLING,
        meta: CallMeta | None = None,
        tools: Tools | None = None,
    ) -> Completion:
        base = cache_key(
            self.model,
            self.endpoint,
            messages,
            sampling,
            scope=self.scope,
            tools=tools,
            variant=self.variant,
        )
        occurrence = self._seen.get(base, 0)
        self._seen[base] = occurrence + 1
        key = _with_occurrence(base, occurrence)
        if self._cache is not None:
            try:
                found = self._cache.get(key)
            except CacheError as exc:
                self._disable(exc)
                found = None
            if found is not None:
                self.hits += 1
                return Completion(
                    text=found.text,
                    model=found.model,
                    prompt_tokens=found.prompt_tokens,
                    completion_tokens=found.completion_tokens,
                    cost_usd=found.cost_usd,
                    cached=True,
                    latency_s=found.latency_s,
                    estimated=found.estimated,
                    tool_calls=found.tool_calls,
                )
        self.misses += 1
        if tools is None:  # inner clients that predate tools are called as they always were
            result = await self.inner.complete(messages, sampling=sampling, meta=meta)
        else:
            result = await self.inner.complete(messages, sampling=sampling, meta=meta, tools=tools)
        if self._cache is not None:
            entry = CachedEntry(
                result.text,
                result.model,
                result.prompt_tokens,
                result.completion_tokens,
                result.cost_usd,
                result.latency_s,
                result.estimated,
                result.tool_calls,
            )
            try:
                self._cache.put(key, entry)
            except CacheError as exc:
                self._disable(exc)
        return result
