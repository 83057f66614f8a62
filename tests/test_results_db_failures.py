"""Results databases that are damaged, edited, read-only or on a full disk, as a user meets them.

A damaged file is refused by ``run`` (before it resumes) and by every reader; an
episode whose step rows were deleted is run again and left out of the tables; a
database on read-only media (a WAL database included) is analysed, exported and
reported; a full disk or a read-only file stops ``run`` with one line and never
leaves half an episode; a key in ``--base-url`` never reaches a file or the screen.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import pytest
import yaml

from mirrorcraft.runner.records import EpisodeRecord, StepRecord
from mirrorcraft.runner.store import ResultStore

SPEC = {
    "schema_version": 1,
    "name": "tiny",
    "worlds": ["plains-1"],
    "rules": ["vanilla", "M01"],
    "tasks": ["diamond"],
    "agents": ["random", "vanilla-planner"],
    "repetitions": 2,
    "budget": 20,
}
EPISODES = 8


def cli(
    *args: str, wrap: Callable[[list[str]], list[str]] | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "mirrorcraft.cli", *args]
    return subprocess.run(wrap(cmd) if wrap else cmd, capture_output=True, text=True, timeout=600)


def refused(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    err = done.stderr.strip().splitlines()
    assert err and "Traceback" not in done.stderr, done.stderr
    last = err[-1]
    assert last.startswith("mirrorcraft: error:"), done.stderr
    for fragment in fragments:
        assert fragment in last, last


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("run")
    (root / "spec.yaml").write_text(yaml.safe_dump(SPEC))
    done = cli("run", str(root / "spec.yaml"), "--out", str(root / "out"), "--workers", "1",
               "--no-report")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root


def copy_run(finished_run: Path, dest: Path) -> tuple[Path, Path]:
    """(spec, results folder) copied from the finished run (main database file only)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(finished_run / "spec.yaml", dest / "spec.yaml")
    (dest / "out").mkdir()
    shutil.copy(finished_run / "out" / "results.sqlite", dest / "out" / "results.sqlite")
    return dest / "spec.yaml", dest / "out"


def counts(db: Path) -> tuple[dict[str, int], dict[str, int]]:
    """(actions_used, stored steps) per evaluated episode."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        used = {
            eid: json.loads(text)["actions_used"]
            for eid, text in con.execute(
                "SELECT episode_id, record FROM episodes WHERE status='ok'"
            )
        }
        steps = dict(con.execute("SELECT episode_id, COUNT(*) FROM steps GROUP BY episode_id"))
    return used, steps


# -- damaged and edited databases ----------------------------------------------------------------


def test_a_damaged_database_is_refused_by_run_and_every_reader(
    finished_run: Path, tmp_path: Path
) -> None:
    spec, out = copy_run(finished_run, tmp_path)
    db = out / "results.sqlite"
    size = db.stat().st_size
    with db.open("r+b") as f:  # garbage in the middle of the file, as a bad disk or copy leaves
        f.seek(size // 4)
        f.write(b"\xde\xad\xbe\xef" * 1500)
    before = db.read_bytes()
    refused(cli("run", str(spec), "--out", str(out), "--workers", "1", "--no-report"),
            "damaged", "integrity check")  # fmt: skip
    assert db.read_bytes() == before  # nothing written into it
    refused(cli("analyze", str(db)), "damaged")
    refused(cli("report", str(db), "--out", str(tmp_path / "rep")), "damaged")
    refused(cli("export", str(db), "--out", str(tmp_path / "x.jsonl")), "damaged")


def test_an_unreadable_record_stops_run_saying_what_to_do(
    finished_run: Path, tmp_path: Path
) -> None:
    """One record cut short (an edit by hand, a bad copy): the resume stopped with the JSON
    parser's words and no way on; it now says that nothing ran and what to do."""
    spec, out = copy_run(finished_run, tmp_path)
    db = out / "results.sqlite"
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE episodes SET record = substr(record, 1, 50) "
            "WHERE episode_id = (SELECT MIN(episode_id) FROM episodes)"
        )
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the edit into the file itself
    before = db.read_bytes()
    refused(cli("run", str(spec), "--out", str(out), "--workers", "1", "--no-report"),
            "unreadable record", "nothing was run", "restore the database from a copy")  # fmt: skip
    assert db.read_bytes() == before


