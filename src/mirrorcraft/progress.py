"""One progress line on stderr for long commands: what is done of how much, and an ETA.

On a terminal the line redraws in place a few times a second; elsewhere (a log
file, a pipe, CI) it stays quiet unless asked (``--progress``), and then prints a
fresh line at most every few seconds. Commands share this class so every long
command reads the same way::

    progress = ProgressLine("controls", total=210, unit="conditions", enabled=args.progress)
    for ...:
        progress.advance(note="plains-1 M04 diamond")
    progress.finish()
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

TTY_INTERVAL_S = 0.2
LOG_INTERVAL_S = 5.0


def format_eta(seconds: float) -> str:
    """``1m05s`` (or ``--`` while there is no rate to go on)."""
    if seconds != seconds or seconds < 0:  # NaN: nothing done yet
        return "--"
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"


class ProgressLine:
    """``label: done/total unit, ETA 1m05s (note)``, shown when enabled.

    ``enabled=None`` shows it only on a terminal; ``True`` shows it anywhere (one
    line every few seconds off a terminal); ``False`` never. ``upper_bound`` says the
    total is an upper bound (a loop that may stop early), so the ETA is one too.
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        unit: str = "",
        stream: TextIO | Any | None = None,
        enabled: bool | None = None,
        upper_bound: bool = False,
    ) -> None:
        self.label, self.total, self.unit = label, max(total, 0), unit
        self.upper_bound = upper_bound
        self.done = 0
        self.note = ""
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = self.tty if enabled is None else enabled
        self.start = time.monotonic()
        self._last = float("-inf")
        self._width = 0

    def advance(self, n: int = 1, note: str | None = None) -> None:
        self.done += n
        if note is not None:
            self.note = note
        self.show()

    def set_note(self, note: str) -> None:
        self.note = note
        self.show()

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        left = (self.total - self.done) / rate if rate else float("nan")
        unit = f" {self.unit}" if self.unit else ""
        eta = format_eta(left)
        if self.upper_bound and eta != "--":
            eta = f"at most {eta}"
        text = f"{self.label}: {self.done}/{self.total}{unit}, ETA {eta}"
        return f"{text} ({self.note})" if self.note else text

    def show(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < (TTY_INTERVAL_S if self.tty else LOG_INTERVAL_S):
            return
        self._last = now
        text = self.line()
        if self.tty:
            self.stream.write("\r" + text.ljust(self._width))
            self._width = max(self._width, len(text))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """Show the final count once (and end the terminal line)."""
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        self.note = f"took {format_eta(elapsed)}"
        self.show(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
