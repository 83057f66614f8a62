"""Reading results: a JSONL file of episode records or a results database (SQLite).

Both sources are validated before anything is aggregated: a record with a
missing, unknown or mistyped field is refused with the line number (JSONL) or
the episode id (database) named, so a bad file never produces silent numbers.
A well-formed record that contradicts itself (``analysis.validate``) is refused
the same way, or left out and listed with ``skip_invalid``; a record whose
termination names an infrastructure fault is left out and counted.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from mirrorcraft.analysis.validate import (
    CrossCheck,
    Declared,
    InvalidRecord,
    is_infrastructure,
    record_problems,
    refusal,
    steps_problem,
)
from mirrorcraft.runner.records import SCHEMA_VERSION, EpisodeRecord, StepRecord
from mirrorcraft.runner.store import integrity_problem
from mirrorcraft.safeload import DataError, decode_text, parse_json

SQLITE_MAGIC = b"SQLite format 3\x00"
TRACE_MISMATCH = "trace_mismatch"
"""Status under which episodes whose step rows disagree with actions_used are left out."""
DISCLOSURES = ("hidden", "disclosed")


class RecordsError(ValueError):
    """A results file that cannot be read as MirrorCraft records (message names where)."""


@dataclass
class LoadedResults:
    """Records of evaluation episodes plus what was left out and where steps live."""

    path: Path
    kind: str
    """"jsonl" or "sqlite"."""
    records: list[EpisodeRecord]
    excluded: dict[str, int] = field(default_factory=dict)
    """Records not counted because they stand for infrastructure faults: database rows by
    status (e.g. ``infra_fault``), JSONL records by their fault ``termination``."""
    invalid: list[InvalidRecord] = field(default_factory=list)
    """Inconsistent records left out (only with ``skip_invalid``; otherwise they are refused)."""

    @property
    def has_steps(self) -> bool:
        return self.kind == "sqlite"


# --- field checks ---------------------------------------------------------------------------

Check = Callable[[Any], bool]


def _is_int(v: Any) -> bool:
    return type(v) is int  # JSON integers; excludes booleans


def _is_num(v: Any) -> bool:
    return (type(v) is int or type(v) is float) and math.isfinite(v)


def _is_str(v: Any) -> bool:
    return type(v) is str


def _ints(v: Any) -> bool:
    return type(v) is list and all(type(x) is int for x in v)


def _strs(v: Any) -> bool:
    return type(v) is list and all(type(x) is str for x in v)


def _str_lists(v: Any) -> bool:
    return type(v) is list and all(_strs(x) for x in v)


def _nums(v: Any) -> bool:
    return type(v) is list and all(_is_num(x) for x in v)


def _dicts(v: Any) -> bool:
    return type(v) is list and all(type(x) is dict for x in v)


def _dict_of(check: Check) -> Check:
    return lambda v: type(v) is dict and all(type(k) is str and check(x) for k, x in v.items())


_ANY: Check = lambda v: True  # noqa: E731
_STR_FIELDS = (
    "episode_id", "experiment", "world", "biome", "rules", "task", "agent", "model",
    "disclosure", "termination", "software_version", "ruleset_fingerprint",
    "vanilla_fingerprint", "world_fingerprint", "spec_hash", "agent_error", "body_fingerprint",
    "task_fingerprint",
)  # fmt: skip
_INT_FIELDS = (
    "budget", "repetition", "seed", "score", "actions_used", "model_calls", "prompt_tokens",
    "completion_tokens", "cached_calls", "estimated_calls", "schema_version",
)  # fmt: skip
_EPISODE_CHECKS: dict[str, tuple[Check, str]] = {
    **{name: (_is_str, "a string") for name in _STR_FIELDS},
    **{name: (_is_int, "an integer") for name in _INT_FIELDS},
    "success": (lambda v: isinstance(v, bool), "true or false"),
    "milestones": (_dict_of(_is_int), "an object of advancement: action index"),
    "score_trace": (_ints, "a list of integers"),
    "signatures": (_str_lists, "a list of string lists"),
    "encounters": (_dicts, "a list of objects"),
    "cost_usd": (lambda v: v is None or _is_num(v), "a number or null"),
    "call_budget": (lambda v: v is None or _is_int(v), "an integer or null"),
    "failed_attempts": (
        lambda v: v is None or _dict_of(_is_int)(v),
        "an object of failure kind: number of attempts, or null",
    ),
    "unusable_replies": (lambda v: v is None or _is_int(v), "an integer or null"),
    "rules_title": (lambda v: v is None or _is_str(v), "a string or null"),
    "wall_seconds": (_is_num, "a number"),
    "template_hashes": (_dict_of(_is_str), "an object of strings"),
    "memory": (lambda v: type(v) is dict, "an object"),
    "agent_origin": (_dict_of(_is_str), "an object of strings"),
    "is_mirror": (lambda v: isinstance(v, bool), "true or false"),
}
_ENCOUNTER_CHECKS: dict[str, tuple[Check, str]] = {
    "step": (_is_int, "an integer"),
    "rule": (_is_str, "a string"),
    "kind": (_is_str, "a string"),
    "signature": (_strs, "a list of strings"),
    "vanilla": (_ANY, ""),
    "actual": (_ANY, ""),
}
_ENCOUNTER_REQUIRED = ("step", "rule", "kind", "signature")
_STEP_CHECKS: dict[str, tuple[Check, str]] = {
    "episode_id": (_is_str, "a string"),
    "step": (_is_int, "an integer"),
    "action": (_ANY, ""),
    "thought": (_is_str, "a string"),
    "result": (lambda v: isinstance(v, dict), "an object"),
    "inventory": (_dict_of(_is_int), "an object of item: count"),
    "position": (_nums, "a list of numbers"),
    "score": (_is_int, "an integer"),
    "new_milestones": (_strs, "a list of strings"),
    "encounter_rules": (_strs, "a list of strings"),
}


def _required(cls: type) -> list[str]:
    return [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]


_EPISODE_REQUIRED = _required(EpisodeRecord)


def _check_fields(
    doc: Any, checks: dict[str, tuple[Check, str]], required: list[str] | tuple[str, ...]
) -> None:
    if not isinstance(doc, dict):
        raise ValueError("expected a JSON object")
    if not doc.keys() <= checks.keys() or any(name not in doc for name in required):
        missing = [name for name in required if name not in doc]
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)}")
        unknown = sorted(set(doc) - set(checks))
        raise ValueError(f"unknown field(s) {', '.join(unknown)}")
    for name, value in doc.items():
        check, what = checks[name]
        if not check(value):
            raise ValueError(f"field {name!r} must be {what}, got {json.dumps(value)[:60]}")


def parse_episode(doc: Any) -> EpisodeRecord:
    """Validate one episode JSON object and build the record (``ValueError`` says why not)."""
    _check_fields(doc, _EPISODE_CHECKS, _EPISODE_REQUIRED)
    for i, enc in enumerate(doc.get("encounters", []), 1):
        try:
            _check_fields(enc, _ENCOUNTER_CHECKS, _ENCOUNTER_REQUIRED)
        except ValueError as exc:
            raise ValueError(f"encounter {i}: {exc}") from None
    if doc["disclosure"] not in DISCLOSURES:
        raise ValueError(f"disclosure must be 'hidden' or 'disclosed', got {doc['disclosure']!r}")
    if not 0 <= doc["score"] <= 100:
        raise ValueError(f"score must be between 0 and 100, got {doc['score']}")
    if not doc["rules"]:
        raise ValueError("rules must not be empty")
    version = doc.get("schema_version", SCHEMA_VERSION)
    if version > SCHEMA_VERSION:
        raise ValueError(f"schema_version {version} is newer than this MirrorCraft reads")
    return EpisodeRecord.from_json(doc)


def parse_step(doc: Any) -> StepRecord:
    """Validate one step JSON object and build the record."""
    _check_fields(doc, _STEP_CHECKS, list(_STEP_CHECKS))
    return StepRecord(**doc)


# --- sources --------------------------------------------------------------------------------


def mirror_flag_problem(doc: Any) -> list[str]:
    """The redundant ``is_mirror`` field, when present, must agree with ``rules``."""
    if (
        isinstance(doc, dict)
        and "is_mirror" in doc
        and doc["is_mirror"] != (doc["rules"] != "vanilla")
    ):
        return [f"is_mirror is {json.dumps(doc['is_mirror'])} but rules is {doc['rules']!r}"]
    return []


def _iter_jsonl(path: Path) -> Iterator[tuple[int, EpisodeRecord | str, list[str]]]:
    """(line, the record or why it cannot be read, its extra problems) of each line."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise RecordsError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        for n, line in enumerate(handle, 1):
            try:
                text = decode_text(line, str(path), first_line=n).strip()
                if not text:
                    continue
                doc = parse_json(text, str(path), line=n)
            except DataError as exc:
                yield n, exc.problem, []
                continue
            try:
                record = parse_episode(doc)
            except (ValueError, TypeError) as exc:
                yield n, f"bad: {exc}", []
                continue
            yield n, record, mirror_flag_problem(doc)


