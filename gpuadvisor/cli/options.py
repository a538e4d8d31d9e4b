"""Option types and choices that several commands share."""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Annotated

import typer

from gpuadvisor.errors import InputError


class ReportFormat(str, enum.Enum):
    md = "md"
    html = "html"
    pdf = "pdf"
    json = "json"


class ListFormat(str, enum.Enum):
    table = "table"
    json = "json"


class SchemaName(str, enum.Enum):
    profile = "profile"
    host = "host"
    decision = "decision"
    fleet = "fleet"


CatalogOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalog", metavar="DIR", help="Organisation catalog overlay folder (repeatable)."
    ),
]
RulesOpt = Annotated[
    list[Path] | None,
    typer.Option("--rules", metavar="DIR", help="Organisation rules overlay folder (repeatable)."),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "-o", "--output", metavar="FILE", help="Write here (atomically) instead of stdout."
    ),
]


def finite(value: float | None, option: str) -> None:
    if value is not None and not math.isfinite(value):
        raise InputError(f"must be a finite number, got {value}", field=option)
