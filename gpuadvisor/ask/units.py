"""Numbers and memory sizes as people type them: thousands separators, units after a
number, and memory in GB, MiB or GiB turned into the GiB the profile counts (the
conversion said). Used by the questionnaire's converters; imports nothing of it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final, NamedTuple

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


#: What people type when they do not know an answer. Each leaves the field open (its
#: documented default applies and the profile says it was not known), or, where the
#: question cannot stay open, is refused with the words it accepts.
UNKNOWN_WORDS: Final = frozenset(
    {
        "unknown",
        "don't know",
        "dont know",
        "do not know",
        "i don't know",
        "i dont know",
        "i do not know",
        "not sure",
        "unsure",
        "no idea",
        "idk",
        "not known",
        "n/k",
    }
)
#: How "don't know" is written in prompts and messages.
DONT_KNOW: Final = "don't know"


def is_unknown(text: str) -> bool:
    """Whether ``text`` says "I do not know" (any case, curly apostrophe, a final stop)."""
    cleaned = " ".join(text.strip().lower().replace("\u2019", "'").split()).rstrip(".!")
    return cleaned in UNKNOWN_WORDS


#: Currency signs and codes a money answer may carry. gpuadvisor prices cards in US
#: dollars and converts no currency: another currency's amount is read as that many
#: dollars, and the note says so (a rate would be a judgement that goes stale).
_DOLLARS: Final = ("$", "usd", "us$", "dollars", "dollar")
_OTHER_CURRENCIES: Final = {
    "€": "euro", "eur": "euro", "euro": "euro", "euros": "euro",
    "£": "pound", "gbp": "pound", "chf": "Swiss franc", "¥": "yen", "jpy": "yen",
}  # fmt: skip
#: Shorthand after a number: 10k, 1.5m.
_MULTIPLIERS: Final = {"k": 1_000, "thousand": 1_000, "m": 1_000_000, "million": 1_000_000}
_SPACED = re.compile(r"^[+-]?\d{1,3}( \d{3})+(\.\d+)?$")
_MONEY = re.compile(
    r"^(?P<before>[^\d+-]*?)\s*(?P<number>[+-]?[\d.,_ ]*\d[\d.,_]*)\s*"
    r"(?P<scale>k|thousand|m|million)?\s*(?P<after>[^\d]*?)$"
)


def _currency(word: str) -> str | None:
    """ "dollars", another currency's name, "" for no sign, None for something else."""
    word = word.strip().removesuffix(".")
    if not word:
        return ""
    if word in _DOLLARS:
        return "dollars"
    return _OTHER_CURRENCIES.get(word)


def money_converter(units: tuple[str, ...], optional: bool) -> Converter:
    """An amount of US dollars: ``10000``, ``$10,000``, ``10k``, ``1.5m``, ``10 000 USD``;
    ``€10000`` is read as 10,000 dollars and the note says that no currency is
    converted. ``units`` are further words allowed after the amount ("/kwh")."""
    plain = number_converter(units, optional)

    def convert(text: str) -> Any:
        cleaned = text.strip().lower()
        for unit in sorted(units, key=len, reverse=True):
            if unit not in _DOLLARS and cleaned.endswith(unit) and cleaned != unit:
                cleaned = cleaned[: -len(unit)].strip()
                break
        match = _MONEY.match(cleaned)
        if match is None:
            return plain(text)
        before, after = _currency(match["before"]), _currency(match["after"])
        if before is None or after is None or (before and after and before != after):
            return plain(text)
        currency = before or after
        digits = match["number"].replace("_", "")
        if " " in digits:
            if not _SPACED.match(digits):
                return plain(text)
            digits = digits.replace(" ", "")
        if _THOUSANDS.match(digits):
            digits = digits.replace(",", "")
        try:
            amount = float(digits)
        except ValueError:
            return plain(text)
        scale = match["scale"]
        if scale:
            amount *= _MULTIPLIERS[scale]
        if not math.isfinite(amount):
            return digits
        value = int(amount) if amount.is_integer() and abs(amount) < 1e15 else amount
        if (currency == "dollars" and not scale) or value == 0:
            return str(value)
        said = f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"
        note = f"Read {text.strip()} as {said} US dollars"
        if currency == "":
            note += " (gpuadvisor counts money in US dollars)."
        elif currency != "dollars":
            note += (
                f": gpuadvisor prices cards in US dollars and converts no currency, so "
                f"answer in dollars if the exchange rate of the {currency} matters."
            )
        else:
            note += "."
        return Converted(value, note)

    return convert
