"""Tables in the sysstat style (``iostat``, ``mpstat``, ``sar``): a header row of column
names, then rows whose last cells are the values; whatever stands before them (a time
of day with or without AM/PM, ``Average:``) is not a column. Reading from the right
makes every locale's time format and every sysstat version's column set the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import mean

from gpuadvisor.evidence._limits import lines
from gpuadvisor.nvidia.values import BadValue, whole

_CPUS = re.compile(r"\((\d+) CPU\)")


@dataclass
class Report:
    """One block of rows under one header; ``average`` when the rows start 'Average:'."""

    columns: list[str]
    rows: dict[str, dict[str, float]] = field(default_factory=dict)
    average: bool = False


def cpu_count(text: str) -> int | None:
    """The CPU count sysstat prints in its banner: ``(64 CPU)``."""
    match = _CPUS.search(text)
    return whole(match.group(1)) if match else None


def number(token: str) -> float | None:
    """A cell's value (a decimal comma in some locales), None when it is not a number."""
    try:
        value = float(token.replace(",", ".") if "." not in token else token)
    except ValueError:
        return None
    if not math.isfinite(value):
        # float() reads "nan", "inf" and "1e999"; sysstat prints none of them.
        raise BadValue(token, "is not a finite number")
    return value


def reports(text: str, is_header: Callable[[list[str]], str | None]) -> list[Report]:
    """Blocks of rows. ``is_header`` gets a line's tokens and returns the name of the
    label column (``Device``, ``CPU``, ``IFACE``) when the line is a header."""
    found: list[Report] = []
    current: Report | None = None
    for line in lines(text):
        tokens = line.split()
        if not tokens:
            current = None
            continue
        label_column = is_header(tokens)
        if label_column is not None:
            at = next(i for i, t in enumerate(tokens) if t.rstrip(":") == label_column)
            current = Report(columns=tokens[at + 1 :], average=tokens[0] == "Average:")
            found.append(current)
            continue
        if current is None:
            continue
        width = len(current.columns)
        if len(tokens) < width + 1:
            continue
        values = [number(t) for t in tokens[-width:]]
        if any(v is None for v in values):
            continue
        if tokens[0] == "Average:" and not current.average:
            current = Report(columns=current.columns, average=True)
            found.append(current)
        label = tokens[-width - 1]
        current.rows[label] = {
            c: v for c, v in zip(current.columns, values, strict=True) if v is not None
        }
    return [r for r in found if r.rows]


def summary(found: list[Report], *, skip_first: bool = False) -> dict[str, dict[str, float]]:
    """Per label: the 'Average:' rows when present, else the mean over reports.

    ``skip_first`` drops the first report when there are several (iostat's first report
    covers the time since boot, not the measured interval)."""
    averages = [r for r in found if r.average]
    chosen = averages or found
    if skip_first and not averages and len(chosen) > 1:
        chosen = chosen[1:]
    merged: dict[str, dict[str, list[float]]] = {}
    for report in chosen:
        for label, row in report.rows.items():
            slot = merged.setdefault(label, {})
            for column, value in row.items():
                slot.setdefault(column, []).append(value)
    return {
        label: {column: round(mean(values), 3) for column, values in row.items()}
        for label, row in merged.items()
    }
