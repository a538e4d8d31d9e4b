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
