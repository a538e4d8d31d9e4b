"""What a report says about its inputs, for a reader who signs it: the evidence files
by short names (the full path once, in the inputs section), and the prices used with
their kind and their age on the report date. Part of the view (:mod:`.view`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import NamedTuple

from gpuadvisor.decision.model import Decision, EvidenceRef


def short_names(paths: Iterable[str]) -> dict[str, str]:
    """Each path as its file name, or as many of its last folders as tell it apart from
    the others (``a/smi.txt``, ``b/smi.txt``): what a table shows on every row, with the
    full path once in the inputs section."""
    split = {path: re.split(r"[/\\]", path) for path in dict.fromkeys(paths)}
    names = {}
    for path, parts in split.items():
        for keep in range(1, len(parts) + 1):
            tail = parts[-keep:]
            if all(other[-keep:] != tail for o, other in split.items() if o != path):
                break
        names[path] = path[len(path) - len("/".join(tail)) :] if tail != parts else path
    return names


class Shortener(NamedTuple):
    """Replaces the evidence files' full paths in a text with their short names."""

    names: dict[str, str]
    pattern: re.Pattern[str] | None

    def __call__(self, text: object) -> str:
        text = "" if text is None else str(text)
        if self.pattern is None:
            return text
        return self.pattern.sub(lambda m: self.names[m.group()], text)


def shortener(decision: Decision) -> Shortener:
    names = {
        path: short
        for path, short in short_names(e.file for e in decision.inputs.evidence).items()
        if path != short
    }
    if not names:
        return Shortener({}, None)
    longest_first = sorted(names, key=len, reverse=True)
    return Shortener(names, re.compile("|".join(re.escape(p) for p in longest_first)))


class EvidenceFile(NamedTuple):
    name: str
    """What the report's tables call the file."""
    ref: EvidenceRef


class PriceUsed(NamedTuple):
    """One pick's unit price as the report used it, and how old it was that day."""

    role: str
    card: str
    price: str
    kind: str
    date: str
    age_days: int | None
    age: str


def _age(price_date: str, report: str | None) -> int | None:
    try:
        return (dt.date.fromisoformat(report or "") - dt.date.fromisoformat(price_date)).days
    except ValueError:
        return None


def _age_words(days: int | None) -> str:
    if days is None:
        return "unknown"
    if days < 0:
        return f"dated {-days:,} day{'s' if days != -1 else ''} after the report"
    return f"{days:,} day{'s' if days != 1 else ''}"


def prices_used(decision: Decision) -> tuple[PriceUsed, ...]:
    report = decision.provenance.generated_at
    rows = []
    for rank, pick in enumerate(decision.picks, start=1):
        if pick.count == 0:
            continue  # cards kept in the host: no price was used
        days = _age(pick.price_date, report) if pick.price_date else None
        rows.append(
            PriceUsed(
                role=f"Pick #{rank}",
                card=f"{pick.count} × {pick.name}",
                price="on quote" if pick.price_usd is None else f"${pick.price_usd:,.0f}",
                kind=pick.price_kind,
                date=pick.price_date or "none",
                age_days=days,
                age=_age_words(days),
            )
        )
    return tuple(rows)
