"""Several evidence files, one host.

GPUs are the same GPU when their PCI bus ids agree, else their UUIDs, else (for sources
that name neither, like ``topo -m`` or ``pmon``) their nvidia-smi indices; but two
records that name different cards (another model, UUID or serial number) are two GPUs
even at one bus id (captures of two hosts, or a card swapped between captures): they are
kept apart, and the disagreement is recorded as a conflict. Values merge field by field:
a value only one file reports is taken from it; two files reporting the same value
agree; two files reporting different values are a conflict, recorded in ``conflicts``
with both files and both values, and the first file's value is kept. Lists merge by
their natural key (process id, device name, interface, GPU pair).

A file that samples over a window (``dmon``, ``pmon``) reports a GPU's utilisation,
temperatures, power and clocks as figures of that window; a snapshot (``-q``, the
table) reports one moment. The two measure different things, so where they differ the
window's figure is kept, whichever file comes first, and the snapshot's value is named
in a note: that is not a conflict between the files.

Each GPU keeps which file gave each of its values (``Gpu.provenance``, by field path), so
a report cites the one file a value came from; a host/v1 file's own record is carried
through, so a value read from ``nvidia-smi -q`` and imported cites the ``-q`` file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from gpuadvisor.evidence._identity import (
    anonymous,
    different_cards,
    gpu_label,
    same_gpu,
)
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

__all__ = ["different_cards", "gpu_label", "merge", "same_gpu"]

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


#: Capture kinds whose per-GPU figures describe a sampled window.
WINDOW_KINDS = frozenset({"nvidia-smi-dmon", "nvidia-smi-pmon"})


class _Merger:
    def __init__(self) -> None:
        #: Owner key (``gpus#3.temperature.gpu_c``, ``host.cpu.sockets``) -> the file
        #: whose value was kept.
        self.owners: dict[str, str] = {}
        self.conflicts: list[Conflict] = []
        #: While a GPU is merged: its label (for conflicts), its owner-key prefix, and the
        #: record of a host/v1 file saying which capture each of its values came from.
        self.gpu: str | None = None
        self.prefix = ""
        self.origin: Mapping[str, str] = {}
        #: Files whose values are figures of a sampled window, not of one moment.
        self.windows: set[str] = set()
        self.notes: list[str] = []

    def enter_gpu(self, label: str | None, prefix: str, origin: Mapping[str, str]) -> None:
        self.gpu, self.prefix, self.origin = label, prefix, origin

    def file_of(self, key: str, file: str) -> str:
        """The file a value under ``key`` came from: ``file``, unless ``file`` is a
        host/v1 file whose own record names the capture (the nearest recorded path)."""
        if not self.origin or not key.startswith(self.prefix):
            return file
        path = key[len(self.prefix) :]
        while path:
            found = self.origin.get(path)
            if found is not None:
                return found
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return file

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
            first = self.owners.get(key, "?")
            second = self.file_of(key, file)
            if (first in self.windows) != (second in self.windows):
                window, snapshot = (first, second) if first in self.windows else (second, first)
                kept, other = (a, b) if first in self.windows else (b, a)
                self.notes.append(
                    f"{label.lstrip('.')}: {_scalar(kept)} over the window sampled in "
                    f"{window} is used; the snapshot in {snapshot} read {_scalar(other)}"
                )
                if kept is b:
                    self._own(b, key, file)
                return kept
            self.conflicts.append(
                Conflict(
                    field=label,
                    values=[
                        ConflictValue(file=self.owners.get(key, "?"), value=_scalar(a)),
                        ConflictValue(file=self.file_of(key, file), value=_scalar(b)),
                    ],
                    gpu=self.gpu,
                )
            )
        return a

    def model(self, a: M, b: M, key: str, label: str, file: str) -> M:
        # A GPU's provenance is the merger's own record (set when merging ends), not a
        # value to merge.
        updates = {
            name: self.value(
                getattr(a, name), getattr(b, name), f"{key}.{name}", f"{label}.{name}", file
            )
            for name in type(a).model_fields
            if name != "provenance"
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
        elif value is not None and value != [] and value != {}:
            self.owners[key] = self.file_of(key, file)

    def gpu_provenance(self) -> dict[int, dict[str, str]]:
        """Per GPU slot: field path -> the file its value came from."""
        found: dict[int, dict[str, str]] = {}
        for key, file in self.owners.items():
            if key.startswith("gpus#"):
                slot, _, path = key[5:].partition(".")
                found.setdefault(int(slot), {})[path] = file
        return found


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
        # A capture that samples over time (dmon, pmon, a looped --query-gpu CSV whose
        # GPUs carry several samples) reports figures of that window.
        if source.kind in WINDOW_KINDS or any(len(g.samples or ()) > 1 for g in part.gpus):
            merger.windows.add(file)
        for gpu in part.gpus:
            tick()
            slot = _slot(gpus, gpu, alone=len(part.gpus) == 1)
            if slot is None:
                _two_cards_at_one_bus_id(merger, gpus, gpu, file, notes)
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
            name = gpu_label(gpus[slot]) if gpus[slot] != Gpu() else gpu_label(gpu)
            merger.enter_gpu(name, f"gpus#{slot}.", gpu.provenance)
            gpus[slot] = merger.model(gpus[slot], gpu, f"gpus#{slot}", f"gpus[{name}]", file)
            merger.enter_gpu(None, "", {})
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
        conflicts += [_with_gpu(c) for c in part.conflicts]
        notes += part.notes
        sections = _sections(part)
        if source.kind in ("kernel-log", "dcgm-prom"):
            sections.append("events")  # scanned, even when it found nothing
        for section in sections:
            provenance.setdefault(section, set()).add(file)
        for section, files in part.provenance.items():  # a host/v1 file's own record
            provenance.setdefault(section, set()).update(files)
    for slot, record in merger.gpu_provenance().items():
        gpus[slot] = gpus[slot].model_copy(update={"provenance": dict(sorted(record.items()))})
    gpus.sort(key=lambda g: (g.index is None, g.index or 0, g.pci_bus_id or "", g.uuid or ""))
    found = [c.model_copy(update={"field": c.field.lstrip(".")}) for c in merger.conflicts]
    conflicts = _distinct(conflicts, found)
    return rest.model_copy(
        update={
            "sources": [source for source, _ in parts],
            "gpus": gpus,
            "events": events,
            "conflicts": conflicts,
            "notes": [*notes, *merger.notes],
            "provenance": {k: sorted(v) for k, v in sorted(provenance.items())},
        }
    )


def _two_cards_at_one_bus_id(
    merger: _Merger, gpus: list[Gpu], gpu: Gpu, file: str, notes: list[str]
) -> None:
    """Record that ``gpu`` (from ``file``) and a GPU already known name different cards
    at one bus id; both are kept, apart."""
    for slot, known in enumerate(gpus):
        if not gpu.pci_bus_id or known.pci_bus_id != gpu.pci_bus_id:
            continue
        fields = different_cards(known, gpu)
        merger.enter_gpu(gpu.pci_bus_id, f"gpus#{len(gpus)}.", gpu.provenance)
        for field in fields:
            merger.conflicts.append(
                Conflict(
                    field=f"gpus[{gpu.pci_bus_id}].{field}",
                    values=[
                        ConflictValue(
                            file=merger.owners.get(f"gpus#{slot}.{field}", "?"),
                            value=_scalar(getattr(known, field)),
                        ),
                        ConflictValue(
                            file=merger.file_of(f"gpus#{len(gpus)}.{field}", file),
                            value=_scalar(getattr(gpu, field)),
                        ),
                    ],
                    gpu=gpu.pci_bus_id,
                )
            )
        merger.enter_gpu(None, "", {})
        notes.append(
            f"{file}: the GPU at {gpu.pci_bus_id} differs from the one other evidence shows "
            f"there ({', '.join(fields)}): two different cards, kept apart; are the "
            "captures from different hosts, or was a card swapped between them?"
        )


def _distinct(recorded: list[Conflict], found: list[Conflict]) -> list[Conflict]:
    """Each disagreement once: when a host/v1 file that recorded one is merged with a
    capture it came from, the same files disagree again; this merge's conflict (whose
    first value is the one kept now) replaces the record."""

    def key(conflict: Conflict) -> tuple[object, ...]:
        values = frozenset((v.file, v.value) for v in conflict.values)
        return conflict.gpu, conflict.field, values

    fresh = {key(c) for c in found}
    kept: list[Conflict] = []
    seen: set[tuple[object, ...]] = set()
    for conflict in [*(c for c in recorded if key(c) not in fresh), *found]:
        if key(conflict) not in seen:
            seen.add(key(conflict))
            kept.append(conflict)
    return kept


def _with_gpu(conflict: Conflict) -> Conflict:
    """A conflict a host/v1 file recorded, with the GPU it concerns (files written
    before ``gpu`` existed name it only inside ``field``: ``gpus[<id>].<path>``)."""
    if conflict.gpu is not None or not conflict.field.startswith("gpus["):
        return conflict
    end = conflict.field.find("]")
    return conflict.model_copy(update={"gpu": conflict.field[5:end]}) if end > 5 else conflict


def _slot(gpus: list[Gpu], gpu: Gpu, *, alone: bool) -> int | None:
    """Where ``gpu`` goes among the GPUs known so far; None for a new one."""
    found = next((i for i, known in enumerate(gpus) if same_gpu(known, gpu)), None)
    if found is None and alone and len(gpus) == 1 and (anonymous(gpu) or anonymous(gpus[0])):
        # An excerpt (``nvidia-smi -q | sed ...``) names no GPU; with one GPU on each
        # side there is only one it can be.
        return 0
    return found


def _sections(part: HostSnapshot) -> list[str]:
    """The parts of the snapshot a partial snapshot fills (provenance keys)."""
    found: list[str] = []
    empty_gpu = Gpu()
    for name in Gpu.model_fields:
        if name == "provenance":
            continue
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
