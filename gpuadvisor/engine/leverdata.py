"""The judgements the buyer's levers rest on, read from ``engine/data/levers.toml``:
which precisions and training methods a lever may propose, the context a chat keeps,
the rack server a tower may become, the rental rates jobs run a few times a month
compare against, and the GeForce licence's data-center clause. Each section gives its
reason and sources; the rental section carries worked examples (``tests/test_levers.py``
runs them). Validated once per process; the arithmetic lives beside it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuadvisor.errors import InternalError
from gpuadvisor.inputs.textio import parse_toml, read_text
from gpuadvisor.vocabulary import Airflow, Chassis, ModelTask, Precision, WorkloadKind

DATA = Path(__file__).resolve().parent / "data" / "levers.toml"

_Url = Field(pattern=r"^https://")


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, strict=True)


class PrecisionLevers(_Data):
    why: str = Field(min_length=40)
    weights: tuple[Precision, ...] = Field(strict=False)
    kv_cache: Literal["fp8", "int8"]
    sources: tuple[str, ...] = Field(min_length=1, strict=False)


class MethodLevers(_Data):
    why: str = Field(min_length=40)
    instead: dict[ModelTask, list[ModelTask]]
    checkpointing: bool
    sources: tuple[str, ...] = Field(min_length=1, strict=False)


class OptimizerLever(_Data):
    why: str = Field(min_length=40)
    sources: tuple[str, ...] = Field(min_length=1, strict=False)


class ServingLevers(_Data):
    why: str = Field(min_length=40)
    min_context_tokens: int = Field(ge=1)
    context_step_tokens: int = Field(ge=1)
    sources: tuple[str, ...] = Field(min_length=1, strict=False)


class RackLever(_Data):
    why: str = Field(min_length=40)
    kinds: tuple[WorkloadKind, ...] = Field(strict=False)
    chassis: Chassis
    airflow: Airflow
    gpu_count_max: int = Field(ge=1, le=16)
    max_gpu_slot_width: int = Field(ge=1, le=5)
    gpu_power_w: float = Field(gt=0, le=100_000)
    server: str = Field(min_length=10)
    sources: tuple[str, ...] = Field(min_length=1, strict=False)


class RentalRate(_Data):
    class_: str = Field(alias="class", min_length=3)
    usd_per_second: float = Field(gt=0, le=1)
    skus: tuple[str, ...] = Field(min_length=1, strict=False)

    @property
    def usd_per_hour(self) -> float:
        return self.usd_per_second * 3600.0


class RentalExample(_Data):
    name: str
    lifecycle_usd: float = Field(gt=0)
    years: float = Field(gt=0)
    cards: int = Field(ge=1)
    usd_per_second: float = Field(gt=0)
    break_even_hours_per_month: float = Field(gt=0)


class Rental(_Data):
    why: str = Field(min_length=40)
    kinds: tuple[WorkloadKind, ...] = Field(strict=False)
    provider: str = Field(min_length=3)
    source: str = _Url
    checked: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    rate: tuple[RentalRate, ...] = Field(min_length=1, strict=False)
    examples: tuple[RentalExample, ...] = Field((), strict=False)

    def rate_for(self, sku_id: str) -> RentalRate | None:
        """The rate of the class this card rents as, or None when none is listed."""
        return next((r for r in self.rate if sku_id in r.skus), None)


class Licence(_Data):
    why: str = Field(min_length=40)
    datacenter_chassis: tuple[Chassis, ...] = Field(strict=False)
    shared_kinds: tuple[WorkloadKind, ...] = Field(strict=False)
    shared_inference_jobs: int = Field(ge=1)
    source: str = _Url

    def shared(self, kind: object, jobs: object, vgpu: object) -> bool:
        """Whether this work is a service many users share."""
        if kind in self.shared_kinds or vgpu is True:
            return True
        many = isinstance(jobs, int) and jobs >= self.shared_inference_jobs
        return kind == "inference" and many


class LeverData(_Data):
    schema_: Literal["gpuadvisor/levers/v1"] = Field(alias="schema")
    precision: PrecisionLevers
    method: MethodLevers
    optimizer: OptimizerLever
    serving: ServingLevers
    rack: RackLever
    rental: Rental
    licence: Licence

    model_config = ConfigDict(populate_by_name=True)


def break_even_hours_per_month(
    lifecycle_usd: float, years: float, cards: int, usd_per_hour: float
) -> float:
    """GPU hours a month at which renting ``cards`` GPUs for ``years`` costs what buying
    them does (lifecycle cost): buying pays above it."""
    return lifecycle_usd / (years * 12.0 * cards * usd_per_hour)


def rental_usd(hours_per_month: float, years: float, cards: int, usd_per_hour: float) -> float:
    """Renting ``cards`` GPUs for ``hours_per_month`` each month of ``years``."""
    return hours_per_month * years * 12.0 * cards * usd_per_hour


@functools.cache
def lever_data() -> LeverData:
    """The bundled lever judgements (immutable: read and validated once per process)."""
    try:
        return LeverData.model_validate(parse_toml(read_text(DATA), str(DATA)))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InternalError(
            f"bundled lever data is invalid: {first['msg']}", file=str(DATA), field=where or None
        ) from None
