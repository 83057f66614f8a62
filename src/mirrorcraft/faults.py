"""Errors that are not evaluation outcomes: the episode is rerun under the same id."""

from __future__ import annotations


class InfrastructureFault(Exception):
    """Something outside the evaluation failed (backend crash, disconnect, unreachable model endpoint)."""
