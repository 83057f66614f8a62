"""Reading results: a JSONL file of episode records or a results database (SQLite).

Both sources are validated before anything is aggregated: a record with a
missing, unknown or mistyped field is refused with the line number (JSONL) or
the episode id (database) named, so a bad file never produces silent numbers.
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

from mirrorcraft.runner.records import SCHEMA_VERSION, EpisodeRecord, StepRecord

SQLITE_MAGIC = b"SQLite format 3\x00"
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
    """Database rows not counted, by status (e.g. ``infra_fault``)."""

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
    "vanilla_fingerprint", "world_fingerprint", "spec_hash", "agent_error",
)  # fmt: skip
_INT_FIELDS = (
    "budget", "repetition", "seed", "score", "actions_used", "model_calls", "prompt_tokens",
    "completion_tokens", "schema_version",
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
    "wall_seconds": (_is_num, "a number"),
    "template_hashes": (_dict_of(_is_str), "an object of strings"),
    "memory": (lambda v: type(v) is dict, "an object"),
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
    missing = [name for name in required if name not in doc]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    unknown = sorted(set(doc) - set(checks))
    if unknown:
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


def _iter_jsonl(path: Path) -> Iterator[tuple[int, EpisodeRecord]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise RecordsError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        n = 0
        try:
            for n, line in enumerate(handle, 1):
                text = line.strip()
                if not text:
                    continue
                try:
                    doc = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise RecordsError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
                try:
                    yield n, parse_episode(doc)
                except (ValueError, TypeError) as exc:
                    raise RecordsError(f"{path}:{n}: bad episode record: {exc}") from None
        except UnicodeDecodeError:
            raise RecordsError(f"{path}:{n + 1}: not UTF-8 text") from None


def _load_jsonl(path: Path) -> LoadedResults:
    records: list[EpisodeRecord] = []
    seen: dict[str, int] = {}
    for line, record in _iter_jsonl(path):
        if record.episode_id in seen:
            raise RecordsError(
                f"{path}:{line}: episode_id {record.episode_id!r} already used on line "
                f"{seen[record.episode_id]}"
            )
        seen[record.episode_id] = line
        records.append(record)
    return LoadedResults(path, "jsonl", records)


def connect_readonly(path: Path) -> sqlite3.Connection:
    """Open a results database without any chance of writing to it."""
    try:
        return sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise RecordsError(f"cannot open results database {path}: {exc}") from None


def _query(con: sqlite3.Connection, path: Path, sql: str, args: tuple[Any, ...] = ()) -> Any:
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.Error as exc:
        raise RecordsError(f"{path}: not a readable MirrorCraft results database ({exc})") from None


EARLIER_SPEC = "earlier_spec"
"""Excluded-status name for evaluated episodes of a spec other than the one that ran last
(a folder resumed with ``--allow-changed-spec``): never pooled with the current spec's."""


def _current_spec_hash(con: sqlite3.Connection) -> str:
    """The spec hash of the run that wrote the database last ("" when it names none)."""
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'spec_hash'").fetchone()
        value = json.loads(row[0]) if row is not None else ""
    except (sqlite3.Error, ValueError, TypeError):
        return ""
    return value if isinstance(value, str) else ""


def _load_sqlite(path: Path) -> LoadedResults:
    with closing(connect_readonly(path)) as con:
        rows = _query(
            con, path, "SELECT episode_id, status, record FROM episodes ORDER BY episode_id"
        )
        current = _current_spec_hash(con)
    records: list[EpisodeRecord] = []
    excluded: Counter[str] = Counter()
    for episode_id, status, text in rows:
        if status != "ok":
            excluded[str(status)] += 1
            continue
        try:
            record = parse_episode(json.loads(text))
        except json.JSONDecodeError as exc:
            raise RecordsError(
                f"{path}: episode {episode_id!r}: not valid JSON ({exc.msg})"
            ) from None
        except (ValueError, TypeError) as exc:
            raise RecordsError(
                f"{path}: episode {episode_id!r}: bad episode record: {exc}"
            ) from None
        if record.episode_id != episode_id:
            raise RecordsError(
                f"{path}: episode {episode_id!r}: record says episode_id {record.episode_id!r}"
            )
        if current and record.spec_hash and record.spec_hash != current:
            excluded[EARLIER_SPEC] += 1
            continue
        records.append(record)
    return LoadedResults(path, "sqlite", records, dict(sorted(excluded.items())))


def _sniff(path: Path) -> str:
    if not path.exists():
        raise RecordsError(f"no such results file: {path}")
    if path.is_dir():
        raise RecordsError(f"{path} is a directory, not a results file")
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


def load_results(path: str | Path) -> LoadedResults:
    """Load the evaluation episodes of a results database or JSONL file, with provenance."""
    p = Path(path)
    return _load_jsonl(p) if _sniff(p) == "jsonl" else _load_sqlite(p)


def load_records(path: str | Path) -> list[EpisodeRecord]:
    """The evaluation episodes in ``path`` (JSONL or database; infrastructure faults left out)."""
    return load_results(path).records


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
                out.append(parse_step(json.loads(text)))
            except json.JSONDecodeError as exc:
                raise RecordsError(f"{where}: not valid JSON ({exc.msg})") from None
            except (ValueError, TypeError) as exc:
                raise RecordsError(f"{where}: bad step record: {exc}") from None
        return out


def load_steps(db_path: str | Path, episode_id: str) -> list[StepRecord]:
    """The step records of one episode, in action order (empty when none were stored)."""
    with StepReader(db_path) as reader:
        return reader.steps(episode_id)
