"""The command line: the only module that prints, prompts or exits.

Every command body is thin: parse options, call the pure modules, print or write the
result. :func:`main` maps the error family to exit codes in one place:
0 success, 2 invalid input, 1 internal error. No traceback reaches a user unless
``GPUADVISOR_DEBUG=1`` asks for it.
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import json
import math
import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

# gpuadvisor uses no pydantic plugin; without this, the first model built scans every
# installed distribution's entry points for plugins, a large share of start-up time.
# Only the command-line process is affected, never a program importing gpuadvisor.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

import typer

from gpuadvisor import __version__
from gpuadvisor.errors import GpuAdvisorError, InputError, InternalError
from gpuadvisor.vocabulary import COOLINGS

#: How every Typer application of this program behaves (see also _command_for).
_BEHAVIOUR: dict[str, Any] = {
    "name": "gpuadvisor",
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}
app = typer.Typer(
    help="Which GPU purchase actually fixes this workload, with the reasons.",
    no_args_is_help=True,
    **_BEHAVIOUR,
)
rules_app = typer.Typer(help="Inspect, explain, lint and test the rule base.", no_args_is_help=True)
catalog_app = typer.Typer(help="Browse and lint the GPU SKU catalog.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")
app.add_typer(catalog_app, name="catalog")


class ReportFormat(str, enum.Enum):
    md = "md"
    html = "html"
    pdf = "pdf"
    json = "json"


class ListFormat(str, enum.Enum):
    table = "table"
    json = "json"


class SchemaName(str, enum.Enum):
    profile = "profile"
    host = "host"
    decision = "decision"


CatalogOpt = Annotated[
    list[Path] | None,
    typer.Option("--catalog", help="Organisation catalog overlay folder (repeatable)."),
]
RulesOpt = Annotated[
    list[Path] | None,
    typer.Option("--rules", help="Organisation rules overlay folder (repeatable)."),
]
OutputOpt = Annotated[
    Path | None, typer.Option("-o", "--output", help="Write here (atomically) instead of stdout.")
]


def _emit(text: str | bytes, output: Path | None) -> None:
    if output is None:
        assert isinstance(text, str), "binary output needs -o"
        if sys.stdout is None:  # started with stdout closed (`gpuadvisor ... >&-`)
            raise InputError("standard output is closed; give -o FILE", field="-o")
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from gpuadvisor.inputs.textio import atomic_write

    atomic_write(output, text)
    typer.echo(f"wrote {output}", err=True)


def _not_an_input(output: Path | None, inputs: list[Path]) -> None:
    """Check ``-o`` before the work: a folder that cannot take the file, or one of the
    command's own inputs (the run would replace the profile it read with its report)."""
    if output is None:
        return
    from gpuadvisor.inputs.textio import check_output_path

    check_output_path(output)
    if not output.exists():
        return
    for path in inputs:
        if path.exists() and os.path.samefile(output, path):
            raise InputError(
                f"the output would overwrite the input {path}", file=str(output), field="-o"
            )


def _finite(value: float | None, option: str) -> None:
    if value is not None and not math.isfinite(value):
        raise InputError(f"must be a finite number, got {value}", field=option)


# -- init ---------------------------------------------------------------------------


@app.command()
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
    _emit(text, output)


# -- ask ----------------------------------------------------------------------------


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


@app.command()
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
    _not_an_input(output, [])
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
        _emit(written, output)
    elif not then_advise:
        _emit(written, None)
    else:
        typer.echo("note: the answers are not saved; add -o FILE to keep them", err=True)
    if then_advise:
        from gpuadvisor.pipeline import advise_profile
        from gpuadvisor.render.report import render

        decision = advise_profile(
            profile,
            profile_sha256=hashlib.sha256(written.encode("utf-8")).hexdigest(),
            profile_file=output.name if output is not None else "(gpuadvisor ask)",
            catalog_overlays=catalog or [],
            rules_overlays=rules or [],
        )
        _emit(render(decision, (fmt or ReportFormat.md).value), None)


# -- advise -------------------------------------------------------------------------


@app.command()
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
    _not_an_input(output, [profile, *(evidence or [])])

    decision = run_advise(
        profile,
        evidence=evidence or [],
        catalog_overlays=catalog or [],
        rules_overlays=rules or [],
        sensitivity=not no_sensitivity,
    )
    _emit(render(decision, fmt.value, template_dir=template), output)


# -- schema -------------------------------------------------------------------------


# -- probe --------------------------------------------------------------------------


