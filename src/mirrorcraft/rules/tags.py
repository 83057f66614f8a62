"""Item and block tags: layered across packs as a server does, then flattened."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.ids import full_id, normalize_id
from mirrorcraft.rules.pack import PackData, resource_path

TagTable = Mapping[str, frozenset[str]]
"""Tag name (bare for minecraft, e.g. ``planks``) -> the ids it contains."""


def _entries(doc: Any, where: str) -> tuple[bool, list[tuple[str, bool]]]:
    if not isinstance(doc, dict):
        raise DatapackError("a tag must be an object", file=where)
    replace = doc.get("replace", False)
    if not isinstance(replace, bool):
        raise DatapackError("must be true or false", file=where, field="replace")
    values = doc.get("values")
    if not isinstance(values, list):
        raise DatapackError("must be a list", file=where, field="values")
    out: list[tuple[str, bool]] = []
    for i, value in enumerate(values):
        required = True
        if isinstance(value, dict):
            required = value.get("required", True)
            value = value.get("id")
            if not isinstance(required, bool):
                raise DatapackError(
                    "must be true or false", file=where, field=f"values[{i}].required"
                )
        if not isinstance(value, str):
            raise DatapackError("must be an id string", file=where, field=f"values[{i}]")
        is_tag = value.startswith("#")
        try:
            ref = normalize_id(value[1:] if is_tag else value)
        except ValueError as exc:
            raise DatapackError(str(exc), file=where, field=f"values[{i}]") from None
        out.append(("#" + ref if is_tag else ref, required))
    return replace, out


TagEntries = list[tuple[str, bool, str]]
"""(reference, required, pack name) per value; references to tags start with '#'."""


def layer_tags(packs: Sequence[PackData], category: str) -> dict[str, TagEntries]:
    """Merge one tag category over packs in load order (``replace`` clears earlier entries)."""
    merged: dict[str, TagEntries] = {}
    for pack in packs:
        for location, doc in sorted(pack.of(category).items()):
            name = normalize_id(location)
            where = resource_path(category, location)
            try:
                replace, entries = _entries(doc, where)
            except DatapackError as exc:
                raise exc.located(pack=pack.name) from None
            tagged = [(ref, req, pack.name) for ref, req in entries]
            merged[name] = tagged if replace else merged.get(name, []) + tagged
    return merged


def resolve_tags(
    raw: Mapping[str, TagEntries], known: frozenset[str], category: str
) -> dict[str, frozenset[str]]:
    """Flatten nested tag references; unknown ids or tags that are required are errors."""
    resolved: dict[str, frozenset[str]] = {}

    def visit(name: str, stack: tuple[str, ...]) -> frozenset[str] | None:
        if name in resolved:
            return resolved[name]
        if name in stack:
            chain = " -> ".join((*stack, name))
            where = resource_path(f"tags/{category}", full_id(name))
            raise DatapackError(f"tag reference cycle: {chain}", file=where)
        if name not in raw:
            return None
        members: set[str] = set()
        for ref, required, pack in raw[name]:
            where = resource_path(f"tags/{category}", full_id(name))
            if ref.startswith("#"):
                inner = visit(ref[1:], (*stack, name))
                if inner is None:
                    if required:
                        raise DatapackError(
                            f"refers to tag {ref!r}, which no pack defines", pack=pack, file=where
                        )
                    continue
                members |= inner
            elif ref in known:
                members.add(ref)
            elif required:
                raise DatapackError(
                    f"lists {ref!r}, which is not a known {category[:-1]}", pack=pack, file=where
                )
        result = frozenset(members)
        resolved[name] = result
        return result

    for name in sorted(raw):
        visit(name, ())
    return resolved
