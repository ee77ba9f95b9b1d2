"""Located diagnostics. Every problem in a manifest is reported as
``FILE:LINE:COL: error: MESSAGE`` (plus an optional ``FILE:LINE:COL: note: HINT`` line)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from .model import Loc


@dataclass
class Diagnostic:
    loc: Loc
    message: str
    hint: Optional[str] = None
    severity: str = "error"     # "error" or "note"

    def format(self) -> str:
        text = f"{self.loc}: {self.severity}: {self.message}"
        if self.hint:
            text += f"\n{self.loc}: note: {self.hint}"
        return text


class ManifestError(Exception):
    """Raised by loaders and the validator; carries one or more diagnostics."""

    def __init__(self, diagnostics: List[Diagnostic]):
        super().__init__("\n".join(d.format() for d in diagnostics))
        self.diagnostics = diagnostics


def fail(loc: Loc, message: str, hint: Optional[str] = None) -> "ManifestError":
    """Build (not raise) a ManifestError with one diagnostic: ``raise fail(loc, ...)``."""
    return ManifestError([Diagnostic(loc, message, hint)])


class Collector:
    """Accumulates diagnostics; ``check()`` raises them all at once, sorted by location."""

    def __init__(self) -> None:
        self.items: List[Diagnostic] = []

    def error(self, loc: Loc, message: str, hint: Optional[str] = None) -> None:
        self.items.append(Diagnostic(loc, message, hint))

    def check(self) -> None:
        if self.items:
            self.items.sort(key=lambda d: (d.loc.file, d.loc.line, d.loc.col))
            raise ManifestError(self.items)
