"""An agent's own code ending its process, or raising ``KeyboardInterrupt``: the agent's
failure (``agent_error``), not the worker's.

A user's agent runs in a worker process (``runner.pool``). Left alone, ``os._exit(3)`` in
its ``act`` ends the worker, and a ``raise KeyboardInterrupt`` unwinds it: both were
recorded as infrastructure faults of kind ``worker`` ("out of memory?"), retried
``max_attempts`` times in every run and never scored, though the agent did it each time.

* While a worker runs an episode (``exits_end_the_episode``), ``os._exit`` called by the
  agent's code (in ``start``, ``act`` or ``finish``, on the worker's main thread) raises
  ``AgentExit`` instead, which the episode loop records as the agent's error. Called from
  anywhere else (the harness, a thread or a child process the agent started) it exits as
  usual. A process killed by a signal (the OOM killer, ``kill -9``) is still a ``worker``
  fault: nothing in the process can tell whose doing that was.
* A ``KeyboardInterrupt`` out of the agent's code is its own raise when the user's Ctrl-C
  cannot arrive as one there (``interrupt_is_the_agents``): in a worker, which ignores
  SIGINT, and on an event loop run by ``asyncio.run``, whose handler turns the first
  Ctrl-C into the cancellation of the run. Elsewhere it is left to stop the program.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

_real_exit = os._exit
_state = {"pid": 0, "inside": False}


class AgentExit(SystemExit):
    """``os._exit`` called by the agent's code in a worker (caught as its ``SystemExit``)."""


def _exit(status: int) -> NoReturn:
    if (
        _state["inside"]
        and _state["pid"] == os.getpid()
        and threading.current_thread() is threading.main_thread()
    ):
        raise AgentExit(f"the agent called os._exit({status})")
    _real_exit(status)


@contextmanager
def exits_end_the_episode() -> Iterator[None]:
    """In a worker process, for the episodes it runs: ``os._exit`` from agent code raises."""
    previous = os._exit, _state["pid"]
    os._exit = _exit
    _state["pid"] = os.getpid()
    try:
        yield
    finally:
        os._exit, _state["pid"] = previous


@contextmanager
def agent_code() -> Iterator[None]:
    """Around a call into the agent (``start``, ``act``, ``finish``)."""
    outer = _state["inside"]
    _state["inside"] = True
    try:
        yield
    finally:
        _state["inside"] = outer


def interrupt_is_the_agents() -> bool:
    """Whether a ``KeyboardInterrupt`` raised in the agent's code can only be its own: SIGINT
    is ignored here (a worker) or handled by someone other than Python's default handler
    (``asyncio.run``'s, which cancels the run on a Ctrl-C instead of raising)."""
    try:
        handler = signal.getsignal(signal.SIGINT)
    except (ValueError, OSError):  # pragma: no cover - no signals on this platform
        return False
    return handler is not None and handler is not signal.default_int_handler
