"""The report as the page shows it: a buyer's view of the decision document.

Built from the decision alone (:mod:`gpuadvisor.decision.model`; nothing here reaches
into the engine) and the budget and time limit the answers gave. It opens with the
purchase (:mod:`.purchase`: what to buy over how many machines, the line items, unit and
total price, the budget checks, the time limit, confidence, the caveats that matter),
then the reasons in words, the captures in words (their raw values behind a "details"
element), what the buyer could change (the decision's levers) and the options that
lost. Every
text of the decision passes through one mapping of web wordings (:mod:`.wording`):
no rule code, fact name or command-line flag reaches the page. The downloads keep
the full detail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from gpuadvisor.decision.model import Decision, FactValue, Finding, FixFirst
from gpuadvisor.decision.words import format_measure
from gpuadvisor.web.purchase import (
    Change,
    Line,
    cards_bought,
    lever_changes,
    market_caveats,
    money,
    purchase_lines,
    shortfall_caveat,
)
from gpuadvisor.web.wording import Wording, wording


@dataclass(frozen=True)
class FactRow:
    """One raw value, for the table behind "details"."""

    name: str
    value: str
    source: str


@dataclass(frozen=True)
class Reason:
    title: str
    severity: str
    action: str
    effect: str
    evidence: tuple[str, ...]
    why: str
    rows: tuple[FactRow, ...]


@dataclass(frozen=True)
class BuyerView:
    title: str
    requester: str
    notes: str
    verdict: str
    headline: str
    #: The purchase summary after its first line (what to buy: the verdict).
    summary: tuple[Line, ...]
    caveats: tuple[str, ...]
    fix_first: tuple[Reason, ...]
    #: The findings that weighed (advice, warnings), then the plain requirements checked.
    reasons: tuple[Reason, ...]
    checks: tuple[Reason, ...]
    enough: str
    captures: tuple[str, ...]
    measured: tuple[str, ...]
    measured_rows: tuple[FactRow, ...]
    changes: tuple[Change, ...]
    others: tuple[str, ...]
    assumptions: tuple[str, ...]


def caveats(decision: Decision, say: Wording, titles: Mapping[str, str]) -> tuple[str, ...]:
    """What a buyer must know before ordering: what to fix first, a shortfall, the
    card's market (an availability risk first), a near tie, the warnings."""
    found = [f"Fix first: {say.words(f.title, titles)}." for f in decision.fix_first]
    rec = decision.recommendation
    if short := shortfall_caveat(rec.capacity):
        found.append(short)
    found += market_caveats(decision, say, titles)
    if rec.near_tie:
        found.append(near_tie(decision, rec.near_tie, say, titles))
    for finding in decision.findings:
        if finding.severity in ("warning", "blocker"):
            found.append(say.words(finding.title, titles) + ".")
    return tuple(dict.fromkeys(found))


#: The runner-up of a close call, as the decision names it: "shape / class scored ...".
_RUNNER_UP: Final = re.compile(r"^(?P<shape>[a-z-]+) / (?P<cls>[a-z]+) scored ")


def near_tie(decision: Decision, said: str, say: Wording, titles: Mapping[str, str]) -> str:
    """A close call, in words: the runner-up's kind and best card, no scores."""
    found = _RUNNER_UP.match(said)
    if found is None:
        return f"A close call: {say.words(said, titles)}"
    kind = f"{SHAPES.get(found['shape'], found['shape']).lower()}, {found['cls']} cards"
    best = next(
        (
            a.best
            for a in decision.alternatives
            if a.shape == found["shape"] and a.class_ == found["cls"] and a.best is not None
        ),
        None,
    )
    runner = f"{best.count} × {best.name} ({kind})" if best is not None else kind
    return (
        f"A close call: {runner} came out of the weighing nearly as well, so the "
        "confidence is low; the reasons below say what tipped it."
    )


# -- the reasons, the captures, what would change ------------------------------------------


def _rows(facts: Iterable[FactValue], say: Wording) -> tuple[FactRow, ...]:
    return tuple(
        FactRow(f.name, format_measure(f.value, f.unit), say.source(f.source)) for f in facts
    )


def fact_words(fact: FactValue, say: Wording) -> str:
    """``temperature margin before slowdown: 2 °C (capture q.txt)``."""
    return f"{say.label(fact.name)}: {measure(fact, say)} ({say.source(fact.source)})"


#: The unit of a fact whose value comes without one (the profile's), by its name's end.
_UNITS: Final = (("_gib", "GiB"), ("_mib", "MiB"), ("_w", "W"), ("_usd", "USD"), ("_pct", "%"),
                 ("_ms", "ms"), ("_c", "°C"), ("_years", "years"), ("_hours", "hours"))  # fmt: skip


