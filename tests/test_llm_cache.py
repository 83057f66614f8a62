"""The SQLite response cache: keys, hits, replays after an interruption, corruption, processes."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mirrorcraft.llm.base import CallMeta, Completion, LLMUnavailable, Message, Sampling
from mirrorcraft.llm.cache import (
    CachedClient,
    CachedEntry,
    CacheError,
    ResponseCache,
    cache_key,
    open_cache,
)
from mirrorcraft.llm.factory import make_client
from mirrorcraft.llm.mock import FaultPlan, MockLLM, scripted

ASK = [Message("user", "what now?")]
DEFAULT = Sampling()


def numbered() -> MockLLM:
    """A mock whose n-th successful reply is "reply n"."""
    count = 0

    def policy(messages: object, meta: object) -> str:
        nonlocal count
        count += 1
        return f"reply {count}"

    return MockLLM(policy)


def test_key_depends_on_request_but_not_meta() -> None:
    base = cache_key("m", "host", ASK, Sampling())
    assert base == cache_key("m", "host", ASK, Sampling())
    assert len(base) == 64
    variants = {
        cache_key("m2", "host", ASK, Sampling()),
        cache_key("m", "other", ASK, Sampling()),
        cache_key("m", "host", [Message("user", "what now")], Sampling()),
        cache_key("m", "host", [Message("system", "what now?")], Sampling()),
        cache_key("m", "host", ASK, Sampling(temperature=0.0)),
        cache_key("m", "host", ASK, Sampling(max_tokens=10)),
        cache_key("m", "host", ASK, Sampling(), scope="ep-2"),
        cache_key("m", "host", ASK, Sampling(), occurrence=1),
    }
    assert base not in variants and len(variants) == 8


def test_meta_does_not_split_entries(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        mock = numbered()
        asyncio.run(CachedClient(mock, cache).complete(ASK, meta=CallMeta(purpose="act")))
        hit = asyncio.run(CachedClient(mock, cache).complete(ASK, meta=CallMeta(purpose="plan")))
    assert hit.cached and mock.calls == 1


def test_hits_keep_original_usage_cost_and_latency(tmp_path: Path) -> None:
    class Priced:
        model = "priced"
        endpoint = "example"

        async def complete(
            self, messages: object, *, sampling: Sampling = DEFAULT, meta: object = None
        ) -> Completion:
            return Completion("hi", "priced", 120, 30, cost_usd=0.0042, latency_s=1.25)

    with ResponseCache(tmp_path / "c.sqlite") as cache:
        first = asyncio.run(CachedClient(Priced(), cache).complete(ASK))
        again = asyncio.run(CachedClient(Priced(), cache).complete(ASK))
    assert not first.cached and again.cached
    assert again == Completion("hi", "priced", 120, 30, 0.0042, cached=True, latency_s=1.25)


def test_unknown_cost_stays_unknown(tmp_path: Path) -> None:
    class Unpriced:
        model = "mystery"

        async def complete(
            self, messages: object, *, sampling: Sampling = DEFAULT, meta: object = None
        ) -> Completion:
            return Completion("x", "mystery", 1, 1, cost_usd=None)

    with ResponseCache(tmp_path / "c.sqlite") as cache:
        asyncio.run(CachedClient(Unpriced(), cache).complete(ASK))
        assert asyncio.run(CachedClient(Unpriced(), cache).complete(ASK)).cost_usd is None


def test_repeated_prompts_get_fresh_samples_and_scopes_are_independent(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        mock = numbered()

        async def episode(scope: str) -> list[str]:
            client = CachedClient(mock, cache, scope=scope)
            return [(await client.complete(ASK)).text for _ in range(3)]

        assert asyncio.run(episode("ep-1")) == ["reply 1", "reply 2", "reply 3"]
        assert asyncio.run(episode("ep-1")) == ["reply 1", "reply 2", "reply 3"]  # replayed
        assert asyncio.run(episode("ep-2")) == ["reply 4", "reply 5", "reply 6"]
        assert mock.calls == 6 and len(cache) == 6


def test_interrupted_episode_does_not_pay_twice(tmp_path: Path) -> None:
    replies = [f"step {i}" for i in range(5)]
    mock = MockLLM(scripted(replies), faults=FaultPlan(at={4: "server_error"}))

    async def episode(client: CachedClient) -> list[str]:
        out = []
        for i in range(5):
            out.append((await client.complete([Message("user", f"state {i}")])).text)
        return out

    with ResponseCache(tmp_path / "c.sqlite") as cache:
        with pytest.raises(LLMUnavailable):
            asyncio.run(episode(CachedClient(mock, cache, scope="ep")))
        assert mock.calls == 4 and len(cache) == 3
        rerun = CachedClient(mock, cache, scope="ep")
        texts = asyncio.run(episode(rerun))
    assert texts == ["step 0", "step 1", "step 2", "step 3", "step 4"]
    assert (rerun.hits, rerun.misses) == (3, 2)
    assert mock.calls == 6  # 3 paid once, 1 failed, 2 new


def test_scoped_shares_cache_with_fresh_counts(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        root = CachedClient(numbered(), cache, endpoint="here")
        child = root.scoped("ep-9")
        assert child.cache is cache and child.scope == "ep-9" and child.endpoint == "here"


def test_corrupt_file_is_a_clear_error_and_open_cache_falls_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "llm_cache.sqlite"
    path.write_bytes(b"this is not an sqlite database, just some junk bytes" * 200)
    with pytest.raises(CacheError, match="not a usable LLM cache"):
        ResponseCache(path)
    with caplog.at_level(logging.WARNING, logger="mirrorcraft.llm"):
        assert open_cache(path) is None
    assert "without an LLM response cache" in caplog.text
    with caplog.at_level(logging.WARNING, logger="mirrorcraft.llm"):
        client = make_client(
            "some-model", "http://127.0.0.1:9/v1", None, cache_path=path, max_retries=0
        )
    assert isinstance(client, CachedClient) and client.cache is None


def test_wrong_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE cache_meta SET value = '99' WHERE name = 'schema_version'")
    with pytest.raises(CacheError, match="schema 99"):
        ResponseCache(path)


def test_database_failure_mid_run_switches_the_cache_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    mock = numbered()
    client = CachedClient(mock, cache)
    asyncio.run(client.complete(ASK))
    cache.close()  # any later database call fails
    with caplog.at_level(logging.WARNING, logger="mirrorcraft.llm"):
        result = asyncio.run(client.complete([Message("user", "still playing")]))
    assert result.text == "reply 2" and client.cache is None
    assert "switched off" in caplog.text


def test_first_writer_wins(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache.put("k", CachedEntry("first", "m", 1, 1, 0.0, 0.0))
        cache.put("k", CachedEntry("second", "m", 1, 1, 0.0, 0.0))
        found = cache.get("k")
        assert found is not None and found.text == "first" and cache.get("nope") is None


WRITER = textwrap.dedent(
    """
    import sys
    from mirrorcraft.llm.cache import CachedEntry, ResponseCache
    path, tag = sys.argv[1], sys.argv[2]
    with ResponseCache(path) as cache:
        for i in range(60):
            cache.put(f"{tag}-{i}", CachedEntry(f"text {tag} {i}", "m", i, i, 0.001 * i, 0.1))
            cache.put(f"shared-{i}", CachedEntry(tag, "m", 0, 0, None, 0.0))
    """
)


def test_several_processes_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag]) for tag in "abcd"]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    with ResponseCache(path) as cache:
        assert len(cache) == 4 * 60 + 60
        entry = cache.get("c-59")
        assert entry is not None and entry.text == "text c 59" and entry.prompt_tokens == 59


def test_estimated_usage_survives_a_replay_and_old_caches_gain_the_column(tmp_path: Path) -> None:
    class Guessing:
        model = "guess"

        async def complete(
            self, messages: object, *, sampling: Sampling = DEFAULT, meta: object = None
        ) -> Completion:
            return Completion("x", "guess", 5, 1, cost_usd=0.001, estimated=True)

    path = tmp_path / "c.sqlite"
    # a cache written before the "estimated" column existed
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE cache_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO cache_meta VALUES ('schema_version', '1');"
        "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,"
        " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd REAL,"
        " latency_s REAL NOT NULL, created_at TEXT NOT NULL);"
    )
    old_key = cache_key("old", "", ASK, DEFAULT)
    con.execute(
        "INSERT INTO responses VALUES (?, 'old', 'o', 1, 1, 0.0, 0.1, '2026-01-01')", (old_key,)
    )
    con.commit()
    con.close()
    with ResponseCache(path) as cache:
        assert cache.get(old_key) == CachedEntry("o", "old", 1, 1, 0.0, 0.1, False)
        first = asyncio.run(CachedClient(Guessing(), cache).complete(ASK))
        again = asyncio.run(CachedClient(Guessing(), cache).complete(ASK))
    assert first.estimated and not first.cached
    assert again.estimated and again.cached


def test_an_unusable_cache_is_reported_once_not_per_episode(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every episode builds its own client over the run's cache file; a damaged file used to
    print the same warning once per episode (thousands of lines in a large run)."""
    path = tmp_path / "llm_cache.sqlite"
    path.write_bytes(b"not a database" * 100)
    with caplog.at_level(logging.WARNING, logger="mirrorcraft.llm"):
        for episode in range(5):
            client = make_client(
                "some-model", "http://127.0.0.1:9/v1", None, cache_path=path,
                cache_scope=f"episode-{episode}", max_retries=0,
            )  # fmt: skip
            assert isinstance(client, CachedClient) and client.cache is None
    assert caplog.text.count("without an LLM response cache") == 1


