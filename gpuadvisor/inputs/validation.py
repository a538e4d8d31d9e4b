"""pydantic validation errors -> one InputError that names the file, line and field.

Profiles, catalog entries and rules are all validated by pydantic models; this is the
one place that turns their problems into the message a user sees: every problem (up to
:data:`MAX_PROBLEMS`), each with its own line and field, values spelt as the file
spells them (``true``, not ``True``), and what a number is expected to be (its type and
unit).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from pydantic import ValidationError

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.textio import locate_field

Loc = tuple[str | int, ...]
#: Names valid at the parent of a location, for "did you mean" on an unknown key.
KnownNames = Callable[[Loc], Iterable[str]]
#: A model's own phrasing for some errors; None falls back to the common phrasing.
Special = Callable[[Any], tuple[str, str | None] | None]

#: At most this many problems of one file are listed; the rest are counted.
MAX_PROBLEMS: Final = 20

#: The unit a field holds, from the end of its name (names carry their units).
UNIT_SUFFIXES: Final = (
    ("_usd_per_kwh", "US dollars per kWh"),
    ("_per_hour_usd", "US dollars per hour"),
    ("_gib", "GiB"),
    ("_mib", "MiB"),
    ("_gbs", "GB/s"),
    ("_ms", "milliseconds"),
    ("_usd", "US dollars"),
    ("_hours", "hours"),
    ("_years", "years"),
    ("_tflops", "TFLOPS"),
    ("_pct", "%"),
    ("_w", "W"),
    ("_c", "°C"),
    ("_s", "seconds"),
)

#: What a type error expected, in words, by pydantic error type.
_EXPECTED: Final = {
    "float_type": "a valid number",
    "float_parsing": "a valid number",
    "int_type": "a valid integer (a whole number)",
    "int_parsing": "a valid integer (a whole number)",
    "int_from_float": "a valid integer (a whole number)",
    "bool_type": "a valid boolean (true or false)",
    "bool_parsing": "a valid boolean (true or false)",
    "string_type": "a valid string (text in quotes)",
}
_RANGES: Final = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})
#: A number followed by a unit word, as in "24GB" or "800 W".
_NUMBER_AND_UNIT: Final = re.compile(r"\s*([+-]?\d[\d_,]*(?:\.\d+)?)\s*([A-Za-z/$°%]*)\s*")
_DECIMAL_GB_IN_GIB: Final = {"gb": 1e9 / 2**30, "mb": 1e6 / 2**30, "tb": 1e12 / 2**30}
_BINARY_IN_GIB: Final = {"gib": 1.0, "mib": 1 / 1024, "tib": 1024.0}


def toml_spelling(value: Any, limit: int = 60) -> str:
    """``value`` as a TOML file spells it: ``true``, ``'text'`` (a literal string, or
    ``"..."`` with escapes when it holds a quote or a control character), ``[1, 2]``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value) if not isinstance(value, float) or math.isfinite(value) else str(value)
    if isinstance(value, str):
        shown = value if len(value) <= limit else value[:limit] + "..."
        if "'" not in shown and shown.isprintable():
            return f"'{shown}'"  # a TOML literal string, as pydantic quotes the choices
        return json.dumps(shown, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        text = "[" + ", ".join(toml_spelling(v, limit) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k} = {toml_spelling(v, limit)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def unit_of(loc: Loc) -> str | None:
    """The unit of the field at ``loc``, read from its name (``vram_need_gib``: GiB)."""
    name = str(loc[-1]) if loc else ""
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix):
            return unit
    return None


def ordered_errors(exc: ValidationError) -> list[Any]:
    """Errors with misspelt keys first: a misspelt key also leaves its field missing."""
    return sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")


def _choices(error: Any) -> list[str]:
    expected = str(error.get("ctx", {}).get("expected", ""))
    return [part.strip(" '\"") for part in expected.replace(" or ", ",").split(",") if part]


def _in_gib(amount: float, unit: str) -> float | None:
    word = unit.lower()
    if word in _BINARY_IN_GIB:
        return amount * _BINARY_IN_GIB[word]
    if word in _DECIMAL_GB_IN_GIB:
        return amount * _DECIMAL_GB_IN_GIB[word]
    return None


#: Other ways to write a unit after a number, for the units fields hold.
_UNIT_WORDS: Final = {
    "W": ("w", "watt", "watts"),
    "milliseconds": ("ms",),
    "US dollars": ("usd", "dollars"),
    "hours": ("h", "hour"),
    "years": ("y", "year"),
    "seconds": ("s", "sec"),
}


def _number_hint(loc: Loc, text: str, unit: str | None, whole: bool) -> str | None:
    """How to write a number given as text ("24GB", "800 W", "20"), or None."""
    match = _NUMBER_AND_UNIT.fullmatch(text)
    if match is None:
        return None
    amount = float(match.group(1).replace("_", "").replace(",", ""))
    if not math.isfinite(amount) or (whole and not amount.is_integer()):
        return None
    name = str(loc[-1])
    typed = match.group(2)
    plain = "without quotes or unit" if typed else "without quotes"
    if typed and unit == "GiB":
        gib = _in_gib(amount, typed)
        if gib is None:
            return f"write the number of GiB {plain}, like {name} = 24"
        shown = f"{gib:.2f}".rstrip("0").rstrip(".")
        said = "" if typed.lower() == "gib" else f" ({amount:g} {typed} = {shown} GiB)"
        return f"write {name} = {shown}{said}, {plain}"
    if typed and (unit is None or typed.lower() not in (unit.lower(), *_UNIT_WORDS.get(unit, ()))):
        return f"write the number{' of ' + unit if unit else ''} itself, {plain}"
    value = f"{amount:.0f}" if whole else f"{amount:g}"
    return f"write {name} = {value}{' (' + unit + ')' if unit else ''}, {plain}"


def describe(error: Any, known_names: KnownNames) -> tuple[str, str | None]:
    """(message, hint) for one pydantic error."""
    loc: Loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key", did_you_mean(str(loc[-1]), known_names(loc))
    if kind == "missing":
        return "required field is missing", None
    if kind == "literal_error":
        got = error.get("input")
        choices = _choices(error)
        hint = did_you_mean(str(got), choices)
        if hint is None and not isinstance(got, str) and choices:
            hint = f"the choices are text in quotes: {loc[-1]} = {toml_spelling(choices[0])}"
        # pydantic lists the choices as 'a', 'b' or 'c': TOML literal strings already.
        return f"{error['msg']}, got {toml_spelling(got)}", hint
    got = error.get("input")
    unit = unit_of(loc)
    if kind in _EXPECTED:
        expected = _EXPECTED[kind]
        if unit and kind not in ("bool_type", "bool_parsing", "string_type"):
            expected += f" of {unit}"
        what = "the text " if isinstance(got, str) else ""
        message = f"Input should be {expected}, got {what}{toml_spelling(got)}"
        hint = None
        if isinstance(got, str) and kind not in ("bool_type", "bool_parsing", "string_type"):
            hint = _number_hint(loc, got, unit, whole="int" in kind)
        elif isinstance(got, bool) and kind != "bool_type":
            hint = "true and false are not numbers in a profile; write the number itself"
        return message, hint
    if kind in _RANGES:
        limit = str(error["msg"])
        return f"{limit}{' ' + unit if unit else ''}, got {toml_spelling(got)}", None
    return str(error["msg"]), None


class InputProblems(InputError):
    """Several problems in one input: the first is the error's own (file, line, field,
    message, hint, as for one problem); :attr:`others` are the rest, each a complete
    "file:line: field: message" line, at most :data:`MAX_PROBLEMS` in all."""

    def __init__(self, first: InputError, others: list[InputError], unlisted: int) -> None:
        super().__init__(
            first.message, file=first.file, line=first.line, field=first.field, hint=first.hint
        )
        self.others = tuple(str(problem) for problem in others)
        self.unlisted = unlisted

    def __str__(self) -> str:
        lines = [super().__str__(), *self.others]
        total = 1 + len(self.others) + self.unlisted
        if self.unlisted:
            lines.append(
                f"... and {self.unlisted} more problem{'s' if self.unlisted > 1 else ''} "
                f"({total} in all; the first {MAX_PROBLEMS} are listed)"
            )
        else:
            lines.append(f"({total} problems)")
        return "\n".join(lines)


def input_error(
    exc: ValidationError,
    *,
    file: str,
    text: str | None,
    known_names: KnownNames,
    prefix: str = "",
    special: Special | None = None,
) -> InputError:
    """Every problem of ``exc`` (up to :data:`MAX_PROBLEMS`), as one InputError."""
    problems: list[InputError] = []
    errors = ordered_errors(exc)
    for error in errors[:MAX_PROBLEMS]:
        loc: Loc = tuple(error["loc"])
        phrased = special(error) if special is not None else None
        message, hint = phrased if phrased is not None else describe(error, known_names)
        problems.append(
            InputError(
                prefix + message,
                file=file,
                line=locate_field(text, loc) if text is not None and loc else None,
                field=".".join(str(p) for p in loc) or None,
                hint=hint,
            )
        )
    if len(problems) == 1:
        return problems[0]
    # The first stays first (a misspelt key, which explains a missing field); the rest
    # in the order of the file.
    rest = sorted(problems[1:], key=lambda p: p.line if p.line is not None else math.inf)
    return InputProblems(problems[0], rest, len(errors) - len(problems))
