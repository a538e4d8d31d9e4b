"""Captured tool outputs -> one :class:`~gpuadvisor.host.schema.HostSnapshot`.

Each format has its own module with a pure ``parse(text, name)`` returning a partial
snapshot, and one row in :data:`~gpuadvisor.evidence.formats.FORMATS` (the place a new
format is registered: see :mod:`.formats`); :func:`detect` picks the format from the
content (never the file name) with the checks in :mod:`._detect`, :func:`load_evidence`
reads files, hashes them and merges what they say about the host.

Importing this package imports no parser and no model: a parser module is imported
the first time a file of its format is read, so a run with three captures loads three
parsers (and detection alone none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuadvisor.errors import InputError
from gpuadvisor.evidence import _limits
from gpuadvisor.evidence._limits import MAX_GPUS, ParseTimeout, TooMany, line_of, time_limit
from gpuadvisor.evidence.formats import FORMATS, Format, accepted_formats, format_of

if TYPE_CHECKING:
    from pathlib import Path

    from gpuadvisor.host.schema import EvidenceKind, HostSnapshot

__all__ = [
    "FORMATS",
    "Format",
    "accepted_formats",
    "detect",
    "dump_snapshot",
    "load_evidence",
    "parse_as",
    "parse_text",
]


HEAD_LINES = 200

_SMI_ERRORS = (
    "ERROR:",
    "Failed to initialize NVML",
    "NVIDIA-SMI has failed",
    "No devices were found",
    "Unable to determine the device handle",
    "Invalid combination of input arguments",
    "Invalid GPU",
    "nvidia-smi: command not found",
    "Unable to find",
)


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")


def _head(text: str) -> str:
    end = -1
    for _ in range(HEAD_LINES):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return text[:end]


def detect(text: str, name: str | None = None) -> EvidenceKind:
    """The format of ``text``, judged from its content alone."""
    text = _normalise(text)
    if not text.strip():
        raise InputError("file is empty", file=name)
    head = _head(text)
    for candidate in FORMATS:
        if candidate.looks_like(text if candidate.whole else head):
            return candidate.kind
    from gpuadvisor.nvidia.values import strip_ansi

    first = strip_ansi(next(line for line in text.splitlines() if line.strip())).strip()
    if first.startswith(_SMI_ERRORS):
        message = f"this is an error message from nvidia-smi, not a capture: {first[:160]!r}"
    else:
        message = "unrecognised evidence format"
    raise InputError(message, file=name, hint=f"accepted formats: {accepted_formats()}")


def parse_text(text: str, name: str) -> HostSnapshot:
    """The partial snapshot one file's text describes."""
    return _read(_normalise(text), name)[1]


def parse_as(kind: EvidenceKind, text: str, name: str) -> HostSnapshot:
    """``text`` read as ``kind`` without detection (the fuzz tests drive each parser
    with text detection would give to another), within the same limits."""
    return _read(_normalise(text), name, kind)[1]


def _read(
    text: str, name: str, kind: EvidenceKind | None = None
) -> tuple[EvidenceKind, HostSnapshot]:
    """Detect and parse one file's text within the limits of :mod:`._limits`."""
    # Here, not at the top: detection alone needs no value readers (every parser has
    # imported them by the time one raises this).
    from gpuadvisor.nvidia.values import BadValue

    try:
        with time_limit():
            if kind is None:
                kind = detect(text, name)
            snapshot = _parse_as(kind, text, name)
    except ParseTimeout as exc:
        raise InputError(
            f"{kind or 'evidence'}: reading this file took longer than "
            f"{_limits.PARSE_SECONDS:g} s, "
            "the limit for one file",
            file=name,
            line=exc.line,
            hint="give the capture of one host, cut to the part that matters",
        ) from None
    except TooMany as exc:
        raise InputError(f"{kind or 'evidence'}: {exc.message}", file=name, line=exc.line) from None
    except BadValue as exc:
        raise InputError(
            f"{kind or 'evidence'}: value {exc.shown} {exc.problem}",
            file=name,
            line=line_of(text, exc.token),
        ) from None
    _check_gpu_count(len(snapshot.gpus), name)
    return kind, snapshot


_ONE_HOST = "give the captures of one host (gpuadvisor advises on one host at a time)"


def _check_gpu_count(count: int, name: str) -> None:
    if count > MAX_GPUS:
        raise InputError(
            f"{count} GPUs in one host; gpuadvisor reads at most {MAX_GPUS}",
            file=name,
            hint=_ONE_HOST,
        )


def _parse_as(kind: EvidenceKind, text: str, name: str) -> HostSnapshot:
    parser = format_of(kind).parse
    # Here, not at the top, so that importing this package does not import pydantic
    # (the parser has imported it by now).
    from pydantic import ValidationError

    try:
        return parser(text, name)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InputError(
            f"{kind}: value out of range: {first['msg']}", file=name, field=where or None
        ) from None


def load_evidence(paths: Sequence[Path]) -> HostSnapshot:
    """Read, identify, hash and parse each file; merge them into one host."""
    import hashlib

    from gpuadvisor.evidence.merge import merge
    from gpuadvisor.host.schema import Source
    from gpuadvisor.inputs.textio import decode_capture, read_bytes

    parts: list[tuple[Source, HostSnapshot]] = []
    for path in paths:
        name = str(path)
        data = read_bytes(path)
        kind, snapshot = _read(_normalise(decode_capture(data, name)), name)
        source = Source(file=name, kind=kind, sha256=hashlib.sha256(data).hexdigest())
        parts.append((source, snapshot))
    try:
        with time_limit():
            return merge(parts)
    except TooMany as exc:
        raise InputError(exc.message, hint=_ONE_HOST) from None
    except ParseTimeout:
        raise InputError(
            f"merging the evidence files took longer than {_limits.PARSE_SECONDS:g} s",
            hint=_ONE_HOST,
        ) from None


def dump_snapshot(snapshot: HostSnapshot) -> str:
    """``gpuadvisor/host/v1`` JSON: keys in model order, two-space indent, final newline."""
    import json

    data = snapshot.model_dump(mode="json", by_alias=True)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
