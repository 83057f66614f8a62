"""``mirrorcraft run --agent react --model ... --base-url ...`` against a local OpenAI-compatible server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from mirrorcraft.cli import main
from mirrorcraft.llm.fakeserver import Fail, FakeOpenAIServer, Reply

SPEC = {
    "schema_version": 1,
    "name": "llm-e2e",
    "worlds": ["plains-1"],
    "rules": ["vanilla", "M04"],
    "tasks": ["diamond"],
    "agents": ["react"],
    "budget": 3,
    "repetitions": 1,
}
WAIT = json.dumps({"thought": "look around", "skill": "wait", "args": {"ticks": 20}})


def _run(
    tmp_path: Path,
    server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    **changes: object,
) -> int:
    """Run SPEC (with ``changes``) against the server; the model comes from the command line
    unless ``changes`` gives the spec its own ``models``."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, **changes}))
    monkeypatch.setenv("FAKE_KEY", "sk-test-secret-123")
    model = ["--model", "fake-model", "--base-url", server.base_url, "--api-key-env", "FAKE_KEY"]
    return main(
        [
            "run",
            str(spec),
            "--out",
            str(tmp_path / name),
            *([] if "models" in changes else model),
            "--no-report",
            "--workers",
            "1",
        ]
    )


def test_react_run_records_calls_and_tokens_and_resumes_from_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer(default=Reply(WAIT)) as server:
        assert _run(tmp_path, server, monkeypatch, "a") == 0
        first = server.requests
        db = tmp_path / "a" / "results.sqlite"
        with sqlite3.connect(db) as con:
            recs = [
                json.loads(t)
                for (t,) in con.execute("SELECT record FROM episodes WHERE status = 'ok'")
            ]
        assert len(recs) == 2 and all(
            r["model_calls"] == 3 and r["prompt_tokens"] > 0 for r in recs
        )
        assert all(r["cost_usd"] is None for r in recs)  # an unpriced model costs "unknown", not 0
        assert all(
            set(r["template_hashes"]) == {"prompt_version", "common", "react", "observation"}
            for r in recs
        )
        assert first == 7  # six episode calls and the one-token preflight
        assert server.received[0].body["max_tokens"] == 1
        # A fresh results folder over the same cache replays without calling the endpoint again.
        (tmp_path / "a" / "results.sqlite").unlink()
        for extra in ("-wal", "-shm"):
            (tmp_path / "a" / f"results.sqlite{extra}").unlink(missing_ok=True)
        assert _run(tmp_path, server, monkeypatch, "a") == 0
        assert server.requests == first + 1  # only the preflight reaches the endpoint
        text = (tmp_path / "a" / "llm_cache.sqlite").read_bytes()
        assert b"sk-test-secret-123" not in text


def test_an_unreachable_endpoint_is_a_fault_and_nothing_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(default=Fail(500)) as server:
        model = {
            "name": "fake-model",
            "base_url": server.base_url,
            "api_key_env": "FAKE_KEY",
            "client": {"max_retries": 0},
        }
        quick = {"retry_delay_s": 0.05, "retry_delay_max_s": 0.1, "give_up_after_s": 1}
        code = _run(tmp_path, server, monkeypatch, "b", models=[model], execution=quick)
    assert code == 1  # episodes left unfinished for a rerun
    with sqlite3.connect(tmp_path / "b" / "results.sqlite") as con:
        statuses = [s for (s,) in con.execute("SELECT status FROM episodes")]
        faults = con.execute("SELECT COUNT(*) FROM faults").fetchone()[0]
        kinds = {k for (k,) in con.execute("SELECT kind FROM faults")}
    assert statuses and set(statuses) == {"infra_fault"} and faults >= 2 and kinds == {"server"}
    out = capsys.readouterr()
    assert "sk-test-secret-123" not in out.out + out.err


def test_missing_key_or_url_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    monkeypatch.delenv("NOPE_KEY", raising=False)
    code = main(
        [
            "run",
            str(spec),
            "--out",
            str(tmp_path / "c"),
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--api-key-env",
            "NOPE_KEY",
            "--no-report",
        ]
    )
    assert code == 2 and "NOPE_KEY" in capsys.readouterr().err
    assert (
        main(["run", str(spec), "--out", str(tmp_path / "d"), "--no-report"]) == 2
    )  # no model at all
