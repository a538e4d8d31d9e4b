"""pydantic validation errors -> one InputError that names the file, line and field.

Profiles, catalog entries and rules are all validated by pydantic models; this is the
one place that turns the first problem into the message a user sees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic import ValidationError

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.textio import locate_field

Loc = tuple[str | int, ...]
#: Names valid at the parent of a location, for "did you mean" on an unknown key.
KnownNames = Callable[[Loc], Iterable[str]]
#: A model's own phrasing for some errors; None falls back to the common phrasing.
Special = Callable[[Any], tuple[str, str | None] | None]


def ordered_errors(exc: ValidationError) -> list[Any]:
    """Errors with misspelt keys first: a misspelt key also leaves its field missing."""
    return sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")


def _choices(error: Any) -> list[str]:
    expected = str(error.get("ctx", {}).get("expected", ""))
    return [part.strip(" '\"") for part in expected.replace(" or ", ",").split(",") if part]


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
        return f"{error['msg']}, got {got!r}", did_you_mean(str(got), _choices(error))
    return str(error["msg"]), None


def input_error(
    exc: ValidationError,
    *,
    file: str,
    text: str | None,
    known_names: KnownNames,
    prefix: str = "",
    special: Special | None = None,
) -> InputError:
    """The first problem of ``exc`` as an InputError, with the count of the others."""
    errors = ordered_errors(exc)
    first = errors[0]
    loc: Loc = tuple(first["loc"])
    phrased = special(first) if special is not None else None
    message, hint = phrased if phrased is not None else describe(first, known_names)
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return InputError(
        prefix + message,
        file=file,
        line=locate_field(text, loc) if text is not None and loc else None,
        field=".".join(str(p) for p in loc) or None,
        hint=hint,
    )
