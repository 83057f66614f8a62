"""Faults that heal and configuration errors that stop, as a user meets them: ``mirrorcraft
run`` in a subprocess against the packaged fake endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from mirrorcraft.llm.fakeserver import Fail, FakeOpenAIServer, Hang, Reply
from tests.runcli import (
    KEY,
    WAIT,
    cli,
    faults,
    llm_spec,
    ok_records,
    rows,
    step_counts,
    write_spec,
)

EPISODES = 6  # llm_spec: 3 rule sets x 2 repetitions


def test_an_outage_longer_than_the_retry_window_heals_on_a_rerun(tmp_path: Path) -> None:
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    with FakeOpenAIServer(default=Fail(503, message="overloaded")) as server:
        server.script(*[Reply(WAIT)] * 7)  # the preflight and six calls, then the outage
        spec = write_spec(tmp_path / "spec.yaml", llm_spec(server.base_url))
        first = cli(spec, out, "--concurrency", "2")
        assert first.returncode == 1, first.stderr
        assert "pausing" in first.stderr and "left for a rerun" in first.stderr
        assert "rerun the same command" in first.stdout
        assert "Traceback" not in first.stderr
        done = ok_records(db)
        assert len(done) < EPISODES
        stored = faults(db)
        assert stored and {k for _, k, _ in stored} == {"server"}
        assert all("overloaded" in m for _, _, m in stored)  # the last error, for the record
        unfinished = rows(db, "SELECT record FROM episodes WHERE status = 'infra_fault'")
        assert unfinished and all('"fault": "server"' in r for (r,) in unfinished)

        server.default = Reply(WAIT)  # the endpoint is back
        before = server.requests
        second = cli(spec, out, "--concurrency", "2")
        assert second.returncode == 0, second.stderr
        assert f"{len(done)} already done, running {EPISODES - len(done)}" in second.stderr
        # Only unfinished episodes called the endpoint (plus the one-token preflight).
        assert server.requests - before <= 1 + 3 * (EPISODES - len(done))
    final = ok_records(db)
    assert len(final) == EPISODES
    assert all(final[eid] == rec for eid, rec in done.items())  # finished ones never reran
    counts = step_counts(db)
    assert all(r["model_calls"] == 3 and counts[e] == r["actions_used"] for e, r in final.items())
    assert len(faults(db)) == len(stored)  # the history stays; the rerun met no fault


def _preflight_refuses(tmp_path: Path, server: FakeOpenAIServer, words: str) -> str:
    out = tmp_path / "out"
    spec = write_spec(tmp_path / "spec.yaml", llm_spec(server.base_url, rules=["vanilla"]))
    done = cli(spec, out)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "the model preflight failed, nothing was run" in lines[0]
    assert "'fake-model'" in lines[0] and words in lines[0]
    assert rows(out / "results.sqlite", "SELECT * FROM episodes") == []
    assert server.requests == 1
    return lines[0]


def test_revoked_credentials_stop_the_run_before_any_episode(tmp_path: Path) -> None:
    with FakeOpenAIServer(default=Fail(401, message=f"Incorrect API key {KEY}")) as server:
        line = _preflight_refuses(tmp_path, server, "refused the credentials")
    assert "$FAKE_KEY" in line and KEY not in line


def test_an_unknown_model_stops_the_run_before_any_episode(tmp_path: Path) -> None:
    with FakeOpenAIServer(models=("another-model",)) as server:
        _preflight_refuses(tmp_path, server, "check the model name")


def test_a_wrong_base_url_stops_the_run_before_any_episode(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = write_spec(
            tmp_path / "spec.yaml",
            llm_spec(server.base_url.removesuffix("/v1") + "/wrong", rules=["vanilla"]),
        )
        done = cli(spec, tmp_path / "out")
    assert done.returncode == 2 and "HTTP 404" in done.stderr and "/v1" in done.stderr


def test_a_context_window_too_small_for_the_prompt_budget_stops_the_run(tmp_path: Path) -> None:
    with FakeOpenAIServer(context_window=4096) as server:
        spec = write_spec(tmp_path / "spec.yaml", llm_spec(server.base_url, rules=["vanilla"]))
        done = cli(spec, tmp_path / "out")
        assert server.requests == 0  # the listing alone told
    assert done.returncode == 2
    assert "context window is 4096 tokens" in done.stderr and "8192" in done.stderr
    assert "prompt_budget_tokens" in done.stderr


def test_credentials_revoked_mid_run_are_config_faults_that_stop_the_endpoint(
    tmp_path: Path,
) -> None:
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    with FakeOpenAIServer(default=Fail(401, message=f"key {KEY} revoked")) as server:
        server.script(Reply("OK"))  # the preflight still passes
        spec = write_spec(tmp_path / "spec.yaml", llm_spec(server.base_url))
        done = cli(spec, out, "--concurrency", "2")
        assert server.requests <= 1 + 2  # the preflight and the episodes already in flight
    assert done.returncode == 1, done.stderr
    assert "configuration error" in done.stderr and "$FAKE_KEY" in done.stderr
    assert "held back from an endpoint that kept failing or is misconfigured" in done.stdout
    assert ok_records(db) == {}  # nothing scored: no agent_error zeros in the tables
    stored = faults(db)
    assert stored and {k for _, k, _ in stored} == {"config"}
    everything = "".join(str(r) for r in rows(db, "SELECT * FROM faults"))
    everything += "".join(str(r) for r in rows(db, "SELECT * FROM episodes"))
    assert KEY not in everything + done.stdout + done.stderr


def test_a_context_length_refusal_mid_run_is_a_config_fault_never_retried(tmp_path: Path) -> None:
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    with FakeOpenAIServer(default=Reply(WAIT), context_window=2200) as server:
        spec = llm_spec(server.base_url, client={"prompt_budget_tokens": 100})
        done = cli(write_spec(tmp_path / "spec.yaml", spec), out, "--concurrency", "1")
        assert server.requests == 2  # the preflight fits; the first real prompt does not
    assert done.returncode == 1
    assert "does not fit the endpoint's context window" in done.stderr
    assert [k for _, k, _ in faults(db)] == ["config"]
    assert ok_records(db) == {}


def test_a_hanging_endpoint_meets_the_episode_time_limit(tmp_path: Path) -> None:
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    with FakeOpenAIServer(default=Hang(20)) as server:
        server.script(Reply("OK"))
        spec = llm_spec(
            server.base_url,
            client={"timeout_s": 60},
            rules=["vanilla"],
            repetitions=1,
            execution={"episode_timeout_s": 0.5, "max_attempts": 1},
        )
        done = cli(write_spec(tmp_path / "spec.yaml", spec), out)
    assert done.returncode == 1, done.stderr
    ((_, kind, message),) = faults(db)
    assert kind == "timeout" and "wall-clock limit of 0.5 s" in message


def test_a_model_that_never_gives_a_usable_action_is_named_at_the_end_of_the_run(
    tmp_path: Path,
) -> None:
    """Prose (or empty) replies end every episode before its first action: stored as the
    paper's no_action outcome, Score 0, with a closing note saying why, not a silent row of
    zeros."""
    prose = "I would like to mine some wood first."
    for name, reply in (("prose", prose), ("empty", "")):
        out = tmp_path / name
        with FakeOpenAIServer(default=Reply(reply)) as server:
            server.script(Reply(WAIT))  # the preflight
            spec = llm_spec(server.base_url, rules=["vanilla", "M04"], repetitions=1)
            done = cli(write_spec(tmp_path / f"{name}.yaml", spec), out)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        records = ok_records(out / "results.sqlite")
        assert len(records) == 2 and all(
            r["termination"] == "no_action"
            and r["actions_used"] == 0
            and r["unusable_replies"] == 2
            for r in records.values()
        )
        assert "(2 of 2 of react with fake-model)" in done.stdout
        assert "could not be used as actions" in done.stdout
    with FakeOpenAIServer(default=Reply(WAIT)) as server:
        spec = llm_spec(server.base_url, rules=["vanilla"], repetitions=1)
        done = cli(write_spec(tmp_path / "fine.yaml", spec), tmp_path / "fine")
    assert done.returncode == 0 and "could not be used as actions" not in done.stdout


def test_the_fake_endpoint_command_line_breaks_mid_run_as_told(tmp_path: Path) -> None:
    """``fakeserver --after N --drop`` (or ``--malformed``) answers N requests, then fails:
    a run meets a server dying mid-run; what finished before stays stored, the rest is left
    for a rerun, and nothing is half-written."""
    import subprocess
    import sys

    from tests.runcli import command, env

    for fault in ("--drop", "--malformed"):
        out = tmp_path / fault.strip("-")
        # the spec names the endpoint as {url}; the runner below puts the served one in
        spec = write_spec(tmp_path / "spec.yaml", llm_spec("{url}", repetitions=1, budget=3))
        runner = tmp_path / "run_with_url.py"
        runner.write_text(
            "import pathlib, subprocess, sys\n"
            "spec = pathlib.Path(sys.argv[2])\n"
            "spec.write_text(spec.read_text().replace('{url}', sys.argv[1]))\n"
            "sys.exit(subprocess.run(sys.argv[3:]).returncode)\n"
        )
        # the preflight, then one episode of three calls, then the fault
        args = [sys.executable, "-m", "mirrorcraft.llm.fakeserver", "--reply", WAIT]
        args += [fault, "--after", "4", "--", sys.executable, str(runner), "{url}", str(spec)]
        args += [*command(spec, out, "--concurrency", "1")]
        done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env())
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        db = out / "results.sqlite"
        finished = ok_records(db)
        assert len(finished) == 1
        counts = step_counts(db)
        assert all(counts[e] == r["actions_used"] == 3 for e, r in finished.items())
        kinds = {k for _, k, _ in faults(db)}
        assert kinds == ({"connection"} if fault == "--drop" else {"server"})
        assert "rerun the same command" in done.stdout


def test_the_fake_endpoint_on_a_port_in_use_says_so_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``fakeserver --port N`` with a server already on N printed a bind traceback."""
    from mirrorcraft.llm.fakeserver import main

    with FakeOpenAIServer(Reply("ok")) as busy:
        port = busy.base_url.split(":")[2].split("/")[0]
        assert main(["--port", port, "--", "true"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"127.0.0.1:{port}" in err and "another --port" in err
