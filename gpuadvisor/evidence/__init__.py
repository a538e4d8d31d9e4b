"""Captured tool outputs -> one :class:`~gpuadvisor.host.schema.HostSnapshot`.

Each format has its own module with a pure ``parse(text, name)`` returning a partial
snapshot; :func:`detect` picks the format from the content (never the file name) with
the checks in :mod:`._detect`, :func:`load_evidence` reads files, hashes them and merges
what they say about the host.

Importing this package imports no parser and no model: a parser module is imported
the first time a file of its format is read, so a run with three captures loads three
parsers (and detection alone none).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuadvisor.errors import InputError
from gpuadvisor.evidence import _detect, _limits
from gpuadvisor.evidence._limits import MAX_GPUS, ParseTimeout, TooMany, line_of, time_limit

if TYPE_CHECKING:
    from pathlib import Path

    from gpuadvisor.host.schema import EvidenceKind, HostSnapshot

__all__ = [
    "FORMATS",
    "Format",
    "detect",
    "dump_snapshot",
    "load_evidence",
    "parse_as",
    "parse_text",
]


@dataclass(frozen=True)
class Format:
    kind: EvidenceKind
    description: str
    looks_like: Callable[[str], bool]
    #: The module of this package that parses the format (``parse(text, name)``),
    #: imported the first time :attr:`parse` is asked for.
    module: str
    #: Whether ``looks_like`` must see the whole text (kernel logs: the first Xid may
    #: come after megabytes of other messages); the others decide on the first lines.
    whole: bool = False

    @property
    def parse(self) -> Callable[[str, str], HostSnapshot]:
        """``parse`` of :attr:`module`, which this imports if no file has yet."""
        name = f"{__name__}.{self.module}"
        # __import__, not importlib.import_module: python -X importtime reports only
        # imports made this way, and the parsers' cost is what it is used to find.
        __import__(name)
        parser: Callable[[str, str], HostSnapshot] = sys.modules[name].parse
        return parser


HEAD_LINES = 200


#: Checked in this order; the first whose ``looks_like`` accepts the text wins.
FORMATS: tuple[Format, ...] = (
    Format(
        "gpuadvisor-host",
        "gpuadvisor probe / import output (host/v1 JSON)",
        _detect.host_json,
        "host_json",
    ),
    Format("nvidia-smi-xml", "nvidia-smi -q -x", _detect.smi_xml, "smi_xml"),
    Format("nvidia-smi-table", "nvidia-smi (the default table)", _detect.smi_table, "smi_table"),
    Format("nvidia-smi-list", "nvidia-smi -L", _detect.smi_list, "smi_list"),
    Format(
        "nvidia-smi-csv",
        "nvidia-smi --query-gpu=... --format=csv (with header)",
        _detect.query_csv,
        "query_csv",
    ),
    Format("nvidia-smi-pmon", "nvidia-smi pmon", _detect.pmon, "pmon"),
    Format("nvidia-smi-dmon", "nvidia-smi dmon", _detect.dmon, "dmon"),
    Format("nvidia-smi-p2p", "nvidia-smi topo -p2p <r|w|n|a|p>", _detect.p2p, "p2p"),
    Format("nvidia-smi-topo", "nvidia-smi topo -m", _detect.topo, "topo"),
    Format("iostat", "iostat -x", _detect.iostat, "iostat"),
    Format("mpstat", "mpstat -P ALL", _detect.mpstat, "mpstat"),
    Format("sar-net", "sar -n DEV", _detect.sar_net, "sar_net"),
    Format("lscpu", "lscpu", _detect.lscpu, "lscpu"),
    Format("numactl", "numactl --show", _detect.numactl, "numactl"),
    Format(
        "dcgm-prom",
        "dcgm-exporter scrape (Prometheus text, DCGM_FI_*)",
        _detect.dcgm,
        "dcgm",
    ),
    Format(
        "kernel-log",
        "dmesg / dmesg -T / journalctl -k (Xid and PCIe AER lines)",
        _detect.kernel_log,
        "kernel_log",
        whole=True,
    ),
    Format("nvidia-smi-q", "nvidia-smi -q (whole or -d subsets)", _detect.smi_text, "smi_text"),
)

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


def accepted_formats() -> str:
    return "; ".join(f.description for f in FORMATS)


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
    parser = next(f.parse for f in FORMATS if f.kind == kind)
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
    from gpuadvisor.inputs.textio import decode_text, read_bytes

    parts: list[tuple[Source, HostSnapshot]] = []
    for path in paths:
        name = str(path)
        data = read_bytes(path)
        kind, snapshot = _read(_normalise(decode_text(data, name)), name)
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
