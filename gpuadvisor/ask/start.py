"""The answers an existing, possibly partial, profile already gives (``ask --from``,
and a profile uploaded to the web page): each value checked as an answer would be, a
refused one dropped with a note so that its question is asked again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuadvisor.ask.fields import check_value, nested_model
from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.profile import PROFILE_SCHEMA, SECTIONS
from gpuadvisor.inputs.textio import locate_field
from gpuadvisor.inputs.validation import toml_spelling


def starting_answers(
    document: Mapping[str, Any], *, name: str, text: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The answers an existing (possibly partial) profile already gives.

    Unknown sections or keys and a wrong schema are errors, as in ``advise``; a value
    the model does not accept is dropped with a note, so its question is asked again.
    Returns the answers keyed by field path and the notes to show.
    """
    stated, notes, _ = read_start(document, name=name, text=text)
    return stated, notes


def read_start(
    document: Mapping[str, Any], *, name: str, text: str | None
) -> tuple[dict[str, Any], list[str], dict[str, str]]:
    """:func:`starting_answers`, and why each dropped value was refused, by field path."""
    stated: dict[str, Any] = {}
    notes: list[str] = []
    refused: dict[str, str] = {}

    def where(*loc: str) -> int | None:
        return locate_field(text, loc) if text is not None else None

    for key, value in document.items():
        if key == "schema":
            if value != PROFILE_SCHEMA:
                raise InputError(
                    f"unsupported schema {value!r}",
                    file=name,
                    line=where("schema"),
                    field="schema",
                    hint=f"this gpuadvisor reads '{PROFILE_SCHEMA}'",
                )
            continue
        if key not in SECTIONS:
            raise InputError(
                "unknown key",
                file=name,
                line=where(key),
                field=key,
                hint=did_you_mean(key, ["schema", *SECTIONS]),
            )
        if not isinstance(value, dict):
            raise InputError(f"expected a table [{key}]", file=name, line=where(key), field=key)
        fields = SECTIONS[key].model_fields
        for field, raw in value.items():
            path = f"{key}.{field}"
            if field not in fields:
                raise InputError(
                    "unknown key",
                    file=name,
                    line=where(key, field),
                    field=path,
                    hint=did_you_mean(field, fields),
                )
            if nested_model(path) is not None and isinstance(raw, dict):
                _nested_answers(stated, notes, path, raw, name=name, where=where)
                continue
            try:
                stated[path] = check_value(path, raw, strict=True)
            except ValueError as exc:
                notes.append(f"{name}: {path}: not accepted ({exc}); it is asked again.")
                line = where(key, field)
                at = f"{name}:{line}" if line is not None else name
                refused[path] = f"{at}: {path} = {toml_spelling(raw)}: {exc}"
    if any(path.startswith("workload.model.") for path in stated):
        # A described model stands in for the memory need, as in a profile file.
        stated.setdefault("workload.vram_need_gib", None)
    return stated, notes, refused


def _nested_answers(
    stated: dict[str, Any],
    notes: list[str],
    path: str,
    table: Mapping[str, Any],
    *,
    name: str,
    where: Any,
) -> None:
    """The answers a nested table (``[workload.model]``) gives, one per field."""
    fields = nested_model(path).model_fields
    for field, raw in table.items():
        leaf = f"{path}.{field}"
        if field not in fields:
            raise InputError(
                "unknown key",
                file=name,
                line=where(*leaf.split(".")),
                field=leaf,
                hint=did_you_mean(field, fields),
            )
        try:
            stated[leaf] = check_value(leaf, raw, strict=True)
        except ValueError as exc:
            notes.append(f"{name}: {leaf}: not accepted ({exc}); it is asked again.")
