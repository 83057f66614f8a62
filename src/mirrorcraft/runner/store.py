"""The results database: SQLite in WAL mode, one row per episode, steps alongside.

An episode and its steps are written in one transaction, so a killed run, a full
disk or a read-only file never leaves half an episode. Rows are keyed by episode
id; rerunning an episode replaces its row (used for infrastructure faults, which
are rerun). An existing database is integrity-checked (``PRAGMA quick_check``)
before a run resumes into it, and an episode whose stored steps disagree with
its ``actions_used`` does not count as finished (it is run again). Every fault
is kept in ``faults`` (kind, message with credentials redacted, the run that
met it, when); an evaluated episode replaced under ``--allow-changed-spec`` is
kept in ``superseded`` with its steps.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mirrorcraft.redact import redact_text
from mirrorcraft.runner.records import EncodedStep, EpisodeRecord, StepRecord, encode_step
from mirrorcraft.safeload import parse_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (episode_id TEXT PRIMARY KEY, status TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS steps (
    episode_id TEXT NOT NULL, step INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (episode_id, step)
);
CREATE TABLE IF NOT EXISTS faults (
    episode_id TEXT NOT NULL, attempt INTEGER NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL,
    run_id TEXT NOT NULL DEFAULT '', at TEXT NOT NULL DEFAULT '',
    component TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (episode_id, attempt)
);
CREATE TABLE IF NOT EXISTS superseded (
    episode_id TEXT NOT NULL, replaced_at TEXT NOT NULL, record TEXT NOT NULL, steps TEXT NOT NULL
);
"""
FAULT_COLUMNS = {
    "run_id": "TEXT NOT NULL DEFAULT ''",
    "at": "TEXT NOT NULL DEFAULT ''",
    "component": "TEXT NOT NULL DEFAULT ''",
    "failed_attempts": "TEXT NOT NULL DEFAULT ''",
}

OK = "ok"
INFRA_FAULT = "infra_fault"
GIVEN_UP = "given_up"
"""Status of an episode whose worker faults reached ``execution.max_worker_faults``, or
whose episode time limits reached ``execution.max_timeouts``, over all runs."""

EPISODE_TIMEOUT = "the episode ran past its "
"""How the message of a fault for an episode past its own wall-clock limit begins (the
worker pool's, the event loop's and Ray's; a model call that timed out is the
endpoint's and says otherwise). Such faults are capped over all runs like worker faults."""

CAPPED = {
    "worker": ("execution.max_worker_faults", "worker fault(s)"),
    "timeout": ("execution.max_timeouts", "time-out(s) at the episode's wall-clock limit"),
}
"""The fault counts kept over all runs: setting, and what is counted, by kind."""


def is_episode_timeout(kind: str, message: str) -> bool:
    """Whether a fault is an episode past its own wall-clock limit (counted towards
    ``execution.max_timeouts``), not a model call or a game server too slow to answer."""
    return kind == "timeout" and message.startswith(EPISODE_TIMEOUT)


_LIMIT = re.compile(r"limit of ([0-9.eE+-]+) s")


def at_limit(message: str, limit: float | None) -> bool:
    """Whether an episode time-out's ``message`` was met at ``limit`` or a longer one (its
    message says the limit; one that does not, or no ``limit``, counts)."""
    found = _LIMIT.search(message)
    if limit is None or found is None:
        return True
    try:
        then = float(found.group(1))
    except ValueError:
        return True
    return then >= limit * (1 - 1e-5)  # the message's limit is rounded (``:g``)


def given_up_reason(faults: int, cap: int, kind: str = "worker") -> str:
    """Why an episode is given up (stored in its row, shown at the end of the run)."""
    setting, what = CAPPED[kind]
    why = (
        "the process running it died, or the harness failed, every time"
        if kind == "worker"
        else "it ran past its time limit every time (the agent stuck, or a backend or "
        "endpoint too slow for the limit)"
    )
    longer = "" if kind == "worker" else ", or execution.episode_timeout_s,"
    return (
        f"given up after {faults} {what} over all runs ({setting} is {cap}): {why}; it is "
        f"not run again unless that setting{longer} is raised"
    )


