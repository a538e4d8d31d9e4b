"""Output models made by their own validator from a dict of their fields.

``Model(**fields)`` runs ``Model.__pydantic_validator__.validate_python`` on the keyword
arguments, packed into a dict again, and fills an instance made beforehand; calling the
validator on the dict the fields are written into does the same validation for about a
quarter fewer instructions (a Finding, a FactValue, a Pick). Every field is validated
as ever (the decision is checked against its schema on every build), and the instance
is the same: its fields, the fields set, its dump. ``model_construct`` would cost more
than either: it is Python, field by field.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def made(model: type[M], fields: dict[str, Any]) -> M:
    """``model(**fields)``, validated by the model's own validator."""
    found: M = model.__pydantic_validator__.validate_python(fields)
    return found
