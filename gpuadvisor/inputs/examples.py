"""The commented profile template and the bundled worked examples (``init``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.inputs.profile import PROFILE_SCHEMA, SECTIONS, Profile
from gpuadvisor.inputs.textio import parse_toml
from gpuadvisor.resources import data_dir

#: Values shown for the three fields that have no default.
_REQUIRED_PLACEHOLDERS = {
    ("workload", "kind"): "inference",
    ("workload", "objective"): "throughput",
    ("workload", "vram_need_gib"): 16.0,
}


_TOML_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _toml_string(text: str) -> str:
    """A TOML basic string; control characters escaped so free text cannot break a line."""
    out = []
    for char in text:
        if char in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return _toml_string(str(value))


def _choices(annotation: object) -> str:
    """``a | b | c`` for a Literal field (also inside ``X | None``), else empty."""
    for arg in (annotation, *get_args(annotation)):
        if get_origin(arg) is Literal:
            return " | ".join(str(c) for c in get_args(arg))
    return ""


def _render(header: list[str], value_of: Callable[[str, str, FieldInfo], object]) -> str:
    """Every section and field, each value followed by a comment saying what it means.

    A value of None (an optional field left unset) is written as a commented-out line,
    because TOML has no null.
    """
    lines = [*header, f'schema = "{PROFILE_SCHEMA}"']
    for section, model in SECTIONS.items():
        lines += ["", f"[{section}]"]
        tables: list[tuple[str, FieldInfo, type[BaseModel]]] = []
        for name, info in model.model_fields.items():
            table = _table_model(info)
            if table is not None:  # written after the section's own keys, as TOML wants
                tables.append((name, info, table))
                continue
            value = value_of(section, name, info)
            comment = info.description or ""
            choices = _choices(info.annotation)
            if choices:
                comment += f" ({choices})"
            if info.is_required():
                comment = "REQUIRED. " + comment
            if value is None:
                lines.append(f"# {name} =  # {comment}")
                continue
            lines.append(f"{name} = {_toml_value(value)}  # {comment}")
        for name, info, table in tables:
            lines += _table_lines(f"{section}.{name}", info, table, value_of(section, name, info))
    return "\n".join(lines) + "\n"


def _table_model(info: FieldInfo) -> type[BaseModel] | None:
    """The model of a nested table field (``[workload.model]``), else None."""
    for kind in (info.annotation, *get_args(info.annotation)):
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return kind
    return None


def _table_lines(path: str, info: FieldInfo, table: type[BaseModel], current: object) -> list[str]:
    """A nested table with a comment per key; all commented out when it is not given."""
    off = "# " if current is None else ""
    lines = ["", f"{off}[{path}]  # Optional. {info.description or ''}"]
    for name, field in table.model_fields.items():
        if current is not None:
            value = getattr(current, name)
        else:
            value = None if field.is_required() else field.get_default(call_default_factory=True)
        comment = field.description or ""
        choices = _choices(field.annotation)
        if choices:
            comment += f" ({choices})"
        shown = "" if value is None else _toml_value(value)
        commented = "# " if current is None or value is None else ""
        lines.append(f"{commented}{name} = {shown}  # {comment}".replace("=   #", "=  #"))
    return lines


def template_text() -> str:
    """A profile with every field, its default and a comment saying what it means."""

    def default(section: str, name: str, info: FieldInfo) -> object:
        if info.is_required():
            return _REQUIRED_PLACEHOLDERS[(section, name)]
        return info.get_default(call_default_factory=True)

    return _render(
        [
            "# gpuadvisor workload profile. Fill in [workload] at least; every other",
            "# field has a sensible default. `gpuadvisor advise THIS_FILE` gives the answer.",
        ],
        default,
    )


def profile_text(profile: Profile, header: list[str] | None = None) -> str:
    """``profile`` as commented TOML that loads back to an equal Profile."""

    def current(section: str, name: str, info: FieldInfo) -> object:
        return getattr(getattr(profile, section), name)

    return _render(
        header
        if header is not None
        else [
            "# gpuadvisor workload profile. Each comment says what the field means;",
            "# edit freely, then `gpuadvisor advise THIS_FILE` gives the answer.",
        ],
        current,
    )


def _folder() -> Path:
    return data_dir("examples")


def list_examples() -> list[tuple[str, str]]:
    found = []
    for path in sorted(_folder().glob("*.toml")):
        meta = parse_toml(path.read_text(encoding="utf-8"), str(path)).get("meta", {})
        title = meta.get("title", "") if isinstance(meta, dict) else ""
        found.append((path.stem, str(title)))
    return found


def example_path(name: str) -> Path:
    # Only the bundled names: "../catalog/x" or an absolute path must not reach a file
    # outside the examples folder.
    names = sorted(path.stem for path in _folder().glob("*.toml"))
    path = _folder() / f"{name}.toml"
    if name not in names:
        raise InputError(
            f"no worked example named {name!r}",
            field="--example",
            hint=did_you_mean(name, names) or "available: " + ", ".join(names),
        )
    return path


def example_text(name: str) -> str:
    return example_path(name).read_text(encoding="utf-8")
