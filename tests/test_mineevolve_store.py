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


def _stream(path: Path, episodes: int, start: int = 0) -> None:
    """Episodes that add, reinforce, use and retire entries, as a curated stream does."""
    with KnowledgeStore.open(path) as s:
        for e in range(start, start + episodes):
            ops: list[dict] = [entry(f"r{e}", "skill" if e % 2 else "remedy")]
            ops += [{"op": "reinforce", "id": f"r{e // 2}", "evidence": [f"ep{e}"]}]
            ops += [{"op": "use", "id": f"r{e // 3}", "success": e % 3 == 0}]
            if e % 5 == 4:
                ops.append({"op": "retire", "id": f"r{e - 3}"})
            s.commit(f"ep{e}", "vanilla", ops)


def _cache(path: Path) -> tuple[int, int] | None:
    """The cached state's version and number of operations."""
    con = sqlite3.connect(path)
    try:
        row = con.execute("SELECT version, operations FROM state_cache").fetchone()
    except sqlite3.OperationalError:
        row = None
    con.close()
    return row


def _latest(path: Path, version: int | None = None) -> tuple[int, int]:
    """The version ``version`` (default: the latest) and its number of operations."""
    con = sqlite3.connect(path)
    v = version or con.execute("SELECT MAX(version) FROM episodes").fetchone()[0]
    n = con.execute("SELECT COUNT(*) FROM ops WHERE version <= ?", (v,)).fetchone()[0]
    con.close()
    return v, n


def _applied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The versions of the operations the store replays from now on."""
    seen: list[int] = []
    real = KnowledgeStore._apply

    def counting(self: KnowledgeStore, entries: dict, v: int, op: dict) -> None:
        seen.append(v)
        real(self, entries, v, op)

    monkeypatch.setattr(KnowledgeStore, "_apply", counting)
    return seen


def test_a_load_replays_only_what_follows_the_cached_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load used to replay the whole stream (0.64 s at 13,200 operations, once per episode:
    a stream's load time grew with the square of its length). The writer keeps the state of
    the latest version beside the stream; a load checks it and replays only what follows."""
    path = tmp_path / "k.sqlite"
    _stream(path, 12)
    assert _cache(path) == _latest(path) == (12, 38)
    seen = _applied(monkeypatch)
    with KnowledgeStore.open(path, read_only=True) as ro:
        assert ro.state() == ro.state(use_cache=False)
        assert len(seen) == 38  # the full replay's operations; none for the cached load
        seen.clear()
        ro.entries()
        assert seen == []
    # Operations the cache does not hold yet (a writer of an older version, say): only they
    # are replayed, and the result is the full replay's.
    con = sqlite3.connect(path)
    con.execute("INSERT INTO episodes VALUES (13, 'ep12', 'vanilla', 2)")
    con.executemany(
        "INSERT INTO ops VALUES (13, ?, ?)",
        [(0, json.dumps(entry("r12"))), (1, json.dumps({"op": "use", "id": "r1"}))],
    )
    con.commit()
    con.close()
    with KnowledgeStore.open(path, read_only=True) as ro:
        seen.clear()
        state = ro.state()
        assert seen == [13, 13] and state == ro.state(use_cache=False)
        assert ro.state(5) == ro.state(5, use_cache=False) and "r6" not in ro.state(5)


def test_the_cached_state_is_never_trusted_over_the_stream(tmp_path: Path) -> None:
    """Whatever happened to the stream or to the cache, a load equals a full replay."""
    path = tmp_path / "k.sqlite"
    _stream(path, 10)

    def same() -> None:
        with KnowledgeStore.open(path, read_only=True) as ro:
            assert ro.state() == ro.state(use_cache=False)
            assert ro.entries() == sorted(ro.state(use_cache=False).values(), key=lambda e: e.id)

    same()
    with KnowledgeStore.open(path) as s:  # truncated, then other episodes of the same length
        s.truncate(6)
        assert _cache(path) == _latest(path, 6)
        same()
    _stream(path, 4, start=100)
    same()
    # An operation inside the cached prefix rewritten (same number of operations): stale.
    _edit(
        path, "UPDATE ops SET op = ? WHERE version = 3 AND seq = 2", '{"op": "retire", "id": "r0"}'
    )
    same()
    with KnowledgeStore.open(path, read_only=True) as ro:
        assert ro.state()["r0"].retired
    # A damaged cache, a cache of another replay rule, no cache table (a store written before
    # the cache): all ignored; a writer rebuilds the cache.
    for sql in (
        "UPDATE state_cache SET state = x'00ff'",
        "UPDATE state_cache SET state = CAST('{\"x\": 1}' AS BLOB)",
        "UPDATE state_cache SET ops_hash = 'x'",
        "UPDATE state_cache SET replay = 'another'",
        "UPDATE state_cache SET operations = 2",
        "DROP TABLE state_cache",
    ):
        _edit(path, sql)
        same()
        with KnowledgeStore.open(path) as s:
            s.refresh_cache()
        assert _cache(path) == _latest(path)
        same()
    # Copies: a store started from another, and a snapshot (frozen, read-only afterwards).
    with KnowledgeStore.open(path, read_only=True) as ro:
        with KnowledgeStore.open(tmp_path / "b.sqlite") as b:
            b.start_from(ro)
            assert b.state() == b.state(use_cache=False) == ro.state()
        snap = ro.snapshot(tmp_path / "snap.sqlite", 8)
        assert _cache(snap) == _latest(snap)
        with KnowledgeStore.open(snap, read_only=True) as frozen:
            assert frozen.state() == frozen.state(use_cache=False) == ro.state(8)
    assert _cache(tmp_path / "b.sqlite") == _latest(path)


