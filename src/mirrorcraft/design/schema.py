"""Field tables read from the pydantic models, so catalogs never restate a bound by hand.

``field_table(Model)`` flattens a model into dotted paths (``ores[].veins_per_chunk``)
with a short type name, the default, and the numeric bounds declared on the field
(``ge``/``le``/``gt``/``lt``, ``min_length``/``max_length``).
"""

from __future__ import annotations

import types
import typing
from typing import Any

import annotated_types as at
from pydantic import BaseModel
from pydantic_core import PydanticUndefined


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_type_name(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list of {_type_name(args[0])}"
        return "[" + ", ".join(_type_name(a) for a in args) + "]"
    if origin is typing.Annotated:
        return _type_name(args[0])
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    return getattr(annotation, "__name__", str(annotation))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        out += _models_in(arg)
    return out


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in metadata:
        if isinstance(m, at.Ge):
            out["min"] = m.ge
        elif isinstance(m, at.Gt):
            out["above"] = m.gt
        elif isinstance(m, at.Le):
            out["max"] = m.le
        elif isinstance(m, at.Lt):
            out["below"] = m.lt
        elif isinstance(m, at.MinLen):
            out["min_items"] = m.min_length
        elif isinstance(m, at.MaxLen):
            out["max_items"] = m.max_length
    return out


def field_table(model: type[BaseModel], prefix: str = "") -> dict[str, dict[str, Any]]:
    """Dotted path -> {type, default?, required?, bounds...} for every field, nested ones too."""
    table: dict[str, dict[str, Any]] = {}
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        entry: dict[str, Any] = {"type": _type_name(info.annotation)}
        if info.is_required():
            entry["required"] = True
        elif info.default is not PydanticUndefined and not isinstance(info.default, BaseModel):
            default = info.default
            entry["default"] = list(default) if isinstance(default, tuple) else default
        entry.update(_bounds(list(info.metadata)))
        if info.description:
            entry["note"] = info.description
        table[path] = entry
        is_list = typing.get_origin(info.annotation) is tuple and Ellipsis in typing.get_args(
            info.annotation
        )
        for sub in _models_in(info.annotation):
            table.update(field_table(sub, f"{path}[]." if is_list else f"{path}."))
    return table


def bound_of(table: dict[str, dict[str, Any]], path: str) -> tuple[float | None, float | None]:
    entry = table.get(path, {})
    return entry.get("min"), entry.get("max")