def test_deleted_step_rows_are_left_out_and_run_again(finished_run: Path, tmp_path: Path) -> None:
    spec, out = copy_run(finished_run, tmp_path)
    db = out / "results.sqlite"
    used, _ = counts(db)
    victim = max(used, key=lambda eid: used[eid])
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM steps WHERE episode_id = ? AND step > 2", (victim,))
    summary = json.loads(cli("analyze", str(db), "--json").stdout)
    assert summary["episodes"]["total"] == EPISODES - 1
    assert summary["episodes"]["excluded"] == {"trace_mismatch": 1}
    exported = cli("export", str(db), "--out", str(tmp_path / "x.jsonl"))
    assert "left out: 1 episode(s) whose step rows disagree with actions_used" in exported.stderr
    assert len((tmp_path / "x.jsonl").read_text().splitlines()) == EPISODES - 1
    done = cli("run", str(spec), "--out", str(out), "--workers", "1", "--no-report")
    assert done.returncode == 0, done.stderr
    assert "1 stored episode(s) have step rows that disagree" in done.stderr
    assert f"{EPISODES - 1} already done, running 1" in done.stderr
    used, steps = counts(db)
    assert len(used) == EPISODES and all(steps.get(e, 0) == n for e, n in used.items())
    summary = json.loads(cli("analyze", str(db), "--json").stdout)
    assert summary["episodes"]["total"] == EPISODES and summary["episodes"]["excluded"] == {}


# -- read-only media -----------------------------------------------------------------------------


@cache
def _unshare_works() -> bool:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    probe = Path(tempfile.mkdtemp())
    try:
        done = subprocess.run(
            ["unshare", "-m", "sh", "-c", _MOUNT_RO + ' && ! touch "$0/w" 2>/dev/null', str(probe)],
            capture_output=True,
            timeout=30,
        )
        return done.returncode == 0 and not (probe / "w").exists()
    finally:
        shutil.rmtree(probe, ignore_errors=True)


_MOUNT_RO = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0"'


@contextmanager
def read_only(target: Path) -> Iterator[Callable[[list[str]], list[str]]]:
    """Make ``target`` (a folder or file) read-only for the commands run through the wrapper.

    As a normal user, permissions do it. Root ignores permissions, so there the command
    runs in its own mount namespace with ``target`` bind-mounted read-only (a real
    read-only file system: what a results folder on a DVD or a read-only share is).
    """
    if os.geteuid() != 0:
        mode = target.stat().st_mode
        target.chmod(0o555 if target.is_dir() else 0o444)
        try:
            yield lambda cmd: cmd
        finally:
            target.chmod(mode)
        return
    if not _unshare_works():
        pytest.skip("running as root without mount namespaces: cannot make a read-only file")
    yield lambda cmd: ["unshare", "-m", "sh", "-c", _MOUNT_RO + ' && exec "$@"', str(target), *cmd]


def test_a_database_on_read_only_media_is_analyzed_exported_and_reported(
    finished_run: Path, tmp_path: Path
) -> None:
    _, out = copy_run(finished_run, tmp_path / "media")  # no -wal or -shm beside it
    db = out / "results.sqlite"
    with read_only(out) as wrap:
        analyzed = cli("analyze", str(db), "--json", wrap=wrap)
        exported = cli("export", str(db), "--out", str(tmp_path / "e.jsonl"), wrap=wrap)
        reported = cli("report", str(db), "--out", str(tmp_path / "rep"), wrap=wrap)
    assert analyzed.returncode == 0, analyzed.stderr
    assert json.loads(analyzed.stdout)["episodes"]["total"] == EPISODES
    assert exported.returncode == 0, exported.stderr
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == EPISODES
    assert reported.returncode == 0, reported.stderr
    assert (tmp_path / "rep" / "index.html").is_file()
    assert sorted(p.name for p in out.iterdir()) == ["results.sqlite"]  # nothing created there


