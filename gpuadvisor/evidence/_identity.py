"""Which records of several evidence files are one GPU.

Records are the same GPU when their PCI bus ids agree, else their UUIDs, else (for
sources that name neither, like ``topo -m`` or ``pmon``) their nvidia-smi indices; but
two records that name different cards (another model, UUID or serial number) are two
GPUs even at one bus id: captures of two hosts, or a card swapped between captures.
"""

from __future__ import annotations

from gpuadvisor.host.schema import Gpu

#: What collectors write when they mask UUIDs; it identifies no card.
_ZERO_UUID = "GPU-00000000-0000-0000-0000-000000000000"


def same_gpu(a: Gpu, b: Gpu) -> bool:
    if a.pci_bus_id and b.pci_bus_id:
        return a.pci_bus_id == b.pci_bus_id and not different_cards(a, b)
    uuid_a, uuid_b = _uuid(a), _uuid(b)
    if uuid_a and uuid_b:
        return uuid_a == uuid_b
    return a.index is not None and a.index == b.index and not different_cards(a, b)


def _uuid(gpu: Gpu) -> str | None:
    uuid = gpu.uuid.lower() if gpu.uuid else None
    return uuid if uuid and uuid != _ZERO_UUID.lower() else None


def _model(name: str) -> str:
    """A product name compared across tools: drivers before 470 and dcgm-exporter drop
    or keep the "NVIDIA " prefix, and the default table cuts long names with "..."."""
    text = " ".join(name.split()).casefold().removesuffix("...").strip()
    return text.removeprefix("nvidia ").strip()


def _serial(gpu: Gpu) -> str | None:
    serial = (gpu.serial or "").strip()
    return serial if serial.strip("0") else None


def different_cards(a: Gpu, b: Gpu) -> list[str]:
    """The identity fields (name, uuid, serial) on which two records name different
    cards; empty when nothing says they differ. A name one source shortened (one name
    starting with the other) is not a difference."""
    fields = []
    if a.name and b.name:
        x, y = _model(a.name), _model(b.name)
        if not (x.startswith(y) or y.startswith(x)):
            fields.append("name")
    uuid_a, uuid_b = _uuid(a), _uuid(b)
    if uuid_a and uuid_b and uuid_a != uuid_b:
        fields.append("uuid")
    serial_a, serial_b = _serial(a), _serial(b)
    if serial_a and serial_b and serial_a != serial_b:
        fields.append("serial")
    return fields


def anonymous(gpu: Gpu) -> bool:
    return gpu.pci_bus_id is None and gpu.uuid is None and gpu.index is None


def gpu_label(gpu: Gpu) -> str:
    return gpu.pci_bus_id or gpu.uuid or f"index {gpu.index}"