def _load_jsonl(path: Path, checker: _Checker) -> LoadedResults:
    seen: dict[str, tuple[int, str]] = {}
    for line, record, extra in _iter_jsonl(path):
        if isinstance(record, str):
            checker.unreadable(f"{path}:{line}", "", record)
            continue
        if record.episode_id in seen:
            first, experiment = seen[record.episode_id]
            raise RecordsError(
                f"{path}:{line}: episode_id {record.episode_id!r} already used on line "
                f"{first}; {duplicate_advice(experiment, record.experiment)}"
            )
        seen[record.episode_id] = (line, record.experiment)
        checker.add(record, f"{path}:{line}", extra)
    return checker.result(path, "jsonl")


def duplicate_advice(first: str, again: str) -> str:
    """Why an episode id comes twice in one JSONL file, and what to do: an id names the
    condition (world, rules, task, agent, model, disclosure, budget, repetition, seed), not
    the experiment, so two runs of the same conditions give the same ids."""
    if first != again:
        return (
            f"the records of experiments {first!r} and {again!r} were put in one file, and "
            "they ran the same conditions with the same seeds (an episode id names the "
            "condition, not the experiment). Analyse each experiment's export apart; for "
            "more repetitions of these conditions, raise `repetitions` in one spec and run "
            "it again with the same --out (the episodes already run are kept)"
        )
    return (
        f"the same episode of experiment {first!r} comes twice (the same export appended "
        "twice, or exports of two folders of one spec put together): keep one copy of each "
        "record, or analyse each folder's export apart"
    )


