"""Where the evidence test data lives, and a small path helper for assertions."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
FIXTURES = HERE.parent / "fixtures" / "evidence"


def fixture_files() -> list[Path]:
    """The captures under tests/fixtures/evidence (its SOURCES.md is not one)."""
    return sorted(p for p in FIXTURES.iterdir() if p.is_file() and p.suffix != ".md")


def fixture_text(path: Path) -> str:
    """A capture's text as the loader decodes it (one is UTF-16, as PowerShell writes)."""
    from gpuadvisor.inputs.textio import decode_capture

    return decode_capture(path.read_bytes(), path.name)


def real_fixtures_dir() -> Path | None:
    """``../shared/fixtures/real`` beside the repository root (parents[2]); a worktree
    nested one level deeper finds the same folder further up."""
    for base in HERE.parents[2:]:
        candidate = base / "shared" / "fixtures" / "real"
        if candidate.is_dir():
            return candidate
    return None


MISSING_REAL = (
    "real captures not found: expected ../shared/fixtures/real beside the repository root"
)

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def pick(obj: Any, path: str) -> Any:
    """``pick(snapshot, "gpus[0].pcie.width_current")``; dict keys work as attributes;
    a ``len:`` prefix gives the length of what the path names."""
    if path.startswith("len:"):
        return len(pick(obj, path[4:]))
    for name, index in _STEP.findall(path):
        if index:
            obj = obj[int(index)]
        elif isinstance(obj, dict):
            obj = obj[name]
        else:
            obj = getattr(obj, name)
    return obj
