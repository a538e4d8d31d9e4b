"""The commented profile template and the bundled worked examples (``init``)."""

from __future__ import annotations

from pathlib import Path

import tomllib
from pydantic_core import PydanticUndefined

from gpuadvisor.errors import InputError, did_you_mean
from gpuadvisor.profile import PROFILE_SCHEMA, SECTIONS
from gpuadvisor.resources import data_dir

#: Values shown for the three fields that have no default.
_REQUIRED_PLACEHOLDERS = {
    ("workload", "kind"): "inference",
    ("workload", "objective"): "throughput",
    ("workload", "vram_need_gib"): 16.0,
}


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def template_text() -> str:
    """A profile with every field, its default and a comment saying what it means."""
    from typing import get_args, get_origin

    lines = [
        "# gpuadvisor workload profile. Fill in [workload] at least; every other",
        "# field has a sensible default. `gpuadvisor advise THIS_FILE` gives the answer.",
        f'schema = "{PROFILE_SCHEMA}"',
    ]
    for section, model in SECTIONS.items():
        lines += ["", f"[{section}]"]
        for name, info in model.model_fields.items():
            required = info.default is PydanticUndefined and info.default_factory is None
            value = (
                _REQUIRED_PLACEHOLDERS[(section, name)]
                if required
                else info.get_default(call_default_factory=True)
            )
            comment = info.description or ""
            annotation = info.annotation
            choices = ""
            for arg in (annotation, *get_args(annotation)):
                if get_origin(arg) is not None and str(get_origin(arg)).endswith("Literal"):
                    choices = " | ".join(str(c) for c in get_args(arg))
            if choices:
                comment += f" ({choices})"
            if required:
                comment = "REQUIRED. " + comment
            if value is None:
                lines.append(f"# {name} =  # {comment}")
                continue
            lines.append(f"{name} = {_toml_value(value)}  # {comment}")
    return "\n".join(lines) + "\n"


def _folder() -> Path:
    return data_dir("examples")


def list_examples() -> list[tuple[str, str]]:
    found = []
    for path in sorted(_folder().glob("*.toml")):
        with path.open("rb") as handle:
            title = tomllib.load(handle).get("meta", {}).get("title", "")
        found.append((path.stem, str(title)))
    return found


def example_path(name: str) -> Path:
    path = _folder() / f"{name}.toml"
    if not path.is_file():
        names = [n for n, _ in list_examples()]
        raise InputError(
            f"no worked example named {name!r}",
            field="--example",
            hint=did_you_mean(name, names) or "available: " + ", ".join(names),
        )
    return path


def example_text(name: str) -> str:
    return example_path(name).read_text(encoding="utf-8")
