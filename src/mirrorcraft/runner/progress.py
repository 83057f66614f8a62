"""The progress line of a run, and the one-line notes printed above it (paused endpoints...)."""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from mirrorcraft.runner.fault_report import kinds_note


class Progress:
    def __init__(self, total: int, stream: Any = None):
        self.total, self.done, self.failed, self.running, self.left = total, 0, 0, 0, 0
        self.start = time.monotonic()
        self.stream = stream if stream is not None else sys.stderr  # as it is now, not at import
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = 0.0
        self.fault_kinds: Counter[str] = Counter()
        """Faults of this run by kind (connection, timeout, server, config, worker)."""
        self.status: Callable[[], list[str]] = list
        """Extra notes for the line (set by the runner: paused endpoints)."""

    def note(self, line: str) -> None:
        """A line of its own, printed at once (an endpoint pausing, a worker replaced...)."""
        if self.tty:
            self.stream.write("\r" + " " * 78 + "\r")
        self.stream.write(line + "\n")
        self.stream.flush()
        self._last = 0.0

    def show(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < (0.2 if self.tty else 5.0):
            return
        self._last = now
        elapsed = now - self.start
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        left = (self.total - self.done - self.left) / rate if rate else float("nan")
        eta = "--" if left != left else f"{int(left // 60)}m{int(left % 60):02d}s"
        line = (
            f"episodes {self.done}/{self.total} done, {self.running} running, {self.failed} faults"
        )
        if self.fault_kinds:
            line += f" ({kinds_note(self.fault_kinds)})"
        if self.left:
            line += f", {self.left} left for a rerun"
        line += f", ETA {eta}"
        notes = self.status()
        if notes:
            line += "; " + "; ".join(notes)
        if self.tty:
            self.stream.write("\r" + line.ljust(78))
            if force:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
