"""Remote agents over HTTP: the example servers (Python, Node) in paired grids that are analysed
and reported, every message against the shipped JSON Schemas and the integrity scan, and the
failure taxonomy as a user meets it (unreachable, 404, 5xx, malformed replies, bad actions)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mirrorcraft.agents.remote import protocol
from mirrorcraft.agents.remote.agent import RemoteAgent, remote_options
from mirrorcraft.agents.remote.http import HttpPool
from mirrorcraft.runner.integrity import forbidden_tokens, scan_episode, scan_text
from tests.remote_fakes import (
    NODE,
    NODE_SERVER,
    PY_SERVER,
    FakeAgentServer,
    example_server,
    free_port,
    greedy_behaviour,
)
from tests.runcli import QUICK, cli, faults, ok_records, rows, step_counts, write_spec

SCHEMAS = {
    name: json.loads((protocol.SCHEMA_DIR / f"{name}.json").read_text())
    for name in protocol.MESSAGES
}


def validate(name: str, doc: Any) -> None:
    jsonschema.Draft202012Validator(SCHEMAS[name]).validate(doc)


def remote_spec(url: str, name: str = "remote", **changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schema_version": 1,
        "name": name,
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M01", "M04"],
        "tasks": ["diamond"],
        "agents": [{"name": url, "label": "remote-greedy"}],
        "budget": 20,
        "execution": dict(QUICK),
    }
    spec.update(changes)
    return spec


def analyse_and_report(db: Path, out: Path) -> str:
    """``analyze`` and ``report`` as a user runs them (no --agent): returns analyze's output."""
    base = [sys.executable, "-m", "mirrorcraft.cli"]
    analysed = subprocess.run(
        [*base, "analyze", str(db)], capture_output=True, text=True, timeout=300
    )
    assert analysed.returncode == 0, analysed.stderr
    reported = subprocess.run(
        [*base, "report", str(db), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert reported.returncode == 0, reported.stderr
    assert (out / "index.html").is_file()
    return analysed.stdout


def test_the_schema_files_are_generated_from_the_models() -> None:
    """The protocol is written once (the models); the shipped files are generated from it."""
    for name in protocol.MESSAGES:
        shipped = (protocol.SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8")
        assert shipped == protocol.schema_text(name), f"{name}.json is stale: run --write"
        jsonschema.Draft202012Validator.check_schema(SCHEMAS[name])
    assert protocol.main(["--check"]) == 0


def test_python_example_server_in_a_paired_grid(tmp_path: Path) -> None:
    """The stdlib example server: a Vanilla/Mirror grid run, analysed and reported; its trace
    is the one the same greedy policy plays in process (the protocol loses nothing)."""
    with example_server("python") as url:
        spec = write_spec(tmp_path / "spec.yaml", remote_spec(url))
        done = cli(spec, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    db = tmp_path / "out" / "results.sqlite"
    records = ok_records(db)
    assert len(records) == 3 and not faults(db)
    for r in records.values():
        assert r["agent"] == "remote-greedy" and r["termination"] == "budget"
        assert r["agent_origin"] == {
            "kind": "remote",
            "ref": url,
            "package": "example-python",
            "version": "1",
        }
        assert set(r["template_hashes"]) == {"observation", "prompt_version"}
    assert len({r["seed"] for r in records.values()}) == 1  # one pair, one seed
    vanilla = next(r for r in records.values() if r["rules"] == "vanilla")
    assert vanilla["score"] == 25  # a stone pickaxe, as the greedy policy plays it
    assert step_counts(db) == {e: 20 for e in records}
    text = analyse_and_report(db, tmp_path / "report")
    assert "remote-greedy" in text

    # The same policy as a Python plugin (examples/my_agent) plays the same actions.
    inproc = remote_spec("my_agent.greedy:GreedyAgent", name="inproc")
    inproc["agents"] = [{"name": "my_agent.greedy:GreedyAgent", "label": "remote-greedy"}]
    env_path = str(Path(__file__).resolve().parents[1] / "examples" / "my_agent")
    done = subprocess.run(
        [
            *_run_args(write_spec(tmp_path / "inproc.yaml", inproc), tmp_path / "inproc"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**_env(), "PYTHONPATH": env_path},
    )
    assert done.returncode == 0, done.stderr
    remote_actions = _actions(db)
    local_actions = _actions(tmp_path / "inproc" / "results.sqlite")
    assert remote_actions == local_actions and len(remote_actions) == 3


def _run_args(spec: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "mirrorcraft.cli", "run", str(spec), "--out", str(out)]


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def _actions(db: Path) -> dict[str, list[Any]]:
    """Actions of each episode by rule set (episode ids differ between the two runs)."""
    by_rules = {r["episode_id"]: r["rules"] for r in ok_records(db).values()}
    out: dict[str, list[Any]] = {}
    for eid, text in rows(db, "SELECT episode_id, record FROM steps ORDER BY episode_id, step"):
        out.setdefault(by_rules[eid], []).append(json.loads(text)["action"])
    return out


@pytest.mark.skipif(NODE is None, reason="node is not installed on this machine")
def test_node_example_server_in_a_paired_grid(tmp_path: Path) -> None:
    with example_server("node") as url:
        spec = remote_spec(url, rules=["vanilla", "M04"])
        done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
    assert done.returncode == 0, done.stderr
    db = tmp_path / "out" / "results.sqlite"
    records = ok_records(db)
    assert sorted(r["rules"] for r in records.values()) == ["M04", "vanilla"]
    assert all(r["agent_origin"]["package"] == "example-node" for r in records.values())
    assert all(r["actions_used"] == 20 for r in records.values())
    assert next(r for r in records.values() if r["rules"] == "vanilla")["score"] == 25
    assert "remote-greedy" in analyse_and_report(db, tmp_path / "report")


def test_every_message_follows_its_schema_and_reveals_no_rule(tmp_path: Path) -> None:
    """Requests as the runner sends them and replies as the example answers them, against the
    shipped schema files; every request passes the integrity scan (Mirror M04, hidden)."""
    answer = greedy_behaviour()
    replies: list[tuple[str, Any]] = []

    def behave(path: str, message: dict[str, Any]) -> tuple[int, bytes]:
        status, body = answer(path, message)
        replies.append((path, json.loads(body)))
        return status, body

    with FakeAgentServer(behave) as server:
        spec = remote_spec(server.url, rules=["M04"], budget=15)
        done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
        received = list(server.received)
    assert done.returncode == 0, done.stderr
    assert [p for p, _ in received] == ["/reset"] + ["/act"] * 15 + ["/close"]
    names = {"/reset": "reset_request", "/act": "act_request", "/close": "close_request"}
    tokens = forbidden_tokens()
    for path, message in received:
        validate(names[path], message)
        assert scan_text(json.dumps(message), tokens) == [], path
    for path, reply in replies:
        if path == "/reset":
            validate("reset_reply", reply)
        elif path == "/act":
            validate("act_reply", reply)
    reset = received[0][1]
    assert reset["rule_sheet"] is None and reset["options"] == {}
    episode_ids = set(ok_records(tmp_path / "out" / "results.sqlite"))
    assert reset["episode"] not in episode_ids  # an opaque token, not the record's id
    acts = [m for p, m in received if p == "/act"]
    assert [m["step"] for m in acts] == list(range(15))
    assert acts[0]["last_result"] is None and acts[1]["last_result"]["skill"]
    assert "GOAL: complete" in acts[0]["text"] and acts[0]["budget_left"] == 15


def test_a_bad_message_breaks_a_schema_check() -> None:
    """The schema checks can fail: an unknown key and a missing field are refused."""
    with pytest.raises(jsonschema.ValidationError):
        validate("act_reply", {"action": {"skill": "mine"}, "extra": 1})
    with pytest.raises(jsonschema.ValidationError):
        validate("reset_request", {"protocol": protocol.PROTOCOL, "episode": "x"})


def test_disclosed_condition_sends_the_sheet_and_options_reach_the_agent(tmp_path: Path) -> None:
    with FakeAgentServer(greedy_behaviour()) as server:
        spec = remote_spec(server.url, rules=["vanilla", "M04"], budget=3)
        spec["agents"] = [
            {"name": server.url, "label": "r", "options": {"depth": 2, "text": "compact"}}
        ]
        spec["disclosure"] = ["hidden", "disclosed"]
        spec["disclosed_agents"] = ["r"]
        done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
        received = list(server.received)
    assert done.returncode == 0, done.stderr
    resets = [m for p, m in received if p == "/reset"]
    assert len(resets) == 3 and all(m["options"] == {"depth": 2} for m in resets)
    assert sum(m["rule_sheet"] is not None for m in resets) == 1
    acts = [m for p, m in received if p == "/act"]
    assert all(m["text"].startswith("TASK: ") for m in acts)  # the compact form
    records = ok_records(tmp_path / "out" / "results.sqlite")
    assert {r["agent_origin"]["options_hash"] for r in records.values()} != {""}


def test_an_agent_that_is_not_running_stops_the_run_before_anything_runs(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = cli(write_spec(tmp_path / "spec.yaml", remote_spec(url, budget=3)), tmp_path / "out")
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line and "remote agent preflight failed, nothing was run" in line
    assert f"agent at {url}: cannot connect to 127.0.0.1" in line and "Traceback" not in line
    db = tmp_path / "out" / "results.sqlite"
    assert not ok_records(db) and not faults(db)


def test_an_unreachable_agent_is_a_connection_fault_that_pauses_it(tmp_path: Path) -> None:
    # An agent that goes away after the preflight (here: the preflight is switched off).
    url = f"http://127.0.0.1:{free_port()}"
    spec = remote_spec(url, budget=3, execution={**QUICK, "preflight": False})
    spec["agents"] = [{"name": url, "options": {"client": {"max_retries": 0, "timeout_s": 5}}}]
    done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
    db = tmp_path / "out" / "results.sqlite"
    assert done.returncode == 1, done.stderr
    kinds = {k for _e, k, _m in faults(db)}
    assert kinds == {"connection"} and not ok_records(db)
    assert "cannot connect" in faults(db)[0][2]
    assert f"endpoint agent at {url}" in done.stderr and "pausing" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_wrong_path_is_a_config_fault_that_stops_dispatch(tmp_path: Path) -> None:
    with FakeAgentServer(lambda path, message: (404, b'{"error": "no route"}')) as server:
        spec = remote_spec(server.url + "/nowhere", budget=3)
        done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
        asked = server.paths()
    db = tmp_path / "out" / "results.sqlite"
    assert done.returncode == 1
    assert {k for _e, k, _m in faults(db)} == {"config"}
    # The three episodes start at once; each is refused once and none is tried again.
    assert asked == ["/nowhere/reset"] * 3 and len(faults(db)) == 3
    assert "configuration error" in done.stdout + done.stderr
    assert "/reset, <url>/act and <url>/close" in faults(db)[0][2]


def test_server_errors_are_retried_within_the_call(tmp_path: Path) -> None:
    answer = greedy_behaviour()
    failures = iter([True, True])

    def flaky(path: str, message: dict[str, Any]) -> tuple[int, bytes]:
        if path == "/act" and next(failures, False):
            return 503, b"busy"
        return answer(path, message)

    with FakeAgentServer(flaky) as server:
        spec = remote_spec(server.url, rules=["vanilla"], budget=4)
        spec["agents"] = [
            {"name": server.url, "options": {"client": {"max_retries": 2, "backoff_base_s": 0}}}
        ]
        done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
    db = tmp_path / "out" / "results.sqlite"
    assert done.returncode == 0, done.stderr
    assert not faults(db) and [r["actions_used"] for r in ok_records(db).values()] == [4]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (b"<html>oops</html>", "not JSON"),
        (b'{"act": {"skill": "wait"}}', "not a protocol reply"),
        (b'{"action": {"skill": "wait", "args": {}}, "mood": "fine"}', "not a protocol reply"),
        (b'{"action": "mine"}', "not a protocol reply"),
        # Valid JSON whose cost reads as infinity: stored, the record was not JSON.
        (
            b'{"action": {"skill": "wait", "args": {}}, "usage": {"calls": 1, "cost_usd": 1e400}}',
            "usage.cost_usd",
        ),
    ],
)
def test_a_malformed_reply_is_the_agents_outcome(
    tmp_path: Path, reply: bytes, expected: str
) -> None:
    def behave(path: str, message: dict[str, Any]) -> tuple[int, bytes]:
        return (200, b"{}") if path != "/act" else (200, reply)

    with FakeAgentServer(behave) as server:
        spec = remote_spec(server.url, rules=["vanilla"], budget=3)
        done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
    db = tmp_path / "out" / "results.sqlite"
    assert done.returncode == 0, done.stderr
    (record,) = ok_records(db).values()
    assert record["termination"] == "agent_error" and expected in record["agent_error"]
    assert not faults(db)


def test_a_bad_action_is_played_and_no_action_ends_the_episode(tmp_path: Path) -> None:
    replies = iter(
        [
            {"action": {"skill": "fly", "args": {}}, "thought": "up"},
            {"action": {"skill": "mine", "args": {"block": "log", "count": 9}}},
            {"action": None, "usage": {"calls": 2, "prompt_tokens": 50, "cost_usd": 0.01}},
        ]
    )

    def behave(path: str, message: dict[str, Any]) -> tuple[int, bytes]:
        return 200, json.dumps(next(replies) if path == "/act" else {}).encode()

    with FakeAgentServer(behave) as server:
        spec = remote_spec(server.url, rules=["vanilla"], budget=5)
        done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
    db = tmp_path / "out" / "results.sqlite"
    assert done.returncode == 0, done.stderr
    (record,) = ok_records(db).values()
    assert record["termination"] == "no_action" and record["actions_used"] == 2
    assert record["model_calls"] == 2 and record["cost_usd"] == pytest.approx(0.01)
    steps = [json.loads(t) for (t,) in rows(db, "SELECT record FROM steps ORDER BY step")]
    assert [s["result"]["reason"] for s in steps] == ["invalid_args", "invalid_args"]
    assert steps[0]["thought"] == "up"


def test_remote_options_are_checked_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="text must be one of"):
        remote_options({"text": "html"})
    with pytest.raises(ValueError, match=r"client\.timeout_s"):
        remote_options({"client": {"timeout_s": -1}})
    spec = remote_spec("http://127.0.0.1:9", budget=3)
    spec["agents"] = [{"name": "http://127.0.0.1:9", "options": {"client": {"retries": 1}}}]
    done = cli(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out")
    assert done.returncode == 2 and "invalid options" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_integrity_scan_reads_the_remote_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """A leak placed in the text a remote agent is sent is found, where it was sent."""
    assert scan_episode("plains-1", "M04", "diamond") == []
    monkeypatch.setattr(RemoteAgent, "text", lambda self, obs: "world plains-1@M04")
    leaks = scan_episode("plains-1", "M04", "diamond")
    assert leaks and all(leak.where.startswith("remote act") for leak in leaks)


def test_the_http_client_reads_chunked_and_closing_replies_and_retries_a_stale_connection() -> None:
    async def scenario() -> list[tuple[int, bytes]]:
        served = 0

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal served
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(
                    next(
                        line.split(b":")[1]
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    )
                )
                await reader.readexactly(length)
                served += 1
                if served == 1:  # chunked, kept open
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        b'4\r\n{"a"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n'
                    )
                    await writer.drain()
                    writer.close()  # ...but the server drops it: the next request retries
                    return
                writer.write(b'HTTP/1.0 200 OK\r\n\r\n{"b": 2}')  # ends at close
                await writer.drain()
                writer.close()
                return

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        pool = HttpPool(f"http://127.0.0.1:{port}/base")
        out = []
        for _ in range(2):
            response = await pool.post("/act", b"{}")
            out.append((response.status, response.body))
        server.close()
        return out

    assert asyncio.run(scenario()) == [(200, b'{"a": 1}'), (200, b'{"b": 2}')]


@pytest.mark.parametrize("kind", ["python", "node"])
def test_an_example_server_on_a_port_in_use_says_so_in_one_line(kind: str) -> None:
    """The README's one-liner uses port 8765: with a server already there, the example
    servers printed a traceback (Python) or an unhandled 'error' event (Node)."""
    if kind == "node" and NODE is None:
        pytest.skip("node is not installed")
    program = [sys.executable, str(PY_SERVER)] if kind == "python" else [NODE, str(NODE_SERVER)]
    with example_server() as url:
        port = url.rsplit(":", 1)[1]
        done = subprocess.run(
            [*program, "--port", port, "--", sys.executable, "-c", "print('ran')"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2 and "ran" not in done.stdout
    assert done.stderr.count("\n") == 1 and f":{port}" in done.stderr, done.stderr
    assert "another --port" in done.stderr and "Traceback" not in done.stderr
