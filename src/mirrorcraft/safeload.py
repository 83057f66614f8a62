"""Reading JSON and YAML from outside the package, with bounds that keep absurd input cheap.

Every entry point that parses a user's JSON or YAML (specs, manifests, biome
specs, datapack files, action lines, JSONL records, command-line JSON) goes
through these functions, so a bad document is refused with one ``DataError``
line naming the source and, where it can be found, the line:

* bytes that are not UTF-8 text;
* JSON or YAML syntax errors;
* nesting deeper than ``MAX_DEPTH`` levels (Python's parsers and the code that
  walks a document recurse: a few kilobytes of brackets would end in RecursionError);
* integers longer than Python's 4,300-digit conversion limit, and numbers that
  are not finite (``NaN``, ``Infinity``, ``1e999``);
* YAML whose aliases expand to more than ``MAX_YAML_NODES`` values once followed
  (a "billion laughs" file of a kilobyte), or an alias that contains itself;
* files larger than ``MAX_FILE_BYTES``.

The bounds are far above anything the package ships or writes (its deepest
datapack file nests 16 levels, its largest YAML file holds about 11 KB).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import yaml

MAX_DEPTH = 100
"""Deepest nesting of lists and objects accepted in a JSON or YAML document."""
MAX_YAML_NODES = 1_000_000
"""Most values (scalars, lists, mappings) a YAML document may hold once aliases are expanded."""
MAX_FILE_BYTES = 16 * 1024 * 1024
"""Largest JSON or YAML file read whole (JSONL files are read a line at a time)."""

_LONG_NUMBER = re.compile(r"\d{4300,}")


class DataError(ValueError):
    """A document that cannot be read; ``str()`` is one line: ``source[:line]: problem``."""

    def __init__(
        self, source: str, problem: str, line: int | None = None, *, syntax: bool = False
    ) -> None:
        self.source = source
        self.problem = problem
        self.line = line
        self.syntax = syntax
        """True for a plain syntax error (as opposed to a refused bound or encoding)."""
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {problem}" if where else problem)


# --- text -----------------------------------------------------------------------------------


def decode_text(raw: bytes, source: str, *, first_line: int = 1) -> str:
    """UTF-8 (an optional byte-order mark dropped), or DataError naming the line of the bad byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + first_line
        bad = raw[exc.start : exc.start + 1].hex()
        raise DataError(source, f"not UTF-8 text (byte 0x{bad})", line) from None


def read_text(path: Path, source: str | None = None) -> str:
    """A whole text file, size-checked and decoded; OSError passes through for the caller."""
    label = source or str(path)
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise DataError(label, f"file of {size} bytes is larger than the {_mib()} MiB limit")
    with path.open("rb") as f:  # read no more than the limit: a device or pipe has no size
        raw = f.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise DataError(label, f"holds more than the {_mib()} MiB limit")
    return decode_text(raw, label)


def _mib() -> int:
    return MAX_FILE_BYTES // (1024 * 1024)


# --- JSON -----------------------------------------------------------------------------------


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} does not fit a 64-bit float")
    return value


def too_deep(doc: Any, limit: int = MAX_DEPTH) -> bool:
    """Does ``doc`` (parsed JSON/YAML: dicts, lists, scalars) nest deeper than ``limit``?

    Walked one level at a time (the containers at depth d, then their containers): no
    pair per value, which made this walk half of loading a results database."""
    level = [doc] if type(doc) is dict or type(doc) is list else []
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for value in level:
            children = value.values() if type(value) is dict else value
            below += [v for v in children if type(v) is dict or type(v) is list]
        level = below
        depth += 1
    return False


