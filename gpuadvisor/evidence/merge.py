"""Several evidence files, one host.

GPUs are the same GPU when their PCI bus ids agree, else their UUIDs, else (for sources
that name neither, like ``topo -m`` or ``pmon``) their nvidia-smi indices. Values merge
field by field: a value only one file reports is taken from it; two files reporting the
same value agree; two files reporting different values are a conflict, recorded in
``conflicts`` with both files and both values, and the first file's value is kept.
Lists merge by their natural key (process id, device name, interface, GPU pair).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from gpuadvisor.evidence._limits import MAX_GPUS, TooMany, tick
from gpuadvisor.host.schema import (
    Conflict,
    ConflictValue,
    CoreUtil,
    Disk,
    Event,
    Gpu,
    HostSnapshot,
    MigDevice,
    NetIface,
    Nic,
    P2PPair,
    Process,
    Source,
    TopoPair,
)

M = TypeVar("M", bound=BaseModel)

_ZERO_UUID = "GPU-00000000-0000-0000-0000-000000000000"

_LIST_KEYS: dict[type[BaseModel], Callable[[Any], object]] = {
    Process: lambda p: p.pid,
    MigDevice: lambda m: (m.gpu_instance_id, m.compute_instance_id, m.index, m.uuid),
    Disk: lambda d: d.device,
    NetIface: lambda n: n.iface,
    CoreUtil: lambda c: c.cpu,
    TopoPair: lambda p: (p.a, p.b),
    P2PPair: lambda p: (p.a, p.b),
    Nic: lambda n: n.label,
}


def same_gpu(a: Gpu, b: Gpu) -> bool:
    if a.pci_bus_id and b.pci_bus_id:
        return a.pci_bus_id == b.pci_bus_id
    uuid_a = a.uuid if a.uuid != _ZERO_UUID else None
    uuid_b = b.uuid if b.uuid != _ZERO_UUID else None
    if uuid_a and uuid_b:
        return uuid_a == uuid_b
    return a.index is not None and a.index == b.index


def _anonymous(gpu: Gpu) -> bool:
    return gpu.pci_bus_id is None and gpu.uuid is None and gpu.index is None


def gpu_label(gpu: Gpu) -> str:
    return gpu.pci_bus_id or gpu.uuid or f"index {gpu.index}"


class _Merger:
    def __init__(self) -> None:
        self.owners: dict[str, str] = {}
        self.conflicts: list[Conflict] = []

    def value(self, a: Any, b: Any, key: str, label: str, file: str) -> Any:
        """Merge ``b`` (from ``file``) into ``a``; ``key`` tracks owners, ``label`` is
        what a conflict is reported as."""
        if b is None:
            return a
        if a is None:
            self._own(b, key, file)
            return b
        if isinstance(b, (list, dict)) and not b:
            return a
        if isinstance(a, (list, dict)) and not a:
            self._own(b, key, file)
            return b
        if isinstance(a, BaseModel) and isinstance(b, BaseModel):
            return self.model(a, b, key, label, file)
        if isinstance(a, dict) and isinstance(b, dict):
            merged = dict(a)
            for name, item in b.items():
                merged[name] = self.value(
                    a.get(name), item, f"{key}.{name}", f"{label}.{name}", file
                )
            return dict(sorted(merged.items()))
        if isinstance(a, list) and isinstance(b, list):
            return self.sequence(a, b, key, label, file)
        if a != b:
            self.conflicts.append(
                Conflict(
                    field=label,
                    values=[
                        ConflictValue(file=self.owners.get(key, "?"), value=_scalar(a)),
                        ConflictValue(file=file, value=_scalar(b)),
                    ],
                )
            )
        return a

    def model(self, a: M, b: M, key: str, label: str, file: str) -> M:
        updates = {
            name: self.value(
                getattr(a, name), getattr(b, name), f"{key}.{name}", f"{label}.{name}", file
            )
            for name in type(a).model_fields
        }
        return a.model_copy(update=updates)

    def sequence(self, a: list[Any], b: list[Any], key: str, label: str, file: str) -> list[Any]:
        item_key = _LIST_KEYS.get(type(a[0])) if a and isinstance(a[0], BaseModel) else None
        if item_key is None:
            return self.value(_Whole(a), _Whole(b), key, label, file).items  # type: ignore[no-any-return]
        merged = list(a)
        positions = {item_key(item): i for i, item in enumerate(a)}
        for item in b:
            found = positions.get(item_key(item))
            name = f"[{item_key(item)}]"
            if found is None:
                positions[item_key(item)] = len(merged)
                self._own(item, f"{key}{name}", file)
                merged.append(item)
            else:
                merged[found] = self.value(
                    merged[found], item, f"{key}{name}", f"{label}{name}", file
                )
        return merged

    def _own(self, value: Any, key: str, file: str) -> None:
        if isinstance(value, BaseModel):
            for name in type(value).model_fields:
                self._own(getattr(value, name), f"{key}.{name}", file)
        elif isinstance(value, dict):
            for name, item in value.items():
                self._own(item, f"{key}.{name}", file)
        else:
            self.owners[key] = file


class _Whole:
    """A list compared as one value (samples, CPU id lists)."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Whole) and other.items == self.items

    def __hash__(self) -> int:  # pragma: no cover - never hashed
        return id(self)


