"""Errors of the input parsers: every problem with its file and line number."""

from __future__ import annotations

from dataclasses import dataclass

MAX_ISSUES = 1000  # collected per file; far more than the 20 every report must show


@dataclass(frozen=True)
class Issue:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


class InputError(ValueError):
    """Raised by a parser when a file is bad; ``issues`` lists every problem found."""

    def __init__(self, issues: list[Issue]):
        self.issues = list(issues)
        super().__init__(self.format())

    def format(self, limit: int = 20) -> str:
        lines = [str(issue) for issue in self.issues[:limit]]
        more = len(self.issues) - limit
        if more > 0:
            lines.append(f"... and {more} more error(s)")
        return "\n".join(lines)


class IssueList:
    """Collects issues for one file; ``raise_if_any`` ends parsing with an InputError."""

    def __init__(self, file: str):
        self.file = file
        self.issues: list[Issue] = []
        self.truncated = False

    def add(self, line: int | None, message: str) -> None:
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(Issue(self.file, line, message))
        else:
            self.truncated = True

    def __bool__(self) -> bool:
        return bool(self.issues)

    def raise_if_any(self) -> None:
        if self.issues:
            if self.truncated:
                self.issues.append(Issue(self.file, None, "too many errors; stopped counting"))
            raise InputError(self.issues)
