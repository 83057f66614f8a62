"""One writer per results folder: an advisory lock held for the whole run.

``run.lock`` in the folder is locked with ``flock`` (released by the kernel when
the holder exits, however it dies) and holds who has it: pid, host, start time
and command. A second run on the same folder is refused at once with that
information instead of running (and paying for) every episode a second time.
On systems without ``fcntl`` (Windows) the lock is not taken and this says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOCK_NAME = "run.lock"


class RunLocked(Exception):
    """Another run holds the folder; the message names it."""


class RunLock:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_NAME
        self._fd: int | None = None
        self.supported = True

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not on Linux or macOS
            self.supported = False
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read(fd)
            os.close(fd)
            raise RunLocked(
                f"{self.folder} is in use by another run ({describe(holder)}); wait for it to "
                "finish, or give this run another --out"
            ) from None
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": " ".join(sys.argv)[:500],
        }
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(info).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)  # closing the descriptor releases the lock
        self._fd = None


def _read(fd: int) -> dict[str, Any]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        doc = json.loads(os.read(fd, 4096) or b"{}")
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def describe(holder: dict[str, Any]) -> str:
    if not holder:
        return "holder unknown"
    return (
        f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, "
        f"started {holder.get('started', '?')}"
    )


def live_holder(folder: Path) -> dict[str, Any] | None:
    """The run that ``run.lock`` in ``folder`` names when that process is still alive on this
    host (a run writing the folder now), else None: no lock file, an empty one (released), a
    process that has ended (killed), or another host's (which cannot be checked from here).
    The lock is only read, never taken, so a run starting now is not disturbed."""
    try:
        doc = json.loads((folder / LOCK_NAME).read_bytes() or b"{}")
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or type(doc.get("pid")) is not int or doc["pid"] <= 0:
        return None
    if os.name == "nt" or doc.get("host") != socket.gethostname():
        return None  # (on Windows os.kill would end the process)
    try:
        os.kill(doc["pid"], 0)
    except ProcessLookupError:
        return None
    except OSError:  # alive, owned by another user
        pass
    return doc
