"""The command line: the only module that prints, prompts or exits.

Every command body is thin: parse options, call the pure modules, print or write the
result. :func:`main` maps the error family to exit codes in one place:
0 success, 2 invalid input, 1 internal error. No traceback reaches a user unless
``GPUADVISOR_DEBUG=1`` asks for it.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Annotated

import typer

from gpuadvisor import __version__
from gpuadvisor.errors import GpuAdvisorError, InternalError

app = typer.Typer(
    name="gpuadvisor",
    help="Which GPU purchase actually fixes this workload, with the reasons.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

OutputOpt = Annotated[
    Path | None, typer.Option("-o", "--output", help="Write here (atomically) instead of stdout.")
]


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from gpuadvisor.textio import atomic_write

    atomic_write(output, text)
    typer.echo(f"wrote {output}", err=True)


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
    from gpuadvisor.probe import run_probe

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


@app.command()
def version() -> None:
    """Print the version of gpuadvisor, its rules and its catalog."""
    typer.echo(f"gpuadvisor {__version__}")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and map errors to exit codes in one place.

    Usage errors are handled by the command-line parser itself (exit 2 with usage);
    everything gpuadvisor raises on purpose is caught here.
    """
    command = typer.main.get_command(app)
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
