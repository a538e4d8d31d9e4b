"""The fleet's own judgements, read from ``gpuadvisor/fleet/data/judgement.toml``: when a
GPU is idle capacity, and which fix-first findings make a host failing rather than
bottlenecked. The numbers and their reasons live in the file, with examples that
``tests/test_fleet_judgement.py`` runs; this module holds only the arithmetic.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuadvisor.errors import InternalError
from gpuadvisor.inputs.textio import parse_toml, read_text
from gpuadvisor.vocabulary import Category

DATA: Final = Path(__file__).resolve().parent / "data" / "judgement.toml"

#: ``unjudged``: the engine could not judge the host (the report says why).
Status = Literal["failing", "bottlenecked", "idle", "healthy", "unjudged"]
#: The statuses in the order the report lists them (worst first).
STATUSES: Final[tuple[Status, ...]] = ("failing", "bottlenecked", "idle", "healthy", "unjudged")


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, strict=True)


class IdleExample(_Data):
    name: str
    util_mean_pct: float | None = None
    memory_used_pct: float | None = None
    expect: Literal["idle", "in-use"]


class Idle(_Data):
    max_util_mean_pct: float = Field(ge=0, le=100)
    max_memory_used_pct: float = Field(ge=0, le=100)
    examples: list[IdleExample] = Field(min_length=2)


class StatusExample(_Data):
    name: str
    fix_first_categories: list[Category]
    all_gpus_idle: bool
    expect: Status


class StatusRules(_Data):
    failing_categories: list[Category] = Field(min_length=1)
    examples: list[StatusExample] = Field(min_length=2)


class Judgement(_Data):
    idle: Idle
    status: StatusRules

    def gpu_idle(self, util_mean_pct: float | None, memory_used_pct: float | None) -> bool:
        """Idle over the window: known to compute almost nothing and to hold almost no
        memory. An unknown reading is never idle (nothing is offered that may be in use)."""
        if util_mean_pct is None or memory_used_pct is None:
            return False
        return (
            util_mean_pct <= self.idle.max_util_mean_pct
            and memory_used_pct <= self.idle.max_memory_used_pct
        )

    def host_status(self, fix_first_categories: tuple[str, ...], all_gpus_idle: bool) -> Status:
        if set(fix_first_categories) & set(self.status.failing_categories):
            return "failing"
        if all_gpus_idle:
            return "idle"
        return "bottlenecked" if fix_first_categories else "healthy"


@functools.lru_cache(maxsize=1)
def judgement() -> Judgement:
    """The bundled judgements (a broken file is a broken installation)."""
    data = parse_toml(read_text(DATA), str(DATA))
    try:
        return Judgement.model_validate(data)
    except ValidationError as exc:
        raise InternalError(
            f"{DATA}: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}"
        ) from None