def test_every_write_that_meets_another_writer_says_so_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """start_from, truncate and freeze raised sqlite3.OperationalError ('database is locked',
    a traceback out of a resumed run) when another process held the file past the wait; a
    snapshot of a store being committed said the store was 'not a usable knowledge store'."""
    from mirrorcraft.agents.mineevolve import store as store_module

    monkeypatch.setattr(store_module, "WAIT_S", 0.05)
    path, source = tmp_path / "k.sqlite", tmp_path / "source.sqlite"
    _stream(path, 3)
    _stream(source, 2)
    empty = tmp_path / "empty.sqlite"
    KnowledgeStore.open(empty).close()
    for locked, mode in ((path, "IMMEDIATE"), (empty, "IMMEDIATE"), (path, "EXCLUSIVE")):
        with KnowledgeStore.open(locked) as s, KnowledgeStore.open(source) as src:
            other = sqlite3.connect(locked, isolation_level=None)
            other.execute(f"BEGIN {mode}")
            if mode == "EXCLUSIVE":  # opening waits too, and says so
                with pytest.raises(KnowledgeStoreError, match=r"could not be opened .*locked"):
                    KnowledgeStore.open(locked)
            writes = {
                "truncated": lambda s=s: s.truncate(1),
                "frozen": lambda s=s: s.freeze(),
                "start from": lambda s=s, src=src: s.start_from(src),
                "committed": lambda s=s: s.commit("ep9", "vanilla", [entry("r9")]),
            }
            if mode == "EXCLUSIVE":  # a reader waits only for a commit in progress
                writes["snapshot"] = lambda s=s: s.snapshot(tmp_path / "snap.sqlite")
            for what, write in writes.items():
                if locked == path and what == "start from":
                    continue  # not empty: refused before any write, as before
                with pytest.raises(KnowledgeStoreError) as err:
                    write()
                text = str(err.value)
                assert "locked" in text and "another process" in text and "\n" not in text
                assert what.split()[0] in text or "could not be read" in text
                assert not s.db.in_transaction
            other.execute("ROLLBACK")
            other.close()
    assert not (tmp_path / "snap.sqlite").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "empty.sqlite",
        "k.sqlite",
        "source.sqlite",
    ]
    with KnowledgeStore.open(path) as s, KnowledgeStore.open(empty) as e:  # all as it was
        assert s.version == 3 and not s.frozen and s.episode_ids() == ["ep0", "ep1", "ep2"]
        assert e.version == 0 and e.base_version == 0
        with KnowledgeStore.open(source) as src:
            e.start_from(src)
        assert e.version == 2
        s.truncate(1)
        s.freeze()
        assert s.version == 1 and s.frozen


def test_a_snapshot_never_touches_another_writers_temporary_file(tmp_path: Path) -> None:
    """Two streams snapshotting one target used one temporary name (<target>.tmp): the second
    deleted the first's half-written file and either could move the other's into place."""
    path = tmp_path / "k.sqlite"
    _stream(path, 3)
    theirs = tmp_path / "snap.sqlite.tmp"
    theirs.write_bytes(b"another writer's snapshot, half written")
    with KnowledgeStore.open(path, read_only=True) as s:
        s.snapshot(tmp_path / "snap.sqlite", 2)
        s.snapshot(tmp_path / "snap.sqlite", 3)  # a second snapshot replaces it whole
    assert theirs.read_bytes() == b"another writer's snapshot, half written"
    mode = (tmp_path / "snap.sqlite").stat().st_mode & 0o777
    assert mode == path.stat().st_mode & 0o777  # not a temporary file's 0600
    with KnowledgeStore.open(tmp_path / "snap.sqlite", read_only=True) as snap:
        assert snap.version == 3 and snap.frozen
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "k.sqlite",
        "snap.sqlite",
        "snap.sqlite.tmp",
    ]


