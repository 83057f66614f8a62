"""Shared pytest options.

``--real-server JAR`` runs the tests in ``test_mineflayer_real_server.py`` against a Minecraft
Java 1.19-1.19.2 server jar you supply (Java and the bridge's npm packages needed); without it
they are skipped. See docs/real_server.md.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--real-server",
        action="store",
        default=None,
        metavar="JAR",
        help="run the real-server tests against this Minecraft 1.19 server jar",
    )
