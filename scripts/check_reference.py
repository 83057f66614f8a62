"""Compare data/reference/mirrorcraft_paper.yaml with the paper's own tables.

    python scripts/check_reference.py PATH/TO/mirrorcraft-paper.md

Reads Tables 2, 3, 4, 5, 10 and 11 from the paper's Markdown text and prints every cell
whose value differs from the packaged reference data (or is missing from it); exits 1
when there is any. The paper is not part of the repository, so the tests check the
data's internal consistency instead (tests/test_reference_data.py); run this after
editing the reference file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mirrorcraft.analysis.reference import load_reference

CONFIGS = {
    "Direct LLM": "direct",
    "ReAct": "react",
    "Reflexion": "reflexion",
    "Voyager": "voyager",
    "XENON": "xenon",
    "ADAM": "adam",
    "ReAct w/rules": "react",
}


def md_table(text: str, n: int) -> list[list[str]]:
    start = text.find(f"Table {n}.")
    if start < 0:
        raise LookupError(f"no 'Table {n}.' in it: is this the MirrorCraft paper's Markdown?")
    out: list[list[str]] = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            out.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif out:
            break
    return [r for r in out if not set("".join(r)) <= set("- ")]


def value(cell: str) -> float | None:
    cell = cell.replace("$", "").replace("+", "").strip()
    if cell in ("–", "-", ""):
        return None
    return float(cell)


def pm(cell: str) -> tuple[float, float]:
    est, hw = cell.replace("$", "").replace("\\pm", "±").replace("+", "").split("±")
    return float(est), float(hw)


def expected(text: str) -> list[tuple[str, dict[str, Any], str, float | None]]:
    """(table, row key, column, value) for every cell of the six tables."""
    cells: list[tuple[str, dict[str, Any], str, float | None]] = []
    for r in md_table(text, 2)[2:]:
        disclosure = "disclosed" if "rules" in r[0] else "hidden"
        for model, cols in (("gemini", r[1:7]), ("deepseek", r[7:13])):
            key = {"configuration": CONFIGS[r[0]], "disclosure": disclosure, "model": model}
            vanilla, mirror = cols[0], cols[1]
            vs = vanilla.split("/") if "/" in vanilla else [vanilla, vanilla]
            ms = mirror.split("/")
            named = {
                "vanilla_score": value(vs[0]),
                "vanilla_sr": value(vs[1]),
                "mirror_score": value(ms[0]),
                "mirror_sr": value(ms[1]),
                "rie_sc": value(cols[2]),
                "rie_sr": value(cols[3]),
                "actions": value(cols[4]),
                "cost_usd": value(cols[5]),
            }
            cells += [("table2", key, k, v) for k, v in named.items()]
    for r in md_table(text, 3)[1:]:
        key = {"suite": "pooled" if r[0] == "Pooled" else r[0]}
        for k, c in zip(("mirror_score", "mirror_sr", "rie_sc", "rie_sr"), r[2:], strict=True):
            cells.append(("table3", key, k, value(c)))
    for r in md_table(text, 4)[1:]:
        key = {"suite": "pooled" if r[0] == "Pooled" else r[0]}
        cols = ("hidden_sr", "disclosed_sr", "rie_sr", "gap", "delta_sr")
        cells += [("table4", key, k, value(c)) for k, c in zip(cols, r[1:], strict=True)]
    for r in md_table(text, 5)[2:]:
        for i, cp in enumerate((100, 150, 200)):
            key = {"configuration": CONFIGS[r[0]], "checkpoint": cp}
            cells.append(("table5", key, "vanilla_sr", value(r[1 + 2 * i])))
            cells.append(("table5", key, "mirror_sr", value(r[2 + 2 * i])))
    for r in md_table(text, 10)[2:]:
        suite = "pooled" if r[0] == "Pooled" else r[0]
        for model, cols in (("gemini", r[1:4]), ("deepseek", r[4:7])):
            key = {"suite": suite, "model": model}
            for k, c in zip(("rie_sr", "gap", "delta_sr"), cols, strict=True):
                cells.append(("table10", key, k, value(c)))
    for r in md_table(text, 11)[2:]:
        key = {"suite": "pooled" if r[0] == "Pooled" else r[0]}
        for name, c in zip(
            ("all_six_rie_sr", "react_rie_sr", "react_gap", "react_delta_sr"), r[1:], strict=True
        ):
            est, hw = pm(c)
            cells += [("table11", key, name, est), ("table11", key, f"{name}_hw", hw)]
    return cells


def main(argv: list[str]) -> int:
    usage = "usage: " + __doc__.strip().splitlines()[2].strip()
    if argv in (["-h"], ["--help"]):
        print(usage)
        return 0
    if len(argv) != 1:
        print(usage, file=sys.stderr)
        return 2
    try:
        text = Path(argv[0]).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"check_reference.py: cannot read {argv[0]}: {exc}", file=sys.stderr)
        return 2
    ref = load_reference()
    problems = 0
    try:
        cells = expected(text)
    except LookupError as exc:
        print(f"check_reference.py: {argv[0]}: {exc}", file=sys.stderr)
        return 2
    for table, key, column, want in cells:
        found = [r for r in ref.table(table).rows if all(r.get(k) == v for k, v in key.items())]
        have = found[0].get(column, "missing") if len(found) == 1 else "no such row"
        if have != want:
            problems += 1
            print(f"{table} {key} {column}: paper {want}, reference {have}")
    print(f"{len(cells)} cells compared, {problems} differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
