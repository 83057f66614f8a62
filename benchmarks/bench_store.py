"""Knowledge-store load time against stream length: a full replay (how every load worked
before the cached state) and a load from the cached state, plus the time of a commit.

One synthetic MineEvolve stream (26 operations per episode: 8 % add, 32 % reinforce,
57 % use, 3 % retire, as a long curated stream does) grows to ``--episodes``; at a few
lengths it is loaded read-only, as an episode's worker loads it. A stream of E episodes
loads E times, so its total load time is the sum over lengths (printed at the end).

Run: .venv/bin/python benchmarks/bench_store.py [--episodes 508 | --quick]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry
from mirrorcraft.agents.mineevolve.store import KnowledgeStore

OPS_PER_EPISODE = 26


def add(eid: str, rnd: random.Random) -> dict[str, Any]:
    kind = rnd.choice(["skill", "remedy"])
    step = {
        "action": {"skill": "craft", "args": {"item": "stick"}},
        "checks": [{"type": "action_ok"}],
    }
    doc = KnowledgeEntry(
        id=eid,
        kind=kind,  # type: ignore[arg-type]
        trigger=("target:stick", f"goal:item{rnd.randrange(50)}"),
        failure_type="MISSING_STATION",
        risk_pattern="crafting sticks fails here",
        steps=(step, step, step) if kind == "skill" else (),
        repair=(step,) if kind == "remedy" else (),
    )
    return {"op": "add", "entry": doc.model_dump(mode="json")}


def episode(e: int, ids: list[str], rnd: random.Random) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for _ in range(OPS_PER_EPISODE):
        r = rnd.random()
        if r < 0.08 or not ids:
            ids.append(f"k_{len(ids) + 1:05d}")
            ops.append(add(ids[-1], rnd))
        elif r < 0.40:
            ops.append({"op": "reinforce", "id": rnd.choice(ids), "evidence": [f"ep{e}"]})
        elif r < 0.97:
            ops.append({"op": "use", "id": rnd.choice(ids), "success": rnd.random() < 0.5})
        else:
            ops.append({"op": "retire", "id": rnd.choice(ids)})
    return ops


def best_of(fn: Any, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=508)
    ap.add_argument("--quick", action="store_true", help="64 episodes (a check that it runs)")
    args = ap.parse_args()
    if args.quick:
        args.episodes = 64
    marks = sorted({max(1, args.episodes * k // 8) for k in range(1, 9)})
    rnd = random.Random(0)
    ids: list[str] = []
    commits: list[float] = []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.sqlite"
        with KnowledgeStore.open(path) as store:
            for e in range(1, args.episodes + 1):
                ops = episode(e, ids, rnd)
                t = time.perf_counter()
                store.commit(f"ep{e}", "vanilla", ops)
                commits.append(time.perf_counter() - t)
                if e in marks:
                    with KnowledgeStore.open(path, read_only=True) as ro:
                        full = best_of(lambda: ro.state(use_cache=False))
                        cached = best_of(lambda: ro.state())
                        assert ro.state() == ro.state(use_cache=False)
                    rows.append((e, e * OPS_PER_EPISODE, len(ids), full, cached))
    print(f"{'episodes':>8} {'operations':>10} {'entries':>7} {'full replay':>12} {'cached':>9}")
    for e, n, k, full, cached in rows:
        print(f"{e:>8} {n:>10,} {k:>7} {full * 1000:>9.1f} ms {cached * 1000:>6.1f} ms")
    # The stream's total: each episode loads the store at its length (linear between marks).
    xs = [0] + [r[0] for r in rows]
    for col, name in ((3, "full replay"), (4, "cached")):
        ys = [0.0] + [r[col] for r in rows]
        total = sum((xs[i] - xs[i - 1]) * (ys[i] + ys[i - 1]) / 2 for i in range(1, len(xs)))
        print(f"stream of {args.episodes} episodes, loads in all ({name}): {total:.1f} s")
    print(
        f"commit (with the cache update): median {statistics.median(commits) * 1000:.1f} ms, "
        f"last {commits[-1] * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
