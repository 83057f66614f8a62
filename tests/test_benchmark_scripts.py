"""Every benchmark script answers ``--help`` with what it measures, without running it (two
of them ignored their arguments, so ``--help`` started minutes of measuring)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("bench_*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_a_benchmark_script_answers_help_without_running(script: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=script.parent,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage:"), out.stdout[:300]


def test_the_benchmarks_are_found() -> None:
    assert len(BENCHMARKS) >= 10
