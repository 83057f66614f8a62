"""Which episode runs next: attempts per run, growing waits, and model endpoints that pause.

The fault lifecycle of one ``mirrorcraft run`` invocation:

* every unfinished episode starts the run with no attempts used (faults stored by
  earlier runs stay in the database for the record but never stop a rerun);
* a faulted episode waits before its next attempt, ``retry_delay_s`` doubling up to
  ``retry_delay_max_s``; after ``max_attempts`` faults in this run it is left for
  the next run;
* ``pause_after_faults`` faults in a row from one model endpoint pause dispatch to
  it (waits growing the same way); after a pause one episode probes it, and a
  success resumes normal dispatch; a failed probe is charged to the endpoint, not
  to the episode's attempts, so an outage does not use up episodes;
* an endpoint whose preflight timed out starts the run that way, as if paused
  (``Breaker.not_answering``): one episode probes it at a time, instead of every slot
  waiting out the client's full time limit on it at once;
* an endpoint that has failed without a break for ``give_up_after_s``, or that
  answered with a configuration error (fault kind ``config``), gets no further
  episodes in this run; they are left for the next run.

Times come from an injectable clock so the policy can be tested without waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mirrorcraft.faults import Fault
from mirrorcraft.runner.execution_spec import ExecutionSpec


@dataclass
class Entry:
    """An episode waiting to run (or running) in this invocation."""

    job: Any
    endpoint: str | None = None
    attempts: int = 0
    not_before: float = 0.0
    last: Fault | None = None
    probe: bool = False
    """Started as the one probe of a paused endpoint: its failure is the endpoint's, not its own."""


@dataclass
class Endpoint:
    label: str
    in_a_row: int = 0
    failing_since: float | None = None
    paused_until: float = 0.0
    pauses: int = 0
    in_flight: int = 0
    stopped: str | None = None
    unanswered: bool = False
    """It did not answer the run's preflight and has not answered since."""


def duration(seconds: float) -> str:
    if seconds < 10:
        return f"{max(seconds, 0.0):.1f}s"
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Breaker:
    """The state of each model endpoint: failing, paused, probing, or stopped for this run."""

    def __init__(self, policy: ExecutionSpec, say: Callable[[str], None]) -> None:
        self.policy = policy
        self.say = say
        self.endpoints: dict[str, Endpoint] = {}

    def get(self, label: str) -> Endpoint:
        if label not in self.endpoints:
            self.endpoints[label] = Endpoint(label)
        return self.endpoints[label]

    def probing(self, ep: Endpoint) -> bool:
        return ep.unanswered or ep.in_a_row >= self.policy.pause_after_faults

    def stopped(self, label: str, now: float) -> str | None:
        """Why the endpoint gets no more episodes in this run (None: it may)."""
        ep = self.get(label)
        if ep.stopped is None and ep.failing_since is not None and self.probing(ep):
            failing = now - ep.failing_since
            if failing >= self.policy.give_up_after_s:
                ep.stopped = f"endpoint failing for {duration(failing)}"
                self.say(
                    f"endpoint {ep.label} has been failing for {duration(failing)}; "
                    "its remaining episodes are left for a rerun"
                )
        return ep.stopped

    def start(self, label: str, now: float) -> bool:
        """May an episode calling this endpoint start now? (True counts it as in flight.)"""
        ep = self.get(label)
        if now < ep.paused_until or (self.probing(ep) and ep.in_flight > 0):
            return False
        ep.in_flight += 1
        return True

    def release(self, label: str) -> None:
        ep = self.get(label)
        ep.in_flight = max(ep.in_flight - 1, 0)

    def not_answering(self, label: str, now: float) -> None:
        """The endpoint's preflight timed out (each call waits the client's limit): it
        starts the run as one that failed ``pause_after_faults`` times in a row, so one
        episode at a time probes it (a failed probe pauses it, growing; ``give_up_after_s``
        failing, counted from now, stops it) rather than every slot sending it an episode
        that waits ``client.timeout_s`` x attempts per call before its first fault."""
        ep = self.get(label)
        ep.unanswered = True
        if ep.failing_since is None:
            ep.failing_since = now

    def success(self, label: str) -> None:
        ep = self.get(label)
        if ep.in_a_row or ep.unanswered:
            if ep.pauses or ep.unanswered:
                self.say(f"endpoint {ep.label} answering again; dispatch resumes")
            ep.in_a_row, ep.failing_since, ep.paused_until, ep.pauses = 0, None, 0.0, 0
            ep.unanswered = False

    def fault(self, label: str, fault: Fault, now: float) -> None:
        ep = self.get(label)
        if not fault.endpoint or ep.stopped is not None:
            return
        if fault.kind == "config":
            ep.stopped = f"configuration error: {fault.message}"
            self.say(
                f"endpoint {ep.label}: configuration error, no more episodes go to it in this "
                f"run: {fault.message}"
            )
            return
        ep.in_a_row += 1
        if ep.failing_since is None:
            ep.failing_since = now
        if self.stopped(label, now) is None and self.probing(ep) and now >= ep.paused_until:
            ep.pauses += 1
            pause = self.policy.retry_delay(ep.pauses)
            ep.paused_until = now + pause
            self.say(
                f"endpoint {ep.label} failing for {duration(now - ep.failing_since)} "
                f"({ep.in_a_row} fault(s) in a row"
                f"{' after no answer to the preflight' if ep.unanswered else ''}, "
                f"last: {fault.kind}), pausing {duration(pause)}"
            )

    def status(self, now: float) -> list[str]:
        """Progress-line notes: paused or stopped endpoints."""
        notes = []
        for ep in self.endpoints.values():
            if ep.stopped is not None:
                notes.append(f"endpoint {ep.label} stopped")
            elif now < ep.paused_until and ep.failing_since is not None:
                notes.append(
                    f"endpoint {ep.label} failing for {duration(now - ep.failing_since)}, pausing"
                )
            elif self.probing(ep) and ep.failing_since is not None:
                notes.append(
                    f"endpoint {ep.label} failing for {duration(now - ep.failing_since)}, "
                    "one episode at a time probes it"
                )
        return notes


