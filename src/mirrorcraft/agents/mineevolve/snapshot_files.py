"""The temporary files a knowledge-store snapshot is written under before it is renamed
into place: one name per writer (host, process, random part), so two writers of one
target never touch each other's, and what a killed writer left is recognisable."""

from __future__ import annotations

import glob
import os
import socket
from pathlib import Path


def tmp_prefix(out: Path) -> str:
    """The start of the temporary names snapshots of ``out`` are written under on this host."""
    host = "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:40]
    return f".{out.name}.{host}."


def remove_abandoned(out: Path) -> None:
    """Remove the temporary files of snapshots of ``out`` that a process of this host that no
    longer runs (killed mid-write) left behind; another host's or a live process's are kept."""
    prefix = tmp_prefix(out)
    for left in out.parent.glob(f"{glob.escape(prefix)}*.tmp*"):
        pid = left.name[len(prefix) :].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            left.unlink(missing_ok=True)
        except OSError:  # alive, someone else's
            continue
