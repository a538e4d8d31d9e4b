"""What a fact is (:class:`FactSpec`) and the helpers the fact tables are written with."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Literal, get_args, get_origin

from pydantic import BaseModel

from gpuadvisor.engine.expr import FactType

Scope = Literal["global", "option"]


@dataclass(frozen=True)
class FactSpec:
    name: str
    type: Literal["number", "bool", "string"]
    description: str
    unit: str = ""
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    scope: Scope = "global"
    source: str = ""

    def as_type(self) -> FactType:
        return FactType(self.type, self.choices)


def _annotation_type(annotation: object) -> tuple[str, tuple[str, ...] | None, bool] | None:
    """(type, choices, nullable) of a pydantic field annotation, None when unsupported."""
    nullable = False
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(get_args(annotation))
        if len(args) != 1:
            return None
        annotation = args[0]
        origin = get_origin(annotation)
    if origin is Literal:
        return "string", tuple(str(a) for a in get_args(annotation)), nullable
    if annotation is bool:
        return "bool", None, nullable
    if annotation in (int, float):
        return "number", None, nullable
    if annotation is str:
        return "string", None, nullable
    return None


def _model_facts(prefix: str, model: type[BaseModel], scope: Scope, source: str) -> list[FactSpec]:
    specs: list[FactSpec] = []
    for name, info in model.model_fields.items():
        described = _annotation_type(info.annotation)
        if described is None:
            continue
        kind, choices, nullable = described
        specs.append(
            FactSpec(
                name=f"{prefix}.{name}",
                type=kind,  # type: ignore[arg-type]
                description=info.description or name.replace("_", " "),
                choices=choices,
                nullable=nullable,
                scope=scope,
                source=source,
            )
        )
    return specs


def _n(name: str, description: str, unit: str = "", source: str = "evidence") -> FactSpec:
    return FactSpec(name, "number", description, unit=unit, nullable=True, source=source)


def _b(name: str, description: str, source: str = "evidence") -> FactSpec:
    return FactSpec(name, "bool", description, nullable=True, source=source)


def _basis(name: str, description: str) -> FactSpec:
    return FactSpec(
        name,
        "string",
        description,
        choices=("window", "snapshot"),
        nullable=True,
        source="evidence",
    )
