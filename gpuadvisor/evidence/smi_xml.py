"""``nvidia-smi -q -x``: the XML report (DTD nvsmi_device_v10 ... v13, or none).

Parsed with defusedxml: entity declarations (billion laughs, external entities) are
refused, external DTDs are never fetched. Element names changed over driver releases;
each field below lists the names it accepts, oldest last:

- ``clocks_event_reasons`` / ``clocks_throttle_reasons`` (renamed in R535)
- ``gpu_power_readings`` / ``power_readings`` (renamed in R535; ``power_draw`` split into
  ``average_power_draw`` and ``instant_power_draw`` in R550)
- ECC counters: ``sram_*`` / ``dram_*`` (R470+) or ``single_bit`` / ``double_bit`` totals
- temperatures: absolute thresholds, or offsets from T.Limit on Ada and later
"""

from __future__ import annotations

from xml.etree.ElementTree import Element, ParseError

from gpuadvisor.errors import InputError
from gpuadvisor.evidence._limits import check_gpus
from gpuadvisor.host.schema import (
    THROTTLE_BITS,
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


def parse(text: str, name: str) -> HostSnapshot:
    root = parse_xml(text, name)
    if root.tag != "nvidia_smi_log":
        raise InputError(f"XML root is <{root.tag}>, expected <nvidia_smi_log>", file=name)
    elements = root.findall("gpu")
    check_gpus(len(elements))
    attached = integer(root.findtext("attached_gpus"))
    # nvidia-smi lists GPUs in index order; positions are indices only when the file
    # holds every attached GPU (not a -i selection or a trimmed copy).
    complete = attached is not None and attached == len(elements)
    notes = []
    if not complete:
        notes.append(
            f"{name}: attached_gpus={attached} but {len(elements)} <gpu> element(s); "
            "GPU indices left unknown"
        )
    return HostSnapshot(
        driver_version=_driver(root.findtext("driver_version")),
        cuda_version=clean(root.findtext("cuda_version")),
        gpus=[_gpu(el, i if complete else None) for i, el in enumerate(elements)],
        notes=notes,
    )


def parse_xml(text: str, name: str) -> Element:
    """The document's root. Entity declarations (billion laughs, external entities) and
    external references are refused; the DOCTYPE nvidia-smi writes is allowed."""
    try:
        from defusedxml import DefusedXmlException
        from defusedxml.ElementTree import fromstring
    except ImportError:  # a dependency missing from the installation: not a bug
        raise InputError(
            "reading nvidia-smi XML needs the package defusedxml, a dependency of "
            "gpuadvisor that is missing from this installation",
            file=name,
            hint="pip install defusedxml, or reinstall gpuadvisor "
            "(`pip install --force-reinstall gpuadvisor`); or capture `nvidia-smi -q` "
            "(text) instead, which needs no other package",
        ) from None
    try:
        root: Element = fromstring(
            text, forbid_dtd=False, forbid_entities=True, forbid_external=True
        )
    except DefusedXmlException as exc:
        raise InputError(
            f"XML refused: {type(exc).__name__} (entity declarations and external "
            "references are not accepted)",
            file=name,
        ) from None
    except ParseError as exc:
        line = exc.position[0] if exc.position else None
        raise InputError(f"invalid XML: {exc}", file=name, line=line) from None
    return root


def _driver(value: str | None) -> str | None:
    text = clean(value)
    return text.split()[0] if text else None


def _text(el: Element, *paths: str) -> str | None:
    """Text of the first of ``paths`` that exists."""
    for path in paths:
        found = el.find(path)
        if found is not None:
            return found.text or ""
    return None


def _gpu(el: Element, index: int | None) -> Gpu:
    ecc = el.find("ecc_mode")
    mig = el.find("mig_mode")
    mig_mode = mode(_text(el, "mig_mode/current_mig"), section_present=mig is not None)
    return Gpu(
        index=index,
        name=clean(el.findtext("product_name")),
        uuid=clean(el.findtext("uuid")),
        pci_bus_id=bus_id(el.findtext("pci/pci_bus_id")) or bus_id(el.get("id")),
        serial=clean(el.findtext("serial")),
        vbios_version=clean(el.findtext("vbios_version")),
        architecture=clean(el.findtext("product_architecture")),
        brand=clean(el.findtext("product_brand")),
        driver_model=clean(el.findtext("driver_model/current_dm")),
        persistence_mode=yes_no(el.findtext("persistence_mode")),
        compute_mode=clean(el.findtext("compute_mode")),
        pstate=pstate(el.findtext("performance_state")),
        fan_pct=number(el.findtext("fan_speed")),
        memory_total_mib=integer(el.findtext("fb_memory_usage/total")),
        memory_used_mib=integer(el.findtext("fb_memory_usage/used")),
        memory_reserved_mib=integer(el.findtext("fb_memory_usage/reserved")),
        ecc_mode=mode(_text(el, "ecc_mode/current_ecc"), section_present=ecc is not None),
        ecc_mode_pending=mode(_text(el, "ecc_mode/pending_ecc"), section_present=ecc is not None),
        mig_mode=mig_mode,
        pcie=_pcie(el),
        utilisation=Utilisation(
            gpu_pct=number(el.findtext("utilization/gpu_util")),
            memory_pct=number(el.findtext("utilization/memory_util")),
            encoder_pct=number(el.findtext("utilization/encoder_util")),
            decoder_pct=number(el.findtext("utilization/decoder_util")),
        ),
        clocks=Clocks(
            graphics_mhz=number(el.findtext("clocks/graphics_clock")),
            sm_mhz=number(el.findtext("clocks/sm_clock")),
            mem_mhz=number(el.findtext("clocks/mem_clock")),
            max_graphics_mhz=number(el.findtext("max_clocks/graphics_clock")),
            max_sm_mhz=number(el.findtext("max_clocks/sm_clock")),
            max_mem_mhz=number(el.findtext("max_clocks/mem_clock")),
        ),
        temperature=_temperature(el),
        power=_power(el),
        throttle_reasons=_reasons(el),
        ecc_errors=EccErrors(
            volatile_correctable=_ecc(el, "volatile", "correctable"),
            volatile_uncorrectable=_ecc(el, "volatile", "uncorrectable"),
            aggregate_correctable=_ecc(el, "aggregate", "correctable"),
            aggregate_uncorrectable=_ecc(el, "aggregate", "uncorrectable"),
        ),
        retired_pages=RetiredPages(
            single_bit=integer(
                el.findtext("retired_pages/multiple_single_bit_retirement/retired_count")
            ),
            double_bit=integer(el.findtext("retired_pages/double_bit_retirement/retired_count")),
            pending=yes_no(
                _text(el, "retired_pages/pending_retirement", "retired_pages/pending_blacklist")
            ),
        ),
        remapped_rows=RemappedRows(
            correctable=integer(el.findtext("remapped_rows/remapped_row_corr")),
            uncorrectable=integer(el.findtext("remapped_rows/remapped_row_unc")),
            pending=yes_no(el.findtext("remapped_rows/remapped_row_pending")),
            failure=yes_no(el.findtext("remapped_rows/remapped_row_failure")),
        ),
        processes=_processes(el),
        mig_devices=_mig_devices(el, mig_mode),
    )


def _pcie(el: Element) -> Pcie:
    link = "pci/pci_gpu_link_info/"
    return Pcie(
        gen_current=pcie_gen(el.findtext(link + "pcie_gen/current_link_gen")),
        gen_max=pcie_gen(el.findtext(link + "pcie_gen/max_link_gen")),
        width_current=link_width(el.findtext(link + "link_widths/current_link_width")),
        width_max=link_width(el.findtext(link + "link_widths/max_link_width")),
        replay_counter=integer(el.findtext("pci/replay_counter")),
        tx_kBps=number(el.findtext("pci/tx_util")),
        rx_kBps=number(el.findtext("pci/rx_util")),
    )


def _temperature(el: Element) -> Temperature:
    def t(tag: str) -> float | None:
        return number(el.findtext(f"temperature/{tag}"))

    return Temperature(
        gpu_c=t("gpu_temp"),
        memory_c=t("memory_temp"),
        slowdown_c=t("gpu_temp_slow_threshold"),
        shutdown_c=t("gpu_temp_max_threshold"),
        max_operating_c=t("gpu_temp_max_gpu_threshold"),
        target_c=t("gpu_target_temperature"),
        tlimit_margin_c=t("gpu_temp_tlimit"),
        slowdown_tlimit_c=t("gpu_temp_slow_tlimit_threshold"),
        shutdown_tlimit_c=t("gpu_temp_max_tlimit_threshold"),
        max_operating_tlimit_c=t("gpu_temp_max_gpu_tlimit_threshold"),
    )


def _power(el: Element) -> Power:
    section = el.find("gpu_power_readings")
    if section is None:
        section = el.find("power_readings")
    if section is None:
        return Power()

    def w(*tags: str) -> float | None:
        # R610 moved the limits into a gpu_ceiling_power_limit element.
        return number(_text(section, *(".//" + tag for tag in tags)))

    # "Power Limit" (old) is the requested limit and "Enforced Power Limit" the one in
    # force; R535 renamed them "Requested Power Limit" and "Current Power Limit".
    return Power(
        draw_w=w("average_power_draw", "power_draw"),
        draw_instant_w=w("instant_power_draw"),
        limit_w=w("requested_power_limit", "power_limit"),
        enforced_limit_w=w("current_power_limit", "enforced_power_limit"),
        default_limit_w=w("default_power_limit"),
        min_limit_w=w("min_power_limit"),
        max_limit_w=w("max_power_limit"),
    )


def _reasons(el: Element) -> dict[ThrottleReason, ReasonState]:
    section = el.find("clocks_event_reasons")
    if section is None:
        section = el.find("clocks_throttle_reasons")
    reasons: dict[ThrottleReason, ReasonState] = {}
    if section is None:
        return reasons
    for child in section:
        short = child.tag.removeprefix("clocks_event_reason_").removeprefix(
            "clocks_throttle_reason_"
        )
        state = active(child.text)
        for known in THROTTLE_BITS:
            if known == short and state is not None:
                reasons[known] = ReasonState(active=state)
    return reasons


def _ecc(el: Element, scope: str, kind: str) -> int | None:
    section = el.find(f"ecc_errors/{scope}")
    if section is None:
        return None
    old = section.find("single_bit" if kind == "correctable" else "double_bit")
    if old is not None:
        return integer(old.findtext("total"))
    if kind == "correctable":
        tags = ["sram_correctable", "dram_correctable"]
    else:
        tags = ["dram_uncorrectable"]
        tags += (
            ["sram_uncorrectable"]
            if section.find("sram_uncorrectable") is not None
            else ["sram_uncorrectable_parity", "sram_uncorrectable_secded"]
        )
    return sum_known([integer(section.findtext(tag)) for tag in tags])


def _processes(el: Element) -> list[Process] | None:
    section = el.find("processes")
    if section is None:
        return None
    return [
        Process(
            pid=integer(info.findtext("pid")),
            name=clean(info.findtext("process_name")),
            type=clean(info.findtext("type")),
            used_memory_mib=integer(info.findtext("used_memory")),
            gpu_instance_id=integer(info.findtext("gpu_instance_id")),
            compute_instance_id=integer(info.findtext("compute_instance_id")),
        )
        for info in section.findall("process_info")
    ]


def _mig_devices(el: Element, mig_mode: str | None) -> list[MigDevice] | None:
    section = el.find("mig_devices")
    if section is None:
        return None
    devices = [
        MigDevice(
            index=integer(dev.findtext("index")),
            gpu_instance_id=integer(dev.findtext("gpu_instance_id")),
            compute_instance_id=integer(dev.findtext("compute_instance_id")),
            multiprocessor_count=integer(
                dev.findtext("device_attributes/shared/multiprocessor_count")
            ),
            memory_total_mib=integer(dev.findtext("fb_memory_usage/total")),
            memory_used_mib=integer(dev.findtext("fb_memory_usage/used")),
        )
        for dev in section.findall("mig_device")
    ]
    if devices or mig_mode == "enabled":
        return devices
    return None
