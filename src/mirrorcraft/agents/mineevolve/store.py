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

Loading is cheap at any stream length: the store keeps, beside the stream, the
state it replays to at its latest version (table ``state_cache``, written by the
writer after each commit, and by ``snapshot``/``start_from``), with the number and
a hash of the operations it was built from. A load checks them against the stream
and replays only the operations after it; a cache that is missing, stale (truncated,
rewritten), damaged, or made by another replay rule is ignored and rebuilt. The
stream is the store; the cache only saves time (``state(use_cache=False)`` replays
it all).

Every write (commit, ``start_from``, ``truncate``, ``freeze``) is one transaction
that waits up to 30 s for another writer of the file, then fails with one line
saying so and leaves the store as it was; ``snapshot`` writes a temporary file and
renames it, so its target is either absent or whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry
from mirrorcraft.agents.mineevolve.knowledge_base import REPLAY_VERSION, KnowledgeOpError, apply_op
from mirrorcraft.agents.mineevolve.snapshot_files import remove_abandoned, tmp_prefix

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
CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS state_cache (
    slot INTEGER PRIMARY KEY CHECK (slot = 1), version INTEGER NOT NULL,
    operations INTEGER NOT NULL, ops_hash TEXT NOT NULL, replay TEXT NOT NULL,
    state_hash TEXT NOT NULL, state BLOB NOT NULL
);
"""
"""The materialised state (optional: stores written before it, or by baselines, have none)."""
WAIT_S = 30.0
"""How long a write waits for another writer of the same file."""
_STATE = TypeAdapter(dict[str, KnowledgeEntry])


@cache
def _replay_key() -> str:
    """What a cached state depends on besides the stream: ``apply_op``'s rule and the entry
    schema; a cache made under another key is rebuilt."""
    schema = json.dumps(KnowledgeEntry.model_json_schema(), sort_keys=True)
    return f"{REPLAY_VERSION}:{hashlib.sha256(schema.encode()).hexdigest()[:16]}"


FIRST = -(2**63)
"""Below every version: the lower bound of a replay from scratch."""
_PART = "length(op) || char(31) || op || char(30)"
_HASHED = (
    f"SELECT COUNT(*), group_concat({_PART}, '') FROM "
    "(SELECT op FROM ops WHERE version > ? AND version <= ? ORDER BY version, seq)"
)
_HASHED_ROWS = f"SELECT {_PART} FROM ops WHERE version > ? AND version <= ? ORDER BY version, seq"
"""The operations of versions (after, upto] as one text, in stream order, for the hash that
ties a cached state to its stream (built by SQLite: 10,000 operations hash in milliseconds).
Each operation ends its own part, so the hash of two consecutive ranges is that of the
whole. A state depends only on its operations in order; an operation moved across the
cached version changes their number."""


class KnowledgeStoreError(Exception):
    """A store file that cannot be used; the message names the file."""


class FrozenStoreError(KnowledgeStoreError):
    """A write to a frozen or read-only store."""


def _why(path: Path, exc: BaseException) -> str:
    """SQLite's reason for a failed write, in words a user can act on."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if "locked" in text or "busy" in text:
        return (
            f"{text}: another process kept the file for {WAIT_S:g} s; is another run or "
            "stream writing this store?"
        )
    if ("readonly" in text or "unable to open" in text) and not os.access(path.parent, os.W_OK):
        return f"{text}: the folder {path.parent} is not writable"
    return text


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
        db: sqlite3.Connection | None = None
        try:
            if read_only:
                db = sqlite3.connect(
                    f"file:{p.resolve()}?mode=ro", uri=True, isolation_level=None, timeout=WAIT_S
                )
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(str(p), isolation_level=None, timeout=WAIT_S)
                tables = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                if not tables.fetchall():  # a new file: only then is anything written
                    # One transaction, so two processes creating one store take turns.
                    db.executescript(
                        "BEGIN IMMEDIATE;"
                        + SCHEMA
                        + CACHE_SCHEMA
                        + f"INSERT OR IGNORE INTO meta VALUES ('format', '{FORMAT}');"
                        + f"INSERT OR IGNORE INTO meta VALUES ('schema_version', "
                        f"'{SCHEMA_VERSION}');"
                        + "INSERT OR IGNORE INTO meta VALUES ('frozen', '0'); COMMIT;"
                    )
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        except (sqlite3.DatabaseError, OSError) as exc:
            if db is not None:
                with suppress(sqlite3.Error):
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                db.close()
            if read_only and "readonly" in str(exc) and Path(f"{p}-journal").is_file():
                raise KnowledgeStoreError(
                    f"{p}: holds a transaction left unfinished by a writer that was stopped; "
                    "read-only, it cannot be rolled back: rerun the run that writes this store "
                    "(it rolls it back), then use it"
                ) from None
            if isinstance(exc, OSError):  # its folder could not be made
                raise KnowledgeStoreError(
                    f"{p}: could not be created ({exc.strerror or exc})"
                ) from None
            if "locked" in str(exc) or not p.is_file():  # busy, or a file SQLite cannot make
                raise KnowledgeStoreError(f"{p}: could not be opened ({_why(p, exc)})") from None
            raise KnowledgeStoreError(f"{p}: not a usable knowledge store ({exc})") from None
        if meta.get("format") == FORMAT and meta.get("schema_version") != str(SCHEMA_VERSION):
            db.close()
            raise KnowledgeStoreError(
                f"{p}: a knowledge store of schema {meta.get('schema_version')!r}, written by "
                f"another version of mirrorcraft; this one reads schema {SCHEMA_VERSION}: use "
                "the version that wrote it"
            )
        if meta.get("format") != FORMAT:
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
            raise self._unreadable(exc) from None

    def _unreadable(self, exc: sqlite3.DatabaseError) -> KnowledgeStoreError:
        if "locked" in str(exc):  # a writer's commit kept it past the wait, not damage
            return KnowledgeStoreError(f"{self.path}: could not be read ({_why(self.path, exc)})")
        detail = " ".join(str(exc).split())  # SQLite may quote a damaged row whole
        detail = detail if len(detail) <= 160 else detail[:157] + "..."
        return KnowledgeStoreError(f"{self.path}: not a usable knowledge store ({detail})")

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Several reads that see one state of the file, even while another process commits."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            with suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")

    @contextmanager
    def _writing(self, failed: str, unchanged: str = "nothing was changed") -> Iterator[None]:
        """One write transaction: it waits up to ``WAIT_S`` for another writer; a failure
        (a busy file, a full disk, a read-only folder) rolls back and says ``failed`` and
        ``unchanged`` in one line, never a traceback, never half a write."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            yield
            self.db.execute("COMMIT")
        except BaseException as exc:
            if self.db.in_transaction:
                with suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                raise KnowledgeStoreError(
                    f"{self.path}: {failed} ({_why(self.path, exc)}); {unchanged}"
                ) from None
            raise

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

    def _op_rows(self, limit: int, after: int = FIRST) -> list[Any]:
        return self._rows(
            "SELECT version, seq, op FROM ops WHERE version > ? AND version <= ? "
            "ORDER BY version, seq",
            (after, limit),
        )

    def _hash(self, hasher: Any, after: int, limit: int) -> int:
        """Add the operations of versions (``after``, ``limit``] to ``hasher``; their number."""
        try:
            try:
                count, text = self.db.execute(_HASHED, (after, limit)).fetchone()
            except sqlite3.DataError:  # longer than SQLite's longest text (1 GB): row by row
                count = 0
                for (part,) in self.db.execute(_HASHED_ROWS, (after, limit)):
                    hasher.update(part.encode("utf-8", "surrogatepass"))
                    count += 1
                return count
        except sqlite3.DatabaseError as exc:
            raise self._unreadable(exc) from None
        hasher.update((text or "").encode("utf-8", "surrogatepass"))
        return int(count)

    def _parse(self, v: Any, text: Any) -> dict[str, Any]:
        try:
            op = json.loads(text)
        except (ValueError, TypeError, RecursionError):
            raise KnowledgeStoreError(
                f"{self.path}: operation of version {v} is not JSON"
            ) from None
        if not isinstance(op, dict):
            raise KnowledgeStoreError(f"{self.path}: operation of version {v} is not a JSON object")
        return op

    def _ops(self, version: int | None) -> Iterable[tuple[int, dict[str, Any]]]:
        limit = self.version if version is None else version
        for v, _seq, text in self._op_rows(limit):
            yield int(v), self._parse(v, text)

    def operations(self, version: int | None = None) -> list[dict[str, Any]]:
        """Every operation of the first ``version`` episodes (default: all), in commit order.

        Baselines with memory replay these themselves; MineEvolve reads ``entries``.
        """
        return [op for _v, op in self._ops(version)]

    def state(
        self, version: int | None = None, *, use_cache: bool = True
    ) -> dict[str, KnowledgeEntry]:
        """Entries by id after the first ``version`` episodes (default: all), retired included.

        The same as replaying every operation (``use_cache=False``), but a load replays only
        the operations after the state cached beside the stream, when that cache is valid."""
        with self._reading():
            top = self.version
            limit = top if version is None else version
            cached = self._cached(limit) if use_cache else None
            entries, after, done, hasher = cached or ({}, FIRST, 0, hashlib.sha256())
            rows = self._op_rows(limit, after)
            for v, _seq, text in rows:
                self._apply(entries, v, self._parse(v, text))
            save = use_cache and limit == top and (rows or cached is None) and not self.read_only
            if save:
                self._hash(hasher, after, limit)
        if save:
            self._save_cache(limit, done + len(rows), hasher.hexdigest(), entries)
        return entries

    def _apply(self, entries: dict[str, KnowledgeEntry], v: Any, op: dict[str, Any]) -> None:
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

    def _cached(self, limit: int) -> tuple[dict[str, KnowledgeEntry], int, int, Any] | None:
        """The cached state, its version, the number of operations it replays and their
        running hash, when the cache is of this stream (the number and hash of its operations
        match) and undamaged; else None."""
        try:
            row = self.db.execute(
                "SELECT version, operations, ops_hash, replay, state_hash, state "
                "FROM state_cache WHERE slot = 1"
            ).fetchone()
        except sqlite3.DatabaseError:  # no cache table (an older store), or a damaged one
            return None
        if row is None:
            return None
        version, done, ops_hash, replay, state_hash, blob = row
        if (
            not isinstance(version, int)
            or not isinstance(blob, bytes)
            or replay != _replay_key()
            or not 0 <= version <= limit
            or hashlib.sha256(blob).hexdigest() != state_hash
        ):
            return None
        hasher = hashlib.sha256()
        if self._hash(hasher, FIRST, version) != done or hasher.hexdigest() != ops_hash:
            return None
        try:
            entries = _STATE.validate_json(blob)
        except (ValidationError, ValueError):
            return None
        return entries, version, done, hasher

    def _save_cache(
        self, version: int, done: int, ops_hash: str, entries: dict[str, KnowledgeEntry]
    ) -> None:
        """Keep ``entries`` as the state of the first ``done`` operations (best effort: a busy
        file, a frozen store or a state JSON cannot hold exactly is left uncached)."""
        try:
            blob = _STATE.dump_json(entries)
            if _STATE.validate_json(blob) != entries:  # e.g. a NaN in a step: replay instead
                return
            if self.frozen:
                return
            self.db.execute("PRAGMA busy_timeout = 1000")
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(CACHE_SCHEMA)
            self.db.execute(
                "INSERT OR REPLACE INTO state_cache VALUES (1, ?, ?, ?, ?, ?, ?)",
                (version, done, ops_hash, _replay_key(), hashlib.sha256(blob).hexdigest(), blob),
            )
            self.db.execute("COMMIT")
        except (sqlite3.Error, ValidationError, ValueError, KnowledgeStoreError):
            with suppress(sqlite3.Error):
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
        finally:
            with suppress(sqlite3.Error):
                self.db.execute(f"PRAGMA busy_timeout = {int(WAIT_S * 1000)}")

    def refresh_cache(self) -> None:
        """Bring the cached state up to the latest version, when the stream replays to entries
        (a baselines' store does not: nothing is cached for it)."""
        with suppress(KnowledgeStoreError):
            self.state()

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

    def start_from(self, source: KnowledgeStore) -> None:
        """Fill an empty store with every version of ``source`` and remember how many.

        The copied episodes are named ``base:<id>``: a stream that goes on from a store
        its own training wrote (the same spec, another experiment) runs episodes with the
        ids of those it copied, and each of them must still become a version of its own."""
        self._writable()
        with source._reading():
            rows = source._rows(
                "SELECT version, ? || episode_id, regime, operations FROM episodes", (BASE_PREFIX,)
            )
            ops = source._rows("SELECT version, seq, op FROM ops")
            version = source.version
        with self._writing(f"could not start from {source.path}"):
            # Checked inside the transaction: two processes starting one store take turns.
            if self.db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]:
                raise KnowledgeStoreError(f"{self.path}: can only start from a store when empty")
            self.db.executemany("INSERT INTO episodes VALUES (?, ?, ?, ?)", rows)
            self.db.executemany("INSERT INTO ops VALUES (?, ?, ?)", ops)
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('base_version', ?)", (str(len(rows)),)
            )
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('source', ?)",
                (f"{source.path.name}@{version}",),
            )
        self.refresh_cache()

    def commit(self, episode_id: str, regime: str, ops: Sequence[dict[str, Any]]) -> int:
        """Append one episode's operations as the next version (idempotent per episode id)."""
        self._writable()
        rows = [(i, json.dumps(op, sort_keys=True)) for i, op in enumerate(ops)]
        # The check and the next version are read inside the write transaction: a second
        # writer of the same file waits for it instead of taking the same version number.
        with self._writing(
            f"episode {episode_id} could not be committed", "nothing of it was written"
        ):
            row = self.db.execute(
                "SELECT version FROM episodes WHERE episode_id = ?", (episode_id,)
            ).fetchone()
            if row is not None:
                return int(row[0])
            top = self.db.execute("SELECT MAX(version) FROM episodes").fetchone()
            version = int(top[0] or 0) + 1
            self.db.execute(
                "INSERT INTO episodes VALUES (?, ?, ?, ?)", (version, episode_id, regime, len(ops))
            )
            self.db.executemany(
                "INSERT INTO ops VALUES (?, ?, ?)", [(version, i, op) for i, op in rows]
            )
        self.refresh_cache()
        return version

    def truncate(self, version: int) -> int:
        """Forget every version after ``version`` (for resuming after an interrupted run)."""
        self._writable()
        with self._writing(f"could not be truncated to version {version}"):
            gone = self.db.execute("DELETE FROM episodes WHERE version > ?", (version,)).rowcount
            self.db.execute("DELETE FROM ops WHERE version > ?", (version,))
        if gone:
            self.refresh_cache()
        return int(gone)

    def freeze(self) -> None:
        if self.read_only:
            raise FrozenStoreError(f"{self.path}: opened read-only")
        with self._writing("could not be frozen", "it is not frozen"):
            self.db.execute("UPDATE meta SET value = '1' WHERE key = 'frozen'")

    def snapshot(
        self, dest: str | Path, version: int | None = None, *, freeze: bool = True
    ) -> Path:
        """A new store file holding the first ``version`` episodes (frozen unless told otherwise).

        Written under a temporary name of its own and renamed: ``dest`` is never half a
        store, and two processes writing the same snapshot each write a whole one."""
        with self._reading():
            top = self.version
            v = top if version is None else version
            if v > top:
                raise KnowledgeStoreError(f"{self.path}: has {top} versions, not {v}")
            rows = self._rows(
                "SELECT version, episode_id, regime, operations FROM episodes WHERE version <= ?",
                (v,),
            )
            ops = self._rows("SELECT version, seq, op FROM ops WHERE version <= ?", (v,))
        out = Path(dest)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise KnowledgeStoreError(
                f"{out}: the snapshot could not be written ({exc.strerror or exc})"
            ) from None
        remove_abandoned(out)
        # A name of its own (SQLite creates the file, with the permissions a store gets).
        tmp = out.with_name(f"{tmp_prefix(out)}{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            with KnowledgeStore.open(tmp) as copy:
                with copy._writing("the snapshot could not be written"):
                    copy.db.executemany("INSERT INTO episodes VALUES (?, ?, ?, ?)", rows)
                    copy.db.executemany("INSERT INTO ops VALUES (?, ?, ?)", ops)
                    copy.db.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('source', ?)",
                        (f"{self.path.name}@{v}",),
                    )
                copy.refresh_cache()
                if freeze:
                    copy.freeze()
            os.replace(tmp, out)
        except KnowledgeStoreError as exc:  # it names the temporary file: name the target
            detail = str(exc).removeprefix(f"{tmp}: ")
            raise KnowledgeStoreError(
                f"{out}: the snapshot could not be written ({detail})"
            ) from None
        except OSError as exc:
            raise KnowledgeStoreError(
                f"{out}: the snapshot could not be written ({exc.strerror or exc})"
            ) from None
        finally:
            for left in (tmp, Path(f"{tmp}-journal")):
                left.unlink(missing_ok=True)
        return out
