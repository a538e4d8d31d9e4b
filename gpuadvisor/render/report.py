"""Decision -> Markdown / HTML / PDF (through Typst) / JSON, through templates.

Templates under ``reports/`` only display; what they show is computed once in
:mod:`gpuadvisor.render.view`, the same for every format. They run in a sandboxed Jinja2
environment with ``StrictUndefined`` (:mod:`gpuadvisor.render.env`); every printed value
is escaped for its format, so user text (title, requester, notes, ISV names, file names)
is always data, never markup.

Reproducible output: the same decision and templates give the same bytes in every
format. Rendering reads no clock and no environment: the date shown is the decision's
``provenance.generated_at`` (fixed by ``SOURCE_DATE_EPOCH`` when the decision was made,
:mod:`gpuadvisor.decision.dates`), and the PDF uses Typst's embedded fonts, never the
system's.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from gpuadvisor.decision.model import Decision
from gpuadvisor.errors import GpuAdvisorError, InputError, InternalError

# What a format does not need is imported when it is first used, not here: JSON needs
# no template machinery (not even Jinja2), Markdown no charts, only PDF needs Typst.
if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

    from gpuadvisor.render.env import Flavour
    from gpuadvisor.render.view import ReportView, Runbook

Format = Literal["md", "html", "pdf", "json"]
FORMATS: tuple[str, ...] = ("md", "html", "pdf", "json")

TEMPLATES: dict[str, tuple[Flavour, str]] = {
    "md": ("md", "report.md.j2"),
    "html": ("html", "report.html.j2"),
    "pdf": ("typst", "report.typ.j2"),
}
RUNBOOK = "runbook.toml"

#: Chart text uses the format's own fonts: the reader's sans-serif in HTML, and in the
#: PDF the font Typst embeds (system fonts are ignored there for reproducibility).
CHART_FONTS: dict[Flavour, str] = {
    "html": "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif",
    "typst": "Libertinus Serif",
}


@overload
def render(
    decision: Decision, fmt: Literal["md", "html", "json"], *, template_dir: Path | None = None
) -> str: ...
@overload
def render(
    decision: Decision, fmt: Literal["pdf"], *, template_dir: Path | None = None
) -> bytes: ...
@overload
def render(decision: Decision, fmt: str, *, template_dir: Path | None = None) -> str | bytes: ...


def render(decision: Decision, fmt: str, *, template_dir: Path | None = None) -> str | bytes:
    """The report in ``fmt``; PDF is bytes, the others text.

    ``template_dir`` is an organisation's overlay: its files replace the bundled ones of
    the same name (see :mod:`gpuadvisor.render.env`).
    """
    if fmt == "json":
        return decision.to_json()
    if fmt not in TEMPLATES:
        raise InputError(f"unknown report format {fmt!r}", hint=", ".join(FORMATS))
    if template_dir is not None and not template_dir.is_dir():
        raise InputError("template folder does not exist", file=str(template_dir))
    if template_dir is not None:
        from gpuadvisor.render.sandbox import check_template_folder

        check_template_folder(template_dir)
    if fmt == "pdf":
        return render_pdf(decision, template_dir=template_dir)
    return render_source(decision, fmt, template_dir=template_dir)


def render_source(decision: Decision, fmt: str, *, template_dir: Path | None = None) -> str:
    """The text a template produces: the report for md and html, Typst source for pdf."""
    from gpuadvisor.render.env import environment
    from gpuadvisor.render.view import build_view

    flavour, name = TEMPLATES[fmt]
    with _template_errors(template_dir):
        env = environment(flavour, template_dir)
        view = build_view(decision, _runbook(env), decision.provenance.generated_at)
        context: dict[str, Any] = {
            "v": view,
            "d": decision,
            "date": view.date,
            "charts": _charts(view, flavour, template_dir),
        }
        if flavour == "typst":
            context["document_date"] = _typst_date(view.date)
        text = _render_bounded(env.get_template(name), context)
    if flavour == "md":
        text = re.sub(r"\n{3,}", "\n\n", text)
    return text


def render_pdf(decision: Decision, *, template_dir: Path | None = None) -> bytes:
    from gpuadvisor.render.env import template_folders
    from gpuadvisor.render.pdf import TypstFailure, compile_pdf

    source = render_source(decision, "pdf", template_dir=template_dir)
    root = template_folders(template_dir)[0]
    fonts = (template_dir,) if template_dir is not None else ()
    try:
        pdf, _warnings = compile_pdf(
            source, root=root, font_dirs=fonts, isolated=template_dir is not None
        )
    except TypstFailure as exc:
        message = f"the PDF template did not compile: {exc.message} {exc.diagnostic}".strip()
        if template_dir is not None:
            raise InputError(message, file=str(template_dir)) from None
        raise InternalError(message) from None
    return pdf


def _runbook(env: jinja2.Environment) -> Runbook:
    from gpuadvisor.inputs.textio import parse_toml
    from gpuadvisor.render.view import parse_runbook

    assert env.loader is not None
    source, filename, _ = env.loader.get_source(env, RUNBOOK)
    name = filename or RUNBOOK
    return parse_runbook(parse_toml(source, name), name)


def _charts(view: ReportView, flavour: Flavour, template_dir: Path | None) -> dict[str, Any]:
    """The SVG charts, drawn for HTML (inline markup) and PDF (strings Typst decodes)."""
    font = CHART_FONTS.get(flavour)
    if font is None:
        return {"scores": None, "memory": None, "gpus": [None for _ in view.gpus]}
    from markupsafe import Markup

    from gpuadvisor.render import charts
    from gpuadvisor.render.env import environment

    svg_env = environment("svg", template_dir)

    def draw(template: str, chart: object) -> str | Markup | None:
        if chart is None:
            return None
        svg = _render_bounded(svg_env.get_template(template), {"c": chart, "font": font})
        return Markup(svg) if flavour == "html" else svg

    return {
        "scores": draw("charts/bars.svg.j2", charts.scores_chart(view.d)),
        "memory": draw(
            "charts/bars.svg.j2", charts.memory_chart(view.columns, view.d.vram_need_gib)
        ),
        "gpus": [
            draw("charts/series.svg.j2", charts.series_chart(g.title, g.series)) for g in view.gpus
        ],
    }


def _typst_date(date: str | None) -> Markup:
    from markupsafe import Markup

    try:
        day = dt.date.fromisoformat(date or "")
    except ValueError:  # a decision document edited by hand: show no document date
        return Markup("none")
    return Markup(f"datetime(year: {day.year}, month: {day.month}, day: {day.day})")


def _render_bounded(template: jinja2.Template, context: dict[str, Any]) -> str:
    """The template's output, refused once it grows past what any report needs."""
    from gpuadvisor.render.sandbox import MAX_TEXT, TemplateLimit

    parts: list[str] = []
    size = 0
    for chunk in template.generate(context):
        size += len(chunk)
        if size > MAX_TEXT:
            raise TemplateLimit(f"the output grew past {MAX_TEXT} characters")
        parts.append(chunk)
    return "".join(parts)


