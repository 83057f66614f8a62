"""``mirrorcraft report`` at the paper's scale and beyond: seconds, files, largest file.

A synthetic results database (``tests/test_analysis_helpers.synthetic_study``: two models,
ReAct hidden and disclosed, Reflexion and XENON, three tasks, Vanilla and six suites, at
most ``--budget`` actions an episode, each with its step records) is copied with distinct
worlds and episode ids until it holds each requested count of episodes (8,640 is the
paper's main study). Each database is reported twice through the CLI, with and without the
viewer, into a fresh folder, and the run prints the wall time, the files written, the
largest file and the most files in one folder.

Run: .venv/bin/python benchmarks/bench_report.py [--episodes 8640 50000] [--no-viewer-only]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_analysis_helpers import SCHEMA, synthetic_study  # noqa: E402

ENTRY = "import sys; from mirrorcraft.cli import entry; sys.exit(entry())"


def build_db(path: Path, episodes: int, budget: int) -> None:
    """``episodes`` records (copies of one synthetic study, each copy its own worlds)."""
    records, steps = synthetic_study(seed=1, worlds=("plains-1", "taiga-1"), budget_override=budget)
    base = [(r.to_json(), [s.to_json() for s in steps[r.episode_id]]) for r in records]
    con = sqlite3.connect(path)
    with con:
        con.executescript(SCHEMA)
        copy = 0
        written = 0
        while written < episodes:
            for record, rows in base:
                if written == episodes:
                    break
                ident = f"{record['episode_id']}/c{copy}"
                doc = {**record, "episode_id": ident, "world": f"{record['world']}-c{copy}"}
                con.execute("INSERT INTO episodes VALUES (?, 'ok', ?)", (ident, json.dumps(doc)))
                con.executemany(
                    "INSERT INTO steps VALUES (?, ?, ?)",
                    [(ident, s["step"], json.dumps({**s, "episode_id": ident})) for s in rows],
                )
                written += 1
            copy += 1
    con.close()


def survey(folder: Path) -> tuple[int, int, str, int]:
    """Files, the largest file's size and name, the most files in one folder."""
    files, largest, name, crowded = 0, 0, "", 0
    for here, _, names in os.walk(folder):
        files += len(names)
        crowded = max(crowded, len(names))
        for n in names:
            size = (Path(here) / n).stat().st_size
            if size > largest:
                largest, name = size, str((Path(here) / n).relative_to(folder))
    return files, largest, name, crowded


def report(db: Path, out: Path, viewer: bool) -> None:
    cmd = [sys.executable, "-c", ENTRY, "report", str(db), "--out", str(out)]
    if not viewer:
        cmd.append("--no-viewer")
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    files, largest, name, crowded = survey(out)
    print(
        f"  {'viewer   ' if viewer else 'no viewer'}: {seconds:7.1f} s, {files:6d} files, "
        f"largest {largest / 1e6:6.2f} MB ({name}), at most {crowded} files in one folder",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, nargs="+", default=[8640, 50000])
    parser.add_argument("--budget", type=int, default=40, help="most actions an episode")
    parser.add_argument("--no-viewer-only", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.episodes:
            db = Path(tmp) / f"results-{n}.sqlite"
            start = time.perf_counter()
            build_db(db, n, args.budget)
            made = time.perf_counter() - start
            print(f"{n} episodes ({db.stat().st_size / 1e6:.0f} MB database, {made:.0f} s to make)")
            report(db, Path(tmp) / f"bare-{n}", viewer=False)
            if not args.no_viewer_only:
                report(db, Path(tmp) / f"report-{n}", viewer=True)


if __name__ == "__main__":
    main()
