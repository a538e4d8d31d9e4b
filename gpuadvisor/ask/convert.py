"""Turning what a person typed into the raw value the field's type validates, and a
value back into what a person would type."""

from __future__ import annotations

from typing import Any, get_origin

from gpuadvisor.ask.fields import base_type, field_info, is_optional, literal_values
from gpuadvisor.ask.question import Converter, Question
from gpuadvisor.ask.units import NONE_WORDS, memory_converter, money_converter, number_converter


def _yes_no(text: str) -> Any:
    return text.strip().lower()


def _choice(values: tuple[str, ...]) -> Converter:
    def convert(text: str) -> Any:
        cleaned = text.strip().lower()
        if cleaned.isdigit() and 1 <= int(cleaned) <= len(values):
            return values[int(cleaned) - 1]
        return cleaned

    return convert


def _names(text: str) -> Any:
    if text.strip().lower() in NONE_WORDS:
        return []
    return [part.strip() for part in text.split(",") if part.strip()]


def _text(text: str) -> Any:
    return text.strip()


def converter_for(question: Question) -> Converter:
    if question.convert is not None:
        return question.convert
    annotation = field_info(question.field).annotation
    values = literal_values(annotation)
    if values:
        return _choice(values)
    base = base_type(annotation)
    if base is bool:
        return _yes_no
    if base in (int, float) and question.field.endswith("_gib"):
        return memory_converter(is_optional(annotation))
    if base in (int, float) and "_usd" in question.field:
        return money_converter(question.units, is_optional(annotation))
    if base in (int, float):
        return number_converter(question.units, is_optional(annotation))
    if get_origin(base) is tuple:
        return _names
    return _text


def show(value: Any) -> str:
    """A value the way a person would type it back."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value) if value else "none"
    if value == "":
        return "(empty)"
    return str(value)
