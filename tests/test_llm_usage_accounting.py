"""Failed model-call attempts and unusable replies: counted per call, stored in the episode
record (absent, "not recorded", in records written before), and summed for the whole run by
``mirrorcraft analyze`` (text and ``--json``)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.agents.base import Usage
from mirrorcraft.analysis.loading import parse_episode
from mirrorcraft.analysis.usage import usage_row, usage_section
from mirrorcraft.llm.base import LLMConfigError, LLMUnavailable, Message
from mirrorcraft.llm.fakeserver import Fail, FakeOpenAIServer, Malformed, Reply
from mirrorcraft.llm.openai_client import OpenAIClient, OpenAISettings
from mirrorcraft.llm.transport import ChatRequest, ChatResponse, TransportError
from mirrorcraft.runner.records import EpisodeRecord
from tests.runcli import WAIT, cli, env, llm_spec, ok_records, write_spec

HELLO = [Message("user", "hello")]


async def _no_wait(_seconds: float) -> None:
    return None


def _client(*outcomes: Exception | ChatResponse, retries: int = 5) -> OpenAIClient:
    queue = list(outcomes)

    async def transport(_request: ChatRequest) -> ChatResponse:
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    settings = OpenAISettings(model="m", base_url="http://x.example/v1", max_retries=retries)
    return OpenAIClient(settings, transport=transport, sleep=_no_wait)


def test_a_reply_carries_the_kinds_of_the_attempts_that_failed_before_it() -> None:
    client = _client(
        TransportError("rate_limit", status=429),
        TransportError("server_error", status=503),
        TransportError("timeout"),
        ChatResponse("hi", prompt_tokens=3, completion_tokens=1),
    )
    done = asyncio.run(client.complete(HELLO))
    assert done.failed_attempts == ("rate_limit", "server_error", "timeout")
    assert (done.prompt_tokens, done.completion_tokens) == (3, 1)  # the reply's own, only
    assert asyncio.run(_client(ChatResponse("hi", 1, 1)).complete(HELLO)).failed_attempts == ()


def test_a_call_that_fails_for_good_says_which_attempts_failed() -> None:
    with pytest.raises(LLMUnavailable) as gave_up:
        asyncio.run(
            _client(*[TransportError("server_error", status=500)] * 3, retries=2).complete(HELLO)
        )
    assert gave_up.value.failed_attempts == ("server_error",) * 3
    with pytest.raises(LLMConfigError) as refused:
        asyncio.run(
            _client(TransportError("rate_limit"), TransportError("auth", status=401)).complete(
                HELLO
            )
        )
    assert refused.value.failed_attempts == ("rate_limit", "auth")


def test_usage_of_calls_an_agent_reports_itself_leaves_failures_unknown() -> None:
    counted = Usage(1, 5, 5, 0.0, failed_attempts={"timeout": 1}, failures_counted=True)
    total = Usage()
    total.add(counted)
    total.add(Usage())  # a step without calls changes nothing
    assert total.failures_counted and total.failed_attempts == {"timeout": 1}
    total.add(Usage(2, 10, 10, 0.1))  # a user's agent reporting its own model's calls
    assert not total.failures_counted


def _record(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "episode_id": "e",
        "experiment": "x",
        "world": "plains-1",
        "biome": "plains",
        "rules": "vanilla",
        "task": "diamond",
        "agent": "react",
        "model": "m",
        "disclosure": "hidden",
        "budget": 3,
        "repetition": 0,
        "seed": 0,
        "score": 0,
        "success": False,
        "milestones": {},
        "termination": "budget",
        "actions_used": 0,
        "score_trace": [],
        "signatures": [],
        "model_calls": 4,
        "cost_usd": 0.5,
    }
    return {**doc, **changes}


def test_a_record_without_the_counts_reads_as_not_recorded_and_writes_back_unchanged() -> None:
    old = _record()
    record = parse_episode(old)
    assert record.failed_attempts is None and record.unusable_replies is None
    assert "failed_attempts" not in record.to_json()
    assert "unusable_replies" not in json.loads(record.json_text())
    new = parse_episode(_record(failed_attempts={"rate_limit": 2}, unusable_replies=1))
    assert new.to_json()["failed_attempts"] == {"rate_limit": 2}
    with pytest.raises(ValueError, match="failed_attempts"):
        parse_episode(_record(failed_attempts={"rate_limit": "2"}))
    row = usage_row([record, new, EpisodeRecord.from_json(_record(model_calls=0, cost_usd=None))])
    assert row["failed_attempts"] == {"rate_limit": 2} and row["unusable_replies"] == 1
    assert row["failures_not_recorded"] == 1 and not row["failures_complete"]
    assert row["model_calls"] == 8 and row["cost_usd"] is None and row["cost_unknown"] == 1
    section = usage_section([record, new])
    assert section["total"]["cost_usd"] == 1.0 and len(section["by_agent_model"]) == 1


def _analyze(db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", "analyze", str(db), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env=env(),
    )


def test_a_run_against_a_faulty_endpoint_counts_failed_attempts_and_resumes_old_records(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    db = out / "results.sqlite"
    with FakeOpenAIServer(default=Reply(WAIT)) as server:
        # The preflight first; then two server errors, a 429, an unreadable body and a reply
        # the agent cannot use, spread over whichever episodes meet them.
        server.script(
            Reply(WAIT), Fail(500), Fail(503), Fail(429), Malformed(), Reply("no action here")
        )
        spec = llm_spec(server.base_url, client={"max_retries": 3, "backoff_base_s": 0.01})
        spec_path = write_spec(tmp_path / "spec.yaml", spec)
        first = cli(spec_path, out, "--workers", "1")
        assert first.returncode == 0, first.stderr
        records = ok_records(db)
        assert len(records) == 6
        summed: dict[str, int] = {}
        for r in records.values():
            for kind, n in r["failed_attempts"].items():
                summed[kind] = summed.get(kind, 0) + n
        assert summed == {"server_error": 2, "rate_limit": 1, "malformed_response": 1}
        assert sum(r["unusable_replies"] for r in records.values()) == 1
        assert sum(r["model_calls"] for r in records.values()) == 19  # 6 x 3 and one repair

        # Make two records look like ones written before the counts existed, and drop one
        # episode so that a resume runs it again.
        with sqlite3.connect(db) as con:
            ids = sorted(records)
            for eid in ids[:2]:
                doc = records[eid]
                del doc["failed_attempts"], doc["unusable_replies"]
                con.execute(
                    "UPDATE episodes SET record = ? WHERE episode_id = ?",
                    (json.dumps(doc, sort_keys=True), eid),
                )
            con.execute("DELETE FROM episodes WHERE episode_id = ?", (ids[-1],))
            con.execute("DELETE FROM steps WHERE episode_id = ?", (ids[-1],))
        for name in ("llm_cache.sqlite", "llm_cache.sqlite-wal", "llm_cache.sqlite-shm"):
            (out / name).unlink(missing_ok=True)  # so the rerun episode calls the endpoint
        server.script(Reply(WAIT), Fail(502))  # the preflight, then the rerun's first call
        again = cli(spec_path, out, "--workers", "1")
        assert again.returncode == 0, again.stderr
    resumed = ok_records(db)
    assert len(resumed) == 6
    assert all("failed_attempts" not in resumed[eid] for eid in ids[:2])  # kept as they were
    assert resumed[ids[-1]]["failed_attempts"] == {"server_error": 1}

    shown = _analyze(db, "--json")
    assert shown.returncode == 0, shown.stderr
    total = json.loads(shown.stdout)["usage"]["total"]
    assert total["episodes"] == 6 and total["failures_not_recorded"] == 2
    assert not total["failures_complete"]
    assert total["possibly_billed_attempts"] <= total["failed_attempts_total"]
    assert total["model_calls"] == sum(r["model_calls"] for r in resumed.values())
    assert total["cost_usd"] is None and total["cost_unknown"] == 6  # the model has no price
    text = _analyze(db)
    assert text.returncode == 0, text.stderr
    title = "Model calls, failed attempts, tokens and cost for the whole run"
    table = text.stdout.split(title, 1)[1].splitlines()
    line = next(row for row in table if row.startswith("react "))
    assert "unknown" in line and line.rstrip().endswith(" 2")  # two episodes not recorded


def _usage_faults(db: Path) -> dict[str, Any]:
    shown = _analyze(db, "--json", "--allow-empty")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)["usage"]["faults"]  # type: ignore[no-any-return]


def test_attempts_of_an_episode_attempt_that_met_a_fault_are_stored_with_the_fault(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(default=Reply(WAIT)) as server:
        # One retry allowed: the first episode's first call fails twice and the attempt is a
        # fault; the run retries the episode, which then finishes.
        server.script(Reply(WAIT), Fail(500), Fail(500))
        spec = llm_spec(server.base_url, client={"max_retries": 1, "backoff_base_s": 0.01})
        flaky = write_spec(tmp_path / "flaky.yaml", spec)
        done = cli(flaky, tmp_path / "flaky", "--workers", "1", "--concurrency", "1")
        assert done.returncode == 0, done.stderr
        faults = _usage_faults(tmp_path / "flaky" / "results.sqlite")
        assert faults == {
            "faults": 1,
            "by_kind": {"server": 1},
            "failed_attempts": {"server_error": 2},
            "failed_attempts_total": 2,
            "not_recorded": 0,
        }
        # A refused key is never retried: a config fault whose one attempt was 'auth'.
        server.script(Reply(WAIT), Fail(401))
        refused = write_spec(tmp_path / "refused.yaml", spec)
        cli(refused, tmp_path / "refused", "--workers", "1", "--concurrency", "1")
    faults = _usage_faults(tmp_path / "refused" / "results.sqlite")
    assert faults["by_kind"] == {"config": 1} and faults["failed_attempts"] == {"auth": 1}
    text = _analyze(tmp_path / "flaky" / "results.sqlite").stdout
    assert "Model-call attempts that failed in them: server_error 2." in text