def _deep_line(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The line where bracket nesting first passes ``limit`` (strings skipped), if it does."""
    depth, line, in_string, escaped = 0, 1, "", False
    for ch in text:
        if ch == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == in_string:
                in_string = ""
        elif ch in "\"'":
            in_string = ch
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line
        elif ch in "]}":
            depth -= 1
    return None


def _long_number_line(text: str) -> int | None:
    match = _LONG_NUMBER.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _at(base: int | None, offset: int | None) -> int | None:
    """Line ``offset`` (1-based) of a text that starts at line ``base`` of its file."""
    if offset is None:
        return base
    return offset if base is None else base + offset - 1


def parse_json(text: str, source: str, *, line: int | None = None) -> Any:
    """Parse JSON text; ``line`` is where ``text`` starts in its file (for one JSONL line)."""
    try:
        doc = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise DataError(
            source,
            f"not valid JSON ({exc.msg}, column {exc.colno})",
            _at(line, exc.lineno),
            syntax=True,
        ) from None
    except RecursionError:
        raise DataError(
            source, f"nested deeper than {MAX_DEPTH} levels", _at(line, _deep_line(text))
        ) from None
    except ValueError as exc:
        long_at = _long_number_line(text)
        if long_at is not None:
            raise DataError(
                source, "a number has more than 4300 digits", _at(line, long_at)
            ) from None
        raise DataError(source, f"not valid JSON ({exc})", line) from None
    if too_deep(doc):
        raise DataError(
            source, f"nested deeper than {MAX_DEPTH} levels", _at(line, _deep_line(text))
        )
    return doc


def parse_json_bytes(raw: bytes, source: str, *, line: int | None = None) -> Any:
    return parse_json(decode_text(raw, source, first_line=line or 1), source, line=line)


def load_json_file(path: Path, source: str | None = None) -> Any:
    """Read and parse a JSON file (OSError passes through for the caller to word)."""
    label = source or str(path)
    return parse_json(read_text(path, label), label)


# --- YAML -----------------------------------------------------------------------------------


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def check_yaml_nodes(root: yaml.Node, source: str) -> None:
    """Refuse a node graph that expands past MAX_YAML_NODES, nests past MAX_DEPTH or loops.

    Aliases make PyYAML share one node (and one Python object) between places,
    so parsing stays small; anything that later walks the data (hashing,
    validation, JSON) expands every alias. The expanded size is counted here
    without expanding anything (each shared node is sized once).
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool, int]] = [(root, False, 1)]
    while stack:
        node, finished, depth = stack.pop()
        key = id(node)
        line = node.start_mark.line + 1 if node.start_mark else None
        if finished:
            on_path.discard(key)
            total = 1 + sum(sizes[id(c)] for c in _children(node))
            if total > MAX_YAML_NODES:
                raise DataError(
                    source,
                    f"aliases expand the document past {MAX_YAML_NODES:,} values "
                    "(a YAML alias bomb?)",
                    line,
                )
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise DataError(source, "an alias refers to a node that contains it", line)
        if depth > MAX_DEPTH:
            raise DataError(source, f"nested deeper than {MAX_DEPTH} levels", line)
        on_path.add(key)
        stack.append((node, True, depth))
        stack.extend((c, False, depth + 1) for c in _children(node) if id(c) not in sizes)


class BoundedSafeLoader(yaml.SafeLoader):
    """PyYAML's safe loader that checks the node graph before building Python values."""

    source = "<yaml>"

    def construct_document(self, node: yaml.Node) -> Any:
        check_yaml_nodes(node, self.source)
        return super().construct_document(node)


_CLoader: Any = None
if getattr(yaml, "__with_libyaml__", False):

    class _BoundedCSafeLoader(yaml.CSafeLoader):
        """The same checks over libyaml's parser (several times faster on large files)."""

        source = "<yaml>"

        def construct_document(self, node: yaml.Node) -> Any:
            check_yaml_nodes(node, self.source)
            return super().construct_document(node)

    _CLoader = _BoundedCSafeLoader


def parse_yaml(text: str, source: str) -> Any:
    """Parse one YAML document (YAML 1.1 safe types), or DataError naming the line.

    Where PyYAML has libyaml, a document is read with it first; on any problem it is read
    again with PyYAML's own parser, whose messages (and line numbers) are the ones given.
    """
    deep_at = _deep_line(text)  # PyYAML takes seconds on thousands of nested flow brackets
    if deep_at is not None:
        raise DataError(source, f"nested deeper than {MAX_DEPTH} levels", deep_at)
    if _CLoader is not None:
        fast = _CLoader(text)
        fast.source = source
        try:
            return fast.get_single_data()
        except Exception:  # worded below, by the parser whose messages users see
            pass
        finally:
            fast.dispose()
    loader = BoundedSafeLoader(text)
    loader.source = source
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(exc.problem or exc.context or "syntax error").split())
        raise DataError(
            source, f"not valid YAML ({problem})", mark.line + 1 if mark else None, syntax=True
        ) from None
    except yaml.YAMLError as exc:
        raise DataError(source, f"not valid YAML ({' '.join(str(exc).split())})") from None
    except RecursionError:
        raise DataError(
            source, f"nested deeper than {MAX_DEPTH} levels", _deep_line(text)
        ) from None
    except ValueError as exc:
        if isinstance(exc, DataError):
            raise
        long_at = _long_number_line(text)
        if long_at is not None:
            raise DataError(source, "a number has more than 4300 digits", long_at) from None
        raise DataError(source, f"not valid YAML ({exc})") from None
    finally:
        loader.dispose()


def load_yaml_file(path: Path, source: str | None = None) -> Any:
    """Read and parse a YAML file (OSError passes through for the caller to word)."""
    label = source or str(path)
    return parse_yaml(read_text(path, label), label)