@contextmanager
def _template_errors(template_dir: Path | None) -> Iterator[None]:
    """Turn template failures into the error family: an organisation's template is input
    (exit 2, naming the folder); a failing bundled template is a bug.

    Beyond Jinja2's own errors, an organisation's template can fail as any small program
    can (``{{ 1 / 0 }}``, ``{{ 'a' + 1 }}``, a macro calling itself without end); those
    are its problem too, reported the same way, never as a crash of gpuadvisor."""
    import jinja2

    try:
        yield
    except GpuAdvisorError:
        raise
    except jinja2.TemplateError as exc:
        where = ""
        if isinstance(exc, jinja2.TemplateSyntaxError):
            where = f" ({exc.filename or exc.name}:{exc.lineno})"
        message = f"report template failed: {type(exc).__name__}: {exc.message}{where}"
        if template_dir is not None:
            raise InputError(message, file=str(template_dir)) from None
        raise InternalError(message) from None
    except (
        RecursionError,
        MemoryError,
        ArithmeticError,
        TypeError,
        ValueError,
        LookupError,
    ) as exc:
        if template_dir is None:
            raise
        kind = "calls itself without end" if isinstance(exc, RecursionError) else "failed"
        raise InputError(
            f"report template {kind}: {type(exc).__name__}: {exc}"[:500], file=str(template_dir)
        ) from None
