"""What every model of the decision document is built on (:mod:`gpuadvisor.decision.model`
publishes them all)."""

from pydantic import BaseModel, ConfigDict, Field


class OutModel(BaseModel):
    """Output models: validated when built (the engine's values are checked against the
    published schema on every decision), frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class FactValue(OutModel):
    name: str
    value: float | int | bool | str | None
    unit: str = ""
    source: str = Field(description="'profile', 'catalog', or the evidence file(s).")
