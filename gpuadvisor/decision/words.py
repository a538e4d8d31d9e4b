"""Sentences shared by the decision and its reports: what an engine outcome reads as,
and the what-would-change lines."""

from __future__ import annotations

from collections.abc import Mapping

from gpuadvisor.decision.model import Sensitivity
from gpuadvisor.engine.core import Outcome
from gpuadvisor.engine.expr import Value
from gpuadvisor.engine.rules import PLACEHOLDER
from gpuadvisor.engine.sensitivity import Flip
from gpuadvisor.vocabulary import format_value


def describe_outcome(outcome: Outcome) -> str:
    """``shape / class: N × card``, or that nothing fits."""
    top = outcome.top
    if top is None:
        return "no card meets every requirement"
    return f"{outcome.shape} / {outcome.class_}: {top.count} × {top.sku.name}"


def sensitivity_entry(flip: Flip) -> Sensitivity:
    """One what-would-change entry of the decision."""
    return Sensitivity(
        input=flip.input,
        current=flip.current,
        flips_at=flip.flips_at,
        to=describe_outcome(flip.outcome),
        direction=flip.direction,
    )


def describe_flip(flip: Sensitivity) -> str:
    """One sentence for reports."""
    at = format_value(flip.flips_at)
    if flip.direction == "up":
        return f"If {flip.input} rises to {at} (now {format_value(flip.current)}): {flip.to}."
    if flip.direction == "down":
        return f"If {flip.input} falls to {at} (now {format_value(flip.current)}): {flip.to}."
    return f"If {flip.input} were {at} (now {format_value(flip.current)}): {flip.to}."


def fill(template: str, facts: Mapping[str, Value]) -> str:
    """A rule's text with each ``{fact.name}`` placeholder replaced by the fact's value."""
    return PLACEHOLDER.sub(lambda m: format_value(facts.get(m.group(1))), template)
