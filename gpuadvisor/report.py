"""Decision -> Markdown / JSON (HTML and PDF join here), through templates.

Templates under ``reports/`` only display; every number and sentence they show is
already in the Decision. Jinja2 runs with ``StrictUndefined`` so a missing value fails
loudly, and user text passes through an escaping filter for the target format.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import jinja2

from gpuadvisor.decision import Decision
from gpuadvisor.errors import InputError
from gpuadvisor.resources import data_dir
from gpuadvisor.rules import format_value
from gpuadvisor.sensitivity import describe_flip

Format = Literal["md", "json"]
FORMATS: tuple[str, ...] = ("md", "json")

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")


def escape_md(text: object) -> str:
    """User text as inert Markdown: specials escaped, one line, no HTML."""
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", flat)


_CELL_SPECIAL = re.compile(r"([\\|<>\[\]`*])")


def md_cell(text: object) -> str:
    """Engine text in a cell or list item: one line; characters that could break out of
    the table or start HTML, links, code or emphasis are escaped; the rest stays readable.
    """
    return _CELL_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def money(value: float) -> str:
    return f"${value:,.0f}"


def report_date() -> str | None:
    """The date shown in reports: from SOURCE_DATE_EPOCH only, so output is reproducible."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return None
    try:
        stamp = int(epoch)
    except ValueError:
        raise InputError(f"SOURCE_DATE_EPOCH must be an integer, got {epoch!r}") from None
    return dt.datetime.fromtimestamp(stamp, tz=dt.timezone.utc).date().isoformat()


def _environment(folder: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    filters: dict[str, Callable[..., Any]] = {
        "md": escape_md,
        "cell": md_cell,
        "money": money,
        "value": format_value,
        "flip": describe_flip,
    }
    env.filters.update(filters)
    return env


def render(decision: Decision, fmt: Format) -> str:
    if fmt == "json":
        return decision.to_json()
    env = _environment(data_dir("reports"))
    template = env.get_template("report.md.j2")
    text = template.render(d=decision, date=report_date())
    return re.sub(r"\n{3,}", "\n\n", text)
