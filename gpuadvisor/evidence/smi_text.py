"""``nvidia-smi -q``: the human-readable report, whole or any ``-d`` subset.

The same fields as the XML (see :mod:`gpuadvisor.evidence.smi_xml`), by their printed
labels. Lookups go by section and label, never by column or line position, so blank
lines, the wider label column of R590+, Windows (WDDM) captures and partial reports
(``-q -d PCI``, ``sed`` excerpts without the ``GPU <bus id>`` line) all read the same.
"""

from __future__ import annotations

from gpuadvisor.evidence import _qtree as q
from gpuadvisor.evidence._limits import check_gpus
from gpuadvisor.host.schema import (
    Clocks,
    EccErrors,
    Gpu,
    HostSnapshot,
    MigDevice,
    Pcie,
    Power,
    Process,
    ReasonState,
    RemappedRows,
    RetiredPages,
    Temperature,
    ThrottleReason,
    Utilisation,
)
from gpuadvisor.nvidia.values import (
    active,
    bus_id,
    clean,
    integer,
    link_width,
    mode,
    number,
    pcie_gen,
    pstate,
    sum_known,
    yes_no,
)

#: Sections that belong to something other than the GPU itself.
_SKIP = ("mig device", "processes")

#: Printed label -> reason name (clock event / throttle reasons).
_REASONS: dict[str, ThrottleReason] = {
    "idle": "gpu_idle",
    "applications clocks setting": "applications_clocks_setting",
    "sw power cap": "sw_power_cap",
    "hw slowdown": "hw_slowdown",
    "hw thermal slowdown": "hw_thermal_slowdown",
    "hw power brake slowdown": "hw_power_brake_slowdown",
    "sync boost": "sync_boost",
    "sw thermal slowdown": "sw_thermal_slowdown",
    "display clock setting": "display_clocks_setting",
}


def parse(text: str, name: str) -> HostSnapshot:
    root = q.build(text)
    blocks = [node for node in root.children if q.is_gpu_header(node.key)]
    if not blocks:
        blocks = [root]  # an excerpt without the "GPU <bus id>" line: one GPU
    check_gpus(len(blocks))
    attached = integer(_top(root, "Attached GPUs"))
    complete = attached is not None and attached == len(blocks) and blocks[0] is not root
    notes = []
    if attached is not None and not complete:
        notes.append(
            f"{name}: Attached GPUs is {attached} but {len(blocks)} GPU section(s) are "
            "present; GPU indices left unknown"
        )
    driver = clean(_top(root, "Driver Version")) or clean(_top(root, "KMD Version"))
    gpus = [_gpu(block, i if complete else None) for i, block in enumerate(blocks)]
    return HostSnapshot(
        driver_version=driver.split()[0] if driver else None,
        cuda_version=_first_word(_top(root, "CUDA UMD Version") or _top(root, "CUDA Version")),
        gpus=[g for g in gpus if g != Gpu()],
        notes=notes,
    )


def _top(root: q.Node, key: str) -> str | None:
    found = q.child(root, key)
    return None if found is None else found.value


def _first_word(value: str | None) -> str | None:
    text = clean(value)
    return text.split()[0] if text else None


