"""The worker pool on its own: a worker that dies or overruns costs only its own payload."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from mirrorcraft.faults import Fault
from mirrorcraft.runner.pool import NOT_STARTED, QUEUED_BYTES_MAX, WorkerPool


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


def test_a_queued_payload_runs_next_on_the_same_worker() -> None:
    with WorkerPool(2, task, depth=2) as pool:
        assert pool.free() == 4
        for token in "abcd":
            pool.submit(token, ("ok", token))
        assert pool.free() == 0 and pool.busy == 2
        got = _drain(pool, 4)
        assert {t: v[1][0] for t, v in got.items()} == {t: t for t in "abcd"}
        assert len({v[1][1] for v in got.values()}) == 2  # two processes ran the four
        assert pool.free() == 4 and pool.replaced == 0


def test_payloads_queued_behind_a_dead_or_stopped_worker_never_ran() -> None:
    with WorkerPool(1, task, depth=2) as pool:
        pool.submit("die", ("die", 0))
        pool.submit("next", ("ok", 1))
        got = _drain(pool, 2)
        assert got["die"][1].kind == "worker"
        assert got["next"] is NOT_STARTED
        pool.submit("slow", ("sleep", 30), limit_s=0.5)
        pool.submit("after", ("ok", 2))
        got = _drain(pool, 2)
        assert got["slow"][1].kind == "timeout" and got["after"] is NOT_STARTED
        pool.submit("again", ("ok", 3))
        assert _drain(pool, 1)["again"][1][0] == 3
        assert pool.replaced == 2


def test_a_large_payload_waits_in_the_parent_rather_than_in_a_busy_workers_pipe() -> None:
    # Both payloads and both results are bigger than a pipe holds. Sent at once, the
    # second would block the parent while the worker blocks sending the first's result.
    big = "x" * (64 * QUEUED_BYTES_MAX)

    def hung(_signum: int, _frame: Any) -> None:
        raise AssertionError("the parent and the worker wait on each other")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    try:
        with WorkerPool(1, task, depth=2) as pool:
            pool.submit("first", ("ok", big))
            pool.submit("second", ("ok", big + "y"))
            got = _drain(pool, 2)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert got["first"][1][0] == big and got["second"][1][0] == big + "y"


def test_a_result_sent_as_the_deadline_passes_is_kept_not_stopped(monkeypatch: Any) -> None:
    """The race where a worker's result arrives after ``wait`` returned, past its deadline:
    ``wait`` is made to see nothing, so only the deadline check can find the result."""
    import mirrorcraft.runner.pool as pool_module

    with WorkerPool(1, task, depth=2) as pool:
        pool.submit("a", ("sleep", 0.3), limit_s=0.2)
        pool.submit("b", ("ok", 2), limit_s=30)
        time.sleep(1.0)  # both results are in the pipe; the first one's deadline has passed
        monkeypatch.setattr(pool_module, "wait", lambda _objects, _timeout: [])
        got = dict(pool.collect(0.0))
        assert got == {"a": ("ok", (0.3, got["a"][1][1])), "b": ("ok", (2, got["a"][1][1]))}
        assert pool.replaced == 0 and pool.free() == 2
