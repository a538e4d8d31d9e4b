"""``init``, ``ask`` and ``advise``: from a workload profile to the recommendation."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuadvisor.cli.options import CatalogOpt, OutputOpt, ReportFormat, RulesOpt
from gpuadvisor.cli.output import emit, emit_report, named_by, not_an_input
from gpuadvisor.errors import InputError

ForceOpt = Annotated[
    bool, typer.Option("--force", help="Replace the -o file if it exists already.")
]


def _keep_existing(path: Path | None, command: str, option: str, force: bool) -> None:
    """Refuse to replace an existing profile (someone's edited answers) without --force.

    A regular file only: a device such as /dev/null is written through, not replaced.
    """
    if path is not None and not force and path.is_file():
        raise InputError(
            f"the file exists already; {command} does not replace it",
            file=str(path),
            field=option,
            hint="add --force to replace it, or write to another file",
        )


def init(
    example: Annotated[
        str | None,
        typer.Option("--example", metavar="NAME", help="Start from a worked example (see --list)."),
    ] = None,
    list_examples: Annotated[
        bool, typer.Option("--list", help="List the worked examples and exit.")
    ] = False,
    output: OutputOpt = None,
    force: ForceOpt = False,
) -> None:
    """Write a commented profile template, or a worked example.

    An existing -o file (an edited profile, say) is never replaced without --force.
    """
    from gpuadvisor.inputs import examples

    if list_examples:
        for name, title in examples.list_examples():
            typer.echo(f"{name:32} {title}")
        return
    not_an_input(output, [])
    _keep_existing(output, "init", "-o", force)
    text = examples.example_text(example) if example else examples.template_text()
    emit(text, output)


class _StdioDialogue:
    """Questions on stderr, answers from stdin one per line, so stdout stays the result.

    When stdin is not a terminal the answers are echoed, so a log of an automated run
    reads like the session it replaces.
    """

    def __init__(self) -> None:
        self._echo = not sys.stdin.isatty()
        #: Answers come from a script, not a person: never ask one question forever.
        self.scripted = self._echo
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


#: A report is never TOML, so with --advise an -o FILE.toml (and no --profile-out) is
#: the profile, as it is without --advise.
PROFILE_SUFFIX = ".toml"


def _ask_outputs(
    output: Path | None, profile_out: Path | None, then_advise: bool
) -> tuple[Path | None, Path | None]:
    """(where the profile goes, where the report goes) for ``ask``'s options.

    Without --advise, -o is the profile. With --advise, -o is the report (as for
    ``advise``) and --profile-out the profile; an -o ending in .toml stays the profile
    when --profile-out is not given.
    """
    if not then_advise:
        if output is not None and profile_out is not None:
            raise InputError(
                "-o and --profile-out both name the profile; give one of them",
                field="--profile-out",
            )
        return (profile_out or output), None
    if profile_out is None and output is not None and output.suffix.lower() == PROFILE_SUFFIX:
        return output, None
    return profile_out, output


def ask(
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FILE",
            help="Write here (atomically) instead of stdout: the profile; with --advise, "
            "the report (a FILE.toml stays the profile unless --profile-out is given).",
        ),
    ] = None,
    start: Annotated[
        Path | None,
        typer.Option(
            "--from",
            metavar="FILE",
            help="Start from this profile (TOML/JSON, may be partial); ask the rest.",
        ),
    ] = None,
    then_advise: Annotated[
        bool, typer.Option("--advise", help="Print the recommendation report at the end.")
    ] = False,
    fmt: Annotated[
        ReportFormat | None, typer.Option("--format", "-f", help="Report format (with --advise).")
    ] = None,
    profile_out: Annotated[
        Path | None,
        typer.Option(
            "--profile-out",
            metavar="FILE",
            help="Write the profile here (atomically); with --advise, -o is the report.",
        ),
    ] = None,
    catalog: CatalogOpt = None,
    rules: RulesOpt = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace the profile file if it exists already."),
    ] = False,
) -> None:
    """Build a profile by answering questions in plain language, one at a time.

    Answers may come from a terminal or, one per line, from stdin (an empty line takes
    the default; a script that leaves a needed answer empty or keeps giving wrong ones
    ends with exit 2 naming the question). The profile goes to -o FILE (or
    --profile-out FILE), else to stdout. With --advise the report follows: on stdout,
    or in -o FILE in any --format, the profile then going to --profile-out FILE.
    An existing profile file is never replaced without --force.
    """
    from gpuadvisor.ask import profile_document, run_interview

    if fmt is not None and not then_advise:
        raise InputError("--format only applies together with --advise", field="--format")
    profile_path, report_path = _ask_outputs(output, profile_out, then_advise)
    report_format = fmt or ReportFormat.md
    if then_advise and report_format is ReportFormat.pdf and report_path is None:
        raise InputError(
            "PDF output needs a file: add -o FILE.pdf (with --advise, -o names the report; "
            "--profile-out FILE.toml the profile)",
            field="--format pdf",
        )
    inputs = [start] if start is not None else []
    not_an_input(profile_path, [])
    document: dict[str, Any] | None = None
    text: str | None = None
    if start is not None:
        from gpuadvisor.inputs.textio import load_document

        with named_by(**{"from": [start]}):
            document, text = load_document(start)
    # Before the first question: nobody answers thirty questions to be told then. The
    # file --from read may be updated in place: naming it twice says so.
    in_place = (
        start is not None
        and profile_path is not None
        and profile_path.exists()
        and start.exists()
        and os.path.samefile(start, profile_path)
    )
    if not in_place:
        _keep_existing(profile_path, "ask", "--profile-out" if profile_out else "-o", force)
    not_an_input(report_path, inputs)
    if profile_path is not None and report_path is not None:
        same = profile_path.resolve() == report_path.resolve() or (
            profile_path.exists()
            and report_path.exists()
            and os.path.samefile(profile_path, report_path)
        )
        if same:
            raise InputError(
                "the report would overwrite the profile: -o and --profile-out name one file",
                file=str(report_path),
                field="-o",
            )
    dialogue = _StdioDialogue()
    answered = run_interview(
        dialogue,
        start=document,
        start_name=str(start) if start is not None else "",
        start_text=text,
        scripted=dialogue.scripted,
    )
    profile = answered.profile
    written = profile_document(profile, answered.unknown)
    if profile_path is not None:
        emit(written, profile_path)
    elif not then_advise:
        emit(written, None)
    else:
        typer.echo(
            "note: the answers are not saved; add --profile-out FILE "
            "(or -o FILE.toml) to keep them",
            err=True,
        )
    if then_advise:
        from gpuadvisor.pipeline import advise_profile, size_profile
        from gpuadvisor.render.report import render

        decision = advise_profile(
            profile,
            profile_sha256=hashlib.sha256(written.encode("utf-8")).hexdigest(),
            profile_file=profile_path.name if profile_path is not None else "(gpuadvisor ask)",
            catalog_overlays=catalog or [],
            rules_overlays=rules or [],
            # hf_config is relative to the written profile, as `advise` will read it.
            sizing=size_profile(profile, output) if output is not None else None,
        )
        emit_report(render(decision, report_format.value), report_format.value, report_path)


def advise(
    profile: Annotated[
        Path, typer.Argument(metavar="PROFILE", help="Workload profile (TOML or JSON).")
    ],
    evidence: Annotated[
        list[Path] | None,
        typer.Option(
            "--evidence", "-e", metavar="FILE", help="Captured host evidence (repeatable)."
        ),
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
            metavar="DIR",
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

    with named_by(PROFILE=[profile], evidence=evidence or [], template=[template]):
        decision = run_advise(
            profile,
            evidence=evidence or [],
            catalog_overlays=catalog or [],
            rules_overlays=rules or [],
            sensitivity=not no_sensitivity,
        )
    emit_report(render(decision, fmt.value, template_dir=template), fmt.value, output)