def progress_line(elapsed_s: float, total_s: float, width: int = 30) -> str:
    """``probe [#########---------------------]  9/30 s, 21 s left``."""
    done = min(1.0, elapsed_s / total_s) if total_s > 0 else 1.0
    filled = round(width * done)
    left = max(0.0, total_s - elapsed_s)
    return (
        f"probe [{'#' * filled}{'-' * (width - filled)}] "
        f"{elapsed_s:3.0f}/{total_s:g} s, {left:.0f} s left"
    )


class _ProgressBar:
    """One stderr line redrawn after each sample; Ctrl-C hint included."""

    def __call__(self, elapsed_s: float, total_s: float) -> None:
        sys.stderr.write(f"\r{progress_line(elapsed_s, total_s)} (Ctrl-C ends early) ")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


@app.command()
def probe(
    seconds: Annotated[
        float, typer.Option("--seconds", "-s", help="How long to measure, in seconds (1-86400).")
    ] = 30.0,
    interval: Annotated[
        float,
        typer.Option(
            "--interval", "-i", help="Seconds between samples (0.1-60, at most --seconds)."
        ),
    ] = 1.0,
    output: OutputOpt = None,
) -> None:
    """Measure this host live through NVML: GPUs, their links, CPU, disks and network.

    Writes gpuadvisor/host/v1 JSON for `advise --evidence`. Ctrl-C ends the measurement
    early and still writes what was collected.
    """
    from gpuadvisor.evidence import dump_snapshot
    from gpuadvisor.probe.sampler import run_probe

    bar = _ProgressBar() if sys.stderr.isatty() else None
    try:
        result = run_probe(seconds, interval, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    gpus = len(result.snapshot.gpus)
    summary = f"probe: {result.samples} sample(s) of {gpus} GPU(s) over {result.elapsed_s:.1f} s"
    if result.interrupted:
        summary += " (stopped early by Ctrl-C; writing what was collected)"
    typer.echo(summary, err=True)
    _emit(dump_snapshot(result.snapshot), output)


# -- end probe ----------------------------------------------------------------------


@app.command("import")
def import_(
    files: Annotated[
        list[Path], typer.Argument(help="Captured outputs (format detected from content).")
    ],
    output: OutputOpt = None,
) -> None:
    """Read captured tool outputs of one host into a gpuadvisor/host/v1 JSON snapshot."""
    from gpuadvisor.evidence import dump_snapshot, load_evidence

    _not_an_input(output, files)
    _emit(dump_snapshot(load_evidence(files)), output)


@app.command()
def schema(name: Annotated[SchemaName, typer.Argument(help="Which document.")]) -> None:
    """Print the JSON Schema of a document gpuadvisor reads or writes."""
    model: Any
    if name is SchemaName.profile:
        from gpuadvisor.inputs.profile import Profile

        model = Profile
    elif name is SchemaName.host:
        from gpuadvisor.host.schema import HostSnapshot

        model = HostSnapshot
    else:
        from gpuadvisor.decision.model import Decision

        model = Decision
    document = model.model_json_schema(by_alias=True)
    typer.echo(json.dumps(document, indent=2, sort_keys=True))


# -- rules --------------------------------------------------------------------------


def _rulebase(overlays: list[Path] | None, base: Path | None = None) -> Any:
    from gpuadvisor.engine.rules import load_rules

    return load_rules(overlays or [], base=base)


@rules_app.command("list")
def rules_list(
    rules: RulesOpt = None,
    fmt: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.table,
) -> None:
    """List every rule with its category, severity and kind."""
    from gpuadvisor.engine.rulecheck import rule_doc

    base = _rulebase(rules)
    docs = [rule_doc(rule) for rule in base.rules]
    if fmt is ListFormat.json:
        typer.echo(json.dumps(docs, indent=2))
        return
    for doc in docs:
        kinds = f"{doc['id']:12} {doc['category']:15} {doc['severity']:8} {doc['kind']:11}"
        typer.echo(f"{kinds} {doc['title']}")


@rules_app.command("explain")
def rules_explain(
    rule_id: Annotated[str, typer.Argument(help="Rule id (or old alias).")], rules: RulesOpt = None
) -> None:
    """Print a rule's own documentation: what it checks, why, what to do, its examples."""
    from gpuadvisor.engine.rulecheck import rule_doc

    doc = rule_doc(_rulebase(rules).get(rule_id))
    lines = [
        f"{doc['id']}: {doc['title']}",
        f"category: {doc['category']}   severity: {doc['severity']}   kind: {doc['kind']}",
        "",
        "## When it applies",
        f"    {doc['when']}",
    ]
    if doc["require"]:
        lines += ["", "## What every option must meet", f"    {doc['require']}"]
    effect = doc["effect"]
    moves = [f"{k} {v:+d}" for k, v in {**effect["shape"], **effect["class"]}.items()]
    if effect["fix_first"]:
        moves.append("fix before buying")
    lines += [
        "",
        "## Effect on the decision",
        "    " + (", ".join(moves) or "constraint / informational"),
    ]
    lines += ["", "## Why it matters", " ".join(doc["rationale"].split())]
    lines += ["", "## What to do", doc["action"]]
    if doc["references"]:
        lines += ["", "## References", *[f"- {u}" for u in doc["references"]]]
    lines += ["", "## Examples"]
    for example in doc["examples"]:
        facts = ", ".join(f"{k} = {v}" for k, v in example["facts"].items())
        lines.append(f"- {example['name']} ({example['expect']}): {facts}")
    if doc["aliases"]:
        lines += ["", "Old ids: " + ", ".join(doc["aliases"])]
    lines += ["", f"file: {doc['file']}"]
    typer.echo("\n".join(lines))


@rules_app.command("lint")
def rules_lint(
    folder: Annotated[Path | None, typer.Argument(help="Rules folder (default: bundled).")] = None,
) -> None:
    """Refuse rules without rationale, action, category or passing examples."""
    from gpuadvisor.engine.rulecheck import lint_rules
    from gpuadvisor.engine.rules import load_rules

    base = load_rules(base=folder)
    if not base.rules:
        raise InputError("no rule files (*.toml) in this folder", file=str(folder))
    problems = lint_rules(base)
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise InputError(f"{len(problems)} problem(s) in {len(base.rules)} rules")
    typer.echo(f"{len(base.rules)} rules, all well-formed and all examples pass")


@rules_app.command("test")
def rules_test(rules: RulesOpt = None) -> None:
    """Run every rule's examples."""
    from gpuadvisor.engine.rulecheck import run_examples

    base = _rulebase(rules)
    results = run_examples(base.rules)
    failed = [r for r in results if not r.passed]
    for result in failed:
        typer.echo(f"FAIL {result.test_id}: expected {result.expected} ({result.detail})", err=True)
    typer.echo(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(1)


@rules_app.command("facts")
def rules_facts(
    fmt: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.table,
) -> None:
    """List every fact a rule may read, with type, unit and meaning."""
    from dataclasses import asdict

    from gpuadvisor.engine.factspec import ALL_FACTS

    if fmt is ListFormat.json:
        typer.echo(json.dumps([asdict(spec) for spec in ALL_FACTS], indent=2))
        return
    for spec in ALL_FACTS:
        kind = spec.type + ("?" if spec.nullable else "")
        choices = f" ({'|'.join(spec.choices)})" if spec.choices else ""
        unit = f" [{spec.unit}]" if spec.unit else ""
        typer.echo(f"{spec.name:45} {kind:8} {spec.description}{unit}{choices}")


# -- catalog ------------------------------------------------------------------------


def _catalog(overlays: list[Path] | None) -> Any:
    from gpuadvisor.inputs.catalog import load_catalog

    return load_catalog(overlays or [])


@catalog_app.command("list")
def catalog_list(
    catalog: CatalogOpt = None,
    fmt: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.table,
    segment: Annotated[
        str | None, typer.Option(help="consumer | professional | datacenter")
    ] = None,
    min_vram: Annotated[float | None, typer.Option("--min-vram", help="GiB")] = None,
    ecc: Annotated[bool | None, typer.Option("--ecc/--no-ecc")] = None,
    frame_lock: Annotated[bool | None, typer.Option("--frame-lock/--no-frame-lock")] = None,
    vgpu: Annotated[bool | None, typer.Option("--vgpu/--no-vgpu")] = None,
    cooling: Annotated[str | None, typer.Option(help=" | ".join(COOLINGS))] = None,
    max_slots: Annotated[float | None, typer.Option("--max-slots")] = None,
    max_power: Annotated[float | None, typer.Option("--max-power", help="W")] = None,
    max_price: Annotated[float | None, typer.Option("--max-price", help="USD")] = None,
) -> None:
    """List SKUs, optionally filtered."""
    from gpuadvisor.inputs.catalog import SkuFilter, filter_skus
    from gpuadvisor.vocabulary import SEGMENTS

    if segment is not None and segment not in SEGMENTS:
        raise InputError(
            f"unknown segment {segment!r}", field="--segment", hint=", ".join(SEGMENTS)
        )
    if cooling is not None and cooling not in COOLINGS:
        raise InputError(
            f"unknown cooling {cooling!r}", field="--cooling", hint=", ".join(COOLINGS)
        )
    for value, option in (
        (min_vram, "--min-vram"),
        (max_slots, "--max-slots"),
        (max_power, "--max-power"),
        (max_price, "--max-price"),
    ):
        _finite(value, option)
    wanted = SkuFilter(
        segment=segment,
        min_vram_gib=min_vram,
        ecc=ecc,
        frame_lock=frame_lock,
        vgpu=vgpu,
        cooling=cooling,
        max_slot_width=max_slots,
        max_tdp_w=max_power,
        max_price_usd=max_price,
    )
    skus = filter_skus(_catalog(catalog).skus, wanted)
    if fmt is ListFormat.json:
        typer.echo(json.dumps([s.model_dump(mode="json") for s in skus], indent=2))
        return
    header = (
        f"{'id':38} {'segment':12} {'VRAM':>6} {'GB/s':>6} {'ECC':>4} {'cool':9} "
        f"{'W':>5} {'USD':>8}"
    )
    typer.echo(header)
    for s in skus:
        typer.echo(
            f"{s.id:38} {s.segment:12} {s.vram_gib:6.0f} {s.memory_bandwidth_gbs:6.0f} "
            f"{'yes' if s.ecc else 'no':>4} {s.cooling:9} {s.tdp_w:5.0f} {s.price_usd:8,.0f}"
        )


@catalog_app.command("show")
def catalog_show(
    sku_id: Annotated[str, typer.Argument(help="SKU id.")], catalog: CatalogOpt = None
) -> None:
    """Show every field of one SKU with its cited sources."""
    sku = _catalog(catalog).get(sku_id)
    data = sku.model_dump(mode="json")
    cite = data.pop("cite")
    disputes = data.pop("disputes")
    for key, value in data.items():
        note = f"   [{cite[key]}]" if key in cite else ""
        typer.echo(f"{key:22} {value}{note}")
    for key, text in disputes.items():
        typer.echo(f"dispute on {key}: {text}")


@catalog_app.command("lint")
def catalog_lint(catalog: CatalogOpt = None) -> None:
    """Check schema, units, sources, dated prices and unique ids."""
    from gpuadvisor.inputs.catalog import lint_catalog

    loaded = _catalog(catalog)
    problems = lint_catalog(loaded)
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise InputError(f"{len(problems)} problem(s) in {len(loaded.skus)} SKUs")
    typer.echo(f"{len(loaded.skus)} SKUs, all sourced and well-formed")


@app.command()
def version(catalog: CatalogOpt = None, rules: RulesOpt = None) -> None:
    """Print the version of gpuadvisor, its rules and its catalog."""
    typer.echo(f"gpuadvisor {__version__}")
    typer.echo(f"rules {_rulebase(rules).version}")
    typer.echo(f"catalog {_catalog(catalog).version}")


def _command_for(args: list[str]) -> Any:
    """The click command to run ``args``: for a top-level command such as ``advise``,
    a group holding only that command, else the whole application.

    Typer turns every command's signature into click parameters when the application
    is built; building one instead of all of them is a noticeable share of a short
    run. The command's own parsing, help and errors are the same either way; anything
    else (no command, ``--help``, a group such as ``rules``, a mistyped name that
    deserves suggestions) gets the whole application.
    """
    name = args[0] if args else ""
    if not name.startswith("-"):
        for info in app.registered_commands:
            callback = info.callback.__name__ if info.callback else ""
            if name == (info.name or typer.main.get_command_name(callback)):
                one = typer.Typer(**_BEHAVIOUR)
                one.registered_commands.append(info)
                # Two commands or a callback make Typer build a group (a single
                # command would run without its name).
                one.callback()(_no_options)
                return typer.main.get_command(one)
    return typer.main.get_command(app)


def _no_options() -> None:
    """The application takes no options of its own, only commands."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and map errors to exit codes in one place.

    Usage errors are handled by the command-line parser itself (exit 2 with usage);
    everything gpuadvisor raises on purpose is caught here.
    """
    command = _command_for(sys.argv[1:] if argv is None else argv)
    try:
        command.main(args=argv, prog_name="gpuadvisor")
    except GpuAdvisorError as exc:
        typer.echo(f"gpuadvisor: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("gpuadvisor: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:  # the safety net for bugs
        if os.environ.get("GPUADVISOR_DEBUG") == "1":
            traceback.print_exc()
        error = InternalError(f"internal error: {type(exc).__name__}: {exc}")
        typer.echo(f"gpuadvisor: {error}", err=True)
        typer.echo(
            "please report this with the command line and input files; "
            "GPUADVISOR_DEBUG=1 shows the traceback",
            err=True,
        )
        sys.exit(1)
