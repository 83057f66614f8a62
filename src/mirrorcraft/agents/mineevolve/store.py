"""The persistent knowledge store: one SQLite file per store, versioned by committed episode.

A store is a log of the knowledge operations (``knowledge_base.OPS``) each
episode made, in commit order; its state at version *v* is the replay of the
operations of its first *v* episodes, so every version stays readable and a
checkpoint is just a version. Each committed episode also records the rule
regime it ran under (``vanilla``, a suite id, ...), so an entry's regime is the
regime of the episode that added it. The agent never receives regimes: only
``entries()`` goes to the agent; ``regimes()`` is for analysis.

A store can be *frozen* (``freeze`` or ``snapshot(..., freeze=True)``): a frozen
store refuses commits, and a store opened ``read_only`` is opened by SQLite in
read-only mode, so its file is never written.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry
from mirrorcraft.agents.mineevolve.knowledge_base import KnowledgeOpError, apply_op

FORMAT = "mirrorcraft-knowledge-store"
SCHEMA_VERSION = 1
BASE_PREFIX = "base:"
"""Prefix of the episode ids a store copied from the store it started from."""
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    version INTEGER PRIMARY KEY, episode_id TEXT NOT NULL UNIQUE, regime TEXT NOT NULL,
    operations INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ops (
    version INTEGER NOT NULL, seq INTEGER NOT NULL, op TEXT NOT NULL, PRIMARY KEY (version, seq)
);
"""


class KnowledgeStoreError(Exception):
    """A store file that cannot be used; the message names the file."""


class FrozenStoreError(KnowledgeStoreError):
    """A write to a frozen or read-only store."""


