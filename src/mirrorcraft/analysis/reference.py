"""Published results to compare with: the MirrorCraft paper's tables as data.

``load_reference("paper")`` reads the packaged ``data/reference/mirrorcraft_paper.yaml``;
any other argument is a path to a file of the same layout (so another paper's or
another run's numbers can be compared the same way). A row is a mapping of column
name to a number, a string or None (a cell the source leaves empty).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

PAPER = "paper"
"""The name of the packaged reference: the MirrorCraft paper's published results."""

Cell = float | int | str | None
Row = dict[str, Cell]


class ReferenceDataError(Exception):
    """A reference file is missing, unreadable or malformed; the message names the file."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelFamily(_Strict):
    name: str
    match: tuple[str, ...] = Field(min_length=1)
    """Case-insensitive substrings of a user's model name that belong to this family."""


class RefTable(_Strict):
    title: str
    pooled_over: tuple[str, ...] = ()
    notes: str = ""
    model: str | None = None
    vanilla_sr: float | None = None
    rows: tuple[Row, ...] = Field(min_length=1)


class Source(_Strict):
    title: str
    arxiv_id: str = ""
    version: str = ""
    url: str = ""


class Reference(_Strict):
    schema_version: Literal[1]
    source: Source
    models: dict[str, ModelFamily]
    design: dict[str, Any] = Field(default_factory=dict)
    tables: dict[str, RefTable]
    cochran_q: tuple[Row, ...] = ()
    bonferroni_tests: int | None = None
    text: tuple[Row, ...] = ()

    def family(self, model: str) -> str | None:
        """The model family a user's model name belongs to (None: no family matches)."""
        name = model.lower()
        for family, spec in self.models.items():
            if family == name or any(m.lower() in name for m in spec.match):
                return family
        return None

    def table(self, name: str) -> RefTable:
        try:
            return self.tables[name]
        except KeyError:
            raise ReferenceDataError(f"the reference has no {name}") from None


def reference_path(name: str = PAPER) -> Path:
    if name == PAPER:
        return Path(
            str(resources.files("mirrorcraft") / "data" / "reference" / "mirrorcraft_paper.yaml")
        )
    return Path(name)


def load_reference(name: str = PAPER) -> Reference:
    path = reference_path(name)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReferenceDataError(f"cannot read reference file {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ReferenceDataError(f"reference file {path} is not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ReferenceDataError(f"reference file {path} must hold a mapping")
    try:
        return Reference.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ReferenceDataError(f"reference file {path}: {where}: {first['msg']}") from None