def connect_readonly(path: Path) -> sqlite3.Connection:
    """Open a results database without any chance of writing to it, on read-only media too.

    ``mode=ro`` reads a WAL database as its writer left it, but SQLite must create the
    ``-shm`` file beside it; where the folder cannot be written (a read-only mount, an
    archive) the database is opened ``immutable`` instead, which is exact as long as no
    ``-wal`` file holds changes not yet merged into the main file: if one does, the
    database is refused rather than read without them.
    """
    uri = path.resolve().as_uri()
    try:
        con = sqlite3.connect(uri + "?mode=ro", uri=True)
        con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return con
    except sqlite3.OperationalError as exc:  # cannot open (e.g. no -shm on read-only media)
        first = exc
    except sqlite3.Error as exc:
        raise RecordsError(f"{path}: not a readable MirrorCraft results database ({exc})") from None
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise RecordsError(
            f"cannot open results database {path} read-only ({first}) and {wal.name} holds "
            "changes not yet merged into it; copy the folder to writable storage and retry"
        )
    try:
        con = sqlite3.connect(uri + "?immutable=1", uri=True)
        con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return con
    except sqlite3.Error:
        raise RecordsError(f"cannot open results database {path}: {first}") from None


def _check_database(con: sqlite3.Connection, path: Path) -> None:
    try:
        problem = integrity_problem(con)
    except sqlite3.Error as exc:
        problem = str(exc)
    if problem:
        raise RecordsError(
            f"{path}: the results database is damaged (integrity check: {problem}); "
            "restore it from a copy"
        )


def _query(con: sqlite3.Connection, path: Path, sql: str, args: tuple[Any, ...] = ()) -> Any:
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.Error as exc:
        raise RecordsError(f"{path}: not a readable MirrorCraft results database ({exc})") from None


def _step_counts(con: sqlite3.Connection, path: Path) -> dict[str, tuple[int, int, int]] | None:
    """Episode id -> (step rows, first step, last step); None when the database holds no steps."""
    rows = _query(
        con,
        path,
        "SELECT episode_id, COUNT(*), MIN(step), MAX(step) FROM steps GROUP BY episode_id",
    )
    return {str(e): (int(n), int(a), int(b)) for e, n, a, b in rows} if rows else None


