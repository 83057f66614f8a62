"""Range of the paper's Table 11 Cochran's Q over the per-task splits its text leaves open.

The MirrorCraft paper prints ReAct's disclosure split per suite and model (Tables 4
and 10) and its 95% half-widths (Table 11), binomial and stratified by model and task
with 30 episodes per cell, but never the per-task success counts. The Q of the Gap
across suites (weights 1/var of the disclosed side, since every suite shares the
Vanilla cell) and of ΔSR (both sides) depend on that split. This script enumerates
every split of the per-model counts over the three tasks that agrees with:

- the per-model counts of Table 10 (Vanilla, hidden and disclosed successes);
- the task facts of the text: Vanilla per task (Iron Armor 90.0% pooled, 93.3% with
  DeepSeek; the M04 retention figures fix Iron Armor + Diamond per model), M04 with
  DeepSeek on Iron Armor (13.3% hidden, 43.3% disclosed), M04 Iron Armor + Diamond per
  model (52%/23% kept hidden, 63%/42% disclosed), M05 Iron Armor 91.7% and Diamond 75.0%
  hidden pooled over models, DeepSeek's disclosed M02 Enchantment SR 3.3%;
- the per-suite half-widths of Table 11 for RIE_SR, Gap and ΔSR, each to its printed
  rounding (M03's three cannot all be met by any split; ``--tolerance`` widens the
  rounding band, default 0.006 points, which admits the nearest M03 splits);

and prints the smallest and largest Q of the Gap and of ΔSR (plus the Gap's Q with
the full pair variance, the reading the paper's text rules out).

Usage: .venv/bin/python scripts/table11_q_range.py [--tolerance 0.006]
(about a minute: the ΔSR range enumerates a few million combinations).
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections.abc import Iterator

Z = 1.959964
N = 30
SUITES = ("M01", "M02", "M03", "M04", "M05", "M06")
VANILLA = {"gemini": (26, 28, 6), "deepseek": (28, 25, 2)}
HIDDEN = {
    "gemini": {"M01": 30, "M02": 68, "M03": 62, "M04": 28, "M05": 51, "M06": 57},
    "deepseek": {"M01": 37, "M02": 53, "M03": 59, "M04": 12, "M05": 55, "M06": 60},
}
DISCLOSED = {
    "gemini": {"M01": 41, "M02": 66, "M03": 66, "M04": 35, "M05": 59, "M06": 66},
    "deepseek": {"M01": 36, "M02": 60, "M03": 66, "M04": 22, "M05": 57, "M06": 58},
}
HALF_WIDTHS = {  # Table 11, ReAct: RIE_SR, Gap, ΔSR
    "M01": (7.6, 7.5, 8.4),
    "M02": (6.3, 5.9, 5.6),
    "M03": (5.8, 6.5, 5.6),
    "M04": (7.1, 7.5, 8.0),
    "M05": (6.8, 6.4, 6.6),
    "M06": (6.7, 6.3, 6.5),
}
Split = tuple[int, int, int]


def var(x: int) -> float:
    p = x / N
    return p * (1 - p) / N


def splits(total: int) -> Iterator[Split]:
    for iron in range(N + 1):
        for diamond in range(N + 1):
            ench = total - iron - diamond
            if 0 <= ench <= N:
                yield (iron, diamond, ench)


def hidden_ok(suite: str, g: Split, d: Split) -> bool:
    if suite == "M04":
        return d[:2] == (4, 8) and g[0] + g[1] == 28
    if suite == "M05":
        return g[0] + d[0] == 55 and g[1] + d[1] == 45
    return True


def disclosed_ok(suite: str, g: Split, d: Split) -> bool:
    if suite == "M04":
        return d[:2] == (13, 9) and g[0] + g[1] == 34
    if suite == "M02":
        return d[2] == 1
    return True


def cochran(values: list[float], variances: list[float]) -> float:
    w = [1 / v for v in variances]
    mean = sum(wi * x for wi, x in zip(w, values, strict=True)) / sum(w)
    return sum(wi * (x - mean) ** 2 for wi, x in zip(w, values, strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tolerance", type=float, default=0.006)
    args = ap.parse_args()

    def ok(half: float, printed: float) -> bool:
        return abs(half - printed) <= 0.05 + args.tolerance

    v_vanilla = sum(var(x) for m in VANILLA for x in VANILLA[m])
    feasible: dict[str, list[tuple[float, float]]] = {}
    for s in SUITES:
        rie_hw, gap_hw, delta_hw = HALF_WIDTHS[s]
        vh = {
            round(sum(var(x) for x in g + d), 13)
            for g in splits(HIDDEN["gemini"][s])
            for d in splits(HIDDEN["deepseek"][s])
            if hidden_ok(s, g, d)
        }
        vh = {a for a in vh if ok(Z * math.sqrt((v_vanilla + a) / 36) * 100, rie_hw)}
        vd = {
            round(sum(var(x) for x in g + d), 13)
            for g in splits(DISCLOSED["gemini"][s])
            for d in splits(DISCLOSED["deepseek"][s])
            if disclosed_ok(s, g, d)
        }
        vd = {b for b in vd if ok(Z * math.sqrt((v_vanilla + b) / 36) * 100, gap_hw)}
        feasible[s] = sorted(
            (a, b) for a in vh for b in vd if ok(Z * math.sqrt((a + b) / 36) * 100, delta_hw)
        )
        print(f"{s}: {len(feasible[s])} (hidden, disclosed) variance combinations")
    if any(not f for f in feasible.values()):
        print("no split meets every printed half-width; try a larger --tolerance")
        return
    vanilla = sum(sum(v) for v in VANILLA.values())
    gap = [
        100 * (vanilla - DISCLOSED["gemini"][s] - DISCLOSED["deepseek"][s]) / 180 for s in SUITES
    ]
    delta = [
        100
        * (
            DISCLOSED["gemini"][s]
            + DISCLOSED["deepseek"][s]
            - HIDDEN["gemini"][s]
            - HIDDEN["deepseek"][s]
        )
        / 180
        for s in SUITES
    ]
    scale = 1e4 / 36
    gap_sides = [sorted({b for _, b in feasible[s]}) for s in SUITES]
    q_gap = [cochran(gap, [b * scale for b in c]) for c in itertools.product(*gap_sides)]
    q_full = [
        cochran(gap, [(v_vanilla + b) * scale for b in c]) for c in itertools.product(*gap_sides)
    ]
    delta_sides = [sorted({a + b for a, b in feasible[s]}) for s in SUITES]
    q_delta = [cochran(delta, [v * scale for v in c]) for c in itertools.product(*delta_sides)]
    print(f"Gap, disclosed-side variance: Q from {min(q_gap):.2f} to {max(q_gap):.2f}")
    print(f"ΔSR, both sides:              Q from {min(q_delta):.3f} to {max(q_delta):.3f}")
    print(f"Gap, full pair variance:      Q from {min(q_full):.2f} to {max(q_full):.2f}")


if __name__ == "__main__":
    main()
