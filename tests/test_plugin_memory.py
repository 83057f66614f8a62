"""Users' agents with memory across episodes: accumulation specs with a plugin variant, through
``mirrorcraft run`` as a user runs them. The store carries exactly the episodes before each one,
snapshots freeze it, bad operations never reach it, and specs that cannot work say why."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.agents.memory import MAX_DELTA_BYTES, MemoryDeltaError, checked_delta
from mirrorcraft.runner.accumulation import AccumulationSpec
from tests.runcli import command, env, write_spec

ROOT = Path(__file__).resolve().parents[1]

AGENTS = textwrap.dedent(
    '''
    from mirrorcraft.agents.base import Decision


    class Counter:
        """Counts the episodes it has lived through in its memory; waits that many ticks + 1."""

        cross_episode_memory = True
        bad = None

        @classmethod
        def validate_options(cls, options):
            unknown = set(options) - {"tag"}
            if unknown:
                raise ValueError(f"unknown option {sorted(unknown)[0]!r}")
            return dict(options)

        def __init__(self, options):
            self.seen = 0
            self.writable = False

        def load_knowledge(self, records, *, writable):
            self.seen = records.get("count", {}).get("n", 0)
            self.writable = writable

        def start(self, ctx):
            pass

        async def act(self, obs):
            return Decision({"skill": "wait", "args": {"ticks": self.seen + 1}})

        def finish(self, obs):
            pass

        def knowledge_delta(self):
            if self.bad is not None:
                return self.bad
            if not self.writable:
                return []
            return [{"op": "put", "id": "count", "record": {"kind": "count", "n": self.seen + 1}}]

        def memory_stats(self):
            return {"seen_at_start": self.seen}


    class NaNCounter(Counter):
        bad = [{"op": "put", "id": "x", "record": {"kind": "k", "v": float("nan")}}]


    class Forgetful:
        def start(self, ctx):
            pass

        async def act(self, obs):
            return {"skill": "wait", "args": {"ticks": 1}}
    '''
)


def spec_doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": 1,
        "kind": "accumulation",
        "name": "plugin-memory",
        "variants": [
            {"name": "counted", "agent": "mem_agents:Counter"},
            {"name": "cold", "agent": "mem_agents:Counter", "train": "none"},
        ],
        "train": {
            "worlds": ["plains-1"],
            "rules": ["vanilla"],
            "tasks": ["iron_armor"],
            "episodes": 4,
        },
        "checkpoints": [0, 2, 4],
        "eval": {"worlds": ["plains-1"], "rules": ["vanilla", "M04"], "tasks": ["diamond"]},
        "budget": 3,
        "execution": {"max_attempts": 1, "retry_delay_s": 0.1},
    }
    doc.update(changes)
    return doc


def run(tmp_path: Path, doc: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    """``mirrorcraft run`` of ``doc`` in a subprocess, with the test agents importable."""
    (tmp_path / "mem_agents.py").write_text(AGENTS)
    spec = write_spec(tmp_path / "spec.yaml", doc)
    return subprocess.run(
        command(spec, tmp_path / "out", *extra),
        capture_output=True,
        text=True,
        timeout=300,
        env={**env(), "PYTHONPATH": str(tmp_path)},
    )


def records(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as con:
        return [
            json.loads(r) for (r,) in con.execute("SELECT record FROM episodes WHERE status = 'ok'")
        ]


def store_ops(path: Path) -> list[tuple[int, dict[str, Any]]]:
    with sqlite3.connect(path) as con:
        return [
            (v, json.loads(op))
            for v, op in con.execute("SELECT version, op FROM ops ORDER BY version, seq")
        ]


def test_a_user_agent_learns_across_episodes_and_each_checkpoint_sees_exactly_its_episodes(
    tmp_path: Path,
) -> None:
    done = run(tmp_path, spec_doc(), "--workers", "2")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    train = sorted(records(out / "train.sqlite"), key=lambda r: r["memory"]["position"])
    assert [r["memory"]["seen_at_start"] for r in train] == [0, 1, 2, 3]
    assert [r["memory"]["store_version"] for r in train] == [0, 1, 2, 3]
    assert train[0]["memory"]["store_at_start"] == {} and train[0]["memory"]["store_at_end"] == {
        "count": 1
    }
    assert all(
        r["agent_origin"]["kind"] == "import" and r["agent_origin"]["ref"] == "mem_agents:Counter"
        for r in train
    )
    # The store holds one version per training episode; the snapshots are frozen copies.
    assert [op["record"]["n"] for _v, op in store_ops(out / "stores" / "counted--none.sqlite")] == [
        1,
        2,
        3,
        4,
    ]
    assert len(store_ops(out / "stores" / "counted--none@2.sqlite")) == 2
    evals = records(out / "results.sqlite")
    assert len(evals) == 2 * 3 * 2  # variants x checkpoints x rule sets
    for r in evals:
        cp = r["memory"]["checkpoint"]
        learned = cp if r["memory"]["variant"] == "counted" else 0
        assert r["memory"]["seen_at_start"] == learned and r["memory"]["store_updates"] is False
    # What it learned changes what it does: the first action waits one tick per episode lived.
    with sqlite3.connect(out / "results.sqlite") as con:
        firsts = {
            json.loads(rec)["action"]["args"]["ticks"]
            for (rec,) in con.execute("SELECT record FROM steps WHERE step = 1")
        }
    assert firsts == {1, 3, 5}
    again = run(tmp_path, spec_doc())
    assert again.returncode == 0 and "already" in again.stdout + again.stderr
    assert len(store_ops(out / "stores" / "counted--none.sqlite")) == 4  # nothing added twice


def test_operations_a_store_cannot_take_are_a_fault_that_names_the_agent_and_change_nothing(
    tmp_path: Path,
) -> None:
    doc = spec_doc(variants=[{"name": "bad", "agent": "mem_agents:NaNCounter"}], checkpoints=[2])
    done = run(tmp_path, doc)
    assert done.returncode == 1
    assert "knowledge_delta" in done.stdout + done.stderr and "Traceback" not in done.stderr
    out = tmp_path / "out"
    assert records(out / "train.sqlite") == []
    with sqlite3.connect(out / "train.sqlite") as con:
        ((kind, message),) = con.execute("SELECT kind, message FROM faults").fetchall()
    assert kind == "config" and "mem_agents:NaNCounter" in message and "not plain JSON" in message
    assert store_ops(out / "stores" / "bad--none.sqlite") == []


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ({"name": "f", "agent": "mem_agents:Forgetful"}, "keeps no memory across episodes"),
        (
            {"name": "c", "agent": "mem_agents:Counter", "options": {"speed": 2}},
            "unknown option 'speed'",
        ),
        (
            {"name": "r", "agent": "http://127.0.0.1:9/", "train": "none"},
            "remote agents cannot",
        ),
        (
            {"name": "m", "agent": "mineevolve", "options": {"x": 1}},
            "options apply to user agents",
        ),
        ({"name": "m", "agent": "mineevolve"}, "calls a model; name one under models"),
        ({"name": "n", "agent": "mem_agents:Nope", "train": "none"}, "Nope"),
    ],
)
def test_accumulation_specs_that_cannot_work_say_why_in_one_line(
    tmp_path: Path, variant: dict[str, Any], expected: str
) -> None:
    done = run(tmp_path, spec_doc(variants=[variant]))
    assert done.returncode == 2, done.stdout
    assert expected in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_variants_without_options_hash_as_before_and_options_change_the_hash() -> None:
    base = spec_doc()
    plain = AccumulationSpec.model_validate(
        {
            **base,
            "variants": [{"name": "m", "agent": "mineevolve"}],
            "models": [{"name": "mock-planner"}],
        }
    )
    explicit = AccumulationSpec.model_validate(
        {
            **base,
            "variants": [{"name": "m", "agent": "mineevolve", "options": {}}],
            "models": [{"name": "mock-planner"}],
        }
    )
    assert plain.hash == explicit.hash
    from mirrorcraft.runner.spec import identity_json

    assert '"options"' not in identity_json(plain)


def test_checked_delta_takes_plain_operations_and_refuses_the_rest() -> None:
    ok = [{"op": "put", "id": "a", "record": {"kind": "k", "n": 1}}, {"op": "drop", "id": "b"}]
    assert checked_delta("x", iter(ok)) == ok
    bad: list[Any] = [
        {"op": "put", "id": "a"},
        [{"op": "put", "id": "a", "record": {"kind": "k", "s": {1, 2}}}],
        [{"op": "merge", "id": "a"}],
        [{"op": "put", "id": "", "record": {"kind": "k"}}],
        [{"op": "put", "id": "a" * 201, "record": {"kind": "k"}}],
        ["put a"],
        [{"op": "put", "id": "a", "record": {"kind": "k", "blob": "x" * MAX_DELTA_BYTES}}],
    ]
    for delta in bad:
        with pytest.raises(MemoryDeltaError):
            checked_delta("x", delta)


def test_a_resume_compares_each_user_agent_label_with_its_origin_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mirrorcraft.commands.accumulate_cmd import _user_agent_origins

    (tmp_path / "mem_agents.py").write_text(AGENTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = AccumulationSpec.model_validate(spec_doc())
    origins = _user_agent_origins(spec)
    assert "mem_agents:Counter:counted:train" in origins
    assert "mem_agents:Counter:cold@4" in origins and len(origins) == 1 + 2 * 3
    assert {o["ref"] for o in origins.values()} == {"mem_agents:Counter"}


def test_a_store_the_agent_cannot_read_is_refused_before_running(tmp_path: Path) -> None:
    from mirrorcraft.agents.mineevolve.store import KnowledgeStore

    foreign = tmp_path / "mineevolve_store.sqlite"
    with KnowledgeStore.open(foreign) as store:
        store.commit("e0", "vanilla", [{"op": "retire", "id": "s1"}])  # MineEvolve's vocabulary
    doc = spec_doc(
        variants=[{"name": "c", "agent": "mem_agents:Counter", "start_from": str(foreign)}],
        checkpoints=[1],
    )
    done = run(tmp_path, doc)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "holds memory mem_agents:Counter cannot read" in done.stderr
    assert not (tmp_path / "out" / "train.sqlite").exists()
    assert len(store_ops(foreign)) == 1  # the source store is never written


def test_a_newer_version_of_a_learning_agent_refuses_to_resume(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(ROOT / "examples" / "my_agent" / "my_agent", site / "my_agent")
    agent = "my_agent.notebook:NotebookAgent"
    doc = spec_doc(variants=[{"name": "notes", "agent": agent}], checkpoints=[1])
    doc["train"]["episodes"] = 1
    spec = write_spec(tmp_path / "spec.yaml", doc)
    environ = {**env(), "PYTHONPATH": str(site)}

    def again() -> subprocess.CompletedProcess[str]:
        cmd = command(spec, tmp_path / "out")
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=environ)

    first = again()
    assert first.returncode == 0, first.stderr
    init = site / "my_agent" / "__init__.py"
    init.write_text(init.read_text().replace('"0.1.0"', '"0.2.0"'))
    refused = again()
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "version 0.1.0" in refused.stderr and "version 0.2.0" in refused.stderr


def test_an_agent_whose_memory_methods_raise_is_a_fault_that_names_it() -> None:
    """Not a worker fault ('internal error', 'a worker process died (out of memory?)'):
    the agent's own bug, named, like operations a store cannot take."""
    from mirrorcraft.agents.memory import episode_delta, load_store
    from mirrorcraft.agents.plugins import PluginAgent

    class Notebook:
        cross_episode_memory = True

        def start(self, ctx: Any) -> None:
            pass

        def act(self, obs: Any) -> None:
            return None

        def load_knowledge(self, records: dict[str, Any], *, writable: bool) -> None:
            raise OSError("my notebook is locked")

        def knowledge_delta(self) -> list[dict[str, Any]]:
            raise KeyError("page")

    agent = PluginAgent("my-notebook", Notebook())
    with pytest.raises(MemoryDeltaError) as loading:
        load_store(agent, None, writable=True)
    assert str(loading.value) == (
        "agent 'my-notebook': load_knowledge raised OSError: my notebook is locked"
    )
    with pytest.raises(MemoryDeltaError) as saving:
        episode_delta(agent)
    assert str(saving.value) == "agent 'my-notebook': knowledge_delta raised KeyError: 'page'"
