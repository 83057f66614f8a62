"""Reading a datapack (a folder or a zip) into raw JSON resources.

Only the parts of a datapack that the rules engine interprets are kept:
recipes, loot tables, item/block tags and advancements. Other folders
(functions, worldgen, ...) are listed but left alone. Nothing is half-loaded:
every interpreted file is parsed and checked before a `PackData` is returned.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.safeload import DataError, parse_json_bytes

SUPPORTED_PACK_FORMATS = frozenset({10})
"""Java 1.19.0-1.19.2 use pack_format 10 (1.19.4 uses 12)."""

CATEGORIES = ("recipes", "loot_tables", "tags/items", "tags/blocks", "advancements")
MIB = 1024 * 1024
MAX_FILE_BYTES = 4 * MIB
"""Largest single file of a pack."""
MAX_FILES = 20_000
"""Most files a pack may hold (the packaged vanilla pack has about 1,900)."""
MAX_PACK_BYTES = 32 * MIB
"""Most bytes all files of a pack may hold together, uncompressed (vanilla: about 1.1 MiB).
Checked from the zip directory before anything is decompressed."""
MAX_COMPRESSION_RATIO = 200
"""A zip member over RATIO_FLOOR_BYTES that expands more than this many times is refused
(JSON compresses 3 to 10 times; zip bombs thousands of times)."""
RATIO_FLOOR_BYTES = 64 * 1024

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class PackData:
    """The interpreted resources of one datapack, keyed by (category, resource location)."""

    name: str
    description: str
    pack_format: int
    resources: Mapping[tuple[str, str], JsonObject]
    ignored: tuple[str, ...] = field(default=())

    def of(self, category: str) -> dict[str, JsonObject]:
        return {loc: doc for (cat, loc), doc in self.resources.items() if cat == category}


def _classify(rel: PurePosixPath) -> tuple[str, str] | None:
    """data/<ns>/<category>/<path>.json -> (category, "<ns>:<path>")."""
    parts = rel.parts
    if len(parts) < 4 or parts[0] != "data" or not rel.name.endswith(".json"):
        return None
    namespace, rest = parts[1], parts[2:]
    for category in CATEGORIES:
        cat_parts = tuple(category.split("/"))
        if rest[: len(cat_parts)] == cat_parts and len(rest) > len(cat_parts):
            inner = "/".join(rest[len(cat_parts) :])
            return category, f"{namespace}:{inner[: -len('.json')]}"
    return None


def _check_total(total: int, count: int) -> None:
    if count > MAX_FILES:
        raise DatapackError(f"pack holds {count} files, more than the limit of {MAX_FILES}")
    if total > MAX_PACK_BYTES:
        raise DatapackError(
            f"pack holds {total} bytes of files, more than the {MAX_PACK_BYTES // MIB} MiB limit"
        )


def _iter_folder(source: Path) -> Iterator[tuple[PurePosixPath, bytes]]:
    paths = [p for p in sorted(source.rglob("*")) if p.is_file()]
    sizes = [p.stat().st_size for p in paths]
    _check_total(sum(sizes), len(paths))
    for path, size in zip(paths, sizes, strict=True):
        rel = PurePosixPath(path.relative_to(source).as_posix())
        if size > MAX_FILE_BYTES:
            raise DatapackError("file is larger than the 4 MiB limit", file=str(rel))
        yield rel, path.read_bytes()


def _check_members(infos: list[zipfile.ZipInfo]) -> None:
    """Refuse an archive by its directory alone, before any member is decompressed."""
    _check_total(sum(i.file_size for i in infos), len(infos))
    for info in infos:
        rel = PurePosixPath(info.filename)
        if rel.is_absolute() or ".." in rel.parts:
            raise DatapackError("archive member escapes the pack root", file=info.filename)
        if info.file_size > MAX_FILE_BYTES:
            raise DatapackError("file is larger than the 4 MiB limit", file=info.filename)
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FLOOR_BYTES and ratio > MAX_COMPRESSION_RATIO:
            raise DatapackError(
                f"member expands {ratio:.0f}-fold, more than the {MAX_COMPRESSION_RATIO}-fold "
                "limit (a zip bomb?)",
                file=info.filename,
            )


def _iter_files(source: Path) -> Iterator[tuple[PurePosixPath, bytes]]:
    if source.is_dir():
        yield from _iter_folder(source)
        return
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DatapackError(f"not a readable zip archive ({exc})") from None
    with archive:
        infos = sorted((i for i in archive.infolist() if not i.is_dir()), key=lambda i: i.filename)
        _check_members(infos)
        for info in infos:
            try:
                # zipfile stops at the declared size, so a member cannot expand past it.
                yield PurePosixPath(info.filename), archive.read(info)
            except (zipfile.BadZipFile, OSError, RuntimeError, EOFError) as exc:
                raise DatapackError(
                    f"cannot read archive member ({exc})", file=info.filename
                ) from None


def _parse_json(raw: bytes, rel: str) -> Any:
    try:
        return parse_json_bytes(raw, rel)
    except DataError as exc:
        at = f"line {exc.line}: " if exc.line else ""
        raise DatapackError(f"{at}{exc.problem}", file=rel) from None


def _read_meta(meta: Any) -> tuple[int, str]:
    if not isinstance(meta, dict) or not isinstance(meta.get("pack"), dict):
        raise DatapackError("must be an object with a 'pack' object", file="pack.mcmeta")
    pack = meta["pack"]
    fmt = pack.get("pack_format")
    if not isinstance(fmt, int) or isinstance(fmt, bool):
        raise DatapackError("missing or non-integer", file="pack.mcmeta", field="pack.pack_format")
    if fmt not in SUPPORTED_PACK_FORMATS:
        raise DatapackError(
            f"pack_format {fmt} is not Java 1.19.0-1.19.2 (expected 10)",
            file="pack.mcmeta",
            field="pack.pack_format",
        )
    desc = pack.get("description", "")
    return fmt, desc if isinstance(desc, str) else json.dumps(desc, sort_keys=True)


def load_pack(source: str | Path, name: str | None = None) -> PackData:
    """Read a datapack folder or zip. Raises DatapackError naming the file on any problem."""
    path = Path(source)
    label = name or path.name
    if not path.exists():
        raise DatapackError("no such file or folder", pack=label)
    if not (path.is_dir() or path.is_file()):  # a device or a pipe could be read forever
        raise DatapackError("not a folder or a zip file", pack=label)
    try:
        files = dict(_iter_files(path))
    except DatapackError as exc:
        raise exc.located(pack=label) from None
    except OSError as exc:
        raise DatapackError(f"cannot read ({exc.strerror})", pack=label) from None
    return pack_from_files(files, label)


def pack_from_files(files: Mapping[PurePosixPath, bytes], label: str) -> PackData:
    """Build a PackData from in-memory files (paths relative to the pack root)."""
    meta_raw = files.get(PurePosixPath("pack.mcmeta"))
    if meta_raw is None:
        nested = sorted(str(p) for p in files if p.name == "pack.mcmeta")
        hint = f" (found {nested[0]}: pack.mcmeta must sit at the root)" if nested else ""
        raise DatapackError(f"no pack.mcmeta at the pack root{hint}", pack=label)
    try:
        fmt, desc = _read_meta(_parse_json(meta_raw, "pack.mcmeta"))
        resources: dict[tuple[str, str], JsonObject] = {}
        ignored: list[str] = []
        for rel, raw in sorted(files.items()):
            if rel.parts and rel.parts[0] != "data":
                continue
            key = _classify(rel)
            if key is None:
                ignored.append(str(rel))
                continue
            doc = _parse_json(raw, str(rel))
            if not isinstance(doc, dict):
                raise DatapackError("top level must be a JSON object", file=str(rel))
            if key in resources:
                raise DatapackError("duplicate resource location", file=str(rel))
            resources[key] = doc
    except DatapackError as exc:
        raise exc.located(pack=label) from None
    return PackData(label, desc, fmt, resources, tuple(ignored))


def resource_path(category: str, location: str) -> str:
    """("recipes", "minecraft:stick") -> "data/minecraft/recipes/stick.json"."""
    namespace, _, inner = location.partition(":")
    return f"data/{namespace}/{category}/{inner}.json"
