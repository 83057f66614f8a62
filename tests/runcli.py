"""Helpers for tests that run ``mirrorcraft run`` as a user does: a subprocess, a spec file,
the packaged fake endpoint, and the results database read afterwards."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

KEY = "sk-test-secret-0123456789"
KEY_ENV = "FAKE_KEY"
WAIT = json.dumps({"thought": "look around", "skill": "wait", "args": {"ticks": 20}})
QUICK = {
    "retry_delay_s": 0.1,
    "retry_delay_max_s": 0.4,
    "pause_after_faults": 2,
    "give_up_after_s": 1.5,
}
"""Retry settings small enough for a test (the defaults wait 10 s growing to 5 min)."""


def llm_spec(base_url: str, name: str = "llm", **changes: Any) -> dict[str, Any]:
    """A small ReAct experiment against one endpoint: 3 rule sets x 2 repetitions, 3 actions."""
    client = {"max_retries": 0, "timeout_s": 10, **changes.pop("client", {})}
    spec: dict[str, Any] = {
        "schema_version": 1,
        "name": name,
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M01", "M04"],
        "tasks": ["diamond"],
        "agents": ["react"],
        "budget": 3,
        "repetitions": 2,
        "models": [
            {"name": "fake-model", "base_url": base_url, "api_key_env": KEY_ENV, "client": client}
        ],
        "execution": dict(QUICK),
    }
    spec.update(changes)
    return spec


def write_spec(path: Path, spec: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(spec))
    return path


def command(spec: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mirrorcraft.cli",
        "run",
        str(spec),
        "--out",
        str(out),
        "--no-report",
        *extra,
    ]


def env() -> dict[str, str]:
    return {**os.environ, KEY_ENV: KEY}


def cli(
    spec: Path,
    out: Path,
    *extra: str,
    timeout: float = 300,
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(spec, out, *extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**env(), **(extra_env or {})},
    )


def rows(db: Path, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of a query on a results database ([] while it does not exist or is being created)."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return list(con.execute(sql, args).fetchall())
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise


def ok_records(db: Path) -> dict[str, dict[str, Any]]:
    return {
        eid: json.loads(text)
        for eid, text in rows(db, "SELECT episode_id, record FROM episodes WHERE status = 'ok'")
    }


def step_counts(db: Path) -> dict[str, int]:
    return dict(rows(db, "SELECT episode_id, COUNT(*) FROM steps GROUP BY episode_id"))  # type: ignore[arg-type]


def faults(db: Path) -> list[tuple[str, str, str]]:
    return [(e, k, m) for e, k, m in rows(db, "SELECT episode_id, kind, message FROM faults")]
