"""MirrorCraft against a peer environment, interleaved in one run: actions per second.

Run: .venv/bin/pip install -e '.[bench]'   (installs the peer: crafter, pinned)
     .venv/bin/python benchmarks/bench_peers.py            (about a minute)
     .venv/bin/python benchmarks/bench_peers.py --quick    (a check that it runs)

Each round runs, in a shuffled order, the same amount of work from each of:
- MirrorCraft, realistic: the reference planners' recorded actions replayed through
  ``mirrorcraft.env`` (reset, steps, observations);
- MirrorCraft, random: the ``random`` reference agent's well-formed actions replayed;
- Crafter (``crafter.Env`` as pip installs it, default 64x64 image observation), uniformly
  random actions, resetting when an episode ends.
Rates are CPU time (``time.process_time``) of this process; the ratios are taken round by
round (so drift in the machine's speed cancels) and shown as median (min, max).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable

from mirrorcraft.native import core_summary
from workloads import interleaved, planner_actions, random_actions, replay, spread


def crafter_task(steps: int) -> Callable[[], tuple[int, float]] | None:
    try:
        import crafter  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    import numpy as np

    env = crafter.Env(seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    n_actions = env.action_space.n

    def run() -> tuple[int, float]:
        start = time.process_time()
        for _ in range(steps):
            _obs, _reward, done, _info = env.step(int(rng.integers(n_actions)))
            if done:
                env.reset()
        return steps, time.process_time() - start

    return run


def ratios(a: list[float], b: list[float]) -> str:
    rs = [x / y for x, y in zip(a, b, strict=True)]
    return f"{statistics.median(rs):.2f}x (min {min(rs):.2f}x, max {max(rs):.2f}x)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one short round")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 7)")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 7)
    print(core_summary())
    planned = planner_actions(quick=args.quick)
    randoms = random_actions(episodes=2 if args.quick else 4)
    tasks: dict[str, Callable[[], tuple[int, float]]] = {
        "mirrorcraft realistic": lambda: replay(planned),
        "mirrorcraft random": lambda: replay(randoms),
    }
    peer = crafter_task(200 if args.quick else 1000)
    if peer is not None:
        tasks["crafter random"] = peer
    try:
        import numba  # type: ignore[import-not-found, unused-ignore]  # noqa: F401

        numba_note = "numba installed (Crafter's world generation uses it)"
    except ImportError:
        numba_note = "numba not installed"
    rates = interleaved(tasks, rounds)
    print(
        f"python {platform.python_version()} on {platform.machine()}, {rounds} round(s); "
        f"{numba_note}"
    )
    for name, values in rates.items():
        print(f"{name:<22} {spread(values)} actions/s")
    if peer is None:
        print("crafter is not installed: pip install -e '.[bench]' to compare", file=sys.stderr)
        return
    crafter_rates = rates["crafter random"]
    print(
        "mirrorcraft realistic / crafter random: "
        f"{ratios(rates['mirrorcraft realistic'], crafter_rates)}"
    )
    print(
        f"mirrorcraft random / crafter random:    {ratios(rates['mirrorcraft random'], crafter_rates)}"
    )


if __name__ == "__main__":
    main()
