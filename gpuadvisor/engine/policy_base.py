"""The one base of every section model of ``rules/_policy.toml``: frozen, no unknown
keys, no infinities or NaN (shared by :mod:`gpuadvisor.engine.policy` and the sections
it imports from their own modules: ranking, decode)."""

from pydantic import BaseModel, ConfigDict


class StrictSection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
