"""The fleet report in Markdown, HTML, PDF (Typst) and JSON.

Rendered through the decision reports' own sandboxed, strict environment
(:func:`gpuadvisor.render.env.environment`: every printed value escaped for its format,
templates bounded in time and size) from ``reports/fleet.md.j2``, ``fleet.html.j2`` and
``fleet.typ.j2``. The templates only display: every sentence is made here, from the
report alone, the same for every format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gpuadvisor.errors import InputError, InternalError
from gpuadvisor.fleet.judgement import STATUSES, Status
from gpuadvisor.fleet.model import FleetReport, GroupReport, Missing, Purchase

TEMPLATES: Final = {
    "md": ("md", "fleet.md.j2"),
    "html": ("html", "fleet.html.j2"),
    "pdf": ("typst", "fleet.typ.j2"),
}
FORMATS: Final = ("md", "html", "pdf", "json")


@dataclass(frozen=True)
class GroupView:
    g: GroupReport
    status: str
    plan: str
    budget: str


@dataclass(frozen=True)
class View:
    title: str
    date: str
    source: str
    status: str
    plan: str
    budget: str
    groups: tuple[GroupView, ...]
    missing_some: tuple[Missing, ...]
    missing_everywhere: tuple[Missing, ...]
    failed: tuple[Missing, ...]


def status_line(counts: Mapping[Status, int]) -> str:
    """``3 failing, 1 bottlenecked, 2 idle, 6 healthy`` (statuses with no host left out)."""
    shown = [f"{counts[s]} {s}" for s in STATUSES if counts.get(s)]
    return ", ".join(shown) if shown else "no hosts"


def money(value: float | None) -> str:
    return "on quote" if value is None else f"${value:,.0f}"


def budget_line(total: float, budget: float | None, source: str, on_quote: int) -> str:
    quote = f" ({on_quote} host(s) priced on quote are not in it)" if on_quote else ""
    if budget is None:
        return f"{money(total)} in all{quote}; no budget applies."
    verdict = "within" if total <= budget + 1e-6 else f"{money(total - budget)} over"
    return f"{money(total)} in all{quote}, {verdict} the budget of {money(budget)} ({source})."


def _group_view(g: GroupReport) -> GroupView:
    p: Purchase = g.purchase
    return GroupView(
        g=g,
        status=status_line(g.status),
        plan=p.summary,
        budget=budget_line(p.total_usd, p.budget_usd, p.budget_source, p.hosts_on_quote),
    )


def build_view(report: FleetReport) -> View:
    t = report.totals
    src = report.source
    missing = [m for m in report.missing if m.reason == "no series"]
    return View(
        title="GPU fleet report",
        date=report.provenance.generated_at,
        source=f"{src.window} of Prometheus data ending {src.at}, from {src.prometheus}"
        + (f", hosts {src.selector}" if src.selector not in ("", "{}") else ""),
        status=f"{t.hosts} host(s) with {t.gpus} GPU(s) in {t.groups} group(s): "
        f"{status_line(t.status)}.",
        plan=(
            f"{t.hosts_buying} host(s) buy {t.cards} card(s); "
            f"{t.hosts_to_fix} host(s) to fix first; {t.idle_gpus} idle GPU(s) to use before buying"
            + (f" ({t.hosts_deferred} purchase(s) deferred onto them)" if t.hosts_deferred else "")
            + "."
        ),
        budget=budget_line(t.total_usd, t.budget_usd, t.budget_source, t.hosts_on_quote),
        groups=tuple(_group_view(g) for g in report.groups),
        missing_some=tuple(m for m in missing if not m.everywhere),
        missing_everywhere=tuple(m for m in missing if m.everywhere),
        failed=tuple(m for m in report.missing if m.reason != "no series"),
    )


def render(report: FleetReport, fmt: str) -> str | bytes:
    """The report in ``fmt``; PDF is bytes, the others text."""
    if fmt == "json":
        return report.to_json()
    if fmt not in TEMPLATES:
        raise InputError(f"unknown report format {fmt!r}", hint=", ".join(FORMATS))
    source = render_source(report, fmt)
    if fmt != "pdf":
        return source
    from gpuadvisor.render.env import template_folders
    from gpuadvisor.render.pdf import TypstFailure, compile_pdf

    try:
        pdf, _ = compile_pdf(source, root=template_folders(None)[0])
    except TypstFailure as exc:
        raise InternalError(
            f"the fleet PDF did not compile: {exc.message} {exc.diagnostic}"
        ) from None
    return pdf


def render_source(report: FleetReport, fmt: str) -> str:
    import re

    from gpuadvisor.render.env import environment
    from gpuadvisor.render.sandbox import MAX_TEXT, ReportSandbox, TemplateLimit

    flavour, name = TEMPLATES[fmt]
    env = environment(flavour)  # type: ignore[arg-type]
    assert isinstance(env, ReportSandbox)
    env.add_filters({"names": names, "sha": short_sha})
    context: dict[str, Any] = {"f": report, "v": build_view(report), "statuses": STATUSES}
    parts: list[str] = []
    size = 0
    for chunk in env.get_template(name).generate(context):
        size += len(chunk)
        if size > MAX_TEXT:
            raise TemplateLimit(f"the fleet report grew past {MAX_TEXT} characters")
        parts.append(chunk)
    text = "".join(parts)
    return re.sub(r"\n{3,}", "\n\n", text) if flavour == "md" else text


def short_sha(digest: str | None) -> str:
    return digest[:12] if digest else ""


def names(items: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
