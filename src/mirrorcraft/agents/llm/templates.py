"""Prompt templates: files under ``agents/prompts/``, ``{{NAME}}`` placeholders, strict rendering.

A template file holds sections introduced by ``## section-name`` lines. Rendering
fails if a placeholder has no value or a value is given that the section does not
use, so a prompt can never silently lose a field. Every template file has a
content hash that episode records store.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

PLACEHOLDER = re.compile(r"\{\{([A-Z0-9_]+)\}\}")


class TemplateError(Exception):
    pass


@dataclass(frozen=True)
class TemplateFile:
    name: str
    sections: Mapping[str, str]
    digest: str
    _compiled: dict[str, tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Per section: the literal text pieces, the placeholder names between them, and the set
    of names (split once, on first use; the sections never change)."""

    def render(self, section: str, values: Mapping[str, str]) -> str:
        compiled = self._compiled.get(section)
        if compiled is None:
            if section not in self.sections:
                raise TemplateError(f"template {self.name} has no section {section!r}")
            compiled = self._compiled[section] = _compile(self.sections[section])
        texts, names, needed = compiled
        if values.keys() != needed:
            missing = needed - set(values)
            if missing:
                raise TemplateError(
                    f"template {self.name}/{section}: no value for {sorted(missing)}"
                )
            extra = set(values) - needed
            raise TemplateError(f"template {self.name}/{section}: unused values {sorted(extra)}")
        if not names:
            return texts[0].strip()
        out = [texts[0]]
        for name, text in zip(names, texts[1:], strict=True):
            out.append(values[name])
            out.append(text)
        return "".join(out).strip()


def _compile(text: str) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """Split a section at its placeholders: ``re.split`` alternates text and names."""
    parts = PLACEHOLDER.split(text)
    texts, names = tuple(parts[0::2]), tuple(parts[1::2])
    return texts, names, frozenset(names)


PROMPT_VERSION = 4
"""How the LLM configurations turn templates, observations and history into prompts. Raise it
with any change that alters a prompt other than a template file's text (the rendering code,
the observation block's fields, the skill listing's format): it is recorded with each
episode's template hashes (``prompt_hashes``), and the analysis refuses to pool episodes of
one configuration whose prompts were built differently. ``tests/fixtures/prompt_version.json``
pins it with a prompt digest per configuration (``tests/fixtures/llm_prompts.json``: every
configuration that calls a model; ``python -m tests.perf_reference --write`` refuses a
configuration's changed digest under an unchanged version, unless its template files or the
simulator version changed).

1: prompts as built before the version was recorded (a record naming the observation template
without a ``prompt_version`` counts as 1: ``EpisodeRecord.prompt_hashes``).
2: a count the skill fixes (craft_grid's, trade's) is listed as ``count:int=1 (fixed)``, as
the paper lists it, instead of ``(1..1)``.
3: Voyager's program prompt no longer shows ``"distance": 1`` in its success-condition
example (a model copying it limited every target or facility check to one block) and says
which fields each kind uses.
4: MineEvolve's repair prompt shows the plan's ``global_constraints`` (``PLAN CONSTRAINTS``),
which its plan prompt now says they are for; they were asked for and never shown again."""

PROMPT_VERSION_KEY = "prompt_version"


def prompt_hashes(names: Iterable[str]) -> dict[str, str]:
    """Each named template's digest, and the prompt-building version (``PROMPT_VERSION``)."""
    hashes = {n: load_template(n).digest for n in dict.fromkeys(names)}
    hashes[PROMPT_VERSION_KEY] = str(PROMPT_VERSION)
    return hashes


def current_prompt_hashes() -> dict[str, str]:
    """Every packaged template's digest and the prompt version, as records name them now."""
    return prompt_hashes(sorted(p.stem for p in prompts_dir().glob("*.md")))


def prompts_dir() -> Path:
    return Path(str(resources.files("mirrorcraft") / "agents" / "prompts"))


@lru_cache(maxsize=32)
def load_template(name: str) -> TemplateFile:
    path = prompts_dir() / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateError(f"missing prompt template {path}: {exc.strerror}") from None
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    if not sections:
        raise TemplateError(f"prompt template {path} has no '## section' headings")
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return TemplateFile(name, {k: "\n".join(v).strip() + "\n" for k, v in sections.items()}, digest)