def _wal_snapshot(finished_run: Path, tmp_path: Path) -> tuple[Path, Path, str]:
    """Two copies of a WAL database whose -wal holds one more episode than the main file:
    with its -shm (as a live run leaves it) and without."""
    _, work = copy_run(finished_run, tmp_path / "work")
    store = ResultStore(work / "results.sqlite")
    store.db.execute("PRAGMA wal_autocheckpoint=0")
    record = next(store.records())
    extra = EpisodeRecord.from_json({**record.to_json(), "episode_id": "extra-episode"})
    steps = [
        StepRecord(**{**s, "episode_id": extra.episode_id}) for s in store.steps(record.episode_id)
    ]
    store.write_episode(extra, steps)
    with_shm, without_shm = tmp_path / "with_shm", tmp_path / "without_shm"
    for folder, parts in ((with_shm, ("", "-wal", "-shm")), (without_shm, ("", "-wal"))):
        folder.mkdir()
        for part in parts:
            shutil.copy(work / f"results.sqlite{part}", folder / f"results.sqlite{part}")
    store.close()
    return with_shm, without_shm, extra.episode_id


def test_a_wal_database_on_read_only_media(finished_run: Path, tmp_path: Path) -> None:
    with_shm, without_shm, extra = _wal_snapshot(finished_run, tmp_path)
    assert (without_shm / "results.sqlite-wal").stat().st_size > 0
    with read_only(with_shm) as wrap:
        done = cli("export", str(with_shm / "results.sqlite"), "--out", str(tmp_path / "a.jsonl"),
                   wrap=wrap)  # fmt: skip
        summary = json.loads(cli("analyze", str(with_shm / "results.sqlite"), "--json",
                                 wrap=wrap).stdout)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "a.jsonl").read_text().splitlines()
    # the episode that is only in the -wal is read: the main file alone holds 8
    assert extra in {json.loads(line)["episode_id"] for line in lines}
    assert len(lines) == EPISODES + 1
    assert summary["episodes"]["total"] == EPISODES + 1
    # without the -shm SQLite cannot read the -wal on read-only media; reading the main
    # file alone would silently drop the episode, so the database is refused instead
    with read_only(without_shm) as wrap:
        refused(cli("analyze", str(without_shm / "results.sqlite"), wrap=wrap),
                "results.sqlite-wal holds changes not yet merged")  # fmt: skip


def test_run_into_a_read_only_results_file_is_one_line(finished_run: Path, tmp_path: Path) -> None:
    _spec, out = copy_run(finished_run, tmp_path)
    db = out / "results.sqlite"
    bigger = tmp_path / "bigger.yaml"
    bigger.write_text(yaml.safe_dump({**SPEC, "repetitions": 3}))
    before = db.read_bytes()
    with read_only(db) as wrap:
        done = cli("run", str(bigger), "--out", str(out), "--workers", "1", "--no-report", "--allow-changed-spec",
                   wrap=wrap)  # fmt: skip
    refused(done, "read-only")
    assert db.read_bytes() == before


# -- a full disk ----------------------------------------------------------------------------------


