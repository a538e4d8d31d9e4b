"""The profile field each question is about: its pydantic type and constraints, how
an answer is checked against them, and the answers so far as questions' predicates
see them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Final, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from gpuadvisor.errors import did_you_mean
from gpuadvisor.inputs.profile import SECTIONS
from gpuadvisor.inputs.validation import describe


class _Unstated:
    """The answer "not known yet": the field is left out and its default applies."""

    def __repr__(self) -> str:
        return "UNSTATED"


UNSTATED: Final = _Unstated()


class Answers:
    """The answers so far, as the ``when`` predicates see them.

    ``answers["workload.kind"]`` is the stated value, or the field's documented default
    when it was not stated (None for a required field not yet answered).
    """

    def __init__(self, stated: Mapping[str, Any]) -> None:
        self._stated = stated

    def __getitem__(self, path: str) -> Any:
        if path in self._stated:
            return self._stated[path]
        info = field_info(path)
        return None if info.is_required() else info.get_default(call_default_factory=True)

    def known(self, path: str) -> bool:
        """Whether ``path`` was answered (or given in the starting file)."""
        return path in self._stated


Predicate = Callable[[Answers], bool]


def always(answers: Answers) -> bool:
    return True


def field_info(path: str) -> FieldInfo:
    """The field at ``path``: ``section.name``, or ``section.table.name`` inside a nested
    table such as ``[workload.model]``."""
    section, _, rest = path.partition(".")
    model: Any = SECTIONS[section]
    *tables, name = rest.split(".")
    for table in tables:
        model = base_type(model.model_fields[table].annotation)
    info: FieldInfo = model.model_fields[name]
    return info


def nested_model(path: str) -> Any:
    """The model of a nested table field (``workload.model``), or None for a plain value."""
    kind = base_type(field_info(path).annotation)
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def literal_values(annotation: Any) -> tuple[str, ...]:
    for arg in (annotation, *get_args(annotation)):
        if get_origin(arg) is Literal:
            return tuple(str(v) for v in get_args(arg))
    return ()


def is_optional(annotation: Any) -> bool:
    return type(None) in get_args(annotation)


def base_type(annotation: Any) -> Any:
    """``float`` for ``float | None``; the annotation itself otherwise."""
    if is_optional(annotation):
        return next(a for a in get_args(annotation) if a is not type(None))
    return annotation


@functools.cache
def _adapter(path: str) -> TypeAdapter[Any]:
    """The field's type with its constraints and its section's number policy.

    This is exactly what the profile model checks for the field (``gt``, ``le``,
    ``max_length``, the Literal choices, no inf/nan), so an answer accepted here is one
    a profile file would accept.
    """
    info = field_info(path)
    section = SECTIONS[path.partition(".")[0]]
    annotated: Any = Annotated
    kind: Any = annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    allow_inf_nan = section.model_config.get("allow_inf_nan", True)
    return TypeAdapter(kind, config=ConfigDict(allow_inf_nan=allow_inf_nan))


def check_value(path: str, raw: Any, *, strict: bool = False) -> Any:
    """The validated value of ``raw`` for field ``path``, or ValueError in plain words.

    ``strict`` is for values read from a profile file, which are typed (TOML, JSON) and
    checked as ``advise`` checks them: ``"20"`` is not a number there. Typed answers
    are text and are converted.
    """
    if strict and isinstance(raw, list):
        raw = tuple(raw)
    try:
        return _adapter(path).validate_python(raw, strict=strict)
    except ValidationError as exc:
        raise ValueError(_explain_stored(path, exc) if strict else _explain(path, exc)) from None


def _explain_stored(path: str, exc: ValidationError) -> str:
    """A file's value refused, phrased as ``advise`` phrases it (TOML spelling, the
    type and unit expected, how to write it)."""
    error = exc.errors()[0]
    located = {**error, "loc": (path.rpartition(".")[2], *error["loc"])}
    message, hint = describe(located, lambda loc: ())
    return f"{message}; {hint}" if hint else message


def _explain(path: str, exc: ValidationError) -> str:
    error = exc.errors()[0]
    kind = error["type"]
    if kind == "literal_error":
        values = literal_values(field_info(path).annotation)
        text = f"{error['input']!r} is not one of the choices ({', '.join(values)})"
        hint = did_you_mean(str(error["input"]), values)
        return f"{text}; {hint}" if hint else text
    if kind == "bool_parsing":
        return "answer yes or no"
    if kind == "string_unicode":
        return "the answer is not valid UTF-8 text"
    if kind in ("int_parsing", "int_from_float"):
        return "answer with a whole number, like 2"
    if kind == "float_parsing":
        return "answer with a number, like 2.5"
    message = str(error["msg"])
    return message.replace("Input should", "the answer should", 1)
