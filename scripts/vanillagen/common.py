"""Shared helpers: minecraft-data access, facts loading, provenance strings, output set."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MC_VERSION = "1.19"
MCDATA_VERSION = "3.20.0"
FACTS_DIR = Path(__file__).resolve().parent.parent / "vanilla_facts"

SRC_MCDATA = f"minecraft-data {MCDATA_VERSION} (Java {MC_VERSION})"
SRC_MCDATA_REGROUPED = f"minecraft-data {MCDATA_VERSION} (Java {MC_VERSION}), regrouped into tags"


def src_facts(*files: str) -> str:
    """Provenance string for files written from hand-written facts tables."""
    where = ", ".join(f"scripts/vanilla_facts/{f}" for f in files)
    return f"written from vanilla {MC_VERSION} facts ({where})"


def src_mixed(*files: str) -> str:
    """Provenance for files combining minecraft-data with facts tables."""
    return f"{SRC_MCDATA} + {src_facts(*files)}"


def mc(name: str) -> str:
    """Namespaced id: 'stone' -> 'minecraft:stone'; '#x' -> '#minecraft:x'; keeps namespaces."""
    if name.startswith("#"):
        return "#" + mc(name[1:])
    return name if ":" in name else f"minecraft:{name}"


def strip_ns(name: str) -> str:
    """'minecraft:stone' -> 'stone'; '#minecraft:logs' -> '#logs'."""
    if name.startswith("#"):
        return "#" + strip_ns(name[1:])
    return name.split(":", 1)[1] if name.startswith("minecraft:") else name


def load_facts(name: str) -> Any:
    """Load one facts file from scripts/vanilla_facts/ (YAML or JSON)."""
    path = FACTS_DIR / name
    with path.open(encoding="utf-8") as fh:
        if path.suffix == ".json":
            return json.load(fh)
        return yaml.safe_load(fh)


class McData:
    """Thin wrapper over minecraft_data('1.19') with name-based lookups."""

    def __init__(self) -> None:
        import minecraft_data  # type: ignore[import-untyped]  # lazy: generator only

        self.raw = minecraft_data(MC_VERSION)
        self.package_dir = Path(minecraft_data.__file__).resolve().parent
        self.items_by_id: dict[int, dict[str, Any]] = self.raw.items
        self.items: dict[str, dict[str, Any]] = self.raw.items_name
        self.blocks: dict[str, dict[str, Any]] = self.raw.blocks_name
        self.blocks_list: list[dict[str, Any]] = self.raw.blocks_list
        self.items_list: list[dict[str, Any]] = self.raw.items_list
        self.enchantments_list: list[dict[str, Any]] = self.raw.enchantments_list

    def item_name(self, item_id: int | None) -> str | None:
        if item_id is None:
            return None
        return str(self.items_by_id[item_id]["name"])

    def recipes(self) -> dict[str, list[dict[str, Any]]]:
        """Raw crafting recipes, keyed by result item name (sorted)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for rid, recipes in self.raw.recipes.items():
            out[self.item_name(int(rid)) or ""] = recipes
        return dict(sorted(out.items()))

    def language(self) -> dict[str, str]:
        """en_us strings (minecraft-data language.json; not exposed by the Python API)."""
        root = self.package_dir / "data" / "data"
        paths = json.loads((root / "dataPaths.json").read_text(encoding="utf-8"))
        folder = paths["pc"][MC_VERSION]["language"]
        lang: dict[str, str] = json.loads((root / folder / "language.json").read_text("utf-8"))
        return lang

    def is_item(self, name: str) -> bool:
        return strip_ns(name) in self.items


def dump_json(obj: Any) -> str:
    """The one JSON serialisation used for every generated file."""
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


@dataclass
class OutputSet:
    """Collects generated files (relative path -> object) and their provenance."""

    files: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)

    def add(self, relpath: str, obj: Any, source: str) -> None:
        if relpath in self.files:
            raise ValueError(f"duplicate output file {relpath}")
        self.files[relpath] = obj
        self.provenance[relpath] = source

    def write(self, root: Path) -> None:
        for relpath in sorted(self.files):
            path = root / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(dump_json(self.files[relpath]), encoding="utf-8")
