"""Host evidence -> the ``host.*`` and ``gpu.*`` facts rules read (factspec.HOST_FACTS).

Each fact has one derivation function (``_host.py``, ``_gpu.py``), registered with the
snapshot parts it reads; its docstring says which nvidia-smi field / NVML call the inputs
come from and how they are combined. A fact whose inputs no evidence reported is ``None``; ``gpu.*``
facts are the worst case over the host's GPUs.

"Busy" (for the PCIe generation and clock facts) means utilisation >= 50 % or power draw
>= 50 % of the enforced limit: GPUs drop link generation and clocks when idle to save
power, so idle readings say nothing about what the hardware can sustain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuadvisor.engine.factspec import HOST_FACTS
from gpuadvisor.engine.hostfacts import (  # noqa: F401  (they register the facts)
    _existing,
    _gpu,
    _host,
)
from gpuadvisor.engine.hostfacts._common import REGISTRY, FactValue
from gpuadvisor.errors import InternalError
from gpuadvisor.host.schema import HostSnapshot

__all__ = ["HostFacts", "derive_host_facts"]


@dataclass(frozen=True)
class HostFacts:
    """Every host fact's value (None when unknown) and the evidence files behind it."""

    values: dict[str, FactValue]
    sources: dict[str, tuple[str, ...]]


def derive_host_facts(snapshot: HostSnapshot | None) -> HostFacts:
    names = [spec.name for spec in HOST_FACTS]
    missing = [n for n in names if n not in REGISTRY and n != "host.evidence_present"]
    if missing:
        raise InternalError(f"host facts without a derivation: {', '.join(missing)}")
    if snapshot is None:
        values: dict[str, FactValue] = dict.fromkeys(names)
        values["host.evidence_present"] = False
        return HostFacts(values=values, sources={})
    values = {"host.evidence_present": True}
    sources: dict[str, tuple[str, ...]] = {
        "host.evidence_present": tuple(s.file for s in snapshot.sources)
    }
    for name in names:
        if name == "host.evidence_present":
            continue
        function, parts = REGISTRY[name]
        value = function(snapshot)
        values[name] = round(value, 3) if isinstance(value, float) else value
        if value is not None:
            sources[name] = _files(snapshot, parts)
    return HostFacts(values=values, sources=sources)


def _files(snapshot: HostSnapshot, parts: Iterable[str]) -> tuple[str, ...]:
    """Files that filled any of ``parts``; all files when the snapshot keeps no
    provenance (a probe, or a hand-written host/v1 file)."""
    if not snapshot.provenance:
        return tuple(sorted({s.file for s in snapshot.sources}))
    found: set[str] = set()
    for part in parts:
        found.update(snapshot.provenance.get(part, ()))
    return tuple(sorted(found))