class KnowledgeStore:
    def __init__(self, path: Path, db: sqlite3.Connection, read_only: bool):
        self.path = path
        self.db = db
        self.read_only = read_only

    # -- opening --------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, *, read_only: bool = False) -> KnowledgeStore:
        """Open (or, unless ``read_only``, create) the store at ``path``."""
        p = Path(path)
        if read_only and not p.is_file():
            raise KnowledgeStoreError(f"{p}: no knowledge store there")
        try:
            if read_only:
                db = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True, isolation_level=None)
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(str(p), isolation_level=None, timeout=30.0)
                tables = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                if not tables.fetchall():  # a new file: only then is anything written
                    db.executescript(SCHEMA)
                    db.executemany(
                        "INSERT INTO meta VALUES (?, ?)",
                        [
                            ("format", FORMAT),
                            ("schema_version", str(SCHEMA_VERSION)),
                            ("frozen", "0"),
                        ],
                    )
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        except (sqlite3.DatabaseError, OSError) as exc:
            if read_only and "readonly" in str(exc) and Path(f"{p}-journal").is_file():
                raise KnowledgeStoreError(
                    f"{p}: holds a transaction left unfinished by a writer that was stopped; "
                    "read-only, it cannot be rolled back: rerun the run that writes this store "
                    "(it rolls it back), then use it"
                ) from None
            raise KnowledgeStoreError(f"{p}: not a usable knowledge store ({exc})") from None
        if meta.get("format") != FORMAT or meta.get("schema_version") != str(SCHEMA_VERSION):
            db.close()
            raise KnowledgeStoreError(
                f"{p}: not a knowledge store of schema {SCHEMA_VERSION} "
                f"(format {meta.get('format')!r}, schema {meta.get('schema_version')!r})"
            )
        if missing := sorted({"episodes", "ops"} - names):
            db.close()
            raise KnowledgeStoreError(
                f"{p}: not a usable knowledge store (no table {', '.join(missing)})"
            )
        return cls(p, db, read_only)

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Every row of a query; a file damaged past its first pages says so in one line
        (SQLite finds such damage only when it reads the damaged page)."""
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            detail = " ".join(str(exc).split())  # SQLite may quote a damaged row whole
            detail = detail if len(detail) <= 160 else detail[:157] + "..."
            raise KnowledgeStoreError(
                f"{self.path}: not a usable knowledge store ({detail})"
            ) from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> KnowledgeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        return dict(self._rows("SELECT key, value FROM meta"))

    @property
    def base_version(self) -> int:
        """Versions copied in from the store this one started from (0: started empty)."""
        return int(self.meta().get("base_version", "0"))

    def start_from(self, source: KnowledgeStore) -> None:
        """Fill an empty store with every version of ``source`` and remember how many.

        The copied episodes are named ``base:<id>``: a stream that goes on from a store
        its own training wrote (the same spec, another experiment) runs episodes with the
        ids of those it copied, and each of them must still become a version of its own."""
        self._writable()
        if self.version:
            raise KnowledgeStoreError(f"{self.path}: can only start from a store when empty")
        rows = source._rows(
            "SELECT version, ? || episode_id, regime, operations FROM episodes", (BASE_PREFIX,)
        )
        ops = source._rows("SELECT version, seq, op FROM ops")
        self.db.execute("BEGIN IMMEDIATE")
        self.db.executemany("INSERT INTO episodes VALUES (?, ?, ?, ?)", rows)
        self.db.executemany("INSERT INTO ops VALUES (?, ?, ?)", ops)
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('base_version', ?)", (str(len(rows)),))
        self.db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('source', ?)",
            (f"{source.path.name}@{source.version}",),
        )
        self.db.execute("COMMIT")

    @property
    def frozen(self) -> bool:
        return self.meta().get("frozen") == "1"

    @property
    def version(self) -> int:
        rows = self._rows("SELECT MAX(version) FROM episodes")
        try:
            return int(rows[0][0] or 0)
        except (TypeError, ValueError):
            raise KnowledgeStoreError(f"{self.path}: a version that is not a number") from None

    def episode_ids(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT episode_id FROM episodes ORDER BY version")]

    def _ops(self, version: int | None) -> Iterable[tuple[int, dict[str, Any]]]:
        limit = self.version if version is None else version
        rows = self._rows(
            "SELECT version, op FROM ops WHERE version <= ? ORDER BY version, seq", (limit,)
        )
        for v, text in rows:
            try:
                op = json.loads(text)
            except (ValueError, TypeError, RecursionError):
                raise KnowledgeStoreError(
                    f"{self.path}: operation of version {v} is not JSON"
                ) from None
            if not isinstance(op, dict):
                raise KnowledgeStoreError(
                    f"{self.path}: operation of version {v} is not a JSON object"
                )
            yield int(v), op

    def operations(self, version: int | None = None) -> list[dict[str, Any]]:
        """Every operation of the first ``version`` episodes (default: all), in commit order.

        Baselines with memory replay these themselves; MineEvolve reads ``entries``.
        """
        return [op for _v, op in self._ops(version)]

    def state(self, version: int | None = None) -> dict[str, KnowledgeEntry]:
        """Entries by id after the first ``version`` episodes (default: all), retired included."""
        entries: dict[str, KnowledgeEntry] = {}
        for v, op in self._ops(version):
            try:
                apply_op(entries, op)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(x) for x in first["loc"]) or "entry"
                raise KnowledgeStoreError(
                    f"{self.path}: unusable operation in version {v} ({where}: {first['msg']})"
                ) from None
            except (KnowledgeOpError, KeyError, TypeError) as exc:
                raise KnowledgeStoreError(
                    f"{self.path}: unusable operation in version {v} ({exc})"
                ) from None
        return entries

    def entries(self, version: int | None = None) -> list[KnowledgeEntry]:
        return [e for _id, e in sorted(self.state(version).items())]

    def regimes(self, version: int | None = None) -> dict[str, str]:
        """Entry id -> the rule regime of the episode that added it (analysis only)."""
        regime_of = dict(self._rows("SELECT version, regime FROM episodes"))
        out: dict[str, str] = {}
        for v, op in self._ops(version):
            if op.get("op") == "add" and isinstance(op.get("entry"), dict):
                out[str(op["entry"].get("id"))] = str(regime_of.get(v, ""))
        return out

    def stats(self, version: int | None = None) -> dict[str, Any]:
        state = self.state(version)
        live = [e for e in state.values() if not e.retired]
        return {
            "version": self.version if version is None else version,
            "skills": sum(1 for e in live if e.kind == "skill"),
            "remedies": sum(1 for e in live if e.kind == "remedy"),
            "reflections": sum(1 for e in live if e.kind == "reflection"),
            "retired": sum(1 for e in state.values() if e.retired),
        }

    # -- writing --------------------------------------------------------------------------------
    def _writable(self) -> None:
        if self.read_only:
            raise FrozenStoreError(f"{self.path}: opened read-only")
        if self.frozen:
            raise FrozenStoreError(f"{self.path}: the store is frozen")

    def commit(self, episode_id: str, regime: str, ops: Sequence[dict[str, Any]]) -> int:
        """Append one episode's operations as the next version (idempotent per episode id)."""
        self._writable()
        rows = [(i, json.dumps(op, sort_keys=True)) for i, op in enumerate(ops)]
        try:
            # The check and the next version are read inside the write transaction: a second
            # writer of the same file waits for it instead of taking the same version number.
            self.db.execute("BEGIN IMMEDIATE")
            row = self.db.execute(
                "SELECT version FROM episodes WHERE episode_id = ?", (episode_id,)
            ).fetchone()
            if row is not None:
                self.db.execute("ROLLBACK")
                return int(row[0])
            top = self.db.execute("SELECT MAX(version) FROM episodes").fetchone()
            version = int(top[0] or 0) + 1
            self.db.execute(
                "INSERT INTO episodes VALUES (?, ?, ?, ?)", (version, episode_id, regime, len(ops))
            )
            self.db.executemany(
                "INSERT INTO ops VALUES (?, ?, ?)", [(version, i, op) for i, op in rows]
            )
            self.db.execute("COMMIT")
        except BaseException as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                raise KnowledgeStoreError(
                    f"{self.path}: episode {episode_id} could not be committed ({exc}); "
                    "nothing of it was written"
                ) from None
            raise
        return version

    def truncate(self, version: int) -> int:
        """Forget every version after ``version`` (for resuming after an interrupted run)."""
        self._writable()
        self.db.execute("BEGIN IMMEDIATE")
        gone = self.db.execute("DELETE FROM episodes WHERE version > ?", (version,)).rowcount
        self.db.execute("DELETE FROM ops WHERE version > ?", (version,))
        self.db.execute("COMMIT")
        return int(gone)

    def freeze(self) -> None:
        if self.read_only:
            raise FrozenStoreError(f"{self.path}: opened read-only")
        self.db.execute("UPDATE meta SET value = '1' WHERE key = 'frozen'")

    def snapshot(
        self, dest: str | Path, version: int | None = None, *, freeze: bool = True
    ) -> Path:
        """A new store file holding the first ``version`` episodes (frozen unless told otherwise)."""
        v = self.version if version is None else version
        if v > self.version:
            raise KnowledgeStoreError(f"{self.path}: has {self.version} versions, not {v}")
        out = Path(dest)
        tmp = out.with_name(out.name + ".tmp")
        tmp.unlink(missing_ok=True)
        with KnowledgeStore.open(tmp) as copy:
            rows = self.db.execute(
                "SELECT version, episode_id, regime, operations FROM episodes WHERE version <= ?",
                (v,),
            ).fetchall()
            ops = self.db.execute(
                "SELECT version, seq, op FROM ops WHERE version <= ?", (v,)
            ).fetchall()
            copy.db.execute("BEGIN IMMEDIATE")
            copy.db.executemany("INSERT INTO episodes VALUES (?, ?, ?, ?)", rows)
            copy.db.executemany("INSERT INTO ops VALUES (?, ?, ?)", ops)
            copy.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('source', ?)", (f"{self.path.name}@{v}",)
            )
            copy.db.execute("COMMIT")
            if freeze:
                copy.freeze()
        shutil.move(str(tmp), str(out))
        return out
