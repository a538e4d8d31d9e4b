"""What ``nvidia-smi pmon`` and ``dmon`` share: a ``#`` header naming the columns, an
optional ``#`` units line, then one row per GPU or process and sample. Columns are found
by name, so ``-s`` selections, ``-o DT`` time stamps and the jpg/ofa columns of newer
drivers read the same.
"""

from __future__ import annotations

from statistics import mean

from gpuadvisor.evidence._limits import lines
from gpuadvisor.nvidia.values import number


def table(text: str) -> tuple[list[str], list[list[str]]]:
    """Header names and data rows (tokens)."""
    columns: list[str] = []
    rows: list[list[str]] = []
    for line in lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            names = stripped.lstrip("#").split()
            if not columns and "gpu" in [n.lower() for n in names]:
                columns = [n.lower() for n in names]
            continue
        if columns:
            rows.append(stripped.split())
    return columns, rows


def row_record(columns: list[str], tokens: list[str]) -> dict[str, str]:
    record = dict(zip(columns, tokens, strict=False))
    if "command" in columns and len(tokens) >= len(columns):
        record["command"] = " ".join(tokens[len(columns) - 1 :])
    return record


def mean_of(records: list[dict[str, str]], column: str) -> float | None:
    values = [v for r in records if (v := number(r.get(column))) is not None]
    return round(mean(values), 2) if values else None