EARLIER_SPEC = "earlier_spec"
"""Excluded-status name for evaluated episodes of a spec other than the one that ran last
(conditions it no longer lists, or episodes left behind by ``--allow-changed-spec``; a run
stamps its hash on those of earlier versions that it counts: ``runner.versions``): never
pooled with the current spec's."""


def _current_spec_hash(con: sqlite3.Connection) -> str:
    """The spec hash of the run that wrote the database last ("" when it names none)."""
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'spec_hash'").fetchone()
        value = json.loads(row[0]) if row is not None else ""
    except (sqlite3.Error, ValueError, TypeError):
        return ""
    return value if isinstance(value, str) else ""


def _load_sqlite(path: Path, checker: _Checker) -> LoadedResults:
    with closing(connect_readonly(path)) as con:
        _check_database(con, path)
        rows = _query(
            con, path, "SELECT episode_id, status, record FROM episodes ORDER BY episode_id"
        )
        steps = _step_counts(con, path)
        current = _current_spec_hash(con)
    for episode_id, status, text in rows:
        if status != "ok":
            checker.excluded[str(status)] += 1
            continue
        where = f"{path}: episode {episode_id!r}"
        try:
            doc = parse_json(text, str(path))
            record = parse_episode(doc)
        except DataError as exc:
            checker.unreadable(where, str(episode_id), exc.problem)
            continue
        except (ValueError, TypeError) as exc:
            checker.unreadable(where, str(episode_id), f"bad: {exc}")
            continue
        if record.episode_id != episode_id:
            raise RecordsError(
                f"{path}: episode {episode_id!r}: record says episode_id {record.episode_id!r}"
            )
        if current and record.spec_hash and record.spec_hash != current:
            checker.excluded[EARLIER_SPEC] += 1
            continue
        extra = mirror_flag_problem(doc)
        if steps is not None:  # a database with no step rows at all holds no traces
            count, first, last = steps.get(episode_id, (0, None, None))
            if count != record.actions_used:
                # Step rows deleted or added after the run: the runner reruns such an
                # episode, so it is left out here (and counted) like one still to run.
                checker.excluded[TRACE_MISMATCH] += 1
                continue
            problem = steps_problem(record, count, first, last)
            extra += [problem] if problem else []
        checker.add(record, f"{path}: episode {episode_id!r}", extra)
    return checker.result(path, "sqlite")


@dataclass
class _Checker:
    """Collects the records of one source, leaving out fault records and checking the rest."""

    declared: Declared
    skip_invalid: bool
    records: list[EpisodeRecord] = field(default_factory=list)
    excluded: Counter[str] = field(default_factory=Counter)
    invalid: list[InvalidRecord] = field(default_factory=list)
    cross: CrossCheck = field(default_factory=CrossCheck)

    def add(self, record: EpisodeRecord, where: str, extra: list[str] | None = None) -> None:
        if is_infrastructure(record):
            self.excluded[record.termination] += 1
            return
        problems = record_problems(record, self.declared) + (extra or [])
        if not problems:
            cross = self.cross.problem(record)
            problems = [cross] if cross else []
        if problems:
            self.invalid.append(InvalidRecord(where, record.episode_id, "; ".join(problems)))
            return
        self.records.append(record)

    def unreadable(self, where: str, episode_id: str, reason: str) -> None:
        """A record that cannot be read (``reason``; ``bad: ...`` when it is JSON but not an
        episode record): refused like an inconsistent one, or left out and listed with
        ``--skip-invalid`` (a JSONL file whose last line was cut short, say)."""
        bad = reason.startswith("bad: ")
        why = reason.removeprefix("bad: ")
        self.invalid.append(InvalidRecord(where, episode_id, why, "bad" if bad else "unreadable"))

    def result(self, path: Path, kind: str) -> LoadedResults:
        if self.invalid and not self.skip_invalid:
            raise RecordsError(refusal(self.invalid))
        return LoadedResults(
            path, kind, self.records, dict(sorted(self.excluded.items())), self.invalid
        )


