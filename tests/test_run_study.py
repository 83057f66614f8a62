"""A researcher's LLM study under faults, and resumed after edits that change how a model is
reached, not what it measures: ``mirrorcraft run`` in a subprocess against the fake endpoint."""

from __future__ import annotations

import copy
from pathlib import Path

from mirrorcraft.llm.fakeserver import Fail, FakeOpenAIServer, Hang, Reply
from mirrorcraft.llm.preflight import NOTICE_AFTER_S
from tests.runcli import KEY, WAIT, cli, llm_spec, ok_records, write_spec


def test_a_key_kept_in_another_variable_resumes_the_study(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FakeOpenAIServer(Reply(WAIT)) as server:
        spec = llm_spec(server.base_url)
        first = cli(write_spec(tmp_path / "spec.yaml", spec), out, "--limit", "2")
        assert first.returncode == 0, first.stderr
        done = ok_records(out / "results.sqlite")
        assert len(done) == 2

        moved = copy.deepcopy(spec)
        moved["models"][0]["api_key_env"] = "ROTATED_KEY"  # the key now lives elsewhere
        before = server.requests
        second = cli(
            write_spec(tmp_path / "moved.yaml", moved), out, extra_env={"ROTATED_KEY": KEY}
        )
        assert second.returncode == 0, second.stderr
        assert "another version of this spec" not in second.stderr
        assert "2 already done, running 4" in second.stderr
        assert "they count as its episodes (now stamped" in second.stderr
        assert "{identity}" not in second.stderr  # the note's spec identity is filled in
        assert server.requests - before == 1 + 3 * 4  # the preflight, then only new episodes
    final = ok_records(out / "results.sqlite")
    assert len(final) == 6
    assert all(final[e]["model_calls"] == r["model_calls"] for e, r in done.items())


def test_an_endpoint_that_keeps_rate_limiting_is_told_as_a_quota_not_a_server_fault(
    tmp_path: Path,
) -> None:
    """A provider answering 429 to every call was advised "it answered with an error ...
    check its logs" (a provider's logs are not the user's to read): the advice now says it
    is the account's rate or quota and names the settings that send fewer calls."""
    out = tmp_path / "out"
    with FakeOpenAIServer(Fail(429, "Rate limit reached", retry_after="0")) as server:
        server.script(Reply(WAIT))  # the preflight passes; the quota runs out after it
        spec = llm_spec(server.base_url, rules=["M01"], repetitions=1)
        done = cli(write_spec(tmp_path / "spec.yaml", spec), out)
    assert done.returncode == 1, done.stderr
    todo = done.stdout[done.stdout.index("What to do:") :]
    assert "server: it kept refusing calls as too many (HTTP 429" in todo
    assert "--concurrency" in todo and "client.max_retries" in todo
    assert "check its logs" not in todo


def test_an_endpoint_that_never_answers_is_named_while_the_preflight_waits_for_it(
    tmp_path: Path,
) -> None:
    """An endpoint that accepts connections and never answers kept `run` silent for the
    preflight's every attempt (3 x 60 s by default, over three minutes) before its first
    line: a run that looked hung. A preflight still waiting after a few seconds now says
    which endpoint it is waiting for and how long each request may wait."""
    out = tmp_path / "out"
    with FakeOpenAIServer(Reply(WAIT)) as server:
        server.script(Hang(30))  # the preflight's call; later calls are answered
        spec = llm_spec(server.base_url, rules=["M01"], repetitions=1)
        limit = NOTICE_AFTER_S + 1  # the preflight waits this long, past the notice
        spec["models"][0]["client"] = {"timeout_s": limit, "max_retries": 0}
        done = cli(write_spec(tmp_path / "spec.yaml", spec), out)
    lines = done.stderr.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0].startswith("preflight: still waiting for the one-token call")
    waits = f"'fake-model' at 127.0.0.1:{server.port} (each request waits up to {limit:g} s"
    assert waits in lines[0] and "1 attempt(s) at most" in lines[0]
    assert f"no complete answer within {limit:g} s" in lines[1]  # the preflight's warning


def test_an_endpoint_that_timed_out_in_the_preflight_gets_one_episode_at_a_time(
    tmp_path: Path,
) -> None:
    """After a preflight that timed out, the run warned and then sent every episode to the
    endpoint at once, each waiting client.timeout_s x attempts (about 6 minutes by default)
    before its first fault, while the progress line said "6 running, 0 faults". The endpoint
    now starts the run as a paused one ends its pause: one episode at a time probes it, the
    progress line names it, and failing for give_up_after_s its episodes are left for a rerun."""
    out = tmp_path / "out"
    with FakeOpenAIServer(Hang(30)) as server:
        spec = llm_spec(server.base_url, client={"timeout_s": 1, "max_retries": 0})
        done = cli(write_spec(tmp_path / "spec.yaml", spec), out, "--concurrency", "6")
        requests = server.requests
    assert done.returncode == 1, done.stderr
    label = f"'fake-model' at 127.0.0.1:{server.port}"
    assert "preflight: " in done.stderr and "one episode at a time until it answers" in done.stderr
    assert f"endpoint {label} failing for" in done.stderr
    assert "one episode at a time probes it" in done.stderr or "pausing" in done.stderr
    # Each probe waits the 1 s limit and give_up_after_s is 1.5 s: two probes at most, one at
    # a time (all six episodes at once before), then the endpoint is given up for this run.
    assert requests - 1 <= 2, requests
    assert "6 episode(s) not finished" in done.stdout
    assert "held back from an endpoint that kept failing" in done.stdout
