"""The persistent knowledge store: versions, regimes, truncation, snapshots, freezing, bad files."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry
from mirrorcraft.agents.mineevolve.store import (
    FrozenStoreError,
    KnowledgeStore,
    KnowledgeStoreError,
)


def entry(eid: str, kind: str = "remedy") -> dict:
    doc = KnowledgeEntry(
        id=eid,
        kind=kind,  # type: ignore[arg-type]
        trigger=("target:stick",),
        failure_type="MISSING_STATION",
        risk_pattern="crafting sticks fails here",
        repair=({"action": {"skill": "wait", "args": {}}, "checks": [{"type": "action_ok"}]},),
    )
    return {"op": "add", "entry": doc.model_dump(mode="json")}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leave_an_unfinished_transaction(path: Path) -> None:
    """Put ``path`` in the state a writer killed mid-commit leaves: changed pages in the file
    and the journal that undoes them beside it."""
    crash = path.with_name("crash")
    crash.mkdir()
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA cache_size=1")  # the changes reach the file before any commit
    con.execute("BEGIN IMMEDIATE")
    con.execute("DELETE FROM ops")
    con.executemany(
        "INSERT INTO ops VALUES (?, ?, ?)", [(10_000 + i, 0, "x" * 3000) for i in range(500)]
    )
    shutil.copy(path, crash / "db")
    shutil.copy(f"{path}-journal", crash / "journal")
    con.close()
    shutil.copy(crash / "db", path)
    shutil.copy(crash / "journal", f"{path}-journal")


def test_versions_replay_to_the_same_state(tmp_path: Path) -> None:
    with KnowledgeStore.open(tmp_path / "k.sqlite") as s:
        assert s.version == 0 and s.entries() == []
        assert s.commit("ep1", "vanilla", [entry("r1")]) == 1
        assert (
            s.commit("ep2", "M03", [entry("r2"), {"op": "use", "id": "r1", "success": True}]) == 2
        )
        assert s.commit("ep2", "M03", [entry("r9")]) == 2  # idempotent per episode
        assert [e.id for e in s.entries(1)] == ["r1"]
        state = s.state()
        assert set(state) == {"r1", "r2"} and state["r1"].uses == 1 and state["r1"].successes == 1
        assert s.regimes() == {"r1": "vanilla", "r2": "M03"}
        assert s.stats()["remedies"] == 2 and s.episode_ids() == ["ep1", "ep2"]
        assert s.truncate(1) == 1 and s.version == 1 and [e.id for e in s.entries()] == ["r1"]


def test_snapshots_are_frozen_and_read_only_opens_never_write(tmp_path: Path) -> None:
    with KnowledgeStore.open(tmp_path / "k.sqlite") as s:
        for i in range(3):
            s.commit(f"ep{i}", "vanilla", [entry(f"r{i}")])
        snap = s.snapshot(tmp_path / "k@2.sqlite", 2)
    before = digest(snap)
    with KnowledgeStore.open(snap) as frozen:
        assert frozen.frozen and frozen.version == 2
        with pytest.raises(FrozenStoreError):
            frozen.commit("ep9", "vanilla", [entry("r9")])
        with pytest.raises(FrozenStoreError):
            frozen.truncate(0)
    with KnowledgeStore.open(snap, read_only=True) as ro:
        assert [e.id for e in ro.entries()] == ["r0", "r1"]
        with pytest.raises(FrozenStoreError):
            ro.commit("ep9", "vanilla", [])
    assert digest(snap) == before


def test_a_store_can_start_from_another(tmp_path: Path) -> None:
    with KnowledgeStore.open(tmp_path / "a.sqlite") as a:
        a.commit("ep1", "vanilla", [entry("r1")])
        with KnowledgeStore.open(tmp_path / "b.sqlite") as b:
            b.start_from(a)
            assert b.base_version == 1 and b.version == 1
            b.commit("ep2", "M01", [entry("r2")])
            assert b.regimes() == {"r1": "vanilla", "r2": "M01"}
            with pytest.raises(KnowledgeStoreError, match="empty"):
                b.start_from(a)


def test_bad_files_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeStoreError, match="no knowledge store"):
        KnowledgeStore.open(tmp_path / "missing.sqlite", read_only=True)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(KnowledgeStoreError, match="not a usable knowledge store"):
        KnowledgeStore.open(junk)
    import sqlite3

    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)"
    ).connection.commit()
    with pytest.raises(KnowledgeStoreError, match="not a knowledge store"):
        KnowledgeStore.open(other)
    with KnowledgeStore.open(tmp_path / "k.sqlite") as s:
        s.commit("ep1", "vanilla", [{"op": "explode"}])
        with pytest.raises(KnowledgeStoreError, match="unusable operation"):
            s.entries()


def test_a_store_a_killed_writer_left_mid_commit_says_so_when_read(tmp_path: Path) -> None:
    """Read-only, SQLite cannot roll the unfinished transaction back; the error used to read
    as if the file were damaged ("attempt to write a readonly database")."""
    path = tmp_path / "k.sqlite"
    with KnowledgeStore.open(path) as s:
        s.commit("ep1", "vanilla", [entry("r1")])
    leave_an_unfinished_transaction(path)
    with pytest.raises(KnowledgeStoreError, match="left unfinished by a writer that was stopped"):
        KnowledgeStore.open(path, read_only=True)
    with KnowledgeStore.open(path) as s:  # opening it for writing rolls the transaction back
        assert s.version == 1 and [e.id for e in s.entries()] == ["r1"]


def _edit(path: Path, sql: str, *params: object) -> None:
    import sqlite3

    con = sqlite3.connect(path)
    con.execute(sql, params)
    con.commit()
    con.close()


def test_damaged_stores_are_named_in_one_line_not_a_traceback(tmp_path: Path) -> None:
    """A store missing a table, or holding an operation that is JSON but not an object,
    used to raise sqlite3.OperationalError / AttributeError out of the run's store check."""
    from mirrorcraft.agents.memory import start_problem

    def fresh(name: str) -> Path:
        path = tmp_path / name
        with KnowledgeStore.open(path) as s:
            s.commit("ep1", "vanilla", [entry("r1")])
            s.commit("ep2", "vanilla", [entry("r2")])
        return path

    no_ops = fresh("no_ops.sqlite")
    _edit(no_ops, "DROP TABLE ops")
    for read_only in (True, False):
        with pytest.raises(KnowledgeStoreError, match="no table ops"):
            KnowledgeStore.open(no_ops, read_only=read_only)
    assert "no table ops" in str(start_problem("mineevolve", str(no_ops)))
    for text in ("[1, 2]", "null", '"add"'):
        bad = fresh("bad.sqlite")
        _edit(bad, "UPDATE ops SET op = ? WHERE version = 2", text)
        with KnowledgeStore.open(bad, read_only=True) as s:
            with pytest.raises(KnowledgeStoreError, match="version 2 is not a JSON object"):
                s.entries()
            with pytest.raises(KnowledgeStoreError, match="version 2 is not a JSON object"):
                s.operations()
        assert "not a JSON object" in str(start_problem("mineevolve", str(bad)))
        assert "not a JSON object" in str(start_problem("jarvis1", str(bad)))
        bad.unlink()
    partial = fresh("partial.sqlite")
    _edit(
        partial, "UPDATE ops SET op = ? WHERE version = 2", json.dumps({"op": "add", "entry": {}})
    )
    with (
        KnowledgeStore.open(partial, read_only=True) as s,
        pytest.raises(KnowledgeStoreError) as err,
    ):
        s.entries()
    assert "\n" not in str(err.value) and "version 2 (id: Field required)" in str(err.value)