def measure(fact: FactValue, say: Wording, value: object = ...) -> str:
    """A fact's value (or ``value``, another value of it) with its unit, in words."""
    shown = fact.value if value is ... else value
    if shown is None:
        return "not reported"
    unit = fact.unit or next((u for end, u in _UNITS if fact.name.endswith(end)), "")
    if isinstance(shown, bool):
        unit = ""
    return say.value(format_measure(shown, unit))  # type: ignore[arg-type]


def reason(item: Finding | FixFirst, say: Wording, titles: Mapping[str, str]) -> Reason:
    facts = item.facts
    evidence = tuple(fact_words(f, say) for f in facts) or (say.words(item.evidence, titles),)
    effect = ""
    if isinstance(item, Finding) and item.kind == "constraint":
        effect = say.words(item.effect, titles).replace("excluded", "ruled out", 1)
    severity = item.severity if isinstance(item, Finding) else "fix-first"
    return Reason(
        title=say.words(item.title, titles),
        severity=severity,
        action=say.action(item.rule, item.action, titles),
        effect=effect[:1].upper() + effect[1:],
        evidence=evidence,
        why=say.words(item.rationale, titles),
        rows=_rows(facts, say),
    )


_ORDER: Final = {"blocker": 0, "warning": 1, "advice": 2, "info": 3}


def _others(decision: Decision, say: Wording, titles: Mapping[str, str]) -> tuple[str, ...]:
    """The best option of each other kind, or what ruled that kind out."""
    lines = []
    top = decision.picks[0].sku if decision.picks else None
    for alt in decision.alternatives:
        kind = f"{SHAPES.get(alt.shape, alt.shape)}, {alt.class_} cards"
        if alt.best is not None and alt.best.sku != top:
            best = alt.best
            misses = ", too slow for the time limit" if best.meets_target is False else ""
            bought = f"{cards_bought(best)} × {best.name}"
            lines.append(f"{kind}: {bought}, {money(best.total_price_usd)}{misses}")
        elif alt.best is None and alt.eliminated_by:
            named = "; ".join(say.words(code, titles) for code in alt.eliminated_by[:3])
            lines.append(f"{kind}: none meets every requirement (ruled out by: {named})")
    return tuple(lines)


SHAPES: Final = {
    "single-larger-gpu": "One larger card",
    "two-independent-jobs": "Several cards, one job each",
    "multi-gpu-model-parallel": "Several cards, one model split over them",
    "multi-gpu-data-parallel": "Several cards, one job spread over them",
}


def _captures(decision: Decision) -> tuple[str, ...]:
    files = [f"{e.file} (read as {e.kind.replace('-', ' ')})" for e in decision.inputs.evidence]
    cards = [
        f"Card {g.index if g.index is not None else '?'}: {g.name or 'model not reported'}"
        for g in decision.gpus
    ]
    return (*files, *cards)


def buyer_view(
    decision: Decision,
    *,
    budget_usd: float | None,
    slo_ms: float | None = None,
    asked: Sequence[str] = (),
    assumed: Sequence[str] = (),
) -> BuyerView:
    """The page's report. ``budget_usd`` and ``slo_ms``: the budget and the time limit
    the answers gave; ``asked``: the answers that can be changed from the page (what
    would change the answer links to them); ``assumed``: the values taken where the
    answers said "don't know", in words."""
    say = wording()
    titles = {f.rule: f.title for f in decision.findings}
    titles.update({f.rule: f.title for f in decision.fix_first})
    findings = sorted(decision.findings, key=lambda f: _ORDER.get(f.severity, 9))
    measured = [f for f in decision.measured if f.value is not None]
    summary = purchase_lines(decision, budget_usd, slo_ms)
    verdict = summary[0].value
    return BuyerView(
        title=decision.meta.title or "GPU purchase",
        requester=decision.meta.requester,
        notes=decision.meta.notes,
        verdict=("Buy " + verdict) if not verdict.startswith("Nothing") else verdict,
        headline=say.words(decision.recommendation.headline, titles),
        summary=summary[1:],
        caveats=caveats(decision, say, titles) + tuple(assumed),
        fix_first=tuple(reason(f, say, titles) for f in decision.fix_first),
        reasons=tuple(reason(f, say, titles) for f in findings if f.severity != "info"),
        checks=tuple(reason(f, say, titles) for f in findings if f.severity == "info"),
        enough=say.words(decision.enough.text, titles) if decision.enough else "",
        captures=_captures(decision),
        measured=tuple(fact_words(f, say) for f in measured),
        measured_rows=_rows(decision.measured, say),
        changes=lever_changes(decision, say, titles, asked),
        others=_others(decision, say, titles),
        assumptions=tuple(say.words(a, titles) for a in decision.assumptions),
    )
