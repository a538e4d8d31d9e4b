"""Sentences that reports make from a decision alone (they read only the decision)."""

from __future__ import annotations

from gpuadvisor.decision.model import Sensitivity
from gpuadvisor.vocabulary import format_value


def describe_flip(flip: Sensitivity) -> str:
    """One what-would-change sentence."""
    at = format_value(flip.flips_at)
    if flip.direction == "up":
        return f"If {flip.input} rises to {at} (now {format_value(flip.current)}): {flip.to}."
    if flip.direction == "down":
        return f"If {flip.input} falls to {at} (now {format_value(flip.current)}): {flip.to}."
    return f"If {flip.input} were {at} (now {format_value(flip.current)}): {flip.to}."


#: The unit of a fact that is a share of readings (0..1): shown as a percentage.
SHARE_UNIT = "share"


def format_share(value: float) -> str:
    """A share of readings (0..1) as a percentage: 0.625 -> '62.5 %', 1.0 -> '100 %'.
    Never the bare number, which reads as a count ("active in 1 of samples")."""
    return f"{format_value(round(value * 100, 1))} %"


def format_measure(value: float | int | bool | str | None, unit: str = "") -> str:
    """A measured value with its unit, as tables and sentences show it."""
    if unit == SHARE_UNIT and isinstance(value, (int, float)) and not isinstance(value, bool):
        return format_share(float(value))
    shown = format_value(value)
    return f"{shown} {unit}" if unit and value is not None else shown