def test_a_commit_that_meets_another_writer_says_so_and_writes_nothing(tmp_path: Path) -> None:
    """Two writers of one store: the one that cannot get the file used to fail with
    'cannot rollback - no transaction is active', hiding that the file was locked."""
    import sqlite3

    path = tmp_path / "k.sqlite"
    with KnowledgeStore.open(path) as s:
        s.commit("ep1", "vanilla", [entry("r1")])
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    impatient = KnowledgeStore(path, sqlite3.connect(path, isolation_level=None, timeout=0), False)
    with pytest.raises(KnowledgeStoreError, match=r"ep2 could not be committed .*locked"):
        impatient.commit("ep2", "vanilla", [entry("r2")])
    other.execute("ROLLBACK")
    other.close()
    assert not impatient.db.in_transaction
    assert impatient.commit("ep2", "vanilla", [entry("r2")]) == 2
    with KnowledgeStore.open(path) as second:  # two handles take turns: no version twice
        assert second.commit("ep3", "vanilla", [entry("r3")]) == 3
        assert impatient.commit("ep4", "vanilla", []) == 4
        assert impatient.commit("ep3", "vanilla", []) == 3  # idempotent per episode
        assert second.episode_ids() == ["ep1", "ep2", "ep3", "ep4"]
    impatient.close()


def test_a_store_damaged_inside_a_row_is_named_in_one_short_line(tmp_path: Path) -> None:
    """SQLite quotes the damaged row in its message ("Could not decode to UTF-8 column 'op'
    with text '...'"); the whole operation, newlines included, used to reach the user."""
    path = tmp_path / "k.sqlite"
    with KnowledgeStore.open(path) as s:
        s.commit("ep1", "vanilla", [entry("r1")])
    big = json.dumps({"op": "add", "entry": {"id": "x", "text": "\n".join(["y" * 80] * 50)}})
    _edit(path, "UPDATE ops SET op = CAST(? AS BLOB) || x'ff' WHERE version = 1", big)
    with KnowledgeStore.open(path, read_only=True) as s, pytest.raises(KnowledgeStoreError) as err:
        s.entries()
    text = str(err.value)
    assert "not a usable knowledge store" in text and "\n" not in text and len(text) < 300