def _gpu(block: q.Node, index: int | None) -> Gpu:
    index_ = q.Index(block, skip=_SKIP)
    v = index_.value
    ecc_present = index_.find("ECC Mode") is not None
    mig_present = index_.find("MIG Mode") is not None
    mig_mode = mode(v("MIG Mode", "Current"), section_present=mig_present)
    header_bus = bus_id(block.key.split(" ", 1)[1]) if q.is_gpu_header(block.key) else None
    return Gpu(
        index=index,
        name=clean(v("Product Name")),
        uuid=clean(v("GPU UUID")),
        pci_bus_id=bus_id(v("PCI", "Bus Id")) or bus_id(v("Bus Id")) or header_bus,
        serial=clean(v("Serial Number")),
        vbios_version=clean(v("VBIOS Version")),
        architecture=clean(v("Product Architecture")),
        brand=clean(v("Product Brand")),
        driver_model=clean(v("Driver Model", "Current")),
        persistence_mode=yes_no(v("Persistence Mode")),
        compute_mode=clean(v("Compute Mode")),
        pstate=pstate(v("Performance State")),
        fan_pct=number(v("Fan Speed")),
        memory_total_mib=integer(v("FB Memory Usage", "Total")),
        memory_used_mib=integer(v("FB Memory Usage", "Used")),
        memory_reserved_mib=integer(v("FB Memory Usage", "Reserved")),
        ecc_mode=mode(
            v("ECC Mode", "Current") or v("ECC Mode", "Current ECC"), section_present=ecc_present
        ),
        ecc_mode_pending=mode(
            v("ECC Mode", "Pending") or v("ECC Mode", "Pending ECC"), section_present=ecc_present
        ),
        mig_mode=mig_mode,
        pcie=Pcie(
            gen_current=pcie_gen(v("PCIe Generation", "Current")),
            gen_max=pcie_gen(v("PCIe Generation", "Max")),
            width_current=link_width(v("Link Width", "Current")),
            width_max=link_width(v("Link Width", "Max")),
            replay_counter=integer(v("Replays Since Reset")),
            tx_kBps=number(v("Tx Throughput")),
            rx_kBps=number(v("Rx Throughput")),
        ),
        utilisation=Utilisation(
            gpu_pct=number(v("Utilization", "Gpu")),
            memory_pct=number(v("Utilization", "Memory")),
            encoder_pct=number(v("Utilization", "Encoder")),
            decoder_pct=number(v("Utilization", "Decoder")),
        ),
        clocks=Clocks(
            graphics_mhz=number(v("Clocks", "Graphics")),
            sm_mhz=number(v("Clocks", "SM")),
            mem_mhz=number(v("Clocks", "Memory")),
            max_graphics_mhz=number(v("Max Clocks", "Graphics")),
            max_sm_mhz=number(v("Max Clocks", "SM")),
            max_mem_mhz=number(v("Max Clocks", "Memory")),
        ),
        temperature=_temperature(index_.find("Temperature")),
        power=_power(index_.find("GPU Power Readings") or index_.find("Power Readings")),
        throttle_reasons=_reasons(
            index_.find("Clocks Event Reasons") or index_.find("Clocks Throttle Reasons")
        ),
        ecc_errors=EccErrors(
            volatile_correctable=_ecc(index_.find("ECC Errors", "Volatile"), correctable=True),
            volatile_uncorrectable=_ecc(index_.find("ECC Errors", "Volatile"), correctable=False),
            aggregate_correctable=_ecc(index_.find("ECC Errors", "Aggregate"), correctable=True),
            aggregate_uncorrectable=_ecc(index_.find("ECC Errors", "Aggregate"), correctable=False),
        ),
        retired_pages=RetiredPages(
            single_bit=integer(v("Retired Pages", "Single Bit ECC")),
            double_bit=integer(v("Retired Pages", "Double Bit ECC")),
            pending=yes_no(
                v("Retired Pages", "Pending Page Retirement")
                or v("Retired Pages", "Pending Page Blacklist")
                or v("Retired Pages", "Pending")
            ),
        ),
        remapped_rows=RemappedRows(
            correctable=integer(v("Remapped Rows", "Correctable Error")),
            uncorrectable=integer(v("Remapped Rows", "Uncorrectable Error")),
            pending=yes_no(v("Remapped Rows", "Pending")),
            failure=yes_no(v("Remapped Rows", "Remapping Failure Occurred")),
        ),
        processes=_processes(q.child(block, "Processes")),
        mig_devices=_mig_devices(block, mig_mode),
    )


