"""The static report a candidate spec gets from the compiler and the route analysis.

One shape for both kinds. ``hard_failures`` block acceptance; ``warnings`` are
evidence for the judge and the designer. Each finding carries a short code (the
list is in ``docs/design.md``), a one-line message and, where it applies, the
change index, task and world it concerns. ``sections`` holds the kind-specific
evidence (routes per task, change relevance and encounterability for mirror;
resource checks per generated world for biome).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REPORT_VERSION = "1.0"


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    change: int | None = None
    task: str | None = None
    world: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        for key in ("change", "task", "world"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass
class StaticReport:
    kind: str
    compiled: bool = False
    """The spec validated and the compiler (mirror) or generator (biome) accepted it."""
    validation_errors: list[str] = field(default_factory=list)
    hard_failures: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.compiled and not self.hard_failures

    def fail(self, code: str, message: str, **where: Any) -> None:
        finding = Finding(code, message, **where)
        if finding not in self.hard_failures:
            self.hard_failures.append(finding)

    def warn(self, code: str, message: str, **where: Any) -> None:
        finding = Finding(code, message, **where)
        if finding not in self.warnings:
            self.warnings.append(finding)

    def invalid(self, message: str) -> None:
        """The spec cannot be compiled at all (schema, identifiers or compiler errors)."""
        self.validation_errors.append(message)
        self.fail("invalid_spec", message)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": REPORT_VERSION,
            "kind": self.kind,
            "compiled": self.compiled,
            "passed": self.ok,
            "validation_errors": list(self.validation_errors),
            "hard_failures": [f.to_json() for f in self.hard_failures],
            "warnings": [f.to_json() for f in self.warnings],
            **self.sections,
        }

    def summary(self) -> str:
        state = "passes" if self.ok else f"{len(self.hard_failures)} hard failure(s)"
        return f"static report: {state}, {len(self.warnings)} warning(s)"


def not_run(kind: str, reason: str) -> dict[str, Any]:
    """The report shown when there is no candidate to report on yet."""
    return {"schema_version": REPORT_VERSION, "kind": kind, "verdict": "not_run", "summary": reason}
