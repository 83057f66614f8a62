"""Every failure's reason on screen: faults by kind on the progress line, a closing table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mirrorcraft.faults import Fault
from mirrorcraft.llm.fakeserver import Fail, FakeOpenAIServer
from mirrorcraft.runner.fault_report import (
    advice,
    component_of,
    fault_table,
    group_faults,
    kinds_note,
)
from mirrorcraft.runner.progress import Progress


def test_faults_group_by_kind_and_component_with_their_last_message() -> None:
    rows = [
        ("connection", "'m' at host:1", "refused (1)", "e1"),
        ("connection", "'m' at host:1", "refused (2)", "e2"),
        ("connection", "'m' at host:1", "refused (3)", "e1"),
        ("worker", "worker process", "killed by SIGKILL", "e3"),
    ]
    groups = group_faults(rows)
    assert [(g.kind, g.count, len(g.episodes)) for g in groups] == [
        ("connection", 3, 2),
        ("worker", 1, 1),
    ]
    assert groups[0].last_message == "refused (3)"
    text = fault_table(groups)
    assert text.startswith("Infrastructure faults in this run (4; never scored)")
    assert "'m' at host:1" in text and "refused (3)" in text and "refused (1)" not in text
    assert "  connection: check that the endpoint or server is reachable" in text
    assert "  worker: a worker process was killed (out of memory" in text
    assert fault_table([]) == ""


def test_long_messages_are_clipped_to_one_line() -> None:
    text = fault_table(group_faults([("server", "x", "line one\n" + "y" * 500, "e")]))
    row = next(line for line in text.splitlines() if line.startswith("server"))
    assert "line one y" in row and row.endswith("…") and len(row) < 200


def test_the_component_is_what_failed() -> None:
    endpoint = Fault("connection", "refused", endpoint=True)
    assert component_of(endpoint, "'m' at h:1", "sim") == "'m' at h:1"
    assert component_of(Fault("worker", "died"), None, "sim") == "worker process"
    # An episode past its time limit: its agent (a slow plugin) may be what held it up.
    assert component_of(Fault("timeout", "slow"), None, "sim") == "agent or embedded simulator"
    assert component_of(Fault("server", "crash"), None, "sim") == "embedded simulator"
    assert component_of(Fault("server", "gone"), None, "mineflayer").startswith("Minecraft server")


class _Log:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        return None


def test_the_progress_line_counts_faults_by_kind() -> None:
    log = _Log()
    progress = Progress(4, log)
    progress.failed = 3
    progress.fault_kinds.update({"connection": 2, "timeout": 1})
    progress.show(force=True)
    assert "3 faults (2 connection, 1 timeout)" in log.text
    assert kinds_note({"a": 1, "b": 1, "c": 5}) == "5 c, 1 a, 1 b"


def test_a_failing_endpoint_shows_its_reason_at_the_end_of_the_run(tmp_path: Path) -> None:
    """As a user meets it: an endpoint answering 503 to everything. The run exits 1 and
    shows the kind, the endpoint and its last error on screen, not only in SQLite."""
    spec = tmp_path / "spec.yaml"
    with FakeOpenAIServer(default=Fail(503, "upstream overloaded")) as server:
        spec.write_text(
            json.dumps(
                {
                    "schema_version": 1,
                    "name": "faulty",
                    "worlds": ["plains-1"],
                    "rules": ["vanilla", "M04"],
                    "tasks": ["diamond"],
                    "agents": ["react"],
                    "budget": 5,
                    "models": [
                        {"name": "m", "base_url": server.base_url, "client": {"max_retries": 0}}
                    ],
                    "execution": {
                        "retry_delay_s": 0.05,
                        "retry_delay_max_s": 0.1,
                        "max_attempts": 2,
                        "preflight": False,
                    },
                }
            )
        )
        done = subprocess.run(
            [sys.executable, "-m", "mirrorcraft.cli", "run", str(spec), "--out",
             str(tmp_path / "out"), "--no-report"],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "faults (" in done.stderr and " server)" in done.stderr
    out = done.stdout
    assert "Infrastructure faults in this run" in out
    table = out[out.index("Infrastructure faults") :]
    assert "server" in table and f"127.0.0.1:{server.port}" in table
    assert "503" in table and "What to do:" in table
    assert "rerun the same command" in out


def test_an_endpoint_answering_what_is_not_a_chat_completion_is_told_to_check_its_url() -> None:
    """A 200 with a body that is not JSON (base_url at a web page, or missing /v1) was advised
    "it answered with an error ... check its logs"; the advice now names the likely cause."""
    message = "model 'm' at h:1 still failing ...; last error: malformed_response (unreadable body)"
    text = fault_table(group_faults([("server", "'m' at h:1", message, "e")]))
    assert "server: it answered 2xx with a body that is not a chat completion" in text
    assert "check that base_url is the API's root" in text
    assert "check its logs" in advice("server", "HTTP 500")


def test_a_model_calls_timeout_names_the_endpoint_and_the_call_limit() -> None:
    """A model call that timed out was advised "raise client.timeout_s or
    execution.episode_timeout_s": the episode's limit has nothing to do with one call's. The
    advice now names the endpoint and the model's own per-call setting."""
    message = (
        "model 'm' at h:1 still failing after 1 attempt(s); last error: timeout (no complete "
        "answer within 0.3 s)"
    )
    text = fault_table(group_faults([("timeout", "'m' at h:1", message, "e")]))
    todo = text[text.index("What to do:") :]
    assert "the model endpoint 'm' at h:1 gave no complete answer" in todo
    assert "that model's client.timeout_s" in todo and "episode_timeout_s" not in todo
    # The episode's own limit keeps its advice.
    assert "raise execution.episode_timeout_s" in advice(
        "timeout", "the episode ran past its limit of 5 s"
    )
