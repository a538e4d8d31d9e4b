"""What every ``gpuadvisor/host/v1`` model shares: the base model (frozen, no unknown
keys, no inf/nan, bounded numbers) and the value vocabularies per-GPU and host models
both use. The models themselves are in :mod:`.gpu` and :mod:`.schema`.
"""

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, field_validator

#: Clock event ("throttle") reasons, named as nvidia-smi's XML names them without the
#: ``clocks_event_reason_`` prefix. NVML: ``nvmlDeviceGetCurrentClocksEventReasons``.
ThrottleReason = Literal[
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "display_clocks_setting",
]

#: NVML bit of each reason (``nvmlClocksEventReason*``), for bitmask sources
#: (``clocks_event_reasons.active`` in --query-gpu, DCGM_FI_DEV_CLOCK_THROTTLE_REASONS).
THROTTLE_BITS: Final[dict[ThrottleReason, int]] = {
    "gpu_idle": 0x1,
    "applications_clocks_setting": 0x2,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80,
    "display_clocks_setting": 0x100,
}

Mode = Literal["enabled", "disabled", "unsupported"]


#: Largest whole number a snapshot holds: NVML counters are unsigned 64-bit. Python's
#: ints are unbounded, so without this a host/v1 file could carry a 4000-digit "index"
#: that every later float() or sum chokes on.
MAX_WHOLE = 2**64 - 1
#: Largest magnitude of a measured decimal value, in any field's unit (W, MHz, KB/s, s,
#: ms, %): 1e12 is beyond every real reading, and keeps sums and means of a series of
#: them finite (1e308 twice overflows).
MAX_MEASURE = 1e12


def new_list() -> list[Any]:
    """A new empty list: the ``default_factory`` of host/v1's list fields. Pydantic reads
    a factory's signature when it builds a model, and a builtin's (``list``) is parsed
    from text by the tokenizer, costing more than the rest of the field."""
    return []


class HostModel(BaseModel):
    # The base of every host/v1 model. (A comment: a docstring here could become the
    # JSON Schema description of the models that have none.)
    # protected_namespaces: ``model_name`` (MIG devices) would make pydantic before 2.10
    # warn on every run.
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        allow_inf_nan=False,
        populate_by_name=True,
        protected_namespaces=(),
    )

    @field_validator("*")
    @classmethod
    def _bounded_whole_numbers(cls, value: Any) -> Any:
        items = value if isinstance(value, list) else (value,)
        for item in items:
            if isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_WHOLE:
                raise ValueError(f"a whole number larger than {MAX_WHOLE} is not a measurement")
            if isinstance(item, float) and abs(item) > MAX_MEASURE:
                raise ValueError(f"{item:g} is beyond any real measurement (limit {MAX_MEASURE:g})")
        return value