class Dispatcher:
    """Holds the queue of one run and applies the fault policy to it."""

    def __init__(
        self,
        entries: list[Entry],
        policy: ExecutionSpec,
        *,
        clock: Callable[[], float] = time.monotonic,
        say: Callable[[str], None] = lambda _line: None,
        not_answering: Iterable[str] = (),
    ) -> None:
        """``not_answering``: labels of endpoints that did not answer the preflight."""
        self.pending = list(entries)
        self.policy = policy
        self.clock = clock
        self.breaker = Breaker(policy, say)
        used = {e.endpoint for e in self.pending}
        for label in not_answering:
            if label in used:
                self.breaker.not_answering(label, clock())
        self.left: list[tuple[Entry, str]] = []
        """Episodes given up in this run, with the reason (they stay unfinished)."""

    def take(self, slots: int) -> list[Entry]:
        """Up to ``slots`` entries that may start now, in queue order."""
        now = self.clock()
        out: list[Entry] = []
        keep: list[Entry] = []
        for i, e in enumerate(self.pending):
            if len(out) >= slots:
                keep.extend(self.pending[i:])
                break
            if e.endpoint is not None:
                why = self.breaker.stopped(e.endpoint, now)
                if why is not None:
                    self.left.append((e, why))
                    continue
            if e.endpoint is not None and e.not_before <= now:
                e.probe = self.breaker.probing(self.breaker.get(e.endpoint))
            if e.not_before > now or (
                e.endpoint is not None and not self.breaker.start(e.endpoint, now)
            ):
                keep.append(e)
                continue
            out.append(e)
        self.pending = keep
        return out

    def wake_in(self) -> float | None:
        """Seconds until a pending entry may become ready (None: none will before a result)."""
        if not self.pending:
            return None
        now = self.clock()
        soonest = float("inf")
        for e in self.pending:
            paused = 0.0
            if e.endpoint is not None:
                ep = self.breaker.get(e.endpoint)
                if self.breaker.probing(ep) and ep.in_flight > 0:
                    continue  # waits for the probe in flight
                paused = ep.paused_until
            soonest = min(soonest, max(e.not_before, paused))
        return None if soonest == float("inf") else max(0.0, soonest - now)

    @property
    def idle(self) -> bool:
        return not self.pending

    def succeeded(self, e: Entry) -> None:
        if e.endpoint is not None:
            self.breaker.release(e.endpoint)
            self.breaker.success(e.endpoint)

    def put_back(self, e: Entry) -> None:
        """An entry taken but never started (it waited behind an episode whose worker died):
        first in the queue again, with no attempt counted."""
        if e.endpoint is not None:
            self.breaker.release(e.endpoint)
        self.pending.insert(0, e)

    def faulted(self, e: Entry, fault: Fault, give_up: str | None = None) -> bool:
        """Apply the policy to a fault; True when the episode is queued again in this run.
        With ``give_up`` (why) it is not, whatever the attempts left."""
        now = self.clock()
        if not (e.probe and fault.endpoint and fault.kind != "config"):
            e.attempts += 1
        e.last = fault
        if e.endpoint is not None:
            self.breaker.release(e.endpoint)
            self.breaker.fault(e.endpoint, fault, now)
            why = self.breaker.stopped(e.endpoint, now)
            if why is not None:
                self.left.append((e, why))
                return False
        if give_up is not None:
            self.left.append((e, give_up))
            return False
        if e.attempts >= self.policy.max_attempts:
            self.left.append((e, f"{e.attempts} fault(s) in this run, the last: {fault.kind}"))
            return False
        e.not_before = now + self.policy.retry_delay(e.attempts)
        self.pending.append(e)
        return True

    def status(self) -> list[str]:
        """Progress-line notes: paused or stopped endpoints, and episodes waiting out their
        retry delay (without it, a run waiting minutes before the next attempt showed
        nothing but an unchanging line)."""
        now = self.clock()
        notes = self.breaker.status(now)
        waiting = [
            e.not_before
            for e in self.pending
            if e.not_before > now  # an endpoint's pause is said by its own note
            and (e.endpoint is None or now >= self.breaker.get(e.endpoint).paused_until)
        ]
        if waiting:
            notes.append(
                f"{len(waiting)} waiting to retry (next in {duration(min(waiting) - now)})"
            )
        return notes
