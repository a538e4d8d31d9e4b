"""The Typer applications, which command a run builds, and :func:`main`, where the error
family becomes exit codes: 0 success, 2 invalid input, 1 internal error."""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from typing import Annotated, Any

import typer

from gpuadvisor import __version__
from gpuadvisor.cli import (
    commands_catalog,
    commands_evidence,
    commands_fleet,
    commands_meta,
    commands_profile,
    commands_rules,
    commands_sizing,
    commands_web,
)
from gpuadvisor.errors import GpuAdvisorError, InternalError

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


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"gpuadvisor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print gpuadvisor's version and exit (`gpuadvisor version` adds the "
            "rules' and the catalog's).",
        ),
    ] = False,
) -> None:
    """Which GPU purchase actually fixes this workload, with the reasons."""


app.add_typer(rules_app, name="rules")
app.add_typer(catalog_app, name="catalog")

# The commands, in the order help lists them.
app.command()(commands_profile.init)
app.command()(commands_profile.ask)
app.command()(commands_profile.advise)
app.command()(commands_sizing.size)
app.command()(commands_evidence.probe)
app.command("import")(commands_evidence.import_)
app.command()(commands_meta.schema)
app.command()(commands_web.serve)
app.command()(commands_fleet.fleet)
rules_app.command("list")(commands_rules.rules_list)
rules_app.command("explain")(commands_rules.rules_explain)
rules_app.command("lint")(commands_rules.rules_lint)
rules_app.command("test")(commands_rules.rules_test)
rules_app.command("facts")(commands_rules.rules_facts)
catalog_app.command("list")(commands_catalog.catalog_list)
catalog_app.command("show")(commands_catalog.catalog_show)
catalog_app.command("lint")(commands_catalog.catalog_lint)
app.command()(commands_meta.version)


def _plain_arguments(command: Any) -> Any:
    """``command`` (and its subcommands) with each argument that has a metavar shown
    as just that metavar: ``FILE...``, not ``{FILE...}... <list[Path]>``.

    Typer 0.2x's own help adds the Python type to every argument, and braces and dots
    to the usage line, whatever the metavar says; the metavars here already say what
    to type. Older Typer (on click) shows the metavar alone and has neither method.
    """
    for param in getattr(command, "params", ()):
        metavar = getattr(param, "metavar", None)
        if getattr(param, "param_type_name", "") != "argument" or not metavar:
            continue
        shown = metavar if param.required else f"[{metavar}]"
        if hasattr(param, "display_type_rich"):
            param.display_type_rich = lambda ctx: ""
        if hasattr(param, "_usage_display_name"):
            param._usage_display_name = lambda shown=shown: shown
    for sub in getattr(command, "commands", {}).values():
        _plain_arguments(sub)
    return command


def whole_command() -> Any:
    """The click command of the whole application."""
    return _plain_arguments(typer.main.get_command(app))


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
                return _plain_arguments(typer.main.get_command(one))
    return whole_command()


#: What a top-level command imports whenever it runs, beyond the CLI itself (see
#: :func:`preload`); and what ``advise`` imports when it is given evidence files.
_RUNS_ON: dict[str, tuple[str, ...]] = {
    "advise": ("gpuadvisor.pipeline", "gpuadvisor.render.report"),
}
_EVIDENCE_RUNS_ON = (
    "gpuadvisor.evidence",
    "gpuadvisor.decision.measured",
    "gpuadvisor.engine.hostfacts",
)


def preload(args: list[str]) -> None:
    """Import now what the command ``args`` name will import when it runs.

    The program (:mod:`gpuadvisor.launch`) calls this before it freezes what its imports
    made, so the collector never scans the command's modules either (a young collection
    over them is a tenth of an ``advise`` run). Only when the imports happen changes:
    nothing is imported that the command would not import, except when it stops early
    (bad input); a command's help imports nothing more than before.
    """
    if not args or "--help" in args:
        return
    import importlib

    modules = _RUNS_ON.get(args[0], ())
    if modules and any(a.startswith(("--evidence", "-e")) for a in args[1:]):
        modules += _EVIDENCE_RUNS_ON
    for name in modules:
        # A module that fails to import fails again when the command imports it, where
        # main() reports it as an internal error.
        with contextlib.suppress(Exception):
            importlib.import_module(name)


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