def _scalar(value: Any) -> str | float | int | bool:
    if isinstance(value, _Whole):
        return f"{len(value.items)} item(s)"
    if isinstance(value, (str, float, int, bool)):
        return value
    return str(value)


def merge(parts: Sequence[tuple[Source, HostSnapshot]]) -> HostSnapshot:
    """One snapshot from the partial snapshots of several files, in the given order."""
    merger = _Merger()
    gpus: list[Gpu] = []
    events: list[Event] = []
    seen_events: set[tuple[Any, ...]] = set()
    rest = HostSnapshot()
    conflicts: list[Conflict] = []
    notes: list[str] = []
    provenance: dict[str, set[str]] = {}
    for source, part in parts:
        file = source.file
        for gpu in part.gpus:
            tick()
            slot = _slot(gpus, gpu, alone=len(part.gpus) == 1)
            if slot is None:
                slot = len(gpus)
                gpus.append(Gpu())
                if len(gpus) > MAX_GPUS:
                    # Matching is pairwise; a bound keeps it from growing with the square.
                    raise TooMany(f"more than {MAX_GPUS} GPUs in one host")
            elif not same_gpu(gpus[slot], gpu):
                notes.append(
                    f"{file}: a GPU without bus id, UUID or index was taken to be the "
                    "host's only GPU"
                )
            label = f"gpus[{gpu_label(gpus[slot]) if gpus[slot] != Gpu() else gpu_label(gpu)}]"
            gpus[slot] = merger.model(gpus[slot], gpu, f"gpus#{slot}", label, file)
        fresh = {(e.kind, e.code, e.pci_bus_id, e.time, e.text) for e in part.events}
        events += [
            e
            for e in part.events
            if (e.kind, e.code, e.pci_bus_id, e.time, e.text) not in seen_events
        ]
        seen_events |= fresh
        body = part.model_copy(
            update={
                "gpus": [],
                "events": [],
                "conflicts": [],
                "notes": [],
                "sources": [],
                "provenance": {},
            }
        )
        rest = merger.model(rest, body, "host", "", file)
        conflicts += part.conflicts
        notes += part.notes
        sections = _sections(part)
        if source.kind in ("kernel-log", "dcgm-prom"):
            sections.append("events")  # scanned, even when it found nothing
        for section in sections:
            provenance.setdefault(section, set()).add(file)
        for section, files in part.provenance.items():  # a host/v1 file's own record
            provenance.setdefault(section, set()).update(files)
    gpus.sort(key=lambda g: (g.index is None, g.index or 0, g.pci_bus_id or "", g.uuid or ""))
    for conflict in merger.conflicts:
        conflicts.append(conflict.model_copy(update={"field": conflict.field.lstrip(".")}))
    return rest.model_copy(
        update={
            "sources": [source for source, _ in parts],
            "gpus": gpus,
            "events": events,
            "conflicts": conflicts,
            "notes": notes,
            "provenance": {k: sorted(v) for k, v in sorted(provenance.items())},
        }
    )


def _slot(gpus: list[Gpu], gpu: Gpu, *, alone: bool) -> int | None:
    """Where ``gpu`` goes among the GPUs known so far; None for a new one."""
    found = next((i for i, known in enumerate(gpus) if same_gpu(known, gpu)), None)
    if found is None and alone and len(gpus) == 1 and (_anonymous(gpu) or _anonymous(gpus[0])):
        # An excerpt (``nvidia-smi -q | sed ...``) names no GPU; with one GPU on each
        # side there is only one it can be.
        return 0
    return found


def _sections(part: HostSnapshot) -> list[str]:
    """The parts of the snapshot a partial snapshot fills (provenance keys)."""
    found: list[str] = []
    empty_gpu = Gpu()
    for name in Gpu.model_fields:
        if any(getattr(g, name) != getattr(empty_gpu, name) for g in part.gpus):
            found.append(f"gpus.{name}")
    for name in ("driver_version", "cuda_version"):
        if getattr(part, name) is not None:
            found.append(name)
    for group in ("topology", "host"):
        model = getattr(part, group)
        empty = type(model)()
        found += [
            f"{group}.{n}"
            for n in type(model).model_fields
            if getattr(model, n) != getattr(empty, n)
        ]
    if part.events:
        found.append("events")
    return found