def test_reply_changing_client_settings_split_entries_and_defaults_keep_old_keys(
    tmp_path: Path,
) -> None:
    """A spec that switches provider reasoning off (extra_body, reasoning_effort) and is run
    again under --allow-changed-spec replayed every reply of the old setting from the cache,
    paying nothing and measuring the old configuration under the new spec hash."""
    from mirrorcraft.llm.openai_client import OpenAIClient, OpenAISettings

    ask = [Message("system", "you play"), Message("user", "what now?")]
    # The key of a call with default settings is the one earlier versions wrote.
    assert cache_key("m", "host", ask, DEFAULT, scope="ep") == (
        "74219554b581bdffb4b70f1bc1d50da51497a74155e1729d6e39e04c4a4a2334"
    )
    mock = numbered()

    def client(cache: ResponseCache, **settings: object) -> CachedClient:
        fields = {"model": "m", "base_url": "http://127.0.0.1:9/v1", **settings}
        inner = OpenAIClient(OpenAISettings.model_validate(fields), transport=mock.transport)
        return CachedClient(inner, cache, scope="ep")

    async def ask_once(c: CachedClient) -> Completion:
        return await c.complete(ask)

    thinking = {"extra_body": {"thinking": {"type": "enabled"}}}
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        first = asyncio.run(ask_once(client(cache)))
        on = asyncio.run(ask_once(client(cache, **thinking)))
        off = asyncio.run(ask_once(client(cache, extra_body={"thinking": {"type": "disabled"}})))
        effort = asyncio.run(ask_once(client(cache, reasoning_effort="none")))
        field = asyncio.run(ask_once(client(cache, max_tokens_field="max_completion_tokens")))
        again = asyncio.run(ask_once(client(cache, **thinking)))
        scoped = asyncio.run(ask_once(client(cache, **thinking).scoped("ep")))
    assert [c.cached for c in (first, on, off, effort, field)] == [False] * 5
    assert len({c.text for c in (first, on, off, effort, field)}) == 5 and mock.calls == 5
    assert again.cached and again.text == on.text
    assert scoped.cached and scoped.text == on.text
