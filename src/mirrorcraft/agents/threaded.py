"""Running a user agent's blocking ``act`` off the event loop.

Agents that run on the runner's event loop (``uses_model`` or ``run_in_event_loop``) share
it with every other episode in flight. A plain ``act`` that blocks (a ``requests.post`` to
a model, a ``time.sleep``) would stop them all, and no episode's time limit could fire
while it ran. Such an ``act`` runs in a daemon thread of its own instead; the episode
awaits its result. When the time limit stops the episode, the thread is left to finish on
its own (a thread cannot be stopped) and what it returns is dropped; being a daemon, it
never holds the process open.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any


def in_thread(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """``fn(*args)`` in a new daemon thread, as a future of the running loop. Whatever it
    raises (``SystemExit`` included) is raised where the future is awaited."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # cancelled: the episode was stopped meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def run() -> None:
        try:
            value, error = fn(*args), None
        except BaseException as exc:  # handed to the awaiting episode, never lost here
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=run, daemon=True, name="mirrorcraft-agent-act").start()
    return future
