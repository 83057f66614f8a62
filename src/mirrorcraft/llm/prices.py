"""Token prices and the dollar cost of a call.

Prices live in a versioned YAML file: the packaged ``data/prices.yaml`` unless
the caller passes a path or sets ``MIRRORCRAFT_PRICES`` to one. A model the
table does not know costs ``None`` ("unknown"), never zero. So does an entry
marked ``verified: false`` (a figure nobody has checked on the provider's price
page): its numbers are kept for reference, no cost is computed from them, and a
warning is logged once per model and price file in a process (each episode loads
its own table).
"""

from __future__ import annotations

import logging
import os
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mirrorcraft.llm.base import LLMConfigError
from mirrorcraft.safeload import DataError, load_yaml_file

PRICES_ENV = "MIRRORCRAFT_PRICES"
"""Environment variable naming a price file that replaces the packaged one."""

log = logging.getLogger("mirrorcraft.llm")

_WARNED: set[tuple[str, str]] = set()
"""(price file, model) pairs whose unverified price this process has warned about."""


class ModelPrice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Finite only: an infinite rate (YAML .inf) gave infinite or NaN costs, which no record
    # can hold as JSON.
    input_per_mtok: float = Field(
        ge=0, allow_inf_nan=False, description="USD per million prompt tokens"
    )
    output_per_mtok: float = Field(
        ge=0, allow_inf_nan=False, description="USD per million completion tokens"
    )
    cached_input_per_mtok: float | None = Field(
        None,
        ge=0,
        allow_inf_nan=False,
        description="USD per million prompt tokens served from the provider's cache",
    )
    verified: bool = False
    """True only when someone checked the numbers against the provider's published prices."""
    source: str = ""
    as_of: str | None = None
    aliases: tuple[str, ...] = ()


class PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1]
    currency: Literal["USD"] = "USD"
    note: str = ""
    models: dict[str, ModelPrice]


class PriceTable:
    """Looks up a model's price by name, alias, or the last ``/`` part of its name."""

    def __init__(self, prices: PriceFile, *, origin: str = "<memory>") -> None:
        self.origin = origin
        self._by_name: dict[str, ModelPrice] = {}
        for name, price in prices.models.items():
            for key in (name, *price.aliases):
                if key.lower() in self._by_name:
                    raise LLMConfigError(f"{origin}: model name {key!r} is listed twice")
                self._by_name[key.lower()] = price

    @classmethod
    def from_file(cls, path: Path) -> PriceTable:
        try:
            raw = load_yaml_file(path)
        except OSError as exc:
            raise LLMConfigError(f"cannot read price file {path}: {exc.strerror}") from None
        except DataError as exc:
            raise LLMConfigError(f"price file {exc}") from None
        try:
            parsed = PriceFile.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise LLMConfigError(f"price file {path}: {where}: {first['msg']}") from None
        return cls(parsed, origin=str(path))

    def lookup(self, model: str) -> ModelPrice | None:
        key = model.lower()
        found = self._by_name.get(key)
        if found is None and "/" in key:
            found = self._by_name.get(key.rsplit("/", 1)[1])
        return found

    def cost(
        self,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        cached_prompt_tokens: int = 0,
    ) -> float | None:
        """Dollar cost of one call, or None when the model has no verified price here.

        Cached prompt tokens are billed at the cached-input price when the
        entry has one, else at the normal input price.
        """
        price = self.lookup(model)
        if price is None:
            return None
        if not price.verified:
            if (self.origin, model) not in _WARNED:
                _WARNED.add((self.origin, model))
                log.warning(
                    "price for model %r in %s is unverified; its cost is reported as unknown",
                    model,
                    self.origin,
                )
            return None
        cached = max(0, min(cached_prompt_tokens, prompt_tokens))
        cached_rate = (
            price.cached_input_per_mtok
            if price.cached_input_per_mtok is not None
            else price.input_per_mtok
        )
        total = (
            (prompt_tokens - cached) * price.input_per_mtok
            + cached * cached_rate
            + completion_tokens * price.output_per_mtok
        )
        return total / 1_000_000


def load_prices(path: Path | str | None = None) -> PriceTable:
    """The price table from ``path``, else from ``$MIRRORCRAFT_PRICES``, else the packaged one."""
    if path is None:
        path = os.environ.get(PRICES_ENV) or None
    if path is not None:
        return PriceTable.from_file(Path(path))
    packaged = resources.files("mirrorcraft") / "data" / "prices.yaml"
    with resources.as_file(packaged) as real:
        return PriceTable.from_file(real)
