"""Numbers and memory sizes as people type them: thousands separators, units after a
number, and memory in GB, MiB or GiB turned into the GiB the profile counts (the
conversion said). Used by the questionnaire's converters; imports nothing of it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

Converter = Callable[[str], Any]

_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
NONE_WORDS = frozenset({"none", "no", "-", "n/a", "na"})

_GB_IN_GIB = 1e9 / 2**30
#: Memory units a ``*_gib`` field accepts after a number, as GiB per unit and the unit's
#: name. GB, MB and TB are decimal (10^9 bytes: how cards are labelled and sold); GiB,
#: MiB and TiB binary (2^30 bytes: what nvidia-smi and the profile count). A bare "G"
#: is read as GB, and the conversion is said, so a reader who meant GiB sees it.
MEMORY_UNITS: dict[str, tuple[float, str, str]] = {
    "gib": (1.0, "GiB", "2^30 bytes"),
    "gi": (1.0, "GiB", "2^30 bytes"),
    "mib": (1 / 1024, "MiB", "2^20 bytes"),
    "tib": (1024.0, "TiB", "2^40 bytes"),
    "gb": (_GB_IN_GIB, "GB", "10^9 bytes"),
    "g": (_GB_IN_GIB, "GB", "10^9 bytes"),
    "mb": (_GB_IN_GIB / 1000, "MB", "10^6 bytes"),
    "tb": (_GB_IN_GIB * 1000, "TB", "10^12 bytes"),
}


class Converted(NamedTuple):
    """A typed answer turned into another unit: the raw value for the field, and the
    sentence that says what was done (shown to the person who typed it)."""

    value: Any
    note: str


def number_converter(units: tuple[str, ...], optional: bool) -> Converter:
    """A number, with any of ``units`` after it, thousands separators allowed."""

    def convert(text: str) -> Any:
        cleaned = text.strip().lower()
        if optional and cleaned in NONE_WORDS:
            return None
        cleaned = cleaned.removeprefix("$").strip()
        for unit in sorted(units, key=len, reverse=True):
            if cleaned.endswith(unit) and cleaned != unit:
                cleaned = cleaned[: -len(unit)].strip()
                break
        if _THOUSANDS.match(cleaned):
            cleaned = cleaned.replace(",", "")
        return cleaned.replace("_", "")

    return convert


def memory_converter(optional: bool) -> Converter:
    """A number of GiB, or a number with a memory unit, converted to GiB (and said)."""
    plain = number_converter(("gib",), optional)

    def convert(text: str) -> Any:
        cleaned = text.strip().lower()
        match = re.fullmatch(r"(.*?\d)\s*([a-z]+)", cleaned)
        if match is None or match.group(2) not in MEMORY_UNITS:
            return plain(text)
        factor, unit, size = MEMORY_UNITS[match.group(2)]
        number = plain(match.group(1))
        if factor == 1.0:
            return number
        try:
            amount = float(number)
        except (TypeError, ValueError):
            return number  # not a number: the field's check says so
        if not math.isfinite(amount):
            return number
        exact = amount * factor
        gib = round(exact, 2) if abs(exact) >= 1 else float(f"{exact:.3g}")
        return Converted(
            gib,
            f"Read {amount:g} {unit} as {gib:g} GiB (1 {unit} = {size}, 1 GiB = 2^30 bytes; "
            "the profile counts memory in GiB).",
        )

    return convert
