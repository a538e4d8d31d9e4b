"""``probe`` and ``import``: host evidence, measured live or read from captures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from gpuadvisor.cli.options import OutputOpt
from gpuadvisor.cli.output import emit, named_by, not_an_input


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
    emit(dump_snapshot(result.snapshot), output)


def import_(
    files: Annotated[
        list[Path],
        typer.Argument(metavar="FILE...", help="Captured outputs (format detected from content)."),
    ],
    output: OutputOpt = None,
) -> None:
    """Read captured tool outputs of one host into a gpuadvisor/host/v1 JSON snapshot."""
    from gpuadvisor.evidence import dump_snapshot, load_evidence

    not_an_input(output, files)
    with named_by(FILE=files):
        snapshot = load_evidence(files)
    emit(dump_snapshot(snapshot), output)