def test_a_full_disk_stops_the_run_without_half_an_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite's page limit makes the database "full" a few episodes in (SQLITE_FULL)."""
    from mirrorcraft.cli import main
    from mirrorcraft.runner import store as store_module

    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    out = tmp_path / "out"
    real_init = store_module.ResultStore.__init__

    def tiny_disk(self: ResultStore, path: Path) -> None:
        real_init(self, path)
        (pages,) = self.db.execute("PRAGMA page_count").fetchone()
        self.db.execute(f"PRAGMA max_page_count = {pages + 12}")

    monkeypatch.setattr(store_module.ResultStore, "__init__", tiny_disk)
    code = main(["run", str(spec), "--out", str(out), "--workers", "1", "--no-report"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("mirrorcraft: error:") and "disk is full" in err[-1]
    assert "nothing of the episode in hand was stored" in err[-1]
    used, steps = counts(out / "results.sqlite")
    assert 0 < len(used) < EPISODES
    assert set(steps) <= set(used)  # no steps without their episode
    assert all(steps.get(e, 0) == n for e, n in used.items())  # no half traces
    monkeypatch.setattr(store_module.ResultStore, "__init__", real_init)
    assert main(["run", str(spec), "--out", str(out), "--workers", "1", "--no-report"]) == 0
    used, steps = counts(out / "results.sqlite")
    assert len(used) == EPISODES and all(steps.get(e, 0) == n for e, n in used.items())


# -- credentials in URLs ----------------------------------------------------------------------------


def test_a_key_in_the_base_url_is_never_stored_or_printed(tmp_path: Path) -> None:
    from mirrorcraft.llm.fakeserver import FakeOpenAIServer, Reply

    wait = json.dumps({"thought": "wait", "skill": "wait", "args": {"ticks": 20}})
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "agents": ["react"], "repetitions": 1, "budget": 2}))
    out = tmp_path / "out"
    with FakeOpenAIServer(default=Reply(wait)) as server:
        url = server.base_url.replace("http://", "http://alice:SECRET-USERINFO@")
        url += "?api_key=SECRET-QUERY"
        done = cli("run", str(spec), "--out", str(out), "--model", "fake", "--base-url", url,
                   "--workers", "1")  # fmt: skip
        assert server.requests > 0
        # The key still reaches the endpoint, as a query parameter of every request.
        paths = [r.path for r in server.received]
        assert all(p.endswith("?api_key=SECRET-QUERY") for p in paths), paths
    assert done.returncode == 0, done.stderr
    assert "SECRET" not in done.stdout + done.stderr
    leaks = [p for p in out.rglob("*") if p.is_file() and b"SECRET" in p.read_bytes()]
    assert not leaks
    with sqlite3.connect(out / "results.sqlite") as con:
        (text,) = con.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
    base_url = json.loads(text)["models"][0]["base_url"]
    assert base_url.startswith("http://***@127.0.0.1:") and base_url.endswith("?api_key=***")


def test_a_key_in_an_unreachable_base_url_stays_out_of_faults_and_errors(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    model = {
        "name": "fake",
        "base_url": "http://alice:SECRET-USERINFO@127.0.0.1:9/v1?key=SECRET-QUERY",
        "client": {"max_retries": 0, "timeout_s": 2},
    }
    spec.write_text(
        yaml.safe_dump(
            {**SPEC, "agents": ["react"], "repetitions": 1, "rules": ["vanilla"], "models": [model]}
        )
    )
    out = tmp_path / "out"
    done = cli("run", str(spec), "--out", str(out), "--workers", "1", "--no-report")
    assert "SECRET" not in done.stdout + done.stderr
    # A refused connection fails each call at once: the run's fault policy handles it, and it
    # is not sent one episode at a time until give_up_after_s (30 min) as a timed-out one is.
    assert "pauses dispatch to this endpoint while it fails" in done.stderr
    assert "one episode at a time" not in done.stderr
    assert not [p for p in out.rglob("*") if p.is_file() and b"SECRET" in p.read_bytes()]


def test_a_store_opened_from_a_path_given_as_text(tmp_path: Path) -> None:
    """The Python API takes a results path as ``str`` too (it crashed on ``.parent``)."""
    where = tmp_path / "sub" / "results.sqlite"
    store = ResultStore(str(where))
    try:
        assert store.path == where and where.is_file()
    finally:
        store.close()
