"""Output models made by their own validator from a dict of their fields.

``Model(**fields)`` runs ``Model.__pydantic_validator__.validate_python`` on the keyword
arguments, packed into a dict again, and fills an instance made beforehand; calling the
validator on the dict the fields are written into does the same validation for about a
quarter fewer instructions (a Finding, a FactValue, a Pick). Every field is validated
as ever (the decision is checked against its schema on every build), and the instance
is the same: its fields, the fields set, its dump. ``model_construct`` would cost more
than either: it is Python, field by field.

Each model's validator is looked up once and kept here by the model: read off the class
every time, it goes through pydantic's metaclass ``__getattr__`` hook.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import SchemaValidator

M = TypeVar("M", bound=BaseModel)

_VALIDATORS: dict[type[BaseModel], SchemaValidator] = {}


def made(model: type[M], fields: dict[str, Any]) -> M:
    """``model(**fields)``, validated by the model's own validator."""
    validator = _VALIDATORS.get(model)
    if validator is None:
        found = model.__pydantic_validator__
        if not isinstance(found, SchemaValidator):  # a model not built yet: its mock
            built: M = found.validate_python(fields)
            return built
        validator = _VALIDATORS[model] = found
    instance: M = validator.validate_python(fields)
    return instance
