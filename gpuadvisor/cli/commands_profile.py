"""``init``, ``ask`` and ``advise``: from a workload profile to the recommendation."""

from __future__ import annotations

import contextlib
import hashlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuadvisor.cli.options import CatalogOpt, OutputOpt, ReportFormat, RulesOpt
from gpuadvisor.cli.output import emit, not_an_input
from gpuadvisor.errors import InputError


def init(
    example: Annotated[
        str | None, typer.Option("--example", help="Start from a worked example (see --list).")
    ] = None,
    list_examples: Annotated[
        bool, typer.Option("--list", help="List the worked examples and exit.")
    ] = False,
    output: OutputOpt = None,
) -> None:
    """Write a commented profile template, or a worked example."""
    from gpuadvisor.inputs import examples

    if list_examples:
        for name, title in examples.list_examples():
            typer.echo(f"{name:32} {title}")
        return
    text = examples.example_text(example) if example else examples.template_text()
    emit(text, output)


class _StdioDialogue:
    """Questions on stderr, answers from stdin one per line, so stdout stays the result.

    When stdin is not a terminal the answers are echoed, so a log of an automated run
    reads like the session it replaces.
    """

    def __init__(self) -> None:
        self._echo = not sys.stdin.isatty()
        # Bytes that are not UTF-8 become an answer that is refused and asked again,
        # rather than a UnicodeDecodeError out of readline().
        reconfigure = getattr(sys.stdin, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="surrogateescape")

    def say(self, text: str) -> None:
        typer.echo(text, err=True)

    def ask(self, prompt: str) -> str | None:
        sys.stderr.write(prompt)
        sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            sys.stderr.write("\n")
            return None
        line = line.rstrip("\r\n")
        if self._echo:
            sys.stderr.write(line + "\n")
        return line


def ask(
    output: OutputOpt = None,
    start: Annotated[
        Path | None,
        typer.Option(
            "--from", help="Start from this profile (TOML/JSON, may be partial); ask the rest."
        ),
    ] = None,
    then_advise: Annotated[
        bool, typer.Option("--advise", help="Print the recommendation report at the end.")
    ] = False,
    fmt: Annotated[
        ReportFormat | None, typer.Option("--format", "-f", help="Report format (with --advise).")
    ] = None,
    catalog: CatalogOpt = None,
    rules: RulesOpt = None,
) -> None:
    """Build a profile by answering questions in plain language, one at a time.

    Answers may come from a terminal or, one per line, from stdin (an empty line takes
    the default). The profile goes to -o FILE, else to stdout.
    """
    from gpuadvisor.ask import interview, profile_document

    if fmt is not None and not then_advise:
        raise InputError("--format only applies together with --advise", field="--format")
    document: dict[str, Any] | None = None
    text: str | None = None
    not_an_input(output, [])
    if start is not None:
        from gpuadvisor.inputs.textio import load_document

        document, text = load_document(start)
    profile = interview(
        _StdioDialogue(),
        start=document,
        start_name=str(start) if start is not None else "",
        start_text=text,
    )
    written = profile_document(profile)
    if output is not None:
        emit(written, output)
    elif not then_advise:
        emit(written, None)
    else:
        typer.echo("note: the answers are not saved; add -o FILE to keep them", err=True)
    if then_advise:
        from gpuadvisor.pipeline import advise_profile, size_profile
        from gpuadvisor.render.report import render

        decision = advise_profile(
            profile,
            profile_sha256=hashlib.sha256(written.encode("utf-8")).hexdigest(),
            profile_file=output.name if output is not None else "(gpuadvisor ask)",
            catalog_overlays=catalog or [],
            rules_overlays=rules or [],
            # hf_config is relative to the written profile, as `advise` will read it.
            sizing=size_profile(profile, output) if output is not None else None,
        )
        emit(render(decision, (fmt or ReportFormat.md).value), None)


def advise(
    profile: Annotated[Path, typer.Argument(help="Workload profile (TOML or JSON).")],
    evidence: Annotated[
        list[Path] | None,
        typer.Option("--evidence", "-e", help="Captured host evidence (repeatable)."),
    ] = None,
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="Report format.")] = (
        ReportFormat.md
    ),
    output: OutputOpt = None,
    catalog: CatalogOpt = None,
    rules: RulesOpt = None,
    no_sensitivity: Annotated[
        bool, typer.Option("--no-sensitivity", help="Skip the what-would-change scan.")
    ] = False,
    template: Annotated[
        Path | None,
        typer.Option(
            "--template",
            help="Organisation report templates (logo, colours, cover); missing files "
            "fall back to the bundled ones.",
        ),
    ] = None,
) -> None:
    """Recommend a purchase for PROFILE and write the justification report."""
    from gpuadvisor.pipeline import advise as run_advise
    from gpuadvisor.render.report import render

    if fmt is ReportFormat.pdf and output is None:
        raise InputError("PDF output needs a file: add -o FILE.pdf", field="--format pdf")
    not_an_input(output, [profile, *(evidence or [])])

    decision = run_advise(
        profile,
        evidence=evidence or [],
        catalog_overlays=catalog or [],
        rules_overlays=rules or [],
        sensitivity=not no_sensitivity,
    )
    emit(render(decision, fmt.value, template_dir=template), output)
