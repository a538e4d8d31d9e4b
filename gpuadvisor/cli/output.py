"""Where a command's result goes: stdout, or a file written atomically (``-o``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from gpuadvisor.errors import InputError


def emit(text: str | bytes, output: Path | None) -> None:
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


def not_an_input(output: Path | None, inputs: list[Path]) -> None:
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