def _temperature(section: q.Node | None) -> Temperature:
    def t(label: str) -> float | None:
        return number(q.value(section, label))

    return Temperature(
        gpu_c=t("GPU Current Temp"),
        memory_c=t("Memory Current Temp"),
        slowdown_c=t("GPU Slowdown Temp"),
        shutdown_c=t("GPU Shutdown Temp"),
        max_operating_c=t("GPU Max Operating Temp"),
        target_c=t("GPU Target Temperature"),
        tlimit_margin_c=t("GPU T.Limit Temp"),
        slowdown_tlimit_c=t("GPU Slowdown T.Limit Temp"),
        shutdown_tlimit_c=t("GPU Shutdown T.Limit Temp"),
        max_operating_tlimit_c=t("GPU Max Operating T.Limit Temp"),
    )


def _power(section: q.Node | None) -> Power:
    if section is None:
        return Power()

    def w(*labels: str) -> float | None:
        # R610 moved the limits into a "GPU Ceiling Power Limit" subsection.
        for label in labels:
            found = q.find(section, label)
            if found is not None:
                return number(found.value)
        return None

    return Power(
        draw_w=w("Average Power Draw", "Power Draw"),
        draw_instant_w=w("Instantaneous Power Draw"),
        limit_w=w("Requested Power Limit", "Power Limit"),
        enforced_limit_w=w("Current Power Limit", "Enforced Power Limit"),
        default_limit_w=w("Default Power Limit"),
        min_limit_w=w("Min Power Limit"),
        max_limit_w=w("Max Power Limit"),
    )


def _reasons(section: q.Node | None) -> dict[ThrottleReason, ReasonState]:
    reasons: dict[ThrottleReason, ReasonState] = {}
    if section is None:
        return reasons
    for node in q.walk(section):
        reason = _REASONS.get(node.norm)
        state = active(node.value)
        if reason is not None and state is not None:
            reasons[reason] = ReasonState(active=state)
    return reasons


def _ecc(section: q.Node | None, *, correctable: bool) -> int | None:
    if section is None:
        return None
    old = q.child(section, "Single Bit" if correctable else "Double Bit")
    if old is not None:
        total = q.child(old, "Total")
        if total is not None:
            return integer(total.value)
        return sum_known([integer(node.value) for node in old.children])
    labels = ["SRAM Correctable", "DRAM Correctable"]
    if not correctable:
        labels = ["DRAM Uncorrectable"]
        labels += (
            ["SRAM Uncorrectable"]
            if q.child(section, "SRAM Uncorrectable") is not None
            else ["SRAM Uncorrectable Parity", "SRAM Uncorrectable SEC-DED"]
        )
    return sum_known([integer(q.value(section, label)) for label in labels])


def _processes(section: q.Node | None) -> list[Process] | None:
    if section is None:
        return None
    processes: list[Process] = []
    instance: dict[str, int | None] = {}
    for node in section.children:
        if node.norm in ("gpu instance id", "compute instance id"):
            instance[node.norm] = integer(node.value)
        elif node.norm == "process id":
            processes.append(
                Process(
                    pid=integer(node.value),
                    type=clean(q.value(node, "Type")),
                    name=clean(q.value(node, "Name")),
                    used_memory_mib=integer(q.value(node, "Used GPU Memory")),
                    gpu_instance_id=instance.get("gpu instance id"),
                    compute_instance_id=instance.get("compute instance id"),
                )
            )
            instance = {}
    return processes


def _mig_devices(block: q.Node, mig_mode: str | None) -> list[MigDevice] | None:
    devices = [
        MigDevice(
            index=integer(q.value(node, "Index")),
            gpu_instance_id=integer(q.value(node, "GPU Instance ID")),
            compute_instance_id=integer(q.value(node, "Compute Instance ID")),
            multiprocessor_count=integer(q.value(node, "Multiprocessor count")),
            memory_total_mib=integer(q.value(node, "Shared FB Memory Usage", "Total")),
            memory_used_mib=integer(q.value(node, "Shared FB Memory Usage", "Used")),
        )
        for node in block.children
        if node.norm == "mig device"
    ]
    if devices or mig_mode == "enabled":
        return devices
    return None
