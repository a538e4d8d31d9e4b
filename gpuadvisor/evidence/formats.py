"""The evidence formats gpuadvisor reads: the one table a new format is registered in.

A format is three things:

- a check in :mod:`._detect`, ``<module>(text) -> bool``, true when a text looks like
  the format; it imports no parser and no model, so telling formats apart stays cheap;
- a parser module ``gpuadvisor/evidence/<module>.py`` with ``parse(text, name)``
  returning a partial :class:`~gpuadvisor.host.schema.HostSnapshot`; the check and the
  module have the same name;
- one :class:`Format` row in :data:`FORMATS` naming the kind, a description (listed in
  the "unrecognised evidence format" message) and the check.

Detection (:func:`gpuadvisor.evidence.detect`) tries the rows in order; dispatch and the
lazy import of the parser come from the row. The kind must also be a value of the
contract's ``EvidenceKind`` in :mod:`gpuadvisor.host.schema` (mypy refuses a row whose
kind is not); tests/test_evidence_registry.py fails when a kind has no row, a row no
parser module or fixture, or a parser module no row.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuadvisor.evidence import _detect

if TYPE_CHECKING:
    from gpuadvisor.host.schema import EvidenceKind, HostSnapshot

__all__ = ["FORMATS", "NOT_FILE_KINDS", "Format", "accepted_formats", "format_of"]


@dataclass(frozen=True)
class Format:
    kind: EvidenceKind
    description: str
    #: The check of :mod:`._detect`; its name is the name of the parser module.
    looks_like: Callable[[str], bool]
    #: Whether ``looks_like`` must see the whole text (kernel logs: the first Xid may
    #: come after megabytes of other messages); the others decide on the first lines.
    whole: bool = False

    @property
    def module(self) -> str:
        """The module of :mod:`gpuadvisor.evidence` that parses the format."""
        return self.looks_like.__name__

    @property
    def parse(self) -> Callable[[str, str], HostSnapshot]:
        """``parse(text, name)`` of :attr:`module`, which this imports if no file has yet."""
        name = f"gpuadvisor.evidence.{self.module}"
        # __import__, not importlib.import_module: python -X importtime reports only
        # imports made this way, and the parsers' cost is what it is used to find.
        __import__(name)
        parser: Callable[[str, str], HostSnapshot] = sys.modules[name].parse
        return parser


#: Checked in this order; the first whose ``looks_like`` accepts the text wins.
FORMATS: tuple[Format, ...] = (
    Format("gpuadvisor-host", "gpuadvisor probe / import output (host/v1 JSON)", _detect.host_json),
    Format("nvidia-smi-xml", "nvidia-smi -q -x", _detect.smi_xml),
    Format("nvidia-smi-table", "nvidia-smi (the default table)", _detect.smi_table),
    Format("nvidia-smi-list", "nvidia-smi -L", _detect.smi_list),
    Format(
        "nvidia-smi-csv",
        "nvidia-smi --query-gpu=... --format=csv (with header)",
        _detect.query_csv,
    ),
    Format("nvidia-smi-pmon", "nvidia-smi pmon", _detect.pmon),
    Format("nvidia-smi-dmon", "nvidia-smi dmon", _detect.dmon),
    Format("nvidia-smi-p2p", "nvidia-smi topo -p2p <r|w|n|a|p>", _detect.p2p),
    Format("nvidia-smi-topo", "nvidia-smi topo -m", _detect.topo),
    Format("iostat", "iostat -x", _detect.iostat),
    Format("mpstat", "mpstat -P ALL", _detect.mpstat),
    Format("sar-net", "sar -n DEV", _detect.sar_net),
    Format("lscpu", "lscpu", _detect.lscpu),
    Format("numactl", "numactl --show", _detect.numactl),
    Format("dcgm-prom", "dcgm-exporter scrape (Prometheus text, DCGM_FI_*)", _detect.dcgm),
    Format(
        "kernel-log",
        "dmesg / dmesg -T / journalctl -k (Xid and PCIe AER lines)",
        _detect.kernel_log,
        whole=True,
    ),
    Format("nvidia-smi-q", "nvidia-smi -q (whole or -d subsets)", _detect.smi_text),
)

#: Values of ``EvidenceKind`` that name no file format, so no row reads them:
#: ``nvml-probe`` is the contract's name for a live NVML measurement (``probe``),
#: ``prometheus-query`` a window aggregate read from Prometheus (``fleet``).
NOT_FILE_KINDS: tuple[EvidenceKind, ...] = ("nvml-probe", "prometheus-query")

_BY_KIND: dict[str, Format] = {f.kind: f for f in FORMATS}


def format_of(kind: EvidenceKind) -> Format:
    """The row of ``kind`` (KeyError for a kind no file has)."""
    return _BY_KIND[kind]


def accepted_formats() -> str:
    return "; ".join(f.description for f in FORMATS)
