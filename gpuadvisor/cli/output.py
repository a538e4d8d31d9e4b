"""Where a command's result goes: stdout, or a file written atomically (``-o``)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
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


@contextlib.contextmanager
def named_by(**options: Sequence[Path | None]) -> Iterator[None]:
    """Say which option named a file that cannot be read (``--evidence``, ``PROFILE``).

    The readers name the file; only the command knows which of its options gave it,
    so an error about one of these files without a field gains the option's name:
    ``nope.txt: --evidence: file not found``. Keyword names are the options with
    dashes for underscores, an upper-case name an argument.
    """
    try:
        yield
    except InputError as error:
        if error.field is None and error.line is None and error.file is not None:
            for name, paths in options.items():
                if any(path is not None and str(path) == error.file for path in paths):
                    error.field = name if name.isupper() else "--" + name.replace("_", "-")
                    break
        raise


def emit_report(text: str | bytes, fmt: str, output: Path | None) -> None:
    """A report: to ``-o`` exactly as rendered; to a terminal, Markdown as readable text.

    Markdown escapes what would otherwise be markup (``\\$``, ``\\_``, ``\\#``), which a
    person reading a terminal should not see: there, rich renders it (headings, lists,
    tables wrapped to the terminal's width, colour unless ``NO_COLOR`` is set). A pipe or
    a file gets the exact Markdown, so ``advise ... > report.md`` and ``-o`` agree.
    """
    if output is None and fmt == "md" and isinstance(text, str) and _is_terminal():
        from rich.console import Console
        from rich.markdown import Markdown

        Console(soft_wrap=False).print(Markdown(text, hyperlinks=False))
        return
    emit(text, output)


def _is_terminal() -> bool:
    stream = sys.stdout
    return stream is not None and stream.isatty()
