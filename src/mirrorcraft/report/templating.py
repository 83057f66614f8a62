"""HTML page templates (files under ``report/templates/``), filled with ``string.Template``.

Every template receives the shared stylesheet as ``$style``; a placeholder left
without a value is an error, never an empty hole in the page.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from string import Template


@lru_cache(maxsize=16)
def template_text(name: str) -> str:
    return resources.files("mirrorcraft.report").joinpath("templates", name).read_text("utf-8")


def fill(name: str, **values: str) -> str:
    """The template ``name`` with every ``$placeholder`` replaced (values are trusted HTML)."""
    template = Template(template_text(name))
    try:
        return template.substitute(style=template_text("style.css"), **values)
    except KeyError as exc:
        raise ValueError(f"template {name}: no value for ${exc.args[0]}") from None
