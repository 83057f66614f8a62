"""Worker processes that fail alone: one episode per worker at a time, watched by the parent.

Unlike ``concurrent.futures.ProcessPoolExecutor`` (where one dead worker breaks
the whole pool and every episode in flight), each worker here has its own pipe,
so the parent always knows which episode a worker holds:

* a worker that dies (the OOM killer, ``kill -9``) costs only its own episode one
  fault of kind ``worker``; a fresh worker takes its place;
* an episode that runs past its wall-clock limit is stopped with its worker
  (SIGTERM, then SIGKILL after a grace period) and recorded as a fault of kind
  ``timeout``;
* workers die with their parent whatever signal it got: on Linux the kernel sends
  them SIGTERM when the parent dies (``PR_SET_PDEATHSIG``), and on every platform
  a thread in each worker polls its parent id and ends the worker when it changes.

Workers ignore SIGINT (Ctrl-C reaches the whole process group; the parent then
stops them) and turn SIGTERM into a normal exit, so an episode's cleanup code
(closing a real game server) still runs.

With ``depth`` 2 a busy worker is also handed its next payload, which waits in its pipe,
so it starts that one as soon as it has sent a result instead of waiting while the
parent stores the result and hands out work (about 2 ms an episode, 9% of a worker's
time in the reference grid). A worker still runs one payload at a time. A payload that
waited behind one that faulted never ran: ``collect`` returns it as ``NOT_STARTED``,
to be queued again without counting as an attempt. Its time limit starts when the
parent sees the result before it.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import Any

from mirrorcraft.faults import Fault

PR_SET_PDEATHSIG = 1
GRACE_S = 3.0
"""How long a worker told to stop (SIGTERM) gets before it is killed."""
QUEUED_BYTES_MAX = 16 * 1024
"""A bigger payload is not left in a busy worker's pipe (a pipe holds 64 KiB on Linux;
past that the parent's send would wait on a worker that waits on the parent). It is
kept here and sent when the worker is free."""
NOT_STARTED = ("not_started", None)
"""``collect``'s outcome for a payload that waited behind one whose worker died or was
stopped: it never ran."""


def die_with_parent(parent_pid: int) -> None:
    """Make this process end when ``parent_pid`` does (call it first thing in a child)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the watch was set
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent_pid:
            with contextlib.suppress(OSError):
                os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(GRACE_S)
            os._exit(1)


class WorkerStopped(SystemExit):
    """Raised in a worker told to stop (SIGTERM): unlike an agent's own ``sys.exit``, which
    the episode records as the agent's error, this one ends the worker."""


def _stop(_signum: int, _frame: Any) -> None:
    raise WorkerStopped(128 + signal.SIGTERM)


def _serve(conn: Connection, parent_pid: int, target: Callable[[Any], Any]) -> None:
    """A worker's life: take one payload, send back ``target(payload)``, until told to stop."""
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    while True:
        try:
            payload = conn.recv()
        except (EOFError, OSError):
            return
        if payload is None:
            return
        outcome = target(payload)
        try:
            conn.send(outcome)
        except (OSError, EOFError):
            return
        except Exception as exc:  # an outcome that cannot be pickled: say so instead
            conn.send(("fault", Fault("worker", f"the episode's result cannot be sent: {exc}")))


def _receive(conn: Connection) -> tuple[Any] | None:
    """The message waiting on ``conn`` (in a 1-tuple), or None if there is none or it broke."""
    try:
        if conn.poll(0):
            return (conn.recv(),)
    except Exception:  # EOF or a truncated message: the worker is gone
        return None
    return None


def describe_exit(code: int | None) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory, or killed by hand?)" if -code == signal.SIGKILL else ""
        return f"was killed by {name}{hint}"
    return f"exited with status {code}"


@dataclass
class _Held:
    token: Any
    limit: float | None
    unsent: bytes | None = None
    """The pickled payload, while it waits here rather than in the worker's pipe."""


@dataclass
class _Worker:
    process: Any  # multiprocessing.Process (typed loosely: it comes from a context)
    conn: Connection
    held: list[_Held] = field(default_factory=list)
    """The payloads handed to this worker, in order; the first is running."""
    deadline: float = float("inf")

    @property
    def busy(self) -> bool:
        return bool(self.held)

    def start_next(self, now: float) -> None:
        """The first held payload is now the running one: send it if it waited here."""
        if not self.held:
            self.deadline = float("inf")
            return
        head = self.held[0]
        if head.unsent is not None:
            self.conn.send_bytes(head.unsent)
            head.unsent = None
        self.deadline = now + head.limit if head.limit else float("inf")


