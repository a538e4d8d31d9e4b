"""Facts about the cards already in the host, for options that keep them: which model
they are, how many models, and the memory the evidence shows on them."""

from __future__ import annotations

from gpuadvisor.engine.hostfacts._common import FactValue, fact, max_known, min_known
from gpuadvisor.host.schema import HostSnapshot


@fact("host.gpu_model", "gpus.name")
def _model(s: HostSnapshot) -> FactValue:
    """Product Name (NVML nvmlDeviceGetName) when every GPU reports the same one; None
    when they differ or a GPU reports none (dmon and pmon name no model)."""
    names = {g.name for g in s.gpus}
    if len(names) != 1:
        return None
    (name,) = names
    return name or None


@fact("host.gpu_models_distinct", "gpus.name")
def _models(s: HostSnapshot) -> FactValue:
    """Different Product Names among the GPUs that report one."""
    names = {g.name for g in s.gpus if g.name}
    return len(names) if names else None


@fact("host.gpu_memory_total_min_mib", "gpus.memory_total_mib")
def _total(s: HostSnapshot) -> FactValue:
    """FB Memory Usage > Total (NVML nvmlDeviceGetMemoryInfo total, which leaves out
    what ECC takes), smallest over the GPUs."""
    return min_known(float(g.memory_total_mib) for g in s.gpus if g.memory_total_mib is not None)


@fact("host.gpu_memory_reserved_max_mib", "gpus.memory_reserved_mib")
def _reserved(s: HostSnapshot) -> FactValue:
    """FB Memory Usage > Reserved (NVML nvmlDeviceGetMemoryInfo_v2 reserved), largest."""
    return max_known(
        float(g.memory_reserved_mib) for g in s.gpus if g.memory_reserved_mib is not None
    )
