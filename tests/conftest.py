"""Shared pytest options.

``--real-server JAR`` runs the tests in ``test_mineflayer_real_server.py`` against a Minecraft
Java 1.19-1.19.2 server jar you supply (Java and the bridge's npm packages needed); without it
they are skipped. See docs/real_server.md.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from mirrorcraft.world.cache import ENV as WORLD_CACHE_ENV

# Property tests draw the same examples on every run (tests are deterministic); set
# HYPOTHESIS_PROFILE=explore to draw fresh random examples while developing.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--real-server",
        action="store",
        default=None,
        metavar="JAR",
        help="run the real-server tests against this Minecraft 1.19 server jar",
    )


@pytest.fixture(autouse=True, scope="session")
def _session_world_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Generated worlds go to a folder of this test session (the commands the tests start
    inherit it), not the user's cache; set MIRRORCRAFT_WORLD_CACHE to choose another."""
    if WORLD_CACHE_ENV not in os.environ:
        os.environ[WORLD_CACHE_ENV] = str(tmp_path_factory.mktemp("worlds"))
