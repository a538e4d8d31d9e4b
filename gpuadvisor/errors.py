"""One exception family. ``cli.py`` is the only place that turns it into exit codes.

Every error carries where it happened (a file, and a line or a field path when known)
so the message a user sees can point at the exact spot to fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class GpuAdvisorError(Exception):
    """Base of every error gpuadvisor raises on purpose."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        self.hint = hint

    def location(self) -> str:
        """``file:line: field`` with whatever parts are known."""
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
        if self.field:
            where = f"{where}: {self.field}" if where else self.field
        return where

    def __str__(self) -> str:
        where = self.location()
        text = f"{where}: {self.message}" if where else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class InputError(GpuAdvisorError):
    """The user gave something we cannot accept: exit code 2."""

    exit_code = 2


class InternalError(GpuAdvisorError):
    """A bug or a broken installation: exit code 1."""

    exit_code = 1


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The closest known name to ``word``, phrased for a message, or None."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean '{matches[0]}'?" if matches else None