class StoreError(Exception):
    """The results database cannot be used or written; the message is one line for people."""


def describe_sqlite_error(path: Path, exc: sqlite3.Error) -> str:
    """One line saying what went wrong with the database at ``path`` and what to do."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc)
    if name == "SQLITE_FULL" or "disk is full" in text:
        return (
            f"{path}: cannot write results: the disk is full ({text}); nothing of the "
            "episode in hand was stored; free space and rerun the same command"
        )
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return (
            f"{path}: cannot write results: the file or its folder is read-only ({text}); "
            "use --out on writable storage (analyze, report and export read it as it is)"
        )
    if (
        name in ("SQLITE_CORRUPT", "SQLITE_NOTADB")
        or "malformed" in text
        or "not a database" in text
    ):
        return (
            f"{path}: not a usable results database ({text}); restore it from a copy or "
            "use another --out"
        )
    return f"{path}: not a usable results database ({text})"


def integrity_problem(db: sqlite3.Connection) -> str | None:
    """None when ``PRAGMA quick_check`` passes, else its first complaint."""
    rows = db.execute("PRAGMA quick_check").fetchall()
    if rows == [("ok",)]:
        return None
    lines = [
        text.strip()
        for (row,) in rows
        for text in str(row).splitlines()
        if text.strip() and not text.startswith("***")
    ]
    if not lines:
        return "the integrity check failed"
    more = f" and {len(lines) - 1} more problem(s)" if len(lines) > 1 else ""
    return lines[0] + more


def step_counts(db: sqlite3.Connection) -> dict[str, int]:
    """Stored step rows per episode."""
    return {
        str(eid): int(n)
        for eid, n in db.execute("SELECT episode_id, COUNT(*) FROM steps GROUP BY episode_id")
    }


def trace_mismatches(db: sqlite3.Connection) -> dict[str, tuple[int, object]]:
    """Finished episodes whose stored step rows disagree with their ``actions_used``.

    Maps episode id -> (stored steps, actions_used; None when the record is unreadable).
    """
    counts = step_counts(db)
    out: dict[str, tuple[int, object]] = {}
    for eid, text in db.execute("SELECT episode_id, record FROM episodes WHERE status = ?", (OK,)):
        try:
            doc = json.loads(text)
            used = doc.get("actions_used") if isinstance(doc, dict) else None
        except (ValueError, RecursionError):
            used = None
        stored = counts.get(eid, 0)
        if type(used) is not int or used != stored:
            out[str(eid)] = (stored, used)
    return out


class ResultStore:
    def __init__(self, path: Path | str):
        path = Path(path)
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.is_file() and path.stat().st_size > 0
        try:
            self.db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(describe_sqlite_error(path, exc)) from None
        try:
            if existed:
                problem = integrity_problem(self.db)
                if problem:
                    raise StoreError(
                        f"{path}: the results database is damaged (integrity check: "
                        f"{problem}); restore it from a copy, or use another --out"
                    )
            self.db.execute("PRAGMA busy_timeout=30000")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
            self._upgrade()
        except sqlite3.Error as exc:
            self.db.close()
            raise StoreError(describe_sqlite_error(path, exc)) from None
        except StoreError:
            self.db.close()
            raise

    def _upgrade(self) -> None:
        """Add the fault columns a database written by an older version lacks."""
        have = {row[1] for row in self.db.execute("PRAGMA table_info(faults)")}
        for name, decl in FAULT_COLUMNS.items():
            if name not in have:
                self.db.execute(f"ALTER TABLE faults ADD COLUMN {name} {decl}")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing --------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self._transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (key, json.dumps(value, sort_keys=True)),
            )

    def write_episode(
        self, record: EpisodeRecord, steps: Sequence[StepRecord | EncodedStep]
    ) -> None:
        """Write an evaluated episode and its trace atomically (replacing an earlier attempt).
        The steps may come encoded already (``records.encode_step``, done by a worker).

        An evaluated episode already stored under this id (a rerun allowed by
        ``--allow-changed-spec``) is moved to ``superseded`` with its steps first."""
        with self._transaction():
            old = self.db.execute(
                "SELECT record FROM episodes WHERE episode_id = ? AND status = ?",
                (record.episode_id, OK),
            ).fetchone()
            if old is not None:
                old_steps = [
                    json.loads(text)
                    for (text,) in self.db.execute(
                        "SELECT record FROM steps WHERE episode_id = ? ORDER BY step",
                        (record.episode_id,),
                    )
                ]
                self.db.execute(
                    "INSERT INTO superseded VALUES (?, ?, ?, ?)",
                    (record.episode_id, _now(), old[0], json.dumps(old_steps, sort_keys=True)),
                )
            self.db.execute("DELETE FROM steps WHERE episode_id = ?", (record.episode_id,))
            self.db.execute(
                "INSERT OR REPLACE INTO episodes VALUES (?, ?, ?)",
                (record.episode_id, OK, record.json_text()),
            )
            self.db.executemany("INSERT INTO steps VALUES (?, ?, ?)", map(encode_step, steps))

    def write_fault(
        self,
        episode_id: str,
        kind: str,
        message: str,
        condition: dict[str, Any],
        run_id: str = "",
        component: str = "",
        failed_attempts: dict[str, int] | None = None,
    ) -> None:
        """Record an infrastructure fault; the episode stays pending and is rerun.

        ``component`` names what failed (a model endpoint, the game server, a worker);
        ``failed_attempts`` the model-call attempts of the episode attempt that failed, by
        kind (stored as JSON; '' when not known).
        The episode's row (unless it is already evaluated) holds the condition, the
        fault kind, the last message and how many faults it has had in all."""
        message = redact_text(message)[:2000]
        with self._transaction():
            (attempt,) = self.db.execute(
                "SELECT COUNT(*) FROM faults WHERE episode_id = ?", (episode_id,)
            ).fetchone()
            self.db.execute(
                "INSERT INTO faults (episode_id, attempt, kind, message, run_id, at, component,"
                " failed_attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    episode_id,
                    attempt + 1,
                    kind,
                    message,
                    run_id,
                    _now(),
                    component,
                    "" if failed_attempts is None else json.dumps(failed_attempts, sort_keys=True),
                ),
            )
            exists = self.db.execute(
                "SELECT status FROM episodes WHERE episode_id = ?", (episode_id,)
            ).fetchone()
            if exists is None or exists[0] != OK:
                doc = {
                    "condition": condition,
                    "fault": kind,
                    "message": message,
                    "faults": attempt + 1,
                    "run_id": run_id,
                }
                self.db.execute(
                    "INSERT OR REPLACE INTO episodes VALUES (?, ?, ?)",
                    (episode_id, INFRA_FAULT, json.dumps(doc, sort_keys=True)),
                )

    def restamp(self, episode_ids: Sequence[str], spec_hash: str, meta: dict[str, Any]) -> None:
        """Stamp ``spec_hash`` on these evaluated episodes (of an earlier version of the spec
        that measure what the spec now asks of them: ``runner.versions``) and write ``meta``,
        in one transaction: the analysis then reads them as the spec's episodes."""
        with self._transaction():
            for eid in episode_ids:
                row = self.db.execute(
                    "SELECT record FROM episodes WHERE episode_id = ? AND status = ?", (eid, OK)
                ).fetchone()
                if row is None:
                    continue
                doc = json.loads(row[0])
                doc["spec_hash"] = spec_hash
                self.db.execute(
                    "UPDATE episodes SET record = ? WHERE episode_id = ?",
                    (json.dumps(doc, sort_keys=True), eid),
                )
            self.db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [(k, json.dumps(v, sort_keys=True)) for k, v in meta.items()],
            )

    def capped_faults(
        self, kind: str = "worker", limits: Mapping[str, float | None] | None = None
    ) -> dict[str, int]:
        """Episode id -> its stored faults over all runs that count towards a cap (``CAPPED``:
        ``worker`` faults, or time-outs at the episode's own limit), for episodes not stored
        as evaluated. With ``limits`` (episode id -> its wall-clock limit now), a time-out
        at a shorter limit than the episode has now does not count: raising
        ``execution.episode_timeout_s``, as the run advises, gives it a fresh count."""
        if kind != "timeout":
            rows = self.db.execute(
                "SELECT f.episode_id, COUNT(*) FROM faults f LEFT JOIN episodes e"
                " ON e.episode_id = f.episode_id WHERE f.kind = ?"
                " AND (e.status IS NULL OR e.status != ?) GROUP BY f.episode_id",
                (kind, OK),
            )
            return {str(e): int(n) for e, n in rows}
        out: dict[str, int] = {}
        for eid, message in self.db.execute(
            "SELECT f.episode_id, f.message FROM faults f LEFT JOIN episodes e"
            " ON e.episode_id = f.episode_id WHERE f.kind = 'timeout'"
            " AND substr(f.message, 1, ?) = ? AND (e.status IS NULL OR e.status != ?)",
            (len(EPISODE_TIMEOUT), EPISODE_TIMEOUT, OK),
        ):
            if at_limit(str(message), (limits or {}).get(str(eid))):
                out[str(eid)] = out.get(str(eid), 0) + 1
        return out

    def worker_faults(self) -> dict[str, int]:
        """Episode id -> its stored ``worker`` faults over all runs (dead worker processes,
        internal errors), for episodes not stored as evaluated."""
        return self.capped_faults("worker")

    def capped_count(self, episode_id: str, kind: str, limit: float | None = None) -> int:
        """One episode's faults over all runs that count towards the cap of ``kind`` (its
        time-outs at ``limit`` or longer, when given: see ``capped_faults``)."""
        if kind != "timeout":
            return self.fault_count(episode_id, kind)
        rows = self.db.execute(
            "SELECT message FROM faults WHERE episode_id = ? AND kind = 'timeout'"
            " AND substr(message, 1, ?) = ?",
            (episode_id, len(EPISODE_TIMEOUT), EPISODE_TIMEOUT),
        )
        return sum(1 for (message,) in rows if at_limit(str(message), limit))

    def give_up_faulty(
        self,
        caps: int | Mapping[str, int],
        wanted: Collection[str],
        limits: Mapping[str, float | None] | None = None,
    ) -> dict[str, tuple[str, int]]:
        """Store as given up every unfinished episode of ``wanted`` whose capped faults of a
        kind (``CAPPED``) reached that kind's cap (``caps``: by kind; a number is the
        ``worker`` cap alone; ``limits``: each episode's wall-clock limit now), and as pending
        again (``INFRA_FAULT``) one given up under a lower cap or a shorter limit; returns
        the given-up episodes with the kind and count that did it."""
        caps = {"worker": caps} if isinstance(caps, int) else dict(caps)
        out: dict[str, tuple[str, int]] = {}
        for kind, cap in caps.items():
            for e, n in self.capped_faults(kind, limits).items():
                if n >= cap and e in wanted and e not in out:
                    out[e] = (kind, n)
                    self.give_up(e, given_up_reason(n, cap, kind))
        with self._transaction():
            for (e,) in self.db.execute(
                "SELECT episode_id FROM episodes WHERE status = ?", (GIVEN_UP,)
            ).fetchall():
                if e not in out:
                    self.db.execute(
                        "UPDATE episodes SET status = ? WHERE episode_id = ?", (INFRA_FAULT, e)
                    )
        return out

    def give_up(self, episode_id: str, reason: str) -> None:
        """Store an unfinished episode as given up (``GIVEN_UP``): its row keeps the
        condition and last fault ``write_fault`` stored, with ``reason`` added; an
        evaluated episode is left as it is."""
        with self._transaction():
            row = self.db.execute(
                "SELECT status, record FROM episodes WHERE episode_id = ?", (episode_id,)
            ).fetchone()
            if row is None or row[0] == OK:
                return
            try:
                doc = json.loads(row[1])
            except ValueError:
                doc = {}
            doc = {**(doc if isinstance(doc, dict) else {}), "given_up": reason}
            self.db.execute(
                "UPDATE episodes SET status = ?, record = ? WHERE episode_id = ?",
                (GIVEN_UP, json.dumps(doc, sort_keys=True), episode_id),
            )

    def _transaction(self) -> _Tx:
        return _Tx(self.db, self.path)

    # -- reading ----------------------------------------------------------------------
    def finished_ids(self) -> set[str]:
        """Episodes stored as evaluated, with their whole trace (see ``incomplete_ids``)."""
        stored = {
            row[0]
            for row in self.db.execute("SELECT episode_id FROM episodes WHERE status = ?", (OK,))
        }
        return stored - self.incomplete_ids()

    def incomplete_ids(self) -> set[str]:
        """Evaluated episodes whose step rows disagree with their record: run them again."""
        return set(trace_mismatches(self.db))

    def run_faults(self, run_id: str) -> list[tuple[str, str, str, str]]:
        """(kind, component, message, episode id) of every fault one run met, in order."""
        rows = self.db.execute(
            "SELECT kind, component, message, episode_id FROM faults WHERE run_id = ?"
            " ORDER BY at, rowid",
            (run_id,),
        )
        return [(str(k), str(c), str(m), str(e)) for k, c, m, e in rows]

    def fault_count(self, episode_id: str, kind: str | None = None) -> int:
        """Stored faults of an episode over all runs (of one ``kind``, or all)."""
        (n,) = self.db.execute(
            "SELECT COUNT(*) FROM faults WHERE episode_id = ? AND (? IS NULL OR kind = ?)",
            (episode_id, kind, kind),
        ).fetchone()
        return int(n)

    def records(self) -> Iterator[EpisodeRecord]:
        for eid, text in self.db.execute(
            "SELECT episode_id, record FROM episodes WHERE status = ? ORDER BY episode_id", (OK,)
        ):
            try:
                yield EpisodeRecord.from_json(parse_json(text, f"{self.path}: episode {eid}"))
            except (ValueError, TypeError, KeyError) as exc:
                raise StoreError(
                    f"{self.path}: episode {eid}: unreadable record ({exc}); nothing was run: "
                    "restore the database from a copy, or give this run another --out"
                ) from None

    def steps(self, episode_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT record FROM steps WHERE episode_id = ? ORDER BY step", (episode_id,)
        )
        return [json.loads(text) for (text,) in rows]

    def meta(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row is not None else None

    def has_rows(self) -> bool:
        return self.db.execute("SELECT 1 FROM episodes LIMIT 1").fetchone() is not None

    def fault_rows(self) -> list[dict[str, Any]]:
        """Every stored fault, oldest first (episode, attempt, kind, message, run, time)."""
        rows = self.db.execute(
            "SELECT episode_id, attempt, kind, message, run_id, at FROM faults "
            "ORDER BY at, episode_id, attempt"
        )
        keys = ("episode_id", "attempt", "kind", "message", "run_id", "at")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def counts(self) -> dict[str, int]:
        return {
            status: n
            for status, n in self.db.execute(
                "SELECT status, COUNT(*) FROM episodes GROUP BY status"
            )
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class _Tx:
    """One transaction; any SQLite failure rolls it back whole and becomes a StoreError."""

    def __init__(self, db: sqlite3.Connection, path: Path):
        self.db = db
        self.path = path

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(describe_sqlite_error(self.path, exc)) from None

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.Error as failed:
                self._rollback()
                raise StoreError(describe_sqlite_error(self.path, failed)) from None
        self._rollback()
        if isinstance(exc, sqlite3.Error):
            raise StoreError(describe_sqlite_error(self.path, exc)) from None

    def _rollback(self) -> None:
        # SQLite may already have rolled back (SQLITE_FULL does); a failing ROLLBACK must
        # not hide the error that caused it.
        if self.db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