def test_a_store_that_cannot_be_created_says_why_not_that_it_is_damaged(tmp_path: Path) -> None:
    """A store under a path whose folder is a file, or at a folder's path, was refused as
    'not a usable knowledge store', as if a file were there and damaged."""
    (tmp_path / "file").write_text("x")
    with pytest.raises(KnowledgeStoreError, match="could not be created") as err:
        KnowledgeStore.open(tmp_path / "file" / "k.sqlite")
    assert "not a usable" not in str(err.value)
    with pytest.raises(KnowledgeStoreError, match="could not be opened") as err:
        KnowledgeStore.open(tmp_path)
    assert "not a usable" not in str(err.value)


def test_a_store_of_another_schema_says_another_version_wrote_it(tmp_path: Path) -> None:
    """It used to read 'not a knowledge store of schema 1 (format ..., schema '2')', as if
    the file were something else; a store written before the cached state is read as ever."""
    path = tmp_path / "k.sqlite"
    _stream(path, 2)
    _edit(path, "UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    for read_only in (True, False):
        with pytest.raises(KnowledgeStoreError) as err:
            KnowledgeStore.open(path, read_only=read_only)
        assert "schema '2', written by another version of mirrorcraft" in str(err.value)
    _edit(path, "UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    _edit(path, "DROP TABLE state_cache")  # as an older version wrote it
    with KnowledgeStore.open(path, read_only=True) as ro:
        assert [e.id for e in ro.entries()] == ["r0", "r1"]
    with KnowledgeStore.open(path) as s:
        s.commit("ep2", "vanilla", [entry("r2")])
    assert _cache(path) == _latest(path)


def test_a_state_json_cannot_hold_is_replayed_not_cached(tmp_path: Path) -> None:
    """A NaN in a step survives the stream (Python's JSON) but not the cached state's JSON
    (it would come back as null): such a state is left uncached and the stream replayed."""
    path = tmp_path / "k.sqlite"
    _stream(path, 2)
    odd = entry("odd", "skill")
    odd["entry"]["steps"] = [{"action": {"skill": "wait", "args": {"ticks": float("nan")}}}]
    with KnowledgeStore.open(path) as s:
        s.commit("ep2", "vanilla", [odd])
        assert _cache(path) == _latest(path, 2)
    with KnowledgeStore.open(path, read_only=True) as ro:
        loaded = ro.state()["odd"].steps[0]["action"]["args"]["ticks"]
        assert loaded != loaded  # NaN, as a full replay gives
        assert repr(ro.state()) == repr(ro.state(use_cache=False))


def test_a_snapshot_removes_what_a_killed_snapshot_of_it_left(tmp_path: Path) -> None:
    """Each snapshot writes a temporary file of its own; those of a process that was killed
    mid-write are removed by the next snapshot of the same target, those of a live one kept."""
    import os
    import subprocess
    import sys

    from mirrorcraft.agents.mineevolve.snapshot_files import tmp_prefix

    path = tmp_path / "k.sqlite"
    _stream(path, 2)
    target = tmp_path / "snap.sqlite"
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = tmp_path / f"{tmp_prefix(target)}{gone.stdout.strip()}.abc.tmp"
    alive = tmp_path / f"{tmp_prefix(target)}{os.getppid()}.abc.tmp"
    for left in (dead, alive, Path(f"{dead}-journal")):
        left.write_bytes(b"half a snapshot")
    with KnowledgeStore.open(path, read_only=True) as s:
        s.snapshot(target)
    assert not dead.exists() and not Path(f"{dead}-journal").exists() and alive.exists()


def test_a_stream_longer_than_sqlites_longest_text_still_loads_from_its_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stream's hash is built by SQLite as one text, which SQLite refuses past its
    longest string (1 GB by default, lowered here): it is then built row by row, the same."""
    path = tmp_path / "k.sqlite"
    _stream(path, 2)
    with KnowledgeStore.open(path) as s:
        s.commit("many", "vanilla", [{"op": "use", "id": "r0", "success": True}] * 400)
    seen = _applied(monkeypatch)
    with KnowledgeStore.open(path, read_only=True) as ro:
        (blob,) = ro.db.execute("SELECT length(state) FROM state_cache").fetchone()
        ro.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, blob + 100)  # the ops are ~16 KB
        with pytest.raises(sqlite3.DataError):
            ro.db.execute("SELECT group_concat(op, '') FROM ops").fetchone()
        assert ro.state()["r0"].uses == 402 and seen == []
        assert ro.state() == ro.state(use_cache=False)
