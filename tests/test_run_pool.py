"""The worker pool on its own: a worker that dies or overruns costs only its own payload."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from mirrorcraft.faults import Fault
from mirrorcraft.runner.pool import WorkerPool


def task(payload: Any) -> tuple[str, Any]:
    kind, value = payload
    if kind == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "sleep":
        time.sleep(value)
    return ("ok", (value, os.getpid()))


def _drain(pool: WorkerPool, n: int) -> dict[Any, Any]:
    got: dict[Any, Any] = {}
    deadline = time.monotonic() + 60
    while len(got) < n and time.monotonic() < deadline:
        got.update(pool.collect(0.5))
    return got


def test_a_dead_or_overrunning_worker_costs_only_its_own_payload() -> None:
    with WorkerPool(2, task) as pool:
        pool.submit("a", ("ok", 1))
        pool.submit("b", ("die", 0))
        got = _drain(pool, 2)
        assert got["a"][0] == "ok" and got["a"][1][0] == 1
        fault = got["b"][1]
        assert isinstance(fault, Fault) and fault.kind == "worker" and "SIGKILL" in fault.message
        pool.submit("c", ("sleep", 30), limit_s=0.5)
        pool.submit("d", ("ok", 4))
        got = _drain(pool, 2)
        assert got["d"] == ("ok", (4, got["d"][1][1]))
        assert got["c"][1].kind == "timeout" and "0.5 s" in got["c"][1].message
        assert pool.replaced == 2 and pool.free() == 2
        pool.submit("e", ("ok", 5))  # the pool goes on with fresh workers
        assert _drain(pool, 1)["e"][1][0] == 5