class WorkerPool:
    """Up to ``size`` worker processes running ``target(payload)`` one payload each at a time.

    ``submit`` hands a payload to an idle worker (starting one if needed), or, with
    ``depth`` above 1, queues it behind a busy one's; ``collect`` waits up to ``wait_s``
    seconds and returns ``(token, outcome)`` pairs, where a worker's death or a payload
    past its time limit becomes ``("fault", Fault(...))`` and the payloads queued behind
    it ``NOT_STARTED``. Use it from one thread; ``close`` stops every worker.
    """

    def __init__(self, size: int, target: Callable[[Any], Any], depth: int = 1) -> None:
        self.size = max(size, 1)
        self.depth = max(depth, 1)
        self.target = target
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self._ctx = multiprocessing.get_context(method)
        self._workers: list[_Worker] = []
        self.replaced = 0
        """Workers that died or were stopped and replaced."""

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def busy(self) -> int:
        """Workers running a payload."""
        return sum(1 for w in self._workers if w.busy)

    def free(self) -> int:
        """How many more payloads ``submit`` takes now (queued ones included)."""
        held = sum(len(w.held) for w in self._workers)
        return self.size * self.depth - held

    def _start(self) -> _Worker:
        mine, theirs = self._ctx.Pipe()
        process = self._ctx.Process(  # type: ignore[attr-defined]
            target=_serve, args=(theirs, os.getpid(), self.target), name="mirrorcraft-worker"
        )
        # A forked worker never collects the objects it inherits (loaded worlds, rule sets,
        # caches), so its garbage collector does not touch, and copy, those pages.
        gc.freeze()
        try:
            process.start()
        finally:
            gc.unfreeze()
        theirs.close()
        worker = _Worker(process, mine)
        self._workers.append(worker)
        return worker

    def _choose(self) -> _Worker:
        """An idle worker (a new one if none is idle and there is room), else the busy
        worker holding the fewest payloads."""
        for w in list(self._workers):
            if not w.busy:
                if w.process.is_alive():
                    return w
                self._discard(w)  # died while idle
        if len(self._workers) < self.size:
            return self._start()
        return min(self._workers, key=lambda w: len(w.held))

    def submit(self, token: Any, payload: Any, limit_s: float | None = None) -> None:
        if self.free() <= 0:
            raise RuntimeError("no free worker")
        worker = self._choose()
        data = bytes(ForkingPickler.dumps(payload))
        held = _Held(token, limit_s)
        if worker.busy and len(data) > QUEUED_BYTES_MAX:
            held.unsent = data
        else:
            try:
                worker.conn.send_bytes(data)
            except (OSError, EOFError):
                if worker.busy:  # it died running: collect reports that; this one waits here
                    held.unsent = data
                else:
                    self._discard(worker)
                    worker = self._start()
                    worker.conn.send_bytes(data)
        worker.held.append(held)
        if len(worker.held) == 1:
            worker.deadline = time.monotonic() + limit_s if limit_s else float("inf")

    def collect(self, wait_s: float) -> list[tuple[Any, Any]]:
        busy = [w for w in self._workers if w.busy]
        if not busy:
            time.sleep(max(wait_s, 0.0))
            return []
        now = time.monotonic()
        timeout = max(0.0, min(wait_s, min(w.deadline for w in busy) - now))
        ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout))
        results: list[tuple[Any, Any]] = []
        for w in busy:
            if w.conn not in ready and w.process.sentinel not in ready:
                continue
            got = self._take(w, results)
            if not w.held or (got and w.process.is_alive()):
                continue
            # nothing came although the pipe or the process said so: the worker is gone
            w.process.join(timeout=1.0)
            fault = Fault(
                "worker",
                f"the worker process running this episode {describe_exit(w.process.exitcode)}; "
                "the episode is retried",
            )
            results.extend(self._drop(w, fault))
        now = time.monotonic()
        for w in [w for w in self._workers if w.busy and w.deadline <= now]:
            # A result sent after ``wait`` returned is taken, not thrown away with the worker.
            self._take(w, results)
            if not w.busy or w.deadline > now:
                continue
            limit = w.held[0].limit or 0.0
            self._kill(w)
            fault = Fault(
                "timeout",
                f"the episode ran past its wall-clock limit of {limit:g} s and was stopped",
            )
            results.extend(self._drop(w, fault))
        return results

    def _take(self, w: _Worker, results: list[tuple[Any, Any]]) -> bool:
        """Move the results waiting in ``w``'s pipe to ``results``, each starting the
        worker's next payload; whether any came."""
        got = False
        received = _receive(w.conn)
        while received is not None and w.held:
            results.append((w.held.pop(0).token, received[0]))
            got = True
            try:
                w.start_next(time.monotonic())
            except (OSError, EOFError):
                break  # it died: seen now if it has exited, else on a later call
            received = _receive(w.conn) if w.held else None
        return got

    def _drop(self, w: _Worker, fault: Fault) -> list[tuple[Any, Any]]:
        """A worker is gone: its running payload gets ``fault``, the queued ones never ran."""
        held, w.held = w.held, []
        self._discard(w)
        ran = held[0].unsent is None  # a payload still kept here was never sent
        first = (held[0].token, ("fault", fault) if ran else NOT_STARTED)
        return [first] + [(h.token, NOT_STARTED) for h in held[1:]]

    def _discard(self, w: _Worker) -> None:
        with contextlib.suppress(OSError):
            w.conn.close()
        if w in self._workers:
            self._workers.remove(w)
            self.replaced += 1

    def _kill(self, w: _Worker) -> None:
        if w.process.is_alive():
            with contextlib.suppress(OSError):
                w.process.terminate()
            w.process.join(timeout=GRACE_S)
            if w.process.is_alive():
                with contextlib.suppress(OSError):
                    w.process.kill()
                w.process.join(timeout=GRACE_S)
        self._discard(w)

    def close(self) -> None:
        """Stop every worker: idle ones are told to finish, busy ones are terminated."""
        for w in list(self._workers):
            if not w.busy:
                with contextlib.suppress(OSError, EOFError):
                    w.conn.send(None)
        for w in list(self._workers):
            if w.busy:
                with contextlib.suppress(OSError):
                    w.process.terminate()
        deadline = time.monotonic() + GRACE_S
        for w in list(self._workers):
            w.process.join(timeout=max(0.0, deadline - time.monotonic()))
            if w.process.is_alive():
                with contextlib.suppress(OSError):
                    w.process.kill()
                w.process.join(timeout=1.0)
            with contextlib.suppress(OSError):
                w.conn.close()
        self._workers.clear()