def _sniff(path: Path) -> str:
    if not path.exists():
        raise RecordsError(f"no such results file: {path}")
    if path.is_dir():
        inside = path / "results.sqlite"
        hint = f": name its results database, {inside}" if inside.is_file() else ""
        raise RecordsError(f"{path} is a directory, not a results file{hint}")
    if path.suffix.lower() == ".jsonl":
        return "jsonl"
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise RecordsError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head == SQLITE_MAGIC:
        return "sqlite"
    raise RecordsError(
        f"{path}: unknown results format (expected a .jsonl file of episode records "
        "or a MirrorCraft results database)"
    )


def load_results(
    path: str | Path,
    *,
    skip_invalid: bool = False,
    allow_empty: bool = False,
    declared: Declared | None = None,
) -> LoadedResults:
    """Load the evaluation episodes of a results database or JSONL file, with provenance.

    Every record is checked (``analysis.validate``): an inconsistent one raises
    ``RecordsError`` naming it, or with ``skip_invalid`` is left out and listed in
    ``invalid``. Records of infrastructure faults are left out and counted in
    ``excluded``. A source without any evaluation episode raises ``RecordsError``
    unless ``allow_empty``.
    """
    p = Path(path)
    declared = declared or Declared()
    spec = stored_spec(p)
    if spec is not None:
        # The runner validated the agents of the spec it ran (labels of user agents included).
        declared = Declared(declared.rule_sets, declared.agents | spec_agent_ids(spec))
    checker = _Checker(declared, skip_invalid)
    loaded = _load_jsonl(p, checker) if _sniff(p) == "jsonl" else _load_sqlite(p, checker)
    if not loaded.records and not allow_empty:
        left = sum(loaded.excluded.values()) + len(loaded.invalid)
        why = f"all {left} record(s) were left out" if left else "it holds no episode records"
        raise RecordsError(
            f"{p}: nothing to analyse: {why} (--allow-empty accepts an empty result)"
        )
    return loaded


def stored_spec(path: str | Path) -> dict[str, Any] | None:
    """The experiment spec a results database was written under (its ``meta`` table),
    or None for JSONL, a database without one, or one that cannot be read."""
    p = Path(path)
    try:
        if _sniff(p) != "sqlite":
            return None
        with closing(connect_readonly(p)) as con:
            row = con.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
    except (RecordsError, sqlite3.Error, OSError):
        return None
    if row is None:
        return None
    try:
        doc = parse_json(str(row[0]), str(p))
    except DataError:
        return None
    return doc if isinstance(doc, dict) else None


def spec_agent_ids(spec: dict[str, Any]) -> frozenset[str]:
    """The agent ids a stored spec names: plain names, and entries' labels or names."""
    out: set[str] = set()
    for a in spec.get("agents") or ():
        if isinstance(a, str):
            out.add(a)
        elif isinstance(a, dict):
            value = a.get("label") or a.get("name")
            if isinstance(value, str):
                out.add(value)
    return frozenset(out)


def load_records(path: str | Path, **options: Any) -> list[EpisodeRecord]:
    """The evaluation episodes in ``path`` (JSONL or database; infrastructure faults left out).

    ``options`` are those of ``load_results``.
    """
    return load_results(path, **options).records


class StepReader:
    """Reads step records of many episodes over one read-only connection (a context manager)."""

    def __init__(self, db_path: str | Path) -> None:
        self.path = Path(db_path)
        if _sniff(self.path) != "sqlite":
            raise RecordsError(f"{self.path}: steps are only stored in a results database")
        self._con = connect_readonly(self.path)

    def __enter__(self) -> StepReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._con.close()

    def steps(self, episode_id: str) -> list[StepRecord]:
        """The step records of one episode, in action order (empty when none were stored)."""
        rows = _query(
            self._con,
            self.path,
            "SELECT step, record FROM steps WHERE episode_id = ? ORDER BY step",
            (episode_id,),
        )
        out: list[StepRecord] = []
        for step, text in rows:
            where = f"{self.path}: episode {episode_id!r} step {step}"
            try:
                out.append(parse_step(parse_json(text, where)))
            except DataError as exc:
                raise RecordsError(f"{where}: {exc.problem}") from None
            except (ValueError, TypeError) as exc:
                raise RecordsError(f"{where}: bad step record: {exc}") from None
        return out


def load_steps(db_path: str | Path, episode_id: str) -> list[StepRecord]:
    """The step records of one episode, in action order (empty when none were stored)."""
    with StepReader(db_path) as reader:
        return reader.steps(episode_id)
