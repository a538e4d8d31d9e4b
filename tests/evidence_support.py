"""Where the evidence test data lives, and a small path helper for assertions."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
FIXTURES = HERE.parent / "fixtures" / "evidence"


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
